"""Quadrilaterals of cards: ordering, rectification to a canonical upright crop, and the fold that
turns a 1 : 4 strip into the square image the classifier reads."""

from __future__ import annotations

import cv2
import numpy as np

CROP_W, CROP_H = 64, 256  # rectified card, portrait
CARD_ASPECT = 4.67  # a long card's length : width
FOLD = 128  # classifier input: the two halves of the strip side by side


def order_long_axis_vertical(quad: np.ndarray) -> np.ndarray:
    """Order 4 corners as TL, TR, BR, BL of an upright card: the long sides run top to bottom.

    Which end is "up" stays as given by the first corner's end where possible (a detector cannot
    tell; faces are close to point-symmetric and the fold makes both ends read alike).
    """
    q = np.asarray(quad, np.float32).reshape(4, 2)
    e01 = np.linalg.norm(q[1] - q[0])
    e12 = np.linalg.norm(q[2] - q[1])
    if e01 > e12:  # 0→1 is a long side: rotate the order so 0→1 is a short side
        q = q[[1, 2, 3, 0]]
    # make the order clockwise in image coordinates (y down)
    a, b = q[1] - q[0], q[3] - q[0]
    cross = a[0] * b[1] - a[1] * b[0]
    if cross < 0:
        q = q[[1, 0, 3, 2]]
    # put the short side nearest the top of the image first, so crops are stable
    top_first = (q[0, 1] + q[1, 1]) <= (q[2, 1] + q[3, 1])
    if not top_first:
        q = q[[2, 3, 0, 1]]
    return q


def rectify(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = (CROP_W, CROP_H),
            ordered: bool = False) -> np.ndarray:
    """Cut the card inside ``quad`` from ``image`` and warp it to an upright ``size`` (w, h) crop."""
    q = np.asarray(quad, np.float32).reshape(4, 2) if ordered else order_long_axis_vertical(quad)
    w, h = size
    dst = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    m = cv2.getPerspectiveTransform(q, dst)
    return cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_AREA if _shrinks(q, w, h) else cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def _shrinks(q: np.ndarray, w: int, h: int) -> bool:
    return float(np.linalg.norm(q[3] - q[0])) > 1.5 * h


def fold(crop: np.ndarray) -> np.ndarray:
    """Top half | bottom half turned 180°: a square in which both card ends read upright."""
    h = crop.shape[0] // 2
    top = crop[:h]
    bottom = cv2.rotate(crop[h:2 * h], cv2.ROTATE_180)
    sq = np.hstack([top, bottom])
    return cv2.resize(sq, (FOLD, FOLD), interpolation=cv2.INTER_AREA)


# Box errors of the released detector, measured against ground truth in the card's own frame
# (`changpai eval DIR` reports them as "box errors"): centre shift across the card has a std of ~9 % of its
# width (16 % on misread cards), the width is ~3 % too wide (std 6 %), while the errors along the card
# are small (shift 1.4 %, length 2.4 % of the length). Classifier crops are cut with errors like these.
BOX_ERROR = dict(across=0.10, width_bias=0.03, width=0.07, along=0.015, length=0.025, angle_deg=1.0)


def box_error(pred: np.ndarray, true: np.ndarray) -> dict[str, float]:
    """How ``pred`` misses ``true``, in the true card's frame: centre shift across (÷ width) and along
    (÷ length), width and length ratios."""
    t, p = order_long_axis_vertical(true), order_long_axis_vertical(pred)
    tl, tw = axes(t)
    pl, pw = axes(p)
    lt, wt = float(np.linalg.norm(tl)), float(np.linalg.norm(tw))
    d = p.mean(0) - t.mean(0)
    return {"across": float(d @ tw) / (wt * wt), "along": float(d @ tl) / (lt * lt),
            "width": float(np.linalg.norm(pw)) / wt, "length": float(np.linalg.norm(pl)) / lt}


def axes(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full length (top → bottom) and width (left → right) vectors of an ordered quad."""
    return (q[3] + q[2] - q[0] - q[1]) / 2, (q[1] + q[2] - q[0] - q[3]) / 2


def jitter_quad(quad: np.ndarray, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """``quad`` moved, stretched and turned the way a detector's box misses the card (BOX_ERROR × scale)."""
    q = order_long_axis_vertical(quad)
    e = BOX_ERROR
    u, v = axes(q)
    ctr = q.mean(0) + u * rng.normal(0, e["along"] * scale) + v * rng.normal(0, e["across"] * scale)
    u = u * (1 + rng.normal(0, e["length"] * scale)) / 2  # half vectors from here on
    v = v * (1 + e["width_bias"] * min(scale, 1.0) + rng.normal(0, e["width"] * scale)) / 2
    a = np.radians(rng.normal(0, e["angle_deg"] * scale))
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    u, v = rot @ u, rot @ v
    return np.array([ctr - u - v, ctr - u + v, ctr + u + v, ctr + u - v], np.float32)


def swap_ends(folded: np.ndarray) -> np.ndarray:
    """The fold of the same card turned end for end: its two halves change sides."""
    h = folded.shape[1] // 2
    return np.ascontiguousarray(np.hstack([folded[:, h:], folded[:, :h]]))


def obb_to_quad(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    """Corners of an oriented box (angle in radians, as ultralytics xywhr)."""
    c, s = np.cos(angle), np.sin(angle)
    dx = np.array([w / 2 * c, w / 2 * s])
    dy = np.array([-h / 2 * s, h / 2 * c])
    ctr = np.array([cx, cy])
    return np.array([ctr - dx - dy, ctr + dx - dy, ctr + dx + dy, ctr - dx + dy], np.float32)


def quad_overlap(a: np.ndarray, b: np.ndarray) -> float:
    """The area two convex quadrilaterals share (0 when they do not meet)."""
    inter, _ = cv2.intersectConvexConvex(np.asarray(a, np.float32).reshape(4, 2), np.asarray(b, np.float32).reshape(4, 2))
    return max(float(inter), 0.0)


def quad_iou(a: np.ndarray, b: np.ndarray) -> float:
    """IoU of two convex quadrilaterals."""
    a = np.asarray(a, np.float32).reshape(4, 2)
    b = np.asarray(b, np.float32).reshape(4, 2)
    inter = quad_overlap(a, b)
    if inter <= 0:
        return 0.0
    ua = abs(cv2.contourArea(a)) + abs(cv2.contourArea(b)) - inter
    return float(inter / ua) if ua > 0 else 0.0


def quad_ious(q: np.ndarray, others: list[np.ndarray]) -> list[float]:
    """quad_iou of ``q`` with each of ``others``; a pair whose bounding boxes do not meet is 0 without the
    polygon work (most pairs in a photo: the recover net's inputs ask this of every box against every other)."""
    if not len(others):
        return []
    q = np.asarray(q, np.float32).reshape(4, 2)
    o = np.asarray(others, np.float32).reshape(-1, 4, 2)
    lo, hi = q.min(0), q.max(0)
    meet = ((o.max(1) >= lo) & (o.min(1) <= hi)).all(1)
    return [quad_iou(q, o[i]) if meet[i] else 0.0 for i in range(len(o))]


def rows_of(quads: list[np.ndarray], align: bool = True,
            turned: bool = False) -> tuple[list[list[int]], np.ndarray, np.ndarray]:
    """Cards (quads in order_long_axis_vertical's order) in rows, top to bottom, each left to right, also in a tilted
    photo: rows run across the cards' long axis, and a new row starts where the cards' positions along that axis jump
    by more than half a card length (banding by pixel rows would split a slanted row). Returns the rows (indices),
    the axis along the cards (a card's length long) and the unit axis across them, to place anything else in the
    same rows. ``align``: each card's axis turned the same way round before their median (cards lying across the
    photo, whose top cannot be told, would otherwise cancel out); ``turned``: the photo read the other way up."""
    along = np.array([axes(q)[0] for q in quads])
    length = float(np.median(np.linalg.norm(along, axis=1)))
    unit = along / np.linalg.norm(along, axis=1, keepdims=True)
    if align:
        unit *= np.sign(unit @ unit[0] + 1e-9)[:, None]
    a = np.median(unit, axis=0)
    a = a / np.linalg.norm(a) * (1 if a[1] >= 0 else -1)  # rows follow one another top to bottom
    r = np.array([a[1], -a[0]])  # across the cards: left to right (top to bottom for cards lying flat)
    if (r[0], r[1]) < (0, 0):
        r = -r
    if turned:
        a, r = -a, -r
    ctr = np.array([q.mean(0) for q in quads])
    s, t = ctr @ a, ctr @ r
    order = np.argsort(s)
    rows: list[list[int]] = [[int(order[0])]]
    for i, j in zip(order[:-1], order[1:], strict=True):
        if s[j] - s[i] > 0.5 * length:
            rows.append([])
        rows[-1].append(int(j))
    return [sorted(row, key=lambda k: t[k]) for row in rows], a * length, r
