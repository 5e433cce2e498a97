"""Card-face renderer: all 35 kinds in randomized printing styles (DESIGN.md "What a real deck looks like").

A face is a portrait strip FACE_W × FACE_H (≈ 1 : 4.7), BGR uint8, with an alpha mask for its rounded
corners. Both ends carry the card head; the framed inner field shows coins (丙), strings (条), a
double-headed figure with dice dots (万), 千, a red or outlined flower, or an extra's character. Faces
are close to point-symmetric. Styles vary fonts, numerals, stroke weight, colours, layout, paper,
wear and print misregistration; the held-out family uses a font and marks no training style uses.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw

from scoring.cards import CODES
from vision.fonts import HOLDOUT_FONTS, TRAIN_FONTS, font
from vision.infer.imageio import IMAGE_EXTS, load_image
from vision.synth.marks import _coin, _dice, _figure, _flower, _string

FACE_W, FACE_H = 96, 448

NUM_ZH = "一二三四五六七八九"
NUM_SUZHOU = "〡〢〣〤〥〦〧〨〩"
NUM_UPPER = "壹贰叁肆伍陆柒捌玖"
SUIT_CHAR = {"t": "条", "b": "丙", "w": "万"}
EXTRA_CHAR = {"fu": "福", "lu": "禄", "shou": "寿", "xi": "禧", "cai": "财"}
TRAIN_FAMILIES = ("classic", "bold", "fine", "folk")
# "scrambled": a training family's print whose heads show nine other characters for the ranks, a new choice
# for each style: numerals no card says what they mean, as on a deck printed in a way never trained on, so
# the classifier learns to read the field too (asked for by name, never drawn at random: seeds keep their files)
SCRAMBLED = "scrambled"
FAMILIES = TRAIN_FAMILIES + (SCRAMBLED, "holdout")
# what a scrambled head may show: characters of the shipped font subsets that are no numeral, suit or extra
SCRAMBLE_GLYPHS = "会儿分半单双合吊后听喜地塌天头子字将尾庄底开总成手把折拖捞摸整文明普暗月未杠海清狠白碰穷筒红翻老胡自花计起边进通钱飘龙"


@dataclass(frozen=True)
class Style:
    family: str
    font: str
    numeral: str  # zh | suzhou | dots | upper (holdout) | scrambled
    paper: tuple[int, int, int]
    ink: tuple[int, int, int]
    red: tuple[int, int, int]
    stroke: int
    frame: str  # single | double | none
    head_frac: float
    coin: str  # square | round | ring | filled
    string: str  # chain | bars
    red_suit: str  # which suit's head glyph is printed red
    misreg: tuple[int, int]
    wear: float
    texture: float
    corner: int
    glyphs: str = ""  # numeral "scrambled": the characters for ranks 1–9

    def to_dict(self) -> dict:
        return asdict(self)


def random_style(rng: random.Random, family: str | None = None) -> Style:
    """Draw a printing style; ``family`` in FAMILIES (default: a random training family)."""
    fam = family or rng.choice(TRAIN_FAMILIES)
    if fam not in FAMILIES:
        raise ValueError(f"Unknown style family {fam!r}; choose from {', '.join(FAMILIES)}.")
    if fam == SCRAMBLED:
        base = random_style(rng, rng.choice(TRAIN_FAMILIES))
        return replace(base, family=fam, numeral="scrambled", glyphs="".join(rng.sample(SCRAMBLE_GLYPHS, 9)))
    paper_base = rng.choice([(225, 240, 246), (200, 232, 245), (210, 236, 240), (236, 242, 244), (190, 222, 238)])
    paper = tuple(int(np.clip(c + rng.randint(-12, 10), 150, 255)) for c in paper_base)
    ink = tuple(rng.randint(10, 55) for _ in range(3))
    red = (rng.randint(20, 70), rng.randint(20, 60), rng.randint(160, 230))
    if fam == "holdout":
        return Style(fam, rng.choice(HOLDOUT_FONTS), "upper", paper, ink, red, rng.randint(2, 3), "double", rng.uniform(0.17, 0.2),
                     "ring", "bars", rng.choice("tbw"), (rng.randint(-2, 2), rng.randint(-2, 2)), rng.uniform(0, 0.5),
                     rng.uniform(3, 10), rng.randint(6, 12))
    stroke = {"bold": rng.randint(3, 4), "fine": 1, "classic": 2, "folk": rng.randint(2, 3)}[fam]
    numeral = {"classic": rng.choice(["zh", "suzhou"]), "bold": "zh", "fine": rng.choice(["suzhou", "dots"]),
               "folk": rng.choice(["zh", "suzhou", "dots"])}[fam]
    return Style(
        family=fam,
        font=rng.choice(TRAIN_FONTS),
        numeral=numeral,
        paper=paper,
        ink=ink,
        red=red,
        stroke=stroke,
        frame=rng.choice(["single", "double", "none"] if fam == "folk" else ["single", "double"]),
        head_frac=rng.uniform(0.15, 0.22),
        coin=rng.choice(["square", "round", "filled"]),
        string=rng.choice(["chain", "bars"]),
        red_suit=rng.choice("tbw"),
        misreg=(rng.randint(-3, 3), rng.randint(-3, 3)),
        wear=rng.uniform(0, 1),
        texture=rng.uniform(2, 12),
        corner=rng.randint(4, 14),
    )


class _Canvas:
    """Two masks (ink and red) drawn with PIL, composed on paper at the end."""

    def __init__(self, w: int, h: int):
        self.w, self.h = w, h
        self.ink = Image.new("L", (w, h), 0)
        self.red = Image.new("L", (w, h), 0)

    def layer(self, red: bool) -> ImageDraw.ImageDraw:
        return ImageDraw.Draw(self.red if red else self.ink)

    def text(self, xy_center, txt, size, fname, red=False, stroke=0):
        f = font(fname, size)
        d = self.layer(red)
        d.text(xy_center, txt, font=f, fill=255, anchor="mm", stroke_width=stroke, stroke_fill=255)


def _numeral_mark(c: _Canvas, cx: float, cy: float, rank: int, style: Style, size: int, red: bool) -> None:
    if style.numeral == "dots":
        _dice(c, cx, cy, rank, size * 0.9, max(2, size // 9), red)
        return
    table = {"zh": NUM_ZH, "suzhou": NUM_SUZHOU, "upper": NUM_UPPER, "scrambled": style.glyphs}[style.numeral]
    c.text((cx, cy), table[rank - 1], size, style.font, red, stroke=max(0, style.stroke - 2))


def _layout(n: int, cols: int) -> list[tuple[int, int]]:
    """(row, col) slots for n marks in up to `cols` columns, symmetric under 180° rotation."""
    if cols == 1 or n <= 3:
        return [(i, 0) for i in range(n)]
    rows = math.ceil(n / 2)
    slots = []
    for r in range(rows):
        if n % 2 == 1 and r == rows // 2:
            slots.append((r, -1))  # centred
        else:
            slots.extend([(r, 0), (r, 1)])
    return slots[:n]


def _field(c: _Canvas, code: str, style: Style, x0, y0, x1, y1):
    fw, fh = x1 - x0, y1 - y0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    if code[-1] in "tbw" and code[0].isdigit():
        n = int(code[0])
        suit = code[-1]
        if suit == "b":
            slots = _layout(n, 2 if n > 4 else 1)
            rows = max(r for r, _ in slots) + 1
            cols = 2 if any(col == 1 for _, col in slots) else 1
            r = min(fw / (2.3 * cols), fh / (2.25 * rows))
            for row, col in slots:
                py = y0 + fh * (row + 0.5) / rows
                px = cx if col < 0 or cols == 1 else x0 + fw * (col + 0.5) / 2
                _coin(c, px, py, r, style, red=(n in (1, 5, 9) and row == rows // 2 and col in (-1, 0)) and n != 1)
        elif suit == "t":
            cols = n if n <= 3 else math.ceil(n / (2 if n <= 6 else 3))
            rows = math.ceil(n / cols)
            k = 0
            for row in range(rows):
                in_row = min(cols, n - k)
                for j in range(in_row):
                    px = x0 + fw * (j + 0.5) / in_row
                    ya = y0 + fh * row / rows + 4
                    yb = y0 + fh * (row + 1) / rows - 4
                    _string(c, px, ya, yb, style, red=(n >= 5 and row == rows // 2 and j == in_row // 2))
                    k += 1
        else:  # w: double-headed figure with dice dots for the count
            half = fh / 2
            fig = _Canvas(int(fw), int(half))
            _figure(fig, fw / 2, half, style)
            _dice(fig, fw / 2, half * 0.17, n, min(fw * 0.75, half * 0.3), max(2, int(fw / 15)), red=n in (1, 4, 5, 9))
            _paste_double(c, fig, int(x0), int(y0), int(half))
        return
    if code == "qz":
        twice(c, "千", int(fw * 0.8), style.font, x0, cx, cy, fw, fh, 0.22, 0.25, stroke=max(0, style.stroke - 2))
    elif code in ("hh", "bh"):
        _flower(c, cx, cy - fh * 0.22, fw * 0.42, code == "hh", style.stroke)
        _flower(c, cx, cy + fh * 0.22, fw * 0.42, code == "hh", style.stroke)
        d = c.layer(False)
        d.line([cx, cy - fh * 0.1, cx, cy + fh * 0.1], fill=255, width=max(1, style.stroke))
    else:
        twice(c, EXTRA_CHAR[code], int(fw * 0.75), style.font, x0, cx, cy, fw, fh, 0.2, 0.3, red=True)


def twice(c: _Canvas, ch: str, size: int, font: str, x0, cx, cy, fw, fh, above: float, below: float,
          red: bool = False, stroke: int = 0) -> None:
    """A character drawn twice in a field, point-symmetric: upright ``above`` × the field's height over its middle,
    and turned 180° in the lower half (``below``: its centre that share of the height from the middle, before the
    turn). The renderer's 千字 and extras, and the medley family's "twice"."""
    c.text((cx, cy - fh * above), ch, size, font, red=red, stroke=stroke)
    sub = _Canvas(int(fw), int(fh / 2))
    sub.text((fw / 2, fh / 2 - fh * below), ch, size, font, red=red, stroke=stroke)
    _paste_rot(c, sub, int(x0), int(cy))


def _paste_double(dst: _Canvas, src: _Canvas, x0: int, y0: int, half: int):
    """Top half as drawn, bottom half rotated 180° (double-headed, point-symmetric)."""
    for name in ("ink", "red"):
        s = getattr(src, name)
        t = getattr(dst, name)
        t.paste(s, (x0, y0), s)
        r = s.rotate(180)
        t.paste(r, (x0, y0 + half), r)


def _paste_rot(dst: _Canvas, src: _Canvas, x0: int, y0: int):
    for name in ("ink", "red"):
        s = getattr(src, name).rotate(180)
        getattr(dst, name).paste(s, (x0, y0), s)


def _head(code: str, style: Style, w: int, h: int) -> _Canvas:
    c = _Canvas(w, h)
    cx = w / 2
    if code[-1] in "tbw" and code[0].isdigit():
        rank, suit = int(code[0]), code[-1]
        red_glyph = suit == style.red_suit
        _numeral_mark(c, cx, h * 0.36, rank, style, int(min(w * 0.62, h * 0.55)), red=False)
        c.text((cx, h * 0.8), SUIT_CHAR[suit], int(h * 0.34), style.font, red=red_glyph)
    elif code == "qz":
        c.text((cx, h * 0.5), "千", int(min(w * 0.8, h * 0.8)), style.font, stroke=max(0, style.stroke - 1))
    elif code in ("hh", "bh"):
        _flower(c, cx, h * 0.42, min(w, h) * 0.36, code == "hh", style.stroke)
        c.text((cx, h * 0.86), "红" if code == "hh" else "白", int(h * 0.26), style.font, red=code == "hh")
    else:
        c.text((cx, h * 0.5), EXTRA_CHAR[code], int(min(w * 0.8, h * 0.8)), style.font, red=True)
    return c


def render_face(code: str, style: Style, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Render one face: (BGR uint8 FACE_H × FACE_W × 3, alpha uint8 FACE_H × FACE_W)."""
    return lay_out_face(code, style, seed, _head, _field)


def lay_out_face(code: str, style, seed: int, head_of, field_of) -> tuple[np.ndarray, np.ndarray]:
    """A face laid out as every deck lays it: ``head_of(code, style, w, h)`` at the top and turned 180° at the bottom,
    the inner field framed between them and drawn by ``field_of(canvas, code, style, x0, y0, x1, y1)``, then printed
    (compose). A deck family (vision.synth.decks) brings its own head and field."""
    if code not in CODES:
        raise ValueError(f"Unknown card code {code!r}.")
    W, H = FACE_W, FACE_H
    c = _Canvas(W, H)
    m = 6
    hh = int(H * style.head_frac)
    head = head_of(code, style, W - 2 * m, hh)
    for name in ("ink", "red"):
        s = getattr(head, name)
        getattr(c, name).paste(s, (m, m), s)
        r = s.rotate(180)
        getattr(c, name).paste(r, (m, H - m - hh), r)
    d = c.layer(False)
    fy0, fy1 = m + hh + 6, H - m - hh - 6
    if style.frame != "none":
        d.rectangle([m, fy0, W - m - 1, fy1], outline=255, width=max(1, style.stroke))
        if style.frame == "double":
            d.rectangle([m + 4, fy0 + 4, W - m - 5, fy1 - 4], outline=255, width=1)
    field_of(c, code, style, m + 8, fy0 + 10, W - m - 8, fy1 - 10)
    return compose(c, style, seed)


def compose(c: _Canvas, style, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A face drawn on ``c`` (ink and red masks) printed on the style's paper: misregistered red, blotches and fibre,
    worn ink, the card stock's darker edge, rounded corners. (BGR FACE_H × FACE_W × 3, alpha.)"""
    rng = np.random.default_rng(seed)
    W, H = FACE_W, FACE_H
    ink = np.asarray(c.ink, dtype=np.float32) / 255
    red = np.asarray(c.red, dtype=np.float32) / 255
    dx, dy = style.misreg
    red = np.roll(red, (dy, dx), axis=(0, 1))
    # paper: base colour, low-frequency blotches, fibre noise
    paper = np.empty((H, W, 3), np.float32)
    paper[:] = style.paper
    low = cv2.resize(rng.normal(0, 1, (H // 32 + 2, W // 32 + 2)).astype(np.float32), (W, H))
    paper += (low * style.texture)[..., None]
    paper += rng.normal(0, style.texture * 0.4, (H, W, 1)).astype(np.float32)
    # ink fades where the card is worn
    if style.wear > 0:
        fade = cv2.resize(rng.uniform(0, 1, (H // 24 + 2, W // 24 + 2)).astype(np.float32), (W, H))
        keep = 1 - style.wear * 0.45 * np.clip(fade - 0.4, 0, 1)
        ink *= keep
        red *= keep
    ink = cv2.GaussianBlur(ink, (3, 3), 0.6)
    red = cv2.GaussianBlur(red, (3, 3), 0.6)
    out = paper * (1 - red[..., None]) + np.array(style.red, np.float32) * red[..., None]
    out = out * (1 - ink[..., None]) + np.array(style.ink, np.float32) * ink[..., None]
    # darker edge of the card stock
    edge = np.ones((H, W), np.float32)
    cv2.rectangle(edge, (0, 0), (W - 1, H - 1), 0.85, 2)
    out *= edge[..., None]
    face = np.clip(out, 0, 255).astype(np.uint8)
    alpha = np.zeros((H, W), np.uint8)
    r = style.corner
    cv2.rectangle(alpha, (r, 0), (W - 1 - r, H - 1), 255, -1)
    cv2.rectangle(alpha, (0, r), (W - 1, H - 1 - r), 255, -1)
    for x, y in ((r, r), (W - 1 - r, r), (r, H - 1 - r), (W - 1 - r, H - 1 - r)):
        cv2.circle(alpha, (x, y), r, 255, -1)
    return face, alpha


def render_back(rng: random.Random) -> tuple[np.ndarray, np.ndarray]:
    """A face-down card: a patterned back (hard negative)."""
    W, H = FACE_W, FACE_H
    col = np.array([rng.randint(20, 120), rng.randint(30, 120), rng.randint(60, 200)], np.float32)
    img = np.empty((H, W, 3), np.float32)
    img[:] = col
    yy, xx = np.mgrid[0:H, 0:W]
    pat = (np.sin(xx / rng.uniform(3, 7)) * np.sin(yy / rng.uniform(3, 7)) > 0).astype(np.float32)
    img = img * (0.75 + 0.25 * pat[..., None])
    cv2.rectangle(img, (4, 4), (W - 5, H - 5), (230, 230, 230), 2)
    alpha = np.full((H, W), 255, np.uint8)
    return np.clip(img, 0, 255).astype(np.uint8), alpha


class FaceSource:
    """Faces for one deck: rendered in a style, or loaded from a folder of the user's own faces
    (``DIR/<code>/*.png|jpg``, any size; resized to the face shape)."""

    def __init__(self, style: Style | None = None, faces_dir: str | Path | None = None, seed: int = 0):
        self.style = style
        self.seed = seed
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.user: dict[str, list[Path]] = {}
        if faces_dir is not None:
            self.user = load_face_folder(faces_dir)

    def face(self, code: str, rng: random.Random | None = None) -> tuple[np.ndarray, np.ndarray]:
        if code in self.user:
            paths = self.user[code]
            p = paths[(rng.randrange(len(paths)) if rng else 0)]
            key = str(p)
            if key not in self._cache:
                img = load_image(p)  # any photo format, its EXIF rotation applied; ImageError in one sentence
                if img.shape[1] > img.shape[0]:
                    img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
                img = cv2.resize(img, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA)
                self._cache[key] = (img, np.full((FACE_H, FACE_W), 255, np.uint8))
            return self._cache[key]
        if code not in self._cache:
            if self.style is None:
                raise ValueError(f"No face image for {code} and no style to render one.")
            seed = self.seed * 131 + CODES.index(code)
            own = getattr(self.style, "render", None)  # a deck family draws its own faces (vision.synth.decks)
            self._cache[code] = own(code, seed) if own else render_face(code, self.style, seed)
        return self._cache[code]


def load_face_folder(root: str | Path) -> dict[str, list[Path]]:
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"Face folder {root} does not exist.")
    out: dict[str, list[Path]] = {}
    for sub in sorted(root.iterdir()):
        if sub.is_dir() and sub.name in CODES:
            files = sorted(p for p in sub.iterdir() if p.suffix.lower() in IMAGE_EXTS)
            if files:
                out[sub.name] = files
    if not out:
        raise ValueError(f"Face folder {root} has no sub-folders named by card code (1t … cai) holding images.")
    return out
