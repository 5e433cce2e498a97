"""The named cards' inner fields (千字, 红花, 白花 and the extras 福禄寿禧财) drawn as printers draw them, not one way.

The renderer draws every deck's named cards alike: 千 twice, two flowers on a stem, the extra's character twice. Real
decks differ here as much as anywhere: one flower or three, plum or rosette or chrysanthemum, filled or in outline,
on a sprig with leaves or between small ornaments; 千 once, in a seal, written out as 千字, or a figure; the extra's
character once in a ring. A classifier that knows only the renderer's drawing reads another printer's 红花 lying whole
as a string card (the heads reader has to mend it). A deck of the ``medley`` family (vision.synth.decks) draws one of
these ways for its named cards; every card of the deck shares it, as a printer's do.
"""

from __future__ import annotations

import math
import random
from typing import Any

from vision.synth import faces as F
from vision.synth.marks import _hero

FLOWER_WAYS = ("pair", "one", "three", "sprig")
QZ_WAYS = ("twice", "once", "seal", "words", "figure")
EXTRA_WAYS = ("twice", "once", "ring")
# and what `synth --named-ways` draws among too (the medley family keeps the three above, so its seeds render as before):
# the character in a square seal, or in a double ring between two small marks, as a coin's medallion is drawn
MORE_EXTRA_WAYS = EXTRA_WAYS + ("seal", "medallion")
ORNAMENT_MARKS = ("none", "dots", "diamonds", "crosses", "rule")


def draw_names(rng: random.Random, extra_ways: tuple[str, ...] = EXTRA_WAYS) -> dict[str, Any]:
    """One deck's ways with its named cards (stored on its DeckSpec as ``names``), its extras drawn among ``extra_ways``."""
    return {"flowers": rng.choice(FLOWER_WAYS), "petals": rng.choice((4, 5, 5, 6, 8)), "petal": rng.uniform(0.35, 0.55),
            "hollow_red": rng.random() < 0.25, "white_filled": rng.random() < 0.3, "qz": rng.choice(QZ_WAYS),
            "extra": rng.choice(extra_ways), "marks": rng.choice(ORNAMENT_MARKS), "stem": rng.random() < 0.5,
            "size": rng.uniform(0.75, 1.1), "figure_seed": rng.randrange(1 << 30)}


def name_field(c: Any, code: str, spec: Any, x0: float, y0: float, x1: float, y1: float) -> None:
    """Draw the named card ``code``'s field inside (x0, y0)–(x1, y1) the deck's way (``spec.names``)."""
    ways = spec.names
    fw, fh = x1 - x0, y1 - y0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    lw = max(1, spec.stroke)
    if code in ("hh", "bh"):
        _flowers(c, code == "hh", ways, cx, cy, fw, fh, lw)
    elif code == "qz":
        _qz(c, spec, ways, cx, cy, x0, y0, fw, fh, lw)
    else:
        _extra(c, F.EXTRA_CHAR[code], spec, ways, cx, cy, x0, fw, fh, lw)
    if ways["marks"] != "none" and not (code in ("hh", "bh") and ways["flowers"] == "three"):
        _marks(c, ways["marks"], cx, y0 + fh * 0.08, y1 - fh * 0.08, fw, lw)


def flower(c: Any, cx: float, cy: float, r: float, red: bool, ways: dict[str, Any], lw: int) -> None:
    """One flower of ``ways['petals']`` petals: 红花's in red (filled, or in outline), 白花's in outline in ink (or
    its petals filled in ink around a paper-white heart)."""
    n, pr = ways["petals"], r * ways["petal"]
    filled = (red and not ways["hollow_red"]) or (not red and ways["white_filled"])
    d = c.layer(red)
    for i in range(n):
        a = 2 * math.pi * i / n - math.pi / 2
        px, py = cx + math.cos(a) * r * 0.55, cy + math.sin(a) * r * 0.55
        box = [px - pr, py - pr, px + pr, py + pr]
        d.ellipse(box, fill=255) if filled else d.ellipse(box, outline=255, width=lw)
    heart = r * 0.2
    c.layer(False).ellipse([cx - heart, cy - heart, cx + heart, cy + heart], fill=255 if red or not filled else 0,
                           outline=255, width=1)


def _flowers(c: Any, red: bool, ways: dict[str, Any], cx: float, cy: float, fw: float, fh: float, lw: int) -> None:
    r = min(fw * 0.45, fh * 0.2) * ways["size"]
    ink = c.layer(False)
    way = ways["flowers"]
    if way == "pair":
        ys = (cy - fh * 0.22, cy + fh * 0.22)
    elif way == "three":
        r = min(r, fh * 0.13)
        ys = (cy - fh * 0.3, cy, cy + fh * 0.3)
    else:
        ys = (cy,)
    if way == "sprig":  # a stem the field's length with a leaf on each side, the flower at its middle
        ink.line([cx, cy - fh * 0.4, cx, cy + fh * 0.4], fill=255, width=lw)
        for s in (-1, 1):
            ly = cy + s * fh * 0.24
            ink.ellipse([cx - r * 0.9 if s < 0 else cx, ly - r * 0.25, cx if s < 0 else cx + r * 0.9, ly + r * 0.25],
                        outline=255, width=lw)
    elif ways["stem"] and len(ys) > 1:
        ink.line([cx, ys[0], cx, ys[-1]], fill=255, width=lw)
    for y in ys:
        flower(c, cx, y, r, red, ways, lw)


def _qz(c: Any, spec: Any, ways: dict[str, Any], cx: float, cy: float, x0: float, y0: float, fw: float, fh: float,
        lw: int) -> None:
    size = int(fw * 0.8 * ways["size"])
    stroke = max(0, spec.stroke - 2)
    way = ways["qz"]
    if way == "twice":
        F.twice(c, "千", size, spec.font, x0, cx, cy, fw, fh, 0.22, 0.25, stroke=stroke)
    elif way in ("once", "seal"):
        c.text((cx, cy), "千", size, spec.font, stroke=stroke)
        if way == "seal":
            h = size * 0.62
            c.layer(True).rectangle([cx - h, cy - h, cx + h, cy + h], outline=255, width=lw + 1)
    elif way == "words":
        small = int(min(fw * 0.7, fh * 0.2) * ways["size"])
        c.text((cx, cy - fh * 0.14), "千", small, spec.font, stroke=stroke)
        c.text((cx, cy + fh * 0.14), "字", small, spec.font, stroke=stroke)
    else:  # a figure the field's length, the deck's own
        _hero(c, cx, y0 + fh * 0.05, y0 + fh * 0.95, random.Random(ways["figure_seed"]), spec.stroke)


def _extra(c: Any, ch: str, spec: Any, ways: dict[str, Any], cx: float, cy: float, x0: float, fw: float, fh: float,
           lw: int) -> None:
    size = int(fw * 0.75 * ways["size"])
    if ways["extra"] == "twice":
        F.twice(c, ch, size, spec.font, x0, cx, cy, fw, fh, 0.2, 0.3, red=True)
        return
    c.text((cx, cy), ch, size, spec.font, red=True)
    r = size * 0.7
    red = c.layer(True)
    if ways["extra"] in ("ring", "medallion"):
        red.ellipse([cx - r, cy - r, cx + r, cy + r], outline=255, width=lw)
    if ways["extra"] == "medallion":  # a second ring, in ink, and a small mark above and below
        r2, m = r * 1.18, max(2.0, fw * 0.05)
        c.layer(False).ellipse([cx - r2, cy - r2, cx + r2, cy + r2], outline=255, width=max(1, lw - 1))
        for y in (cy - r2 - fh * 0.12, cy + r2 + fh * 0.12):
            red.ellipse([cx - m, y - m, cx + m, y + m], fill=255)
    elif ways["extra"] == "seal":
        red.rectangle([cx - r, cy - r, cx + r, cy + r], outline=255, width=lw + 1)


def _marks(c: Any, kind: str, cx: float, top: float, bottom: float, fw: float, lw: int) -> None:
    """Small ornaments near the field's two ends (the same on every named card of the deck)."""
    r = max(2.0, fw * 0.06)
    for y in (top, bottom):
        if kind == "dots":
            c.layer(True).ellipse([cx - r, y - r, cx + r, y + r], fill=255)
        elif kind == "diamonds":
            c.layer(True).polygon([(cx, y - r * 1.4), (cx + r, y), (cx, y + r * 1.4), (cx - r, y)], fill=255)
        elif kind == "crosses":
            d = c.layer(False)
            d.line([cx - r * 1.5, y, cx + r * 1.5, y], fill=255, width=lw)
            d.line([cx, y - r * 1.5, cx, y + r * 1.5], fill=255, width=lw)
        else:  # a short rule
            c.layer(False).line([cx - fw * 0.3, y, cx + fw * 0.3, y], fill=255, width=lw)
