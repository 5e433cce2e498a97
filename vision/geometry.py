"""Quadrilaterals of cards: ordering, rectification to a canonical upright crop, and the fold that
turns a 1 : 4 strip into the square image the classifier reads."""

from __future__ import annotations

import cv2
import numpy as np

CROP_W, CROP_H = 64, 256  # rectified card, portrait
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


def obb_to_quad(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    """Corners of an oriented box (angle in radians, as ultralytics xywhr)."""
    c, s = np.cos(angle), np.sin(angle)
    dx = np.array([w / 2 * c, w / 2 * s])
    dy = np.array([-h / 2 * s, h / 2 * c])
    ctr = np.array([cx, cy])
    return np.array([ctr - dx - dy, ctr + dx - dy, ctr + dx + dy, ctr - dx + dy], np.float32)


def quad_iou(a: np.ndarray, b: np.ndarray) -> float:
    """IoU of two convex quadrilaterals."""
    a = np.asarray(a, np.float32).reshape(4, 2)
    b = np.asarray(b, np.float32).reshape(4, 2)
    inter, _ = cv2.intersectConvexConvex(a, b)
    if inter <= 0:
        return 0.0
    ua = abs(cv2.contourArea(a)) + abs(cv2.contourArea(b)) - inter
    return float(inter / ua) if ua > 0 else 0.0
