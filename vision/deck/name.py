"""Naming the faces of a calibration photo: by their place in the rows (条 1–9, 丙 1–9, 万 1–9, then 千字 红花 白花
and any extras: docs/calibration.md), checked against what their heads read; or, for cards laid in any order, by
their heads alone. Whatever keeps the naming from being sure — a card missing from a row, cards touching, something
that is not a card, two cards of one kind — is one sentence saying where, with a picture that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from scoring.cards import CODES, NAMES_ZH
from scoring.messages import Msg
from vision.deck.find import Blob, Found, cards_touching
from vision.infer.geometry import order_long_axis_vertical, rows_of

CALIBRATION_ORDER: tuple[str, ...] = CODES  # 1t…9t 1b…9b 1w…9w qz hh bh [fu lu shou xi cai]
SHORT = 0.9  # a card found shorter than this share of its row neighbours' length is cut short
NEAR = 4  # the neighbours: this many cards each side in its row (three cards cut short side by side are still told)
PER_ROW = 9
SURE_HEAD = 0.9  # a legible head's reading this sure that gainsays the card's place is reported
LEGIBLE = 0.5  # ... when the head is at least this legible (heads.read_heads)
MAX_OBJECTS = 3  # more things that are not cards than this are said in one sentence


class CalibrationError(ValueError):
    """A calibration photo or face folder that cannot be named; ``picture`` shows where, when there is one."""

    def __init__(self, message: str, picture: np.ndarray | None = None, said: list[str] | None = None):
        super().__init__(message)
        self.picture = picture
        self.said = said or [message]  # each sentence (a Msg, to be said in the page's language)


@dataclass(frozen=True)
class Face:
    """One named card of the photo: its code, its outline (corners with the card's top first), its row and place
    in the row (from 0), and what its heads read (code and probability; ``None`` when no reader ran)."""

    code: str
    quad: np.ndarray
    row: int
    col: int
    head: str | None = None
    head_p: float = 0.0
    reading: np.ndarray | None = None  # the heads' log-probabilities over CODES (legible heads only)


def _place(centre: np.ndarray, quads: list[np.ndarray], rows: list[list[int]], along: np.ndarray,
           across: np.ndarray) -> tuple[int, int]:
    """Where a point lies among the rows: the nearest row (from 1) and how many of its cards come before it."""
    a = along / float(np.linalg.norm(along))
    row_s = [float(np.mean([quads[k].mean(0) @ a for k in row])) for row in rows]
    ri = int(np.argmin([abs(centre @ a - s) for s in row_s]))
    return ri + 1, sum(quads[k].mean(0) @ across < centre @ across for k in rows[ri])


def check_layout(found: Found) -> tuple[list[list[int]], list[str], list[Blob]]:
    """The rows of the photo's cards and what is wrong with them for naming by place: sentences (Msg), and the
    blobs to mark on the picture."""
    quads = [b.quad for b in found.cards]
    if len(quads) < 3:
        return [], [Msg("calib_few", f"Found {len(quads)} cards in the photo: lay one card of each kind face up, a little "
                        "apart, on a plain table that differs from the cards' paper, and take the photo from above.",
                        n=len(quads))], list(found.others)
    # the way up whose rows are full but the last (the short row of 千字 红花 白花 ends the layout)
    ways = [rows_of([order_long_axis_vertical(q) for q in quads], turned=turned) for turned in (False, True)]
    rows, along, across = max(ways, key=lambda w: (sum(len(r) == PER_ROW for r in w[0][:-1]) - len(w[0]),
                                                    len(w[0][-1]) <= PER_ROW and len(w[0][0]) == PER_ROW))
    said, marked = [], []
    # anything else near the rows: cards touching, or an object
    reach = np.linalg.norm(along) * 0.5
    lo, hi = np.min(np.vstack(quads), 0) - reach, np.max(np.vstack(quads), 0) + reach
    for b in found.others:
        if not (np.all(b.centre >= lo) and np.all(b.centre <= hi)):
            continue  # the table's pattern or an object well away from the cards: not in the way
        row, after = _place(b.centre, quads, rows, along, across)
        if b.kind == "touching":
            n = cards_touching(b, found.card_area)
            said.append(Msg("calib_touching", f"{n} cards touch in row {row}, after {after} card(s): lay them a little apart.",
                            n=n, row=row, after=after))
        else:
            said.append(Msg("calib_object", f"Something that is not a card lies in row {row}, after {after} card(s): take "
                            "it away, or lay the card flat and whole in view.", row=row, after=after))
        marked.append(b)
    objects = [m for m in said if m.key == "calib_object"]
    if len(objects) > MAX_OBJECTS:  # a patterned table, not things laid there: one sentence
        said = [m for m in said if m.key != "calib_object"] + [
            Msg("calib_objects", f"{len(objects)} things that are not cards lie among the cards (marked in red): lay the "
                "cards on a plain table.", n=len(objects))]
    said += _cut_short(found, rows, marked)
    n = len(quads)
    for ri, row in enumerate(rows[:-1]):
        if len(row) != PER_ROW:
            said.append(Msg("calib_row", f"Row {ri + 1} holds {len(row)} cards, not {PER_ROW}: lay the cards in rows of "
                            "nine in the documented order.", row=ri + 1, n=len(row), per_row=PER_ROW))
    if not said and n not in (30, 35):
        counts = ", ".join(str(len(r)) for r in rows)
        said.append(Msg("calib_count", f"Found {n} cards ({counts} in its rows), but a calibration photo holds 30 (条, 丙, "
                        "万 1–9, then 千字 红花 白花) or 35 (with 福禄寿禧财) in rows of nine.", n=n, rows=counts))
    return rows, said, marked


def _cut_short(found: Found, rows: list[list[int]], marked: list[Blob]) -> list[Msg]:
    """A card found shorter than its neighbours in the row (SHORT of theirs): part of it blends into the table (a pale
    patch, a glare) and its face would lose a head. Compared within the row, so a photo taken at a slant, whose cards
    shrink toward the far side, is not taken for it."""
    length = [b.length for b in found.cards]
    said = []
    for ri, row in enumerate(rows):
        for ci, i in enumerate(row):
            near = [length[row[j]] for j in range(ci - NEAR, ci + NEAR + 1) if j != ci and 0 <= j < len(row)]
            if near and length[i] < SHORT * float(np.median(near)):
                said.append(Msg("calib_short", f"Card {ci + 1} of row {ri + 1} looks shorter than the cards beside it: lay it "
                                "whole in view, on a part of the table that differs from its paper.", row=ri + 1, col=ci + 1))
                marked.append(found.cards[i])
    return said


def name_by_place(found: Found, rows: list[list[int]]) -> list[Face]:
    """The faces named by their place in the rows, in the documented order."""
    out = []
    k = 0
    for ri, row in enumerate(rows):
        for ci, i in enumerate(row):
            out.append(Face(CALIBRATION_ORDER[k], order_long_axis_vertical(found.cards[i].quad), ri, ci))
            k += 1
    return out


def with_heads(img: np.ndarray, faces: list[Face]) -> list[Face]:
    """Each face with what its heads read (vision.infer.heads; faces unchanged when the reader is not installed)."""
    from vision.infer import heads

    if not faces or not heads.available():
        return faces
    logp, legible = heads.read_heads(img, [f.quad for f in faces])
    out = []
    for f, lp, leg in zip(faces, logp, legible, strict=True):
        best = int(np.argmax(lp))
        sure = float(np.exp(lp[best])) if leg >= LEGIBLE else 0.0
        out.append(Face(f.code, f.quad, f.row, f.col, CODES[best], sure, lp if leg >= LEGIBLE else None))
    return out


def disagreements(faces: list[Face]) -> list[str]:
    """Sentences (Msg) for cards whose heads surely read another card than their place names, and for cards that
    surely read as one kind."""
    said = []
    for f in faces:
        if f.head and f.head != f.code and f.head_p >= SURE_HEAD:
            said.append(Msg("calib_head", f"Card {f.col + 1} of row {f.row + 1} reads {f.head} on its head, but its place "
                            f"names it {f.code}.", col=f.col + 1, row=f.row + 1, head=f.head, code=f.code))
    said += _read_twice([f for f in faces if f.head and f.head_p >= SURE_HEAD], lambda f: f.head)
    return said


def _read_twice(faces: list[Face], code_of) -> list[str]:
    by: dict[str, int] = {}
    for f in faces:
        by[code_of(f)] = by.get(code_of(f), 0) + 1
    return [Msg("calib_twice", f"{n} cards read {code} on their heads: a kind laid twice, another missing.", n=n, code=code)
            for code, n in by.items() if n > 1]


def name_by_heads(faces: list[Face], kinds: int = 30) -> tuple[list[Face], list[str]]:
    """Faces laid in any order, named by their heads: each kind once (30, or 35 with the extras), the likeliest
    pairs of card and kind first; a card whose kind so given its heads do not read at least as likely as SURE_HEAD's
    complement, or an illegible head, is a sentence (lay them in order instead)."""
    codes = CODES[: 35 if len(faces) > 30 else kinds]
    pairs = sorted(((float(f.reading[CODES.index(c)]), k, c) for k, f in enumerate(faces) if f.reading is not None
                    for c in codes), reverse=True)
    given: dict[int, tuple[str, float]] = {}
    taken: set[str] = set()
    for lp, k, c in pairs:  # greedy: the surest card–kind pair, then the surest among the rest
        if k not in given and c not in taken:
            given[k] = (c, float(np.exp(lp)))
            taken.add(c)
    out = [Face(given[k][0] if k in given else f.code, f.quad, f.row, f.col, f.head, given.get(k, ("", 0.0))[1], f.reading)
           for k, f in enumerate(faces)]
    unsure = [f for f in out if f.head_p < 1 - SURE_HEAD]
    said = []
    if unsure:
        said.append(Msg("calib_unsure", f"The heads of {len(unsure)} cards cannot be read surely: lay the cards in the "
                        "documented order instead, and leave out --any-order.", n=len(unsure)))
    return out, said


def picture(img: np.ndarray, faces: list[Face], marked: list[Blob], flagged: set[int] = frozenset()) -> np.ndarray:
    """The photo with each named card outlined and labelled (red where something is wrong) and every blob that
    keeps the naming from being sure outlined in red."""
    from PIL import Image, ImageDraw

    from vision.fonts import UI_FONT, font

    scale = min(1.0, 1600 / max(img.shape[:2]))
    vis = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else img.copy()
    lw = max(2, int(round(max(vis.shape[:2]) / 500)))
    for k, f in enumerate(faces):
        cv2.polylines(vis, [np.round(f.quad * scale).astype(np.int32)], True, (40, 40, 230) if k in flagged else (60, 200, 60), lw)
    for b in marked:
        cv2.polylines(vis, [np.round(b.quad * scale).astype(np.int32)], True, (40, 40, 230), lw * 2)
    pil = Image.fromarray(cv2.cvtColor(vis, cv2.COLOR_BGR2RGB))
    draw = ImageDraw.Draw(pil)
    size = max(14, int(max(vis.shape[:2]) / 55))
    for k, f in enumerate(faces):
        x, y = (f.quad[0] + f.quad[1]) / 2 * scale
        draw.text((float(x), float(y) - 4), NAMES_ZH.get(f.code, ""), font=font(UI_FONT, size), anchor="md",
                  fill=(230, 40, 40) if k in flagged else (255, 255, 255), stroke_width=2, stroke_fill=(0, 0, 0))
    return cv2.cvtColor(np.asarray(pil), cv2.COLOR_RGB2BGR)
