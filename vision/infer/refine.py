"""The refine net (refine.onnx): a card's box moved onto the card before the card is read again.

In stairs and fans the detector's box of a half-covered card often slides across onto the card that covers it;
read there, the card is taken for its neighbour (2t read 3t, 9w read 8w). Read at its true corners instead, 46
of the 66 misread cards of 600 val hands are read right (`changpai eval --true-corners`). The refine net looks at
a view around each box (VIEW_W × VIEW_H: SPAN_W card widths across, SPAN_L card lengths along, the box in the
middle) and tells how the card lies in it: its centre's shift across (÷ the box's width) and along (÷ its
length), its turn (radians) and its width and length (log ratios to the box's). A card read with less than
model.json 'refine' whose box the net moves enough (``moved``) is read again at the refined corners and the two
readings averaged (recognize._read_refined); the box itself stays the detector's. torch is not needed here.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.infer.geometry import axes, order_long_axis_vertical

VIEW_W, VIEW_H = 64, 160  # the view: across × along, pixels
SPAN_W, SPAN_L = 2.0, 1.25  # ... covering this many card widths across and card lengths along
TARGETS = ("across", "along", "turn", "width", "length")


def _frame(quad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = order_long_axis_vertical(np.asarray(quad, np.float32))
    u, v = axes(q)  # full length (top → bottom) and width (left → right)
    return q.mean(0), u, v


def view(img: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The photo around a box, turned upright: VIEW_H × VIEW_W × 3, the box filling the middle half across."""
    c, u, v = _frame(quad)
    src = np.float32([c - SPAN_W / 2 * v - SPAN_L / 2 * u, c + SPAN_W / 2 * v - SPAN_L / 2 * u,
                      c - SPAN_W / 2 * v + SPAN_L / 2 * u])
    m = cv2.getAffineTransform(src, np.float32([[0, 0], [VIEW_W, 0], [0, VIEW_H]]))
    shrink = np.linalg.norm(v) * SPAN_W > VIEW_W * 1.5  # area-average a box much larger than the view
    return cv2.warpAffine(img, m, (VIEW_W, VIEW_H), flags=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def target(box: np.ndarray, true: np.ndarray) -> np.ndarray:
    """How the card ``true`` lies in ``box`` (TARGETS): what the net learns."""
    pc, pu, pv = _frame(box)
    gc, gu, gv = _frame(true)
    if gu @ pu < 0:  # the same card turned end for end: its ends are alike
        gu, gv = -gu, -gv
    d = gc - pc
    turn = np.arctan2(pu[0] * gu[1] - pu[1] * gu[0], pu @ gu)
    return np.float32([d @ pv / (pv @ pv), d @ pu / (pu @ pu), turn,
                       np.log(np.linalg.norm(gv) / np.linalg.norm(pv)), np.log(np.linalg.norm(gu) / np.linalg.norm(pu))])


def refined(box: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The card's corners from its ``box`` and how it lies there (``target``'s numbers), in order_long_axis_vertical's
    order."""
    c, u, v = _frame(box)
    across, along, turn, width, length = (float(x) for x in t)
    c2 = c + across * v + along * u
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]], np.float32)
    u2, v2 = rot @ u * np.exp(length), rot @ v * np.exp(width)
    return np.float32([c2 - u2 / 2 - v2 / 2, c2 - u2 / 2 + v2 / 2, c2 + u2 / 2 + v2 / 2, c2 + u2 / 2 - v2 / 2])


def views_tensor(img: np.ndarray, quads: list[np.ndarray]) -> np.ndarray:
    """The views of ``quads`` as the net takes them: N × 3 × VIEW_H × VIEW_W, float32 in [0, 1]."""
    return np.stack([view(img, q) for q in quads]).transpose(0, 3, 1, 2).astype(np.float32) / 255


def lies(session, img: np.ndarray, quads: list[np.ndarray]) -> np.ndarray:
    """The net's TARGETS for each box (N × 5)."""
    if not quads:
        return np.zeros((0, len(TARGETS)), np.float32)
    return np.asarray(session.run(None, {session.get_inputs()[0].name: views_tensor(img, quads)})[0], np.float32)


MOVE_ACROSS = 0.04  # a card is read again when the net moves it this much across (÷ its width) ...
MOVE_TURN = np.radians(1.0)  # ... or turns it this much


def moved(t: np.ndarray) -> np.ndarray:
    """Which boxes the net moves enough to read their cards again."""
    return (np.abs(t[:, 0]) > MOVE_ACROSS) | (np.abs(t[:, 2]) > MOVE_TURN)
