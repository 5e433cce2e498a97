"""Deck families that differ in structure, not only in fonts: how the head (牌头) is laid out (numeral over suit,
numeral and suit parted by a red dot, white on a coloured box, side by side), which numerals (一二三, 壹贰叁, 1–9) and
suit characters (条 條 索, 丙 饼 筒, 万 萬) a printer uses, how the inner field (内堂) draws a card (the renderer's
strings, coins and figures; dice pips for every suit; the suit's character), head size, frames, inks and papers.

Each family is a recipe; every deck drawn from it randomizes what the recipe leaves open, beyond what any one printer
does, so that networks trained on some families must learn the card and its head, not one drawing. A family never
trained on is the project's own transfer test (leave one family out), beside the foreign deck.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

import numpy as np

from vision.fonts import HOLDOUT_FONTS, TRAIN_FONTS
from vision.synth import faces as F

NUMERALS = {"zh": F.NUM_ZH, "upper": F.NUM_UPPER, "arabic": "123456789"}
SUIT_CHARS = {"t": ("条", "條", "索"), "b": ("丙", "饼", "筒"), "w": ("万", "萬")}
NAME_CHARS = {"qz": "千字", "hh": "红花", "bh": "白花"}
# the recipes: what each family fixes (the rest is drawn for every deck)
FAMILY_RECIPES = {
    "woodblock": dict(heads=("stacked",), numerals=("zh",), fields=("classic",), frames=("single", "double")),
    "dotted": dict(heads=("dot",), numerals=("zh", "upper"), fields=("classic", "pips"), frames=("double",)),
    "boxed": dict(heads=("boxed",), numerals=("zh", "arabic"), fields=("pips", "character"), frames=("none", "single")),
    "sideways": dict(heads=("side",), numerals=("arabic", "zh"), fields=("character", "classic"), frames=("single", "none")),
    "formal": dict(heads=("stacked", "dot"), numerals=("upper",), fields=("pips", "classic"), frames=("double",)),
}
DECK_FAMILIES = tuple(FAMILY_RECIPES)


@dataclass(frozen=True)
class DeckSpec:
    """One deck: its family and every choice made for it (what faces.py's drawing primitives read is named alike)."""

    family: str
    font: str
    head: str  # stacked | dot | boxed | side
    numeral: str  # zh | upper | arabic
    suit_chars: dict[str, str] = field(default_factory=dict)
    field_kind: str = "classic"  # classic | pips | character
    head_frac: float = 0.2
    frame: str = "single"
    paper: tuple[int, int, int] = (225, 240, 246)
    ink: tuple[int, int, int] = (30, 30, 30)
    red: tuple[int, int, int] = (40, 40, 200)
    stroke: int = 2
    coin: str = "round"
    string: str = "bars"
    red_suit: str = "t"
    misreg: tuple[int, int] = (0, 0)
    wear: float = 0.3
    texture: float = 6.0
    corner: int = 8
    aspect: float = F.FACE_H / F.FACE_W  # the card's length : width (the face is drawn at the renderer's, then fitted)

    def to_dict(self) -> dict:
        return asdict(self) | {"deck": True}

    def render(self, code: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """One face of this deck (FaceSource draws a deck's faces through this)."""
        return render_deck_face(code, self, seed)


def random_deck(rng: random.Random, family: str, holdout_fonts: bool = False) -> DeckSpec:
    """A deck of ``family`` (DECK_FAMILIES) with the family's open choices drawn."""
    if family not in FAMILY_RECIPES:
        raise ValueError(f"Unknown deck family {family!r}; choose from {', '.join(DECK_FAMILIES)}.")
    r = FAMILY_RECIPES[family]
    paper_base = rng.choice([(225, 240, 246), (190, 225, 240), (205, 215, 220), (200, 236, 245), (175, 215, 235)])
    ink = rng.choice([(20, 20, 20), (25, 25, 110), (90, 40, 30), (10, 30, 10)])
    red = (rng.randint(20, 70), rng.randint(20, 60), rng.randint(150, 230))
    return DeckSpec(
        family=family, font=rng.choice(HOLDOUT_FONTS if holdout_fonts else TRAIN_FONTS), head=rng.choice(r["heads"]),
        numeral=rng.choice(r["numerals"]), suit_chars={s: rng.choice(c) for s, c in SUIT_CHARS.items()},
        field_kind=rng.choice(r["fields"]), head_frac=rng.uniform(0.16, 0.28), frame=rng.choice(r["frames"]),
        paper=tuple(int(np.clip(c + rng.randint(-15, 10), 140, 255)) for c in paper_base), ink=ink, red=red,
        stroke=rng.randint(1, 4),
        coin=rng.choice(["square", "round", "filled", "ring"]), string=rng.choice(["chain", "bars"]),
        red_suit=rng.choice("tbw"), misreg=(rng.randint(-3, 3), rng.randint(-3, 3)), wear=rng.uniform(0, 0.9),
        texture=rng.uniform(2, 12), corner=rng.randint(3, 14), aspect=rng.uniform(4.0, 5.5))


def _head_text(code: str, spec: DeckSpec) -> tuple[str, str]:
    """The head's two parts: (numeral, suit) or the name's two characters (one for the extras)."""
    if code[0].isdigit():
        return NUMERALS[spec.numeral][int(code[0]) - 1], spec.suit_chars[code[-1]]
    if code in NAME_CHARS:
        return NAME_CHARS[code][0], NAME_CHARS[code][1]
    return F.EXTRA_CHAR[code], ""


def _head(code: str, spec: DeckSpec, w: int, h: int) -> F._Canvas:
    c = F._Canvas(w, h)
    top, bottom = _head_text(code, spec)
    red_suit = code[0].isdigit() and code[-1] == spec.red_suit or code in ("hh", "fu", "lu", "shou", "xi", "cai")
    size = int(min(w * 0.7, h * 0.42))
    if spec.head == "side" and bottom:
        s = int(min(w * 0.45, h * 0.7))
        c.text((w * 0.27, h * 0.5), top, s, spec.font)
        c.text((w * 0.73, h * 0.5), bottom, s, spec.font, red=red_suit)
        return c
    if spec.head == "boxed":
        c.layer(True).rounded_rectangle([2, 2, w - 3, h - 3], radius=max(2, w // 10), fill=255)  # the box, in red ink
        # the text is cut out of the box: the paper shows through (white on colour)
        cut = F._Canvas(w, h)
        cut.text((w / 2, h * (0.3 if bottom else 0.5)), top, size, spec.font)
        if bottom:
            cut.text((w / 2, h * 0.74), bottom, size, spec.font)
        c.red.paste(0, mask=cut.ink)
        return c
    c.text((w / 2, h * (0.27 if bottom else 0.5)), top, size, spec.font, stroke=max(0, spec.stroke - 2))
    if bottom:
        if spec.head == "dot":
            r = max(2, w // 18)
            c.layer(True).ellipse([w / 2 - r, h * 0.52 - r, w / 2 + r, h * 0.52 + r], fill=255)
        c.text((w / 2, h * 0.78), bottom, int(size * 0.9), spec.font, red=red_suit)
    return c


def _field(c: F._Canvas, code: str, spec: DeckSpec, x0: float, y0: float, x1: float, y1: float) -> None:
    if spec.field_kind == "classic" or not code[0].isdigit():
        F._field(c, code, spec, x0, y0, x1, y1)  # the renderer's strings, coins, figures and names
        return
    n, suit = int(code[0]), code[-1]
    fw, fh = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    if spec.field_kind == "character":
        c.text((cx, y0 + fh * 0.3), spec.suit_chars[suit], int(fw * 0.8), spec.font, red=suit == spec.red_suit)
        F._dice(c, cx, y0 + fh * 0.72, n, min(fw * 0.8, fh * 0.35), max(2, int(fw / 14)), red=n in (1, 5, 9))
        return
    for y in (y0 + fh * 0.25, y0 + fh * 0.75):  # pips: the count as dice, twice, for every suit
        F._dice(c, cx, y, n, min(fw * 0.85, fh * 0.4), max(2, int(fw / 13)), red=suit == spec.red_suit)


def render_deck_face(code: str, spec: DeckSpec, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One face of the deck: (BGR uint8 FACE_H × FACE_W × 3, alpha), laid out and printed as faces.render_face does."""
    return F.lay_out_face(code, spec, seed, _head, _field)


ALL_FAMILIES = F.FAMILIES + DECK_FAMILIES  # every style a synth job may name


def deck_style(rng: random.Random, family: str) -> F.Style | DeckSpec:
    """A deck of any family: the renderer's original styles (faces.random_style) or a structural family here."""
    return random_deck(rng, family) if family in FAMILY_RECIPES else F.random_style(rng, family)

