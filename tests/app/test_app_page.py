"""The Streamlit page through streamlit.testing: upload → total, a correction, bad uploads, the shared tally."""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.conftest import ROOT, SAMPLES, requires_model

pytestmark = requires_model
PAGE = str(ROOT / "app" / "streamlit_app.py")


@pytest.fixture()
def app_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CHANGPAI_DB", str(tmp_path / "tally.sqlite3"))
    monkeypatch.setenv("CHANGPAI_MAX_UPLOAD_MB", "3")
    return tmp_path


def _new():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _total(at) -> int | None:
    for m in at.markdown:
        if "id='total'" in m.value:
            return int(m.value.split(">")[1].split(" ")[0])
    return None


def _upload(at, name, data, mime="image/jpeg"):
    at.file_uploader[0].set_value((name, data, mime))
    at.run()
    assert not at.exception, at.exception


def test_upload_gives_the_total(app_env):
    gt = json.loads((SAMPLES / "hand_1.json").read_text())
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    defaults_total = _total(at)  # winning card unknown, not self-drawn: never over-scores
    win = gt["hand"]["win"]
    at.selectbox(key="win").set_value(win["card"])
    at.checkbox(key="tsumo").set_value(win["self_drawn"])
    at.run()
    assert not at.exception
    assert _total(at) == gt["expected_total"] >= defaults_total


def test_a_large_photo_gives_the_same_total(app_env):
    # the sample 3.2 times as large (3072×4096, 12.6 MP): read from a half-size decode, scored the same
    import cv2

    gt = json.loads((SAMPLES / "hand_1.json").read_text())
    img = cv2.imread(str(SAMPLES / "hand_1.jpg"))
    ok, big = cv2.imencode(".jpg", cv2.resize(img, None, fx=3.2, fy=3.2, interpolation=cv2.INTER_CUBIC),
                           [cv2.IMWRITE_JPEG_QUALITY, 90])
    at = _new()
    _upload(at, "big.jpg", big.tobytes())
    at.selectbox(key="win").set_value(gt["hand"]["win"]["card"])
    at.checkbox(key="tsumo").set_value(gt["hand"]["win"]["self_drawn"])
    at.run()
    assert not at.exception
    assert _total(at) == gt["expected_total"]


def test_an_iphone_heic_photo_gives_the_same_total(app_env):
    heif = pytest.importorskip("pillow_heif")
    import io

    from PIL import Image

    gt = json.loads((SAMPLES / "hand_1.json").read_text())
    heic = io.BytesIO()
    heif.from_pillow(Image.open(SAMPLES / "hand_1.jpg")).save(heic, quality=92)  # written without Pillow's opener
    at = _new()
    _upload(at, "IMG_0001.HEIC", heic.getvalue(), "image/heic")
    at.selectbox(key="win").set_value(gt["hand"]["win"]["card"])
    at.checkbox(key="tsumo").set_value(gt["hand"]["win"]["self_drawn"])
    at.run()
    assert not at.exception
    assert _total(at) == gt["expected_total"]


def test_correction_changes_the_total(app_env):
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    before = _total(at)
    rows = at.session_state["rows"]
    hand_rows = [i for i, r in enumerate(rows["role"]) if r == "hand"]
    # turn three hand cards into red flowers: the breakdown must change
    edits = {i: {"code": "hh"} for i in hand_rows[:3]}
    at.session_state["cards_editor"] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    after = _total(at)
    assert after is not None and after != before


def test_marking_a_card_not_a_card_leaves_it_out(app_env):
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    rows = at.session_state["rows"]
    first_hand = next(i for i, r in enumerate(rows["role"]) if r == "hand")
    at.session_state["cards_editor"] = {"edited_rows": {first_hand: {"role": "ignored"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    # one card fewer in the hand: no longer a win, and the page says so (in Chinese) instead of failing
    assert any(w.value.startswith("未胡：") and "一对加七组" in w.value for w in at.warning), [w.value for w in at.warning]


@pytest.mark.parametrize("name,data,needle", [
    ("x.jpg", b"not an image", "不是能读取的图片"),
    ("e.jpg", b"", "照片是空的"),
    ("big.jpg", b"\xff" * (4 * 2**20), "照片太大"),
    ("thin.png", cv2.imencode(".png", np.full((32, 100_000, 3), 200, np.uint8))[1].tobytes(), "太长，看不清牌"),
])
def test_bad_uploads_give_a_message(app_env, name, data, needle):
    at = _new()
    at.file_uploader[0].set_value((name, data, "image/jpeg"))
    at.run()
    assert not at.exception, at.exception
    msgs = " ".join(e.value for e in at.error)
    assert needle in msgs, msgs  # in the page's language, Chinese first


def test_two_sessions_share_the_tally_across_restart(app_env):
    a = _new()
    a.sidebar.text_input(key="table_code").set_value("TABLE42").run()
    _upload(a, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    a.button(key="add_round").click().run()
    assert not a.exception
    b = _new()  # another phone, same table code
    b.sidebar.text_input(key="table_code").set_value("TABLE42").run()
    assert any("TABLE42" in str(x) for x in [b.session_state["table_code"]])
    from app.tally import Tally

    assert len(Tally(Path(os.environ["CHANGPAI_DB"])).rounds("TABLE42")) == 1
    assert b.dataframe  # the tally table is shown to the second phone


def test_the_winner_is_chosen_by_seat_names_stay_and_every_change_is_logged(app_env, monkeypatch):
    monkeypatch.setenv("CHANGPAI_URL", "http://192.168.1.20:8501")
    from app.tally import Tally

    a = _new()
    a.sidebar.text_input(key="table_code").set_value("TABLE77").run()
    a.text_input(key="seat_TABLE77_1").set_value("老王").run()
    _upload(a, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    a.selectbox(key="winner_seat").set_value(1).run()
    a.button(key="add_round").click().run()
    assert not a.exception, a.exception
    store = Tally(Path(os.environ["CHANGPAI_DB"]))
    (r,) = store.rounds("TABLE77")
    assert r["winner"] == 1 and r["points"][1] == _total(a) and r["points"][0] == r["points"][2] == 0
    assert store.seats("TABLE77") == ["", "老王", ""]
    assert list(a.dataframe[-1].value.columns) == ["玩家 1", "老王", "玩家 3"]  # by seat, in the page's language
    assert [x["action"] for x in store.audit("TABLE77")] == ["add", "name"]
    said = " ".join(x.value for x in a.get("text"))  # the change log, in the page's language, by the seats' names
    assert "记入一局：玩家 1 0、老王 " in said and "（胡牌：老王）" in said and "座位 2 改名为 老王" in said
    assert any("192.168.1.20:8501/?table=TABLE77" in str(e.proto) for e in a.get("image"))  # the QR code joins this table
    a.sidebar.text_input(key="table_code").set_value("AB1").run()
    assert any("6–24" in e.value for e in a.error)  # a short code is refused


def test_the_pages_own_font_has_every_character_it_shows():
    from fontTools.ttLib import TTFont

    from app.webfont import FONT, page_chars

    cmap = TTFont(FONT).getBestCmap()
    missing = [c for c in page_chars() if ord(c) not in cmap and c.isprintable() and not c.isspace()]
    assert not missing, f"rebuild the page font (python -m app.webfont): no glyph for {''.join(missing)}"


def test_a_card_added_by_the_one_more_repair_shows_on_the_page(app_env, monkeypatch):
    # the recognition misses one hand card but offers it as a spare (a box the detector was unsure of):
    # the page takes the reading with it, lists it as a card and says it was added
    import vision.infer.recognize
    from vision.types import Card, Recognition

    gt = json.loads((SAMPLES / "hand_1.json").read_text())
    cards = [Card(c["code"], 0.99, [(c["code"], 0.99)], c["quad"], det_score=0.9) for c in gt["cards"]]
    i = next(k for k, c in enumerate(gt["cards"]) if c["group"] == "hand")
    missed = cards.pop(i)
    missed.det_score = 0.3
    rec = Recognition(gt["width"], gt["height"], cards, spares=[missed], det_conf=0.5)
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    full = _total(at)  # the real photo, every card seen
    monkeypatch.setattr(vision.infer.recognize, "recognize_and_again", lambda img, model=None: (rec, None))
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())  # a new session: recognized afresh
    assert len(at.session_state["rows"]) == len(gt["cards"])
    from scoring.cards import NAMES_ZH

    assert any(w.value.startswith("已修正（补牌）") and NAMES_ZH[missed.code] in w.value for w in at.warning), \
        [w.value for w in at.warning]
    assert _total(at) == full


def test_a_bad_table_code_and_a_damaged_model_are_told_in_the_pages_language(app_env, monkeypatch, tmp_path):
    at = _new()
    at.sidebar.text_input(key="table_code").set_value("no good").run()
    said = "牌桌号是 6–24 个字母或数字（页面会自动生成，如 K7QW2MXP），这样别人猜不到。"
    assert not at.exception and [e.value for e in at.error] == [said]
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.json").write_text("{bad")
    monkeypatch.setenv("CHANGPAI_MODEL", str(tmp_path / "m"))
    at = _new()
    assert [e.value for e in at.error] == [f"{tmp_path / 'm'} 的模型说明文件 model.json 读不了。"]


def test_another_players_hand_with_a_typo_is_told_in_the_pages_language(app_env):
    at = _new()
    at.sidebar.multiselect[0].set_value(["2t", "3w"])  # 翻将
    at.text_input(key="other_2").set_value("123t 456t xx").run()
    assert not at.exception
    assert any(e.value.startswith("不认识的牌“xx”") for e in at.error), [e.value for e in at.error]
    at.text_input(key="other_2").set_value("123t 456t 789b 1w 1w").run()
    assert not at.error and any("玩家 2: **" in m.value for m in at.markdown)


def test_the_pages_own_camera_only_when_asked_for(app_env):
    # the uploader comes first (on a phone it opens the camera app at full resolution); the page's camera, with
    # the browser's permission prompt, shows only when its switch is turned on
    at = _new()
    assert not at.get("camera_input")
    at.toggle(key="use_camera").set_value(True).run()
    assert not at.exception and len(at.get("camera_input")) == 1


def test_a_hand_that_cannot_be_scored_says_on_the_page_what_the_cli_says(app_env):
    """hand_6 under the default ruleset (two 将, one card lying apart): the page's corrections table starts
    from the cards where they lie, so its message counts the card set apart as `changpai score` does."""
    from app.i18n import say
    from vision.infer.recognize import recognize
    from vision.table.context import PhotoContext, PhotoError
    from vision.table.pipeline import score_recognition

    with pytest.raises(PhotoError) as e:
        score_recognition(recognize(SAMPLES / "hand_6.jpg"), PhotoContext())
    assert e.value.args[0].key == "jiang_missing_set_apart"
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_6.jpg").read_bytes())
    assert [m.value for m in at.error] == [say(e.value, "zh")]


def test_a_declared_group_of_a_flipped_kind_can_be_said_concealed_or_dealt(app_env):
    """hand_4: bh is flipped once and bh×3 lies declared, which R4 lets be a pong or the flipped kind's concealed or
    dealt group; the page offers exactly those (a pong first, worth least) and scores the one chosen."""
    from scoring.hand import declared_hows

    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_4.jpg").read_bytes())
    pong_total = _total(at)
    hows = {s.key.rsplit("_", 1)[1]: s for s in at.selectbox if s.key and s.key.startswith("how_")}
    assert sorted(hows) == ["5t", "7w", "8b", "bh"]
    assert hows["bh"].options == ["碰 pong", "暗杠(后摸) concealed_kong", "起手龙 dealt_kong"]
    assert hows["7w"].options == ["碰 pong"] and len(hows["8b"].options) == len(declared_hows(4, 0)) == 3
    hows["bh"].set_value("dealt_kong")
    at.run()
    assert not at.exception
    assert _total(at) > pong_total


def test_the_rulesets_options_are_on_the_page_and_count(app_env):
    """A table playing R7's 喜儿 (nantong-single) says so on the page: hand_0 holds no extra, so with the option on its
    total doubles (穷狠, R7); the option is offered only for the ruleset it belongs to."""
    at = _new()
    assert not [c for c in at.checkbox if c.key == "opt_xi_er"]  # nantong-double first: no 喜儿
    at.selectbox(key="ruleset").set_value("nantong-single")
    at.run()
    _upload(at, "hand.jpg", (SAMPLES / "hand_0.jpg").read_bytes())
    plain = _total(at)
    assert "福 fu" not in at.multiselect(key="jiang").options and "红花 hh" in at.multiselect(key="jiang").options
    at.checkbox(key="opt_xi_er").set_value(True)
    at.run()
    assert not at.exception
    assert plain and _total(at) == 2 * plain
    assert "福 fu" in at.multiselect(key="jiang").options  # a 喜儿 may be the flip (R7)


def test_a_table_calibrates_its_deck_once_and_every_phone_then_reads_with_it(app_env, monkeypatch):
    """The page's calibration: the photo of a deck's faces → the named faces → the fast fit, kept for the table."""
    import random

    import cv2

    import app.deck_section
    from app.tally import Tally
    from vision.synth.decks import deck_style
    from vision.train.calibrate import render_calibration_photo

    fit = app.deck_section.fast_fit
    monkeypatch.setattr(app.deck_section, "fast_fit", lambda *a, **k: fit(*a, scenes=6, **k))  # briefly
    img, _ = render_calibration_photo(deck_style(random.Random(2), "sideways"), 2)
    photo = cv2.imencode(".jpg", img)[1].tobytes()
    a = _new()
    a.sidebar.text_input(key="table_code").set_value("DECK4242").run()
    uploader = next(u for u in a.get("file_uploader") if u.key == "deck_upload")
    uploader.set_value(("faces.jpg", photo, "image/jpeg"))
    a.run()
    assert not a.exception and not a.error, a.error
    assert a.button(key="deck_fit")
    a.checkbox(key="deck_no_extras").check().run()  # the photo shows no 福禄寿禧财, and the deck has none
    a.button(key="deck_fit").click().run()
    assert not a.exception
    store = Tally(Path(os.environ["CHANGPAI_DB"]))
    folder = store.deck("DECK4242")
    assert folder and (Path(folder) / "model.json").is_file() and Path(folder).parent.name == "decks"
    assert json.loads((Path(folder) / "model.json").read_text())["absent"] == ["fu", "lu", "shou", "xi", "cai"]
    b = _new()  # another phone at the table: its photos are read with the deck's model
    b.sidebar.text_input(key="table_code").set_value("DECK4242").run()
    assert any("自己这副牌" in c.value for c in b.caption)
    _upload(b, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    assert _total(b) is not None and b.session_state["rec"].model == Path(folder).name  # the deck model read it
    assert any(a["action"] == "deck" for a in store.audit("DECK4242"))
    assert any("试读" in c.value for c in a.caption)  # how the deck reads, said once it is fitted


def test_a_second_phone_does_not_fit_the_deck_while_another_is_fitting_it(app_env, monkeypatch):
    """Two phones at one table pressing 'fit' at once: the second is told, nothing of the first's is overwritten."""
    import random

    import cv2

    import app.deck_section
    from app.i18n import t
    from app.tally import Tally
    from vision.synth.decks import deck_style
    from vision.train.calibrate import render_calibration_photo

    fits = []
    monkeypatch.setattr(app.deck_section, "fast_fit", lambda *a, **k: fits.append(a))
    img, _ = render_calibration_photo(deck_style(random.Random(3), "boxed"), 3)
    a = _new()
    a.sidebar.text_input(key="table_code").set_value("DECK4244").run()
    uploader = next(u for u in a.get("file_uploader") if u.key == "deck_upload")
    uploader.set_value(("faces.jpg", cv2.imencode(".jpg", img)[1].tobytes(), "image/jpeg"))
    a.run()
    folder = Tally(Path(os.environ["CHANGPAI_DB"])).deck_folder("DECK4244")
    assert app.deck_section._fit_lock(folder) is not None  # another phone's fit under way
    a.button(key="deck_fit").click().run()
    assert not a.exception and not fits and t("deck_busy", "zh") in [i.value for i in a.info]
    assert Tally(Path(os.environ["CHANGPAI_DB"])).deck("DECK4244") is None
    lock = folder.with_name(folder.name + ".fitting")
    os.utime(lock, (0, 0))  # a page that stopped mid-fit long ago: its lock is stale and taken over
    assert app.deck_section._fit_lock(folder) == lock


def test_a_calibration_photo_that_cannot_be_named_says_why_with_the_marked_photo(app_env):
    import numpy as np

    a = _new()
    a.sidebar.text_input(key="table_code").set_value("DECK4243").run()
    empty = cv2_jpeg(np.full((900, 1200, 3), (40, 70, 110), np.uint8))
    next(u for u in a.get("file_uploader") if u.key == "deck_upload").set_value(("faces.jpg", empty, "image/jpeg"))
    a.run()
    assert not a.exception
    from app.i18n import t

    assert [e.value for e in a.error] == [t("msg.calib_few", "zh", n=0)]
    assert a.error[0].value.startswith("照片里只找到 0 张牌")


def cv2_jpeg(img) -> bytes:
    import cv2

    return cv2.imencode(".jpg", img)[1].tobytes()


def test_a_card_counted_as_a_face_of_the_rulesets_deck_is_named_on_the_page(app_env, monkeypatch):
    """A hand card read as 寿 (a deck without extras: the page's nantong-double) is counted as its likeliest face: the
    page lists it so and says which card and why, as the CLI does; the total is the true cards'."""
    import vision.infer.recognize
    from scoring.cards import NAMES_ZH
    from vision.types import Card, Recognition

    gt = json.loads((SAMPLES / "hand_1.json").read_text())
    cards = [Card(c["code"], 0.99, [(c["code"], 0.99)], c["quad"], det_score=0.9) for c in gt["cards"]]
    i = next(k for k, c in enumerate(gt["cards"]) if c["group"] == "hand")
    true = cards[i].code
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    full = _total(at)
    cards[i] = Card("shou", 0.5, [("shou", 0.5), (true, 0.45), ("fu", 0.05)], cards[i].quad, det_score=0.9)
    monkeypatch.setattr(vision.infer.recognize, "recognize_and_again",
                        lambda img, model=None: (Recognition(gt["width"], gt["height"], cards), None))
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    said = [w.value for w in at.warning if w.value.startswith("请核对：第") and "认作寿" in w.value]
    assert len(said) == 1 and f"按{NAMES_ZH[true]}" in said[0], [w.value for w in at.warning]
    assert _total(at) == full


def test_a_second_reading_that_gives_another_total_says_so_on_the_page(app_env, monkeypatch):
    """A first reading that is no win (a hand card misread, nothing to mend it) and a second that is the true hand:
    the page shows the second's total and, as the CLI does, the check naming what the first reading gave."""
    import vision.infer.recognize
    from vision.types import Card, Recognition

    gt = json.loads((SAMPLES / "hand_1.json").read_text())

    def reading():
        return [Card(c["code"], 0.99, [(c["code"], 0.99)], c["quad"], det_score=0.9) for c in gt["cards"]]

    first = reading()
    i = next(k for k, c in enumerate(gt["cards"]) if c["group"] == "hand")
    wrong = "qz" if first[i].code != "qz" else "hh"
    first[i] = Card(wrong, 0.95, [(wrong, 0.95)], first[i].quad, det_score=0.9)
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    full = _total(at)
    again = Recognition(gt["width"], gt["height"], reading())
    monkeypatch.setattr(vision.infer.recognize, "recognize_and_again",
                        lambda img, model=None: (Recognition(gt["width"], gt["height"], first), lambda: again))
    at = _new()
    _upload(at, "hand.jpg", (SAMPLES / "hand_1.jpg").read_bytes())
    assert _total(at) == full
    said = [w.value for w in at.warning if w.value.startswith("请核对：按第一次识别")]
    assert len(said) == 1, [w.value for w in at.warning]
    from scoring.cards import NAMES_ZH

    assert f"第一次识别为{NAMES_ZH[wrong]}" in said[0]  # the cards by their names, as the page's other lines say them
