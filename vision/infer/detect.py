"""The detector's stage: oriented boxes from the photo (letterboxed, optionally mirrored and zoomed on the
cards' region), NMS, and the boxes each later stage reads."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.infer.geometry import CARD_ASPECT
from vision.infer.model import KNOBS, Knobs, ModelInfo
from vision.types import Boxes


def letterbox(img: np.ndarray, size: int) -> tuple[np.ndarray, float, tuple[int, int]]:
    h, w = img.shape[:2]
    r = min(size / h, size / w)
    nw, nh = max(1, int(round(w * r))), max(1, int(round(h * r)))  # a very long, thin image keeps a row
    resized = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA)
    top, left = (size - nh) // 2, (size - nw) // 2
    out = np.full((size, size, 3), 114, np.uint8)
    out[top:top + nh, left:left + nw] = resized
    return out, r, (left, top)


@dataclass
class RawBoxes:
    """The detector's output above a floor score, before NMS, in its letterboxed input's pixels."""

    rects: list  # ((cx, cy), (w, h), angle in degrees), as OpenCV's rotated rects
    scores: np.ndarray
    scale: float
    left: int
    top: int
    run: tuple[np.ndarray, np.ndarray] | None = None  # the detector's own output (_run), without a mirrored look


def _rgb_planes(bgr: np.ndarray) -> np.ndarray:
    """N × H × W × 3 BGR uint8 images as the networks take them: N × 3 × H × W RGB float32 in 0–1 (a plane at
    a time: a third to a half of the time numpy takes to convert the strided view at once, the same numbers)."""
    x = np.empty((bgr.shape[0], 3, *bgr.shape[1:3]), np.float32)
    for c in range(3):
        x[:, c] = bgr[..., 2 - c]
    x /= 255
    return x


def _run(det_session, lb: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """The detector on a letterboxed image: boxes above ``floor`` as rows (cx, cy, long side, short side,
    angle of the long side in degrees, -90…90) in its pixels, and their scores."""
    x = _rgb_planes(lb[None])
    out = det_session.run(None, {det_session.get_inputs()[0].name: x})[0][0]  # (4 + nc + 1, N)
    scores = out[4:-1].max(0)
    keep = scores >= floor
    b = out[:4, keep].T.astype(np.float64)
    ang = np.degrees(out[-1, keep].astype(np.float64))
    swap = b[:, 2] < b[:, 3]  # ((w, h), a) is the same box as ((h, w), a + 90)
    b[swap, 2:4] = b[swap, 3:1:-1]
    ang = (np.where(swap, ang + 90, ang) + 90) % 180 - 90
    return np.column_stack([b, ang]), scores[keep]




def _fuse(a: np.ndarray, sa: np.ndarray, f: np.ndarray, sf: np.ndarray, knobs: Knobs = KNOBS) -> tuple[np.ndarray, np.ndarray]:
    """Each box of the first look averaged with its nearest box of the mirrored look, weighted by score (the two
    looks err differently on where a thin overlapped card lies); the score is the mean of both looks', half the
    box's own when the mirrored look did not see it. Boxes only the mirrored look has are not added."""
    if not len(a) or not len(f):
        return a, sa / 2
    d = np.linalg.norm(a[:, None, :2] - f[None, :, :2], axis=-1)
    turn = (f[None, :, 4] - a[:, None, 4] + 90) % 180 - 90  # angle from a to f, the short way
    ok = (d <= knobs.mirror_near * a[:, None, 3]) & (np.abs(turn) <= knobs.mirror_deg)
    j = np.where(ok, d, np.inf).argmin(1)
    has = ok.any(1)
    g = f[j].copy()
    g[:, 4] = a[:, 4] + turn[np.arange(len(a)), j]
    w = np.where(has, sf[j] / (sa + sf[j]), 0.0)[:, None]
    return (1 - w) * a + w * g, np.where(has, (sa + sf[j]) / 2, sa / 2)


def decode(det_session, img: np.ndarray, imgsz: int, floor: float, mirror: bool = False,
           plain: RawBoxes | None = None) -> RawBoxes:
    """The detector's boxes above ``floor``; with ``mirror``, fused with its look at the mirrored image
    (``plain``: this image's decode without it, whose run is reused)."""
    lb, r, (left, top) = letterbox(img, imgsz)
    boxes, scores = plain.run if plain is not None and plain.run is not None else _run(det_session, lb, floor)
    run = (boxes, scores)
    if mirror:
        fb, fs = _run(det_session, np.ascontiguousarray(lb[:, ::-1]), floor)
        fb[:, 0], fb[:, 4] = imgsz - fb[:, 0], -fb[:, 4]
        boxes, scores = _fuse(boxes, scores, fb, fs)
        keep = scores >= floor
        boxes, scores = boxes[keep], scores[keep]
    rects = [((float(b[0]), float(b[1])), (float(b[2]), float(b[3])), float(b[4])) for b in boxes]
    return RawBoxes(rects, scores.astype(np.float32), r, left, top, None if mirror else run)


def nms_index(raw: RawBoxes, conf: float, iou: float) -> list[int]:
    """Indices of the raw boxes scored ≥ ``conf`` that rotated NMS at ``iou`` keeps, best first."""
    idx = [i for i in range(len(raw.scores)) if raw.scores[i] >= conf]
    if not idx:
        return []
    kept = cv2.dnn.NMSBoxesRotated([raw.rects[i] for i in idx], [float(raw.scores[i]) for i in idx], conf, iou)
    return [idx[int(k)] for k in np.array(kept).reshape(-1)]


def quads_of(raw: RawBoxes, index: list[int], off: tuple[float, float] = (0.0, 0.0)) -> Boxes:
    """The raw boxes ``index`` in pixels of the image (whose part the detector saw starts at ``off``)."""
    quads = np.zeros((len(index), 4, 2), np.float32)
    for n, i in enumerate(index):
        q = cv2.boxPoints(raw.rects[i]).astype(np.float32)
        quads[n, :, 0] = (q[:, 0] - raw.left) / raw.scale + off[0]
        quads[n, :, 1] = (q[:, 1] - raw.top) / raw.scale + off[1]
    return Boxes(quads, [float(raw.scores[i]) for i in index])


def nms(raw: RawBoxes, conf: float, iou: float) -> Boxes:
    """Boxes scored ≥ ``conf`` after rotated NMS at ``iou``, as (quad 4×2 in pixels of the image, score)."""
    return quads_of(raw, nms_index(raw, conf, iou))



def _floor(info: ModelInfo) -> float:
    """The lowest detector score read at all: greedy NMS keeps the higher-scored boxes first, so the boxes
    above the thresholds are the same whatever the floor."""
    return min(info.conf, info.rescue_conf, info.knobs.spare_conf)


@dataclass
class Found:
    """The detector's boxes in pixels of the photo (``(quad 4×2, score)`` pairs given are made Boxes)."""

    boxes: Boxes  # after NMS at the model's IoU, down to the lowest score read (_floor)
    # scored ≥ Knobs.crowd_conf and left out by that NMS only for overlapping a kept box (a looser NMS keeps them):
    # in a tight stair or fan a card's own box can overlap its neighbour's that much
    crowded: Boxes = field(default_factory=Boxes)
    raw: RawBoxes | None = None  # what they were cut from
    # scored ≥ Knobs.candidate_conf, kept by NMS at Knobs.candidate_iou and not at the model's: what the recover net judges
    candidates: Boxes = field(default_factory=Boxes)

    def __post_init__(self) -> None:
        self.boxes, self.crowded, self.candidates = (Boxes.of(b) for b in (self.boxes, self.crowded, self.candidates))




def _look(det_s, img: np.ndarray, info: ModelInfo, off: tuple[int, int] = (0, 0), mirror: bool = False,
          plain: Found | None = None) -> Found:
    """One pass of the detector over ``img`` (a part of the photo whose top-left corner is ``off``); ``plain``:
    this pass already made without the mirrored look, to add that look to it."""
    raw = decode(det_s, img, info.det_imgsz, _floor(info), mirror, plain.raw if plain else None)
    keep = nms_index(raw, _floor(info), info.iou)
    kept = set(keep)
    k = info.knobs
    crowded = [i for i in nms_index(raw, max(k.crowd_conf, _floor(info)), k.crowd_iou) if i not in kept]
    candidates = [i for i in nms_index(raw, max(k.candidate_conf, _floor(info)), k.candidate_iou) if i not in kept]
    return Found(quads_of(raw, keep, off), quads_of(raw, crowded, off), raw, quads_of(raw, candidates, off))


def find_boxes(det_s, img: np.ndarray, info: ModelInfo) -> Found:
    """Every box the classifier will see, down to the lowest score read (``_floor``), through the second look
    at the cards' region when the model zooms: what recognize reads, and what training crops are cut at."""
    found = _look(det_s, img, info)
    zoomed = _zoom_in(det_s, img, found, info) if info.zoom else found
    # the mirrored look (when the model has it) joins the final pass: the zoomed one, or else the first
    return _look(det_s, img, info, mirror=True, plain=found) if zoomed is found and info.mirror else zoomed





def _zoom_in(det_s, img: np.ndarray, found: Found, info: ModelInfo) -> Found:
    """When the cards fill only part of the photo, look again at just that part: the detector then sees
    the cards larger (thin overlapped strips of a stair hand become findable). The region is the first
    pass's cards plus a card length around them, never so tight that cards look larger than in training."""
    confident = [q for q, sc in found.boxes if sc >= info.conf]
    if not confident:
        return found
    pts = np.concatenate(confident)
    # the detector's corners come in any order: a card's width and length are its short and long sides
    sides = np.sort([[np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])] for q in confident], axis=1)
    width, length = (float(v) for v in np.median(sides, axis=0))
    h, w = img.shape[:2]
    x0, y0 = pts.min(0) - max(width, length)
    x1, y1 = pts.max(0) + max(width, length)
    side = max(x1 - x0, y1 - y0, info.knobs.cards_across * max(width, length / CARD_ASPECT))
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    x0, x1 = int(max(0, cx - side / 2)), int(min(w, cx + side / 2))
    y0, y1 = int(max(0, cy - side / 2)), int(min(h, cy + side / 2))
    if max(x1 - x0, y1 - y0) > max(w, h) / info.zoom:
        return found  # the cards already fill the photo
    again = _look(det_s, img[y0:y1, x0:x1], info, (x0, y0), info.mirror)
    if sum(sc >= info.conf for _, sc in again.boxes) < len(confident):
        return found
    return again
