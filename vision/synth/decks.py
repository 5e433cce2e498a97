"""Deck families that differ in structure, not only in fonts: how the head (牌头) is laid out (numeral over suit,
numeral and suit parted by a red dot, white on a coloured box, side by side), which numerals (一二三, 壹贰叁, 1–9) and
suit characters (条 條 索, 丙 饼 筒, 万 萬) a printer uses, how the inner field (内堂) draws a card (the renderer's
strings, coins and figures; dice pips for every suit; the suit's character), head size, frames, inks and papers.

Each family is a recipe; every deck drawn from it randomizes what the recipe leaves open, beyond what any one printer
does, so that networks trained on some families must learn the card and its head, not one drawing. A family never
trained on is the project's own transfer test (leave one family out), beside the foreign deck.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, field, replace

import cv2
import numpy as np

from vision.fonts import HOLDOUT_FONTS, TRAIN_FONTS
from vision.synth import faces as F
from vision.synth.marks import _dice, _hero
from vision.synth.names import draw_names, name_field

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
    # every open choice at once, and what no other family prints: ornaments under the suit, bands between head and
    # field, numerals of any size and ink, strings as rope or beads, coins as rosettes, the count drawn as figures
    # (the sideways head stays out: sideways is the family left out)
    "assorted": dict(heads=("stacked", "dot", "boxed"), numerals=("zh", "upper", "arabic"),
                     fields=("classic", "pips", "character", "figures"), frames=("single", "double", "none")),
    # as many printers do, each 万 card shows its own figure (a hero of the old novels, drawn anew for every deck:
    # headgear, robe, arms, what the hands hold), with or without the count in dots; strings as chains, bars, rope,
    # beads or short separate bars; the assorted family's open choices of head and ornament
    "heroes": dict(heads=("stacked", "dot", "boxed"), numerals=("zh", "upper", "arabic"), fields=("heroes",),
                   frames=("single", "double", "none")),
    # every open choice of assorted and heroes, and what neither varies: the named cards drawn the printer's way
    # (vision.synth.names: one flower or three, a sprig, 千 once or in a seal or as a figure …) and a band printed
    # round the card's edge (a rim of grey, brown or colour, as many decks' edges are)
    "medley": dict(heads=("stacked", "dot", "boxed"), numerals=("zh", "upper", "arabic"),
                   fields=("classic", "pips", "character", "figures", "heroes"), frames=("single", "double", "none")),
}
RIM_COLOURS = ((120, 120, 120), (60, 80, 110), (40, 40, 140), (50, 90, 50), (110, 60, 30), (30, 30, 30), (150, 175, 190))
ORNAMENTS = ("none", "rosette", "dot", "diamond", "bar")
BANDS = ("none", "line", "double", "diamond")
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
    # drawn for the assorted family only (the other families' decks keep these defaults, and their seeds their files)
    ornament: str = "none"  # under the suit in the head: ORNAMENTS
    band: str = "none"  # between the head and the field: BANDS
    num_scale: float = 1.0  # the numeral's size against the family's
    num_red: bool = False  # the numeral printed in red ink
    figure: str = "figure"  # field "figures": what each count mark is (figure | lantern | ring | star)
    # drawn for the heroes family only
    hero_seed: int = 0  # the deck's figures: one per rank of 万, drawn from this seed (marks._hero)
    hero_dots: bool = False  # the count printed in dots beside the figure
    hero_double: bool = True  # the figure drawn twice, point-symmetric, as the renderer's; else once, the card's length
    # drawn for the medley family only
    names: dict = field(default_factory=dict)  # the named cards' ways (vision.synth.names.draw_names); {}: the renderer's
    rim: int = 0  # a band round the card's edge this many pixels wide (of FACE_W); 0: none
    rim_colour: tuple[int, int, int] = (120, 120, 120)
    rim_line: bool = False  # ... with a thin ink line along its inner edge

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
    spec = DeckSpec(
        family=family, font=rng.choice(HOLDOUT_FONTS if holdout_fonts else TRAIN_FONTS), head=rng.choice(r["heads"]),
        numeral=rng.choice(r["numerals"]), suit_chars={s: rng.choice(c) for s, c in SUIT_CHARS.items()},
        field_kind=rng.choice(r["fields"]), head_frac=rng.uniform(0.16, 0.28), frame=rng.choice(r["frames"]),
        paper=tuple(int(np.clip(c + rng.randint(-15, 10), 140, 255)) for c in paper_base), ink=ink, red=red,
        stroke=rng.randint(1, 4),
        coin=rng.choice(["square", "round", "filled", "ring"]), string=rng.choice(["chain", "bars"]),
        red_suit=rng.choice("tbw"), misreg=(rng.randint(-3, 3), rng.randint(-3, 3)), wear=rng.uniform(0, 0.9),
        texture=rng.uniform(2, 12), corner=rng.randint(3, 14), aspect=rng.uniform(4.0, 5.5))
    if family not in ("assorted", "heroes", "medley"):
        return spec
    spec = replace(spec, ornament=rng.choice(ORNAMENTS), band=rng.choice(BANDS), num_scale=rng.uniform(0.75, 1.15),
                   num_red=rng.random() < 0.25, figure=rng.choice(("figure", "lantern", "ring", "star")),
                   coin=rng.choice(["square", "round", "filled", "ring", "rosette"]),
                   string=rng.choice(["chain", "bars", "rope", "beads"]))
    if family == "assorted":
        return spec
    spec = replace(spec, string=rng.choice(["chain", "bars", "rope", "beads", "short", "short"]),
                   hero_seed=rng.randrange(1 << 30), hero_dots=rng.random() < 0.5, hero_double=rng.random() < 0.6)
    if family == "heroes":
        return spec
    colour = rng.choice(RIM_COLOURS)
    return replace(spec, names=draw_names(rng), rim=0 if rng.random() < 0.25 else rng.randint(2, 8),
                   rim_colour=tuple(int(np.clip(c + rng.randint(-20, 20), 0, 255)) for c in colour),
                   rim_line=rng.random() < 0.4)


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
    squeeze = 0.82 if spec.ornament != "none" and bottom else 1.0  # room for the ornament under the suit
    c.text((w / 2, h * (0.27 * squeeze if bottom else 0.5)), top, int(size * spec.num_scale), spec.font,
           red=spec.num_red, stroke=max(0, spec.stroke - 2))
    if bottom:
        if spec.head == "dot":
            r = max(2, w // 18)
            c.layer(True).ellipse([w / 2 - r, h * 0.52 * squeeze - r, w / 2 + r, h * 0.52 * squeeze + r], fill=255)
        c.text((w / 2, h * 0.78 * squeeze), bottom, int(size * 0.9 * squeeze), spec.font, red=red_suit)
    _ornament(c, spec, w, h)
    return c


def _ornament(c: F._Canvas, spec: DeckSpec, w: int, h: int) -> None:
    """What some printers put under the suit (a red rosette, dot, diamond or bar) and between the head and the field
    (a rule, a double rule, a rule with a red diamond): the same on every card of a deck, so it says nothing."""
    red, ink = c.layer(True), c.layer(False)
    cx, cy, r = w / 2, h * 0.9, max(2.0, min(w, h) * 0.07)
    if spec.ornament == "rosette":
        for k in range(6):
            a = math.pi * k / 3
            red.ellipse([cx + math.cos(a) * r - r / 2, cy + math.sin(a) * r - r / 2,
                         cx + math.cos(a) * r + r / 2, cy + math.sin(a) * r + r / 2], fill=255)
    elif spec.ornament == "dot":
        red.ellipse([cx - r, cy - r, cx + r, cy + r], fill=255)
    elif spec.ornament == "diamond":
        red.polygon([(cx, cy - r * 1.3), (cx + r, cy), (cx, cy + r * 1.3), (cx - r, cy)], fill=255)
    elif spec.ornament == "bar":
        red.rectangle([cx - w * 0.25, cy - r / 2, cx + w * 0.25, cy + r / 2], fill=255)
    if spec.band != "none":
        y = h - 2
        ink.line([0, y, w, y], fill=255, width=max(1, spec.stroke - 1))
        if spec.band == "double":
            ink.line([0, y - 4, w, y - 4], fill=255, width=1)
        elif spec.band == "diamond":
            red.polygon([(cx, y - 4), (cx + 4, y), (cx, y + 4), (cx - 4, y)], fill=255)


def _field(c: F._Canvas, code: str, spec: DeckSpec, x0: float, y0: float, x1: float, y1: float) -> None:
    if spec.names and not code[0].isdigit():
        name_field(c, code, spec, x0, y0, x1, y1)  # the printer's way with the named cards
        return
    if spec.field_kind == "classic" or not code[0].isdigit():
        F._field(c, code, spec, x0, y0, x1, y1)  # the renderer's strings, coins, figures and names
        return
    n, suit = int(code[0]), code[-1]
    fw, fh = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    if spec.field_kind == "character":
        c.text((cx, y0 + fh * 0.3), spec.suit_chars[suit], int(fw * 0.8), spec.font, red=suit == spec.red_suit)
        _dice(c, cx, y0 + fh * 0.72, n, min(fw * 0.8, fh * 0.35), max(2, int(fw / 14)), red=n in (1, 5, 9))
        return
    if spec.field_kind == "figures":  # the count as that many small figures (lanterns, rings, stars) in a column
        _figures(c, n, suit, spec, x0, y0, x1, y1)
        return
    if spec.field_kind == "heroes":
        if suit == "w":
            _hero_field(c, n, spec, x0, y0, x1, y1)
        else:
            F._field(c, code, spec, x0, y0, x1, y1)  # strings (short bars among them) and coins
        return
    for y in (y0 + fh * 0.25, y0 + fh * 0.75):  # pips: the count as dice, twice, for every suit
        _dice(c, cx, y, n, min(fw * 0.85, fh * 0.4), max(2, int(fw / 13)), red=suit == spec.red_suit)


def _figures(c: F._Canvas, n: int, suit: str, spec: DeckSpec, x0: float, y0: float, x1: float, y1: float) -> None:
    """n marks in up to two columns, point-symmetric; each a small drawing of the deck's ``figure`` kind, a suit's
    own mark inked red on one suit. A printer's way of showing the count without the renderer's strings or coins."""
    slots = F._layout(n, 2 if n > 3 else 1)
    rows = max(r for r, _ in slots) + 1
    fw, fh = x1 - x0, y1 - y0
    r = min(fw / 4.6 if n > 3 else fw / 3, fh / (2.4 * rows))
    red = suit == spec.red_suit
    d = c.layer(red)
    lw = max(1, spec.stroke)
    for row, col in slots:
        cy = y0 + fh * (row + 0.5) / rows
        cx = (x0 + x1) / 2 if col < 0 or n <= 3 else x0 + fw * (0.27 + 0.46 * col)
        if spec.figure == "lantern":
            d.ellipse([cx - r * 0.8, cy - r, cx + r * 0.8, cy + r], outline=255, width=lw)
            d.line([cx - r * 0.5, cy - r, cx + r * 0.5, cy - r], fill=255, width=lw + 1)
            d.line([cx - r * 0.5, cy + r, cx + r * 0.5, cy + r], fill=255, width=lw + 1)
        elif spec.figure == "ring":
            d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=255, width=lw + 1)
            d.ellipse([cx - r * 0.3, cy - r * 0.3, cx + r * 0.3, cy + r * 0.3], fill=255)
        elif spec.figure == "star":
            pts = [(cx + math.cos(math.pi * k / 5 - math.pi / 2) * (r if k % 2 == 0 else r * 0.45),
                    cy + math.sin(math.pi * k / 5 - math.pi / 2) * (r if k % 2 == 0 else r * 0.45)) for k in range(10)]
            d.polygon(pts, fill=255)
        else:  # a little figure: head, body
            d.ellipse([cx - r * 0.35, cy - r, cx + r * 0.35, cy - r * 0.3], fill=255)
            d.polygon([(cx - r * 0.7, cy + r), (cx + r * 0.7, cy + r), (cx, cy - r * 0.3)], outline=255, fill=255)


def _hero_field(c: F._Canvas, n: int, spec: DeckSpec, x0: float, y0: float, x1: float, y1: float) -> None:
    """A 万 card of the heroes family: the rank's own figure (the same on every card of that rank of the deck), drawn
    twice point-symmetric or once the field's length; the count in dice dots above it when the deck prints them."""
    fw, fh = int(x1 - x0), int(y1 - y0)
    rng = random.Random(spec.hero_seed * 10 + n)
    if spec.hero_double:
        half = fh // 2
        fig = F._Canvas(fw, half)
        top = half * (0.3 if spec.hero_dots else 0.06)
        _hero(fig, fw / 2, top, half - 2, rng, spec.stroke)
        if spec.hero_dots:
            _dice(fig, fw / 2, half * 0.15, n, min(fw * 0.7, half * 0.26), max(2, int(fw / 16)), red=n in (1, 4, 5, 9))
        F._paste_double(c, fig, int(x0), int(y0), half)
        return
    fig = F._Canvas(fw, fh)
    top = fh * (0.2 if spec.hero_dots else 0.04)
    _hero(fig, fw / 2, top, fh - 3, rng, spec.stroke)
    if spec.hero_dots:
        _dice(fig, fw / 2, fh * 0.1, n, min(fw * 0.7, fh * 0.14), max(2, int(fw / 16)), red=n in (1, 4, 5, 9))
    for name in ("ink", "red"):
        getattr(c, name).paste(getattr(fig, name), (int(x0), int(y0)), getattr(fig, name))


def render_deck_face(code: str, spec: DeckSpec, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One face of the deck: (BGR uint8 FACE_H × FACE_W × 3, alpha), laid out and printed as faces.render_face does."""
    face, alpha = F.lay_out_face(code, spec, seed, _head, _field)
    return (_with_rim(face, spec) if spec.rim else face), alpha


def _with_rim(face: np.ndarray, spec: DeckSpec) -> np.ndarray:
    """The band printed round the card's edge, ``spec.rim`` pixels wide, over the paper's texture (its shading kept)."""
    out = face.astype(np.float32)
    band = np.ones(face.shape[:2], bool)
    band[spec.rim:-spec.rim, spec.rim:-spec.rim] = False
    shade = out[band].mean(1, keepdims=True) / max(float(np.mean(spec.paper)), 1.0)
    out[band] = np.clip(np.array(spec.rim_colour, np.float32) * shade, 0, 255)
    if spec.rim_line:
        r = spec.rim
        cv2.rectangle(out, (r, r), (face.shape[1] - 1 - r, face.shape[0] - 1 - r), tuple(float(c) for c in spec.ink), 1)
    return out.astype(np.uint8)


ALL_FAMILIES = F.FAMILIES + DECK_FAMILIES  # every style a synth job may name


def deck_style(rng: random.Random, family: str) -> F.Style | DeckSpec:
    """A deck of any family: the renderer's original styles (faces.random_style) or a structural family here."""
    return random_deck(rng, family) if family in FAMILY_RECIPES else F.random_style(rng, family)

