"""The table page (Streamlit): photo → hu, corrections, the other players' group points, the tally.

Run with `changpai app` (or `streamlit run app/streamlit_app.py`). Phone first, Chinese first.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import pandas as pd
import segno
import streamlit as st

from app.deck_section import deck_section, table_model
from app.i18n import LANGS, say, t
from app.rules import explain
from app.tally import NAME_MAX, SEATS, Tally, TallyError, check_code, new_code
from scoring import HandError, build_hand, score_hand
from scoring.cards import CODES, N_PLAIN, NAMES_ZH
from scoring.hand import HOW_ZH, declared_hows
from scoring.rulesets import EVENTS, OPTION_ZH, OPTIONS, RULESETS, get_ruleset, options_of
from scoring.score import TYPE_EN, TYPE_ZH
from vision.infer.imageio import READ_SIDE, ImageError, read_photo
from vision.infer.model import ModelError, model_info
from vision.infer.recognize import recognize_and_again, recognize_array
from vision.table.changes import RECOUNT_KEYS
from vision.table.context import NO_CARDS, PhotoContext, PhotoError
from vision.table.hand_score import layout_from_roles, score_layout
from vision.table.knobs import TABLE
from vision.table.layout import split_table
from vision.table.pipeline import DECK_KEYS
from vision.table.second_reading import score_read_twice
from vision.types import Card, Recognition, meld_role, parse_role

MAX_UPLOAD_MB = int(os.environ.get("CHANGPAI_MAX_UPLOAD_MB", "25"))
EVENT_ZH = {"tian_cheng": "天成", "di_hu": "地胡", "tian_ting": "天听", "zhe_zhuang": "折庄", "hai_di": "海底捞月",
            "gang_kai": "杠开", "qiong_hen": "穷狠"}


@st.cache_resource
def tally_store(path: str) -> Tally:
    return Tally(path)


@st.cache_resource
def warm_model(path: str | None):
    """Load the ONNX sessions once per server."""
    info = model_info(path)
    recognize_array(np.full((64, 64, 3), 128, np.uint8), path)
    return info


def card_label(code: str) -> str:
    return f"{NAMES_ZH[code]} {code}"


def role_label(role: str, lang: str) -> str:
    """A card's place as the corrections table shows it: hand, 将, group N, or not a card."""
    kind, group = parse_role(role)
    if group is not None:
        return f"{t('meld', lang)} {group + 1}"
    return t({"hand": "hand", "jiang": "role_jiang", "ignored": "ignored"}.get(role, role), lang)


def main() -> None:
    st.set_page_config(page_title="changpai 长牌算胡", page_icon="🀄", layout="centered")
    model_path = os.environ.get("CHANGPAI_MODEL") or None
    with st.sidebar:
        lang = st.radio("语言 / Language", list(LANGS), format_func=LANGS.get, horizontal=True, key="lang")
        if "table_default" not in st.session_state:  # a link or QR code from another phone names the table
            st.session_state.table_default = st.query_params.get("table") or new_code()
        table = st.text_input(t("table_code", lang), value=st.session_state.table_default, help=t("table_help", lang), key="table_code")
        ruleset = st.selectbox(t("ruleset", lang), list(RULESETS), key="ruleset")
        with st.expander(t("rule_options", lang)):
            options = rule_options(ruleset, lang)
        rs = get_ruleset(ruleset, options)
        n_jiang = rs.n_jiang
        # an extra may be flipped where the deck has them (R7's 喜儿 flip, rugao's wilds)
        jiang = st.multiselect(t("jiang", lang), list(CODES if rs.uses_extras else CODES[:N_PLAIN]), format_func=card_label,
                               max_selections=n_jiang,
                               placeholder=t("choose", lang),
                               help=t("jiang_help", lang), key="jiang")
    st.title(t("title", lang))
    store, code = _store(table)
    model_path = table_model(store, code, model_path)  # the table's own deck, once calibrated
    try:
        warm_model(model_path)
    except ModelError as e:
        st.error(say(e, lang))
        st.stop()

    # the uploader first: on a phone it opens the camera app, at full resolution; the page's own camera (lower
    # resolution, and a permission prompt in the browser's words) only when asked for
    upload = st.file_uploader(t("upload", lang), type=["jpg", "jpeg", "heic", "heif", "png", "webp", "bmp", "tif", "tiff"], key="upload")
    shot = st.camera_input(t("take_photo", lang), key="camera") if st.toggle(t("use_camera", lang), key="use_camera") else None
    src = upload or shot
    winner_total = None
    if src is None:
        st.info(t("no_photo", lang))
    else:
        data = src.getvalue()
        if len(data) > MAX_UPLOAD_MB * 2**20:
            st.error(t("too_big", lang, mb=MAX_UPLOAD_MB))
            st.stop()
        winner_total = photo_section(data, lang, jiang, ruleset, options, n_jiang, model_path)
    seats = table_seats(lang, table)
    others = others_section(lang, ruleset, options, jiang, [seats.labels[s] for s in seats.others])
    tally_section(lang, seats, winner_total, others)
    deck_section(lang, seats.store, seats.code, os.environ.get("CHANGPAI_MODEL") or None, _device())


def rule_options(ruleset: str, lang: str) -> dict[str, Any]:
    """The ruleset's options (RULES.md's open questions and R7's customs) as the table plays them: those set otherwise
    than by default."""
    chosen = {}
    for key in options_of(ruleset):
        allowed, default, doc = OPTIONS[key]
        label, tip = f"{OPTION_ZH[key]} {key}", doc if lang == "en" else None
        value = (st.checkbox(label, value=default, key=f"opt_{key}", help=tip) if allowed == (False, True) else
                 st.selectbox(label, list(allowed), index=list(allowed).index(default), key=f"opt_{key}", help=tip))
        if value != default:
            chosen[key] = value
    return chosen


def photo_section(data: bytes, lang: str, jiang: list[str], ruleset: str, options: dict[str, Any], n_jiang: int,
                  model_path: str | None) -> int | None:
    key = hashlib.sha1(data).hexdigest()[:16] + str(model_path)  # read again once the table calibrates its deck
    try:
        img, _ = read_photo(data, name="the photo", min_side=READ_SIDE)  # a large photo read smaller (imageio)
    except ImageError as e:
        st.error(say(e, lang))
        return None
    if st.session_state.get("photo_key") != key:
        rec, again = recognize_and_again(img, model_path)
        st.session_state.photo_key = key
        ctx0 = PhotoContext(ruleset=ruleset, jiang=jiang or None, options=options)
        st.session_state.recount = []
        st.session_state.deck_said = []
        try:
            ps0 = score_read_twice(rec, ctx0, again)  # a hand read uncleanly is read again (second_reading)
            rec = ps0.recognition  # with a card the detector half-saw added, or a doubtful box marked ×
            roles = [ps0.role(i) for i in range(len(rec.cards))]
            st.session_state.recount = [w for w in ps0.warnings if getattr(w, "key", None) in RECOUNT_KEYS]
            # the cards as the ruleset's deck reads them: the rows hold those codes, so the lines saying why are kept
            st.session_state.deck_said = [w for w in ps0.warnings if getattr(w, "key", None) in DECK_KEYS]
        except (PhotoError, HandError):  # the cards where they lie, as the message about them counted them
            lay0 = split_table(rec.cards, get_ruleset(ruleset).n_jiang)
            roles = [lay0.role(i) for i in range(len(rec.cards))]
        st.session_state.rec = rec
        st.session_state.rows = pd.DataFrame({
            "code": [c.code for c in rec.cards], "role": roles,
            "conf": [round(c.confidence, 2) for c in rec.cards]}, index=range(1, len(rec.cards) + 1))  # as messages count
    rec: Recognition = st.session_state.rec
    if not rec.cards:
        st.warning(say(NO_CARDS, lang))
        return None
    st.caption(t("seen", lang, n=len(rec.cards)))
    result_box = st.container()  # the total and breakdown show above the corrections, filled in below
    roles_all = ["hand", "jiang"] + [meld_role(i) for i in range(6)] + ["ignored"]
    edited = st.data_editor(
        st.session_state.rows, key="cards_editor", hide_index=False, width="stretch",
        column_config={
            "code": st.column_config.SelectboxColumn(t("code", lang), options=list(CODES), required=True, format_func=card_label),
            "role": st.column_config.SelectboxColumn(t("role", lang), options=roles_all, required=True,
                                                     format_func=lambda r: role_label(r, lang)),
            "conf": st.column_config.NumberColumn(t("conf", lang), disabled=True, format="%.2f"),
        })
    changed = not edited[["code", "role"]].equals(st.session_state.rows[["code", "role"]])
    cards = [Card(str(row.code), 1.0 if changed else c.confidence, [(str(row.code), 1.0)] if changed else c.alternatives, c.quad)
             for row, c in zip(edited.itertuples(), rec.cards, strict=True)]
    rec2 = Recognition(rec.width, rec.height, cards, rec.timings_ms, rec.model)
    lay = layout_from_roles([str(r) for r in edited["role"]])
    hand_codes = sorted({cards[i].code for i in lay.hand}, key=CODES.index)
    c1, c2, c3 = st.columns(3)
    win = c1.selectbox(t("win_card", lang), ["?"] + hand_codes, format_func=lambda c: t("unknown", lang) if c == "?" else card_label(c),
                       key="win")
    tsumo = c2.checkbox(t("tsumo", lang), key="tsumo")
    dealer = c3.checkbox(t("dealer", lang), key="dealer")
    events = st.multiselect(t("events", lang), [e for e in EVENTS if e != "qiong_hen" or options.get("qiong_hen")],
                            format_func=lambda e: f"{EVENT_ZH[e]} {e}",
                            placeholder=t("choose", lang), key="events")
    how = {}
    flipped = jiang or [cards[i].code for i in lay.jiang]
    for gi, g in enumerate(lay.melds):
        code = cards[g[0]].code
        opts = declared_hows(len(g), flipped.count(code))
        if not opts:  # a size no way fits: scoring says what is wrong with it
            continue
        how[code] = st.selectbox(f"{t('how', lang)}: {NAMES_ZH[code]}×{len(g)}", opts, key=f"how_{gi}_{code}",
                                 format_func=lambda h: f"{HOW_ZH[h]} {h}")
    ctx = PhotoContext(ruleset=ruleset, jiang=jiang or None, options=options, win=None if win == "?" else win, self_drawn=tsumo,
                       dealer=dealer, events=events, declared_how=how)
    try:
        ps = score_layout(rec2, lay, ctx, 0 if changed else TABLE.code_changes)
    except (PhotoError, HandError) as e:
        st.error(say(e, lang))
        return None
    res = ps.result
    with result_box:
        _show_result(ps, res, lang, img, cards)
    return res.total


def _show_result(ps, res, lang: str, img: np.ndarray, cards: list[Card]) -> None:
    if res.is_win:
        head = f"{TYPE_ZH[res.hand_type]} · " if lang == "zh" else f"{TYPE_EN[res.hand_type]} · "
    else:
        head = t("not_win", lang) + " · "
    st.markdown(f"<div style='font-size:3.2rem;font-weight:700;line-height:1.1' id='total'>{res.total} 胡</div>"
                f"<div style='font-size:1.1rem'>{head}{res.jiang_name}</div>", unsafe_allow_html=True)
    st.subheader(t("breakdown", lang))
    st.dataframe(pd.DataFrame({t("label", lang): [i.label if lang == "zh" else i.label_en for i in res.items],
                               t("points", lang): [i.points for i in res.items], t("rule", lang): [i.rule for i in res.items]}),
                 hide_index=True, width="stretch")
    cited = explain([i.rule for i in res.items])
    if cited:  # each line's [R…] leads to its section of the rule book (docs/rules.md)
        with st.expander(t("rules_cited", lang)):
            st.markdown(re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", cited, flags=re.M))  # smaller heads
    deck = [w for w in st.session_state.get("deck_said", [])  # while the card named keeps the code the line gave it
            if 0 < w.values["i"] <= len(cards) and cards[w.values["i"] - 1].code == w.values["new"]]
    for w in deck + st.session_state.get("recount", []) + ps.warnings:
        st.warning(say(w, lang))
    if ps.defaults:
        colon, sep = ("：", "；") if lang == "zh" else (": ", "; ")
        st.info(t("confirm", lang) + colon + sep.join(say(d, lang) for d in ps.defaults))
    from vision.table.annotate import annotate

    labels, groups = ps.card_tags()
    rec2 = Recognition(img.shape[1], img.shape[0], cards)
    st.image(cv2.cvtColor(annotate(img, rec2, labels, groups), cv2.COLOR_BGR2RGB), width="stretch")


def others_section(lang: str, ruleset: str, options: dict[str, Any], jiang: list[str], labels: list[str]) -> list[int]:
    """The two other players' hands typed in, for their group points; ``labels``: their seats' names."""
    st.subheader(t("others", lang))
    pts = []
    for p, label in zip((2, 3), labels, strict=True):
        text = st.text_input(f"{label}{t('hand_of', lang)}", key=f"other_{p}")
        if not text.strip():
            pts.append(0)
            continue
        try:
            res = score_hand(build_hand(concealed=text, jiang=jiang, ruleset=ruleset, options=options))
        except HandError as e:
            st.error(say(e, lang))
            pts.append(0)
            continue
        st.write(f"{label}: **{res.total}** ({res.group_points})")
        pts.append(res.total)
    return pts


@dataclass
class Seats:
    """The table as this phone sees it: its store and code (None when the code is refused), the seats' labels in the
    page's language, the winner's seat and the other two."""

    store: Tally | None
    code: str | None
    labels: list[str]
    winner: int
    error: Exception | None = None

    @property
    def others(self) -> list[int]:
        return [s for s in range(SEATS) if s != self.winner]


def _store(table: str) -> tuple[Tally | None, str | None]:
    """The tally and the table's code, or (None, None) for a code the tally refuses."""
    try:
        code = check_code(table)
    except TallyError:
        return None, None
    return tally_store(os.environ.get("CHANGPAI_DB") or os.path.expanduser("~/.changpai/tally.sqlite3")), code


def table_seats(lang: str, table: str) -> Seats:
    """The winner is chosen by seat: the hand photographed is theirs, the two others' hands are typed in."""
    default = [f"{t('player', lang)} {i + 1}" for i in range(SEATS)]
    try:
        code = check_code(table)
    except TallyError as e:
        return Seats(None, None, default, 0, e)
    store, _ = _store(code)
    labels = [n or d for n, d in zip(store.seats(code), default, strict=True)]
    winner = st.selectbox(t("winner_seat", lang), range(SEATS), format_func=lambda i: labels[i], key="winner_seat")
    return Seats(store, code, labels, winner)


def _audit_line(a: dict, labels: list[str], lang: str) -> str:
    """One change as the page says it: when, which phone, what (points by the seats' names as they are now)."""
    when = time.strftime("%H:%M:%S", time.localtime(a["created"]))
    d, sep = a["detail"], "、" if lang == "zh" else ", "
    if a["action"] == "add":
        points = sep.join(f"{lab} {p}" for lab, p in zip(labels, d.get("points", []), strict=False))
        winner = labels[d["winner"]] if isinstance(d.get("winner"), int) and 0 <= d["winner"] < len(labels) else "?"
        what = t("audit_add", lang, points=points, winner=winner)
    elif a["action"] == "undo":
        what = t("audit_undo", lang)
    elif a["action"] == "deck":
        what = t("audit_deck" if d.get("model") else "audit_deck_forget", lang)
    elif a["action"] == "name":
        what = t("audit_name", lang, seat=int(d.get("seat", 0)) + 1, name=d.get("name", ""))
    else:
        what = f"{a['action']} {json.dumps(d, ensure_ascii=False)}"
    return f"{when}  {a['device']}  {what}"


def _device() -> str:
    """This phone's name in the audit lines: a short random id for the browser session."""
    if "device" not in st.session_state:
        st.session_state.device = secrets.token_hex(3)
    return st.session_state.device


def tally_section(lang: str, seats: Seats, winner_total: int | None, others: list[int]) -> None:
    st.subheader(t("tally", lang))
    if seats.store is None:
        st.error(say(seats.error, lang))
        return
    store, code, labels, device = seats.store, seats.code, seats.labels, _device()
    rounds = store.rounds(code)
    c1, c2 = st.columns(2)
    if c1.button(t("add_round", lang), disabled=winner_total is None, key="add_round", type="primary"):
        pts = [0] * SEATS
        pts[seats.winner] = winner_total or 0
        for s, p in zip(seats.others, others, strict=True):
            pts[s] = p
        store.add(code, pts, seats.winner, device)
        st.success(t("added", lang))
    if c2.button(t("undo", lang), key="undo"):  # the round this phone shows as last, and no other
        last = rounds[-1]["id"] if rounds else None
        st.success(t("undone", lang)) if last is not None and store.undo(code, last, device) else st.info(t("nothing_to_undo", lang))
    rounds = store.rounds(code)
    if rounds:
        df = pd.DataFrame([r["points"] for r in rounds], columns=labels)
        df.index = range(1, len(df) + 1)
        st.dataframe(df, width="stretch")
        st.write(" · ".join(f"{n}: **{v}**" for n, v in zip(labels, store.totals(code), strict=True)))
        st.download_button(t("export", lang), store.csv(code, labels), file_name=f"changpai-{code}.csv", mime="text/csv")
    with st.expander(t("seats", lang)):
        names = store.seats(code)
        for i in range(SEATS):
            new = st.text_input(f"{t('seat', lang)} {i + 1}", value=names[i], max_chars=NAME_MAX, key=f"seat_{code}_{i}")
            if " ".join(new.split()) != names[i]:
                store.name_seat(code, i, new, device)
                st.rerun()
    with st.expander(t("audit", lang)):
        st.caption(t("audit_help", lang, device=device))
        for a in store.audit(code):
            st.text(_audit_line(a, labels, lang))
    url = os.environ.get("CHANGPAI_URL")
    if url:  # the address other phones open, with this table's code: scanning joins the table
        link = f"{url.rstrip('/')}/?table={code}"
        buf = io.BytesIO()
        segno.make(link, error="m").save(buf, kind="png", scale=5, border=2)
        st.image(buf.getvalue(), caption=t("join", lang, url=link), width=180)

main()
