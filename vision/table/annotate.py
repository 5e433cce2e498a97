"""Annotated photos: each card's oriented box and its Chinese name, readable on a phone.

Boxes are drawn as OpenCV contours in supervision's default palette (supervision itself is not a dependency: for
this one call it brought SciPy, Matplotlib and PyAV, a third of the player's install). Labels are placed here: in a
tight stair or fan a card shows a strip narrower than its name, so a label centred on every card would cover its
neighbours' (smart label positions then push them off their cards, and which name is whose is lost). A card's label
goes on the card when it fits the part of it no other box overlaps (its visible strip); otherwise in rows beyond the
card's end, where no label lies yet, joined by a line to a dot on the strip.
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image, ImageDraw

from vision.fonts import UI_FONT, font
from vision.infer.geometry import axes, order_long_axis_vertical
from vision.types import Recognition

# supervision's ColorPalette.DEFAULT, as hex RGB: cards coloured by meld index, cycling
PALETTE = ("A351FB", "FF4040", "FFA1A0", "FF7633", "FFB633", "D1D435", "4CFB12", "94CF1A", "40DE8A", "1B9640", "00D6C1",
           "2E9CAA", "00C4FF", "364797", "6675FF", "0019EF", "863AFF", "530087", "CD3AFF", "FF97CA", "FF39C9")


def palette_bgr(index: int) -> tuple[int, int, int]:
    h = PALETTE[index % len(PALETTE)]
    return int(h[4:6], 16), int(h[2:4], 16), int(h[0:2], 16)


ANCHOR_SCALE = 4  # the overlap of boxes is counted on a grid this many times coarser than the photo
FITS = 1.5  # a label this many times as wide as its card's visible strip still goes on the card
TIERS = 6  # rows of labels tried beyond each end of a card, outwards
ON_CARD = (0.0, 0.2, -0.2, 0.35, -0.35)  # places on its card a label that fits is tried at (card lengths along it)


def anchors(quads: np.ndarray, shape: tuple[int, int], lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A point on each card that the fewest other boxes overlap (n × 2, pixels): the middle of its visible
    strip in a stair or fan, its centre when it lies free; that strip's width (its area over the card's
    ``lengths``); and where cards lie (a grid ANCHOR_SCALE times coarser than the photo, True on a card)."""
    h, w = (int(np.ceil(v / ANCHOR_SCALE)) + 1 for v in shape[:2])
    count = np.zeros((h, w), np.int32)
    masks = []  # each card's mask within its bounding box on the grid, and where that box lies
    for q in quads:
        p = np.round(q / ANCHOR_SCALE).astype(np.int32)
        x0, y0 = np.clip(p.min(0), 0, [w, h])
        x1, y1 = np.clip(p.max(0) + 1, 0, [w, h])
        m = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(m, p - [x0, y0], 1)
        count[y0:y1, x0:x1] += m
        masks.append((m, x0, y0))
    points = quads.mean(1).astype(np.float64)
    strips = np.zeros(len(quads))
    for i, (m, x0, y0) in enumerate(masks):
        ys, xs = np.nonzero(m)
        if len(xs):
            under = count[ys + y0, xs + x0]
            least = under == under.min()
            points[i] = ((xs[least] + x0).mean() * ANCHOR_SCALE, (ys[least] + y0).mean() * ANCHOR_SCALE)
            strips[i] = least.sum() * ANCHOR_SCALE ** 2 / max(lengths[i], 1.0)
    return points, strips, count > 0


def place_labels(points: np.ndarray, axes: np.ndarray, lengths: np.ndarray, sizes: np.ndarray,
                 shape: tuple[int, int], on_card: np.ndarray | None = None, cards: np.ndarray | None = None) -> np.ndarray:
    """Label rectangles (n × 4: x0, y0, x1, y1) for labels of ``sizes`` (n × 2: width, height), placed from
    left to right where a label lies in the image and overlaps no label placed before it: on its card when
    ``on_card`` (the label fits on the card's visible strip: at its point, or moved along the card), else in
    rows beyond either end of its card (along its unit long axis, nearest first), the first that covers no
    card (``cards``: anchors' grid) or else the one that covers least; on its point when no place is free."""
    h, w = shape[:2]
    on_card = np.ones(len(points), bool) if on_card is None else on_card
    rects = np.zeros((len(points), 4))
    placed: list[np.ndarray] = []

    def covers(r: np.ndarray) -> float:
        if cards is None:
            return 0.0
        x0, y0, x1, y1 = (int(v / ANCHOR_SCALE) for v in r)
        return float(cards[y0:y1 + 1, x0:x1 + 1].mean())

    for i in np.lexsort((points[:, 1], points[:, 0])):
        half = sizes[i] / 2
        gap = 0.25 * sizes[i, 1]
        # the distance along the axis at which the label's centre clears the card's end, then row after row
        ends = [lengths[i] / 2 + half[1] + gap + k * (sizes[i, 1] + gap) for k in range(TIERS)]
        centres = [points[i] + sign * d * axes[i] for d in ends for sign in (1, -1)]
        own = [points[i] + t * lengths[i] * axes[i] for t in ON_CARD] if on_card[i] else []
        free = []
        for k, c in enumerate(own + centres):
            r = np.array([c[0] - half[0], c[1] - half[1], c[0] + half[0], c[1] + half[1]])
            if r[0] < 0 or r[1] < 0 or r[2] > w or r[3] > h:
                continue
            if all(r[0] >= p[2] or p[0] >= r[2] or r[1] >= p[3] or p[1] >= r[3] for p in placed):
                if k < len(own):  # on its own card
                    free = [(0.0, r)]
                    break
                free.append((covers(r), r))
                if free[-1][0] == 0.0:
                    break
        if free:
            best = min(free, key=lambda f: f[0])[1]
        else:
            c = np.clip(points[i], half, np.array([w, h]) - half)
            best = np.array([c[0] - half[0], c[1] - half[1], c[0] + half[0], c[1] + half[1]])
        rects[i] = best
        placed.append(best)
    return rects


def _long_axes(quads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each quad's unit long axis (pointing down the photo, so + is below), its length and its width."""
    along, across = zip(*(axes(order_long_axis_vertical(q)) for q in quads), strict=True)
    along, across = np.array(along, np.float64), np.array(across, np.float64)
    length = np.linalg.norm(along, axis=1)
    axis = along / np.maximum(length, 1e-6)[:, None]
    axis *= np.where(axis[:, 1:2] < 0, -1, 1)
    return axis, length, np.linalg.norm(across, axis=1)


def annotate(img: np.ndarray, rec: Recognition, labels: list[str] | None = None, groups: list[int] | None = None) -> np.ndarray:
    """Draw every recognized card; ``labels`` override the default ``name_zh confidence``;
    ``groups`` colour cards by meld index."""
    if not rec.cards:
        return img.copy()
    quads = np.array([c.quad for c in rec.cards], np.float32)
    cls = np.array(groups if groups is not None else [0] * len(rec.cards), int)
    axis, length, width = _long_axes(quads)
    scale = max(img.shape[:2]) / 1000
    thickness = max(2, int(round(2 * scale)))
    size = int(max(14, min(float(np.median(width)) * 0.45, 22 * scale)))
    pad = max(3, size // 4)
    colours = [palette_bgr(int(g)) for g in cls]
    out = img.copy()
    for q, col in zip(quads.astype(int), colours, strict=True):
        cv2.drawContours(out, [q], 0, col, thickness)
    if labels is None:
        labels = [c.label for c in rec.cards]
    f = font(UI_FONT, size)
    boxes = [f.getbbox(t) for t in labels]
    sizes = np.array([[b[2] - b[0] + 2 * pad, b[3] - b[1] + 2 * pad] for b in boxes], np.float64)
    points, strips, cards = anchors(quads.astype(np.float64), img.shape[:2], length)
    rects = place_labels(points, axis, length, sizes, img.shape[:2], sizes[:, 0] <= FITS * strips, cards)
    dot = max(3, thickness + 1)
    for q, p, r, col in zip(quads, points, rects, colours, strict=True):
        centre = (float(r[0] + r[2]) / 2, float(r[1] + r[3]) / 2)
        if cv2.pointPolygonTest(q.reshape(-1, 1, 2), centre, False) >= 0:
            continue  # the label lies on its card
        x, y = int(round(p[0])), int(round(p[1]))
        end = np.clip(p, r[:2], r[2:])
        cv2.line(out, (x, y), (int(round(end[0])), int(round(end[1]))), col, max(1, thickness // 2), cv2.LINE_AA)
        cv2.circle(out, (x, y), dot, (255, 255, 255), -1, cv2.LINE_AA)
        cv2.circle(out, (x, y), dot - 1, col, -1, cv2.LINE_AA)
    for r, col in zip(rects, colours, strict=True):
        cv2.rectangle(out, (int(r[0]), int(r[1])), (int(r[2]), int(r[3])), col, -1)
    pil = Image.fromarray(cv2.cvtColor(out, cv2.COLOR_BGR2RGB))
    draw = ImageDraw.Draw(pil)
    for text, r, b in zip(labels, rects, boxes, strict=True):
        draw.text((r[0] + pad - b[0], r[1] + pad - b[1]), text, font=f, fill=(255, 255, 255))
    return cv2.cvtColor(np.asarray(pil), cv2.COLOR_RGB2BGR)
