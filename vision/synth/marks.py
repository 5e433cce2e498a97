"""The marks an inner field (内堂) is drawn with: dice pips, flowers, coins, strings and the folk figure, each in the
printing style's stroke and kind (``style.coin``, ``style.string``). Drawn on a canvas's ink or red mask
(faces._Canvas: ``layer(red)``, ``w``, ``h``); faces.py lays them out, deck families (decks.py) too."""

from __future__ import annotations

import math
from typing import Any


def _dice(c: Any, cx, cy, n, box, r, red=False):
    pips = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)],
            4: [(-1, -1), (1, -1), (-1, 1), (1, 1)], 5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
            6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
            7: [(-1, -1), (1, -1), (-1, 0), (0, 0), (1, 0), (-1, 1), (1, 1)],
            8: [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)],
            9: [(x, y) for y in (-1, 0, 1) for x in (-1, 0, 1)]}[n]
    d = c.layer(red)
    s = box / 3
    for x, y in pips:
        px, py = cx + x * s, cy + y * s
        d.ellipse([px - r, py - r, px + r, py + r], fill=255)


def _flower(c: Any, cx, cy, radius, filled: bool, stroke: int):
    d = c.layer(red=filled)
    n = 5
    pr = radius * 0.45
    for i in range(n):
        a = 2 * math.pi * i / n - math.pi / 2
        px, py = cx + math.cos(a) * radius * 0.55, cy + math.sin(a) * radius * 0.55
        if filled:
            d.ellipse([px - pr, py - pr, px + pr, py + pr], fill=255)
        else:
            d.ellipse([px - pr, py - pr, px + pr, py + pr], outline=255, width=max(1, stroke))
    ink = c.layer(False)
    cr = radius * 0.22
    if filled:
        ink.ellipse([cx - cr, cy - cr, cx + cr, cy + cr], fill=255)
    else:
        ink.ellipse([cx - cr, cy - cr, cx + cr, cy + cr], outline=255, width=max(1, stroke))


def _coin(c: Any, cx, cy, r, style: Any, red=False):
    d = c.layer(red)
    w = max(1, style.stroke)
    if style.coin == "filled":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=255)
        h = r * 0.35
        d.rectangle([cx - h, cy - h, cx + h, cy + h], fill=0)
        return
    d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=255, width=w + 1)
    if style.coin in ("square", "ring"):
        h = r * 0.32
        if style.coin == "square":
            d.rectangle([cx - h, cy - h, cx + h, cy + h], outline=255, width=w)
        else:
            d.ellipse([cx - r * 0.6, cy - r * 0.6, cx + r * 0.6, cy + r * 0.6], outline=255, width=w)
            d.rectangle([cx - h * 0.6, cy - h * 0.6, cx + h * 0.6, cy + h * 0.6], fill=255)
    else:
        h = r * 0.3
        d.ellipse([cx - h, cy - h, cx + h, cy + h], outline=255, width=w)
    if style.coin == "rosette":  # petals inside the rim (deck families' "assorted" prints them)
        for k in range(6):
            a = math.pi * k / 3
            px, py = cx + math.cos(a) * r * 0.55, cy + math.sin(a) * r * 0.55
            d.ellipse([px - r * 0.2, py - r * 0.2, px + r * 0.2, py + r * 0.2], fill=255)


def _string(c: Any, x, y0, y1, style: Any, red=False):
    d = c.layer(red)
    w = max(1, style.stroke)
    if style.string == "bars":
        d.line([x, y0, x, y1], fill=255, width=w + 1)
        step = 9
        y = y0 + 3
        while y < y1 - 2:
            d.line([x - 4, y, x + 4, y], fill=255, width=w)
            y += step
    elif style.string == "rope":  # a twisted rope: a zigzag down the string
        pts, y, k = [], y0, 0
        while y <= y1:
            pts.append((x + (3 if k % 2 else -3), y))
            y += 5
            k += 1
        d.line(pts, fill=255, width=w + 1)
    elif style.string == "short":  # short bars, apart: a column of separate strokes
        seg, gap = 11, 5
        y = y0 + 2
        while y + seg <= y1:
            d.rounded_rectangle([x - 2 - w // 2, y, x + 2 + w // 2, y + seg], radius=2, fill=255)
            y += seg + gap
        return
    elif style.string == "beads":  # filled beads
        y = y0 + 3
        while y < y1 - 3:
            d.ellipse([x - 3, y - 3, x + 3, y + 3], fill=255)
            y += 8
    else:
        r = 4
        y = y0 + r
        while y < y1 - r:
            d.ellipse([x - r, y - r, x + r, y + r], outline=255, width=w)
            y += 2 * r + 1
    d.ellipse([x - 2, y0 - 3, x + 2, y0 + 1], fill=255)


def _figure(c: Any, cx, bottom, style: Any):
    """A folk-tale figure seen to the waist: head, hat, robe; ink with red sash."""
    d = c.layer(False)
    w = max(1, style.stroke)
    h = c.h
    hr = c.w * 0.12
    hy = bottom - h * 0.42
    d.ellipse([cx - hr, hy - hr, cx + hr, hy + hr], outline=255, width=w)
    d.polygon([(cx - hr * 1.3, hy - hr * 0.6), (cx + hr * 1.3, hy - hr * 0.6), (cx, hy - hr * 2.0)], outline=255, fill=255)
    d.polygon([(cx - c.w * 0.38, bottom), (cx + c.w * 0.38, bottom), (cx + hr * 1.2, hy + hr), (cx - hr * 1.2, hy + hr)],
              outline=255, width=w)
    c.layer(True).line([cx - c.w * 0.3, bottom - h * 0.2, cx + c.w * 0.3, bottom - h * 0.26], fill=255, width=w + 2)


HEADGEAR = ("none", "hat", "cap", "crown", "topknot", "helmet")
HELD = ("none", "staff", "sword", "flag", "fan")
ROBES = ("trapezoid", "straight", "bell")


def _hero(c: Any, cx: float, top: float, bottom: float, rng: Any, stroke: int) -> None:
    """A standing figure between ``top`` and ``bottom`` (a hero, as printers draw one on each 万 card): its head,
    headgear, robe, arms and what it holds all drawn from ``rng``, in ink with one part in red."""
    ink, red = c.layer(False), c.layer(True)
    w = max(1, stroke)
    h = bottom - top
    hr = min(c.w * rng.uniform(0.1, 0.16), h * 0.09)
    hy = top + hr * (2.2 if rng.random() < 0.8 else 1.4)
    red_part = rng.choice(("face", "sash", "hat", "held", "robe"))
    face_layer = red if red_part == "face" else ink
    if rng.random() < 0.5:
        face_layer.ellipse([cx - hr, hy - hr, cx + hr, hy + hr], outline=255, width=w)
    else:
        face_layer.ellipse([cx - hr, hy - hr, cx + hr, hy + hr], fill=255)
    hat = rng.choice(HEADGEAR)
    hd = red if red_part == "hat" else ink
    if hat == "hat":
        hd.polygon([(cx - hr * 1.5, hy - hr * 0.7), (cx + hr * 1.5, hy - hr * 0.7), (cx, hy - hr * 2.1)], fill=255)
    elif hat == "cap":
        hd.rectangle([cx - hr * 0.9, hy - hr * 1.8, cx + hr * 0.9, hy - hr * 0.8], fill=255)
        hd.line([cx - hr * 1.6, hy - hr * 0.9, cx + hr * 1.6, hy - hr * 0.9], fill=255, width=w + 1)
    elif hat == "crown":
        hd.polygon([(cx - hr, hy - hr * 0.8), (cx - hr, hy - hr * 1.9), (cx - hr * 0.5, hy - hr * 1.3), (cx, hy - hr * 2.0),
                    (cx + hr * 0.5, hy - hr * 1.3), (cx + hr, hy - hr * 1.9), (cx + hr, hy - hr * 0.8)], fill=255)
    elif hat == "topknot":
        hd.ellipse([cx - hr * 0.45, hy - hr * 1.9, cx + hr * 0.45, hy - hr * 1.0], fill=255)
    elif hat == "helmet":
        hd.chord([cx - hr * 1.3, hy - hr * 1.5, cx + hr * 1.3, hy + hr * 0.6], 180, 360, fill=255)
    if rng.random() < 0.35:  # a beard
        for k in (-1, 0, 1):
            ink.line([cx + k * hr * 0.4, hy + hr * 0.8, cx + k * hr * 0.6, hy + hr * 2.0], fill=255, width=w)
    neck = hy + hr * 1.1
    sw = c.w * rng.uniform(0.16, 0.26)  # half the shoulders
    hem = c.w * rng.uniform(0.24, 0.42)  # half the hem
    robe = rng.choice(ROBES)
    rl = red if red_part == "robe" else ink
    filled = rng.random() < 0.3
    if robe == "trapezoid":
        pts = [(cx - sw, neck), (cx + sw, neck), (cx + hem, bottom), (cx - hem, bottom)]
    elif robe == "straight":
        pts = [(cx - sw, neck), (cx + sw, neck), (cx + sw * 1.05, bottom), (cx - sw * 1.05, bottom)]
    else:  # bell: narrow at the waist, wide at the hem
        waist = neck + (bottom - neck) * 0.45
        pts = [(cx - sw, neck), (cx + sw, neck), (cx + sw * 0.7, waist), (cx + hem, bottom), (cx - hem, bottom),
               (cx - sw * 0.7, waist)]
    if filled:
        rl.polygon(pts, fill=255)
    else:
        rl.polygon(pts, outline=255, width=w)
        for _ in range(rng.randint(0, 3)):  # folds of the robe
            fx = cx + rng.uniform(-0.6, 0.6) * sw
            rl.line([fx, neck + (bottom - neck) * rng.uniform(0.2, 0.5), fx + rng.uniform(-0.3, 0.3) * hem,
                     bottom - 2], fill=255, width=max(1, w - 1))
    sash_y = neck + (bottom - neck) * rng.uniform(0.28, 0.45)
    (red if red_part == "sash" else ink).line([cx - sw * 1.1, sash_y, cx + sw * 1.1, sash_y + rng.uniform(-4, 4)],
                                              fill=255, width=w + 2)
    held = rng.choice(HELD)
    hand_y = neck + (bottom - neck) * rng.uniform(0.25, 0.5)
    side = rng.choice((-1, 1))
    for s in (-1, 1):  # the arms: from the shoulders out and down (or up, to hold something)
        hx = cx + s * (sw + c.w * rng.uniform(0.05, 0.14))
        hy2 = hand_y - (rng.uniform(0.1, 0.25) * h if s == side and held != "none" else 0)
        ink.line([cx + s * sw, neck + 2, hx, hy2], fill=255, width=w + 1)
        if s == side:
            hand = (hx, hy2)
    hl = red if red_part == "held" else ink
    if held in ("staff", "flag"):
        hl.line([hand[0], top + h * 0.02, hand[0], bottom], fill=255, width=w + 1)
        if held == "flag":
            fy = top + h * 0.02
            hl.polygon([(hand[0], fy), (hand[0] - side * c.w * 0.2, fy + h * 0.05), (hand[0], fy + h * 0.1)], fill=255)
    elif held == "sword":
        hl.line([hand[0], hand[1], hand[0] + side * c.w * 0.08, hand[1] - h * 0.25], fill=255, width=w + 1)
        hl.line([hand[0] - 4, hand[1] - 3, hand[0] + 4, hand[1] - 3], fill=255, width=w)
    elif held == "fan":
        r = c.w * 0.12
        hl.pieslice([hand[0] - r, hand[1] - r * 1.6, hand[0] + r, hand[1] + r * 0.4], 200, 340, fill=255)
