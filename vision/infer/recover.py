"""A second opinion on the boxes NMS dropped: in a tight stair or fan a card's own box overlaps its
neighbour's so much that NMS removes it, yet the detector did propose it. The rescue network looks at
each such proposal in its context (the photo around it and the outlines of the boxes kept) and says
whether it is a card no kept box covers. Trained on synthetic scenes, where every card is known
(scripts in vision.train.recover_train).

The same question, asked of each kept box as if it alone had been dropped, finds the kept boxes that are
not cards of their own (prune): a second box on a card, or a box across two cards, is covered by the
others and judged no card; a true card is not.

A net may also read what the classifier reads in each proposal (``readings``): how sure the reading is, whether it
shows a face at all, and whether it repeats the code of a kept box it overlaps (a second box on a card reads as
that card; a missed card in a fan mostly reads as another code). Such a net only recovers: it is trained on
dropped boxes, and a model pruning with it keeps an older net for pruning (recognize.PRUNE_NET)."""

from __future__ import annotations

import cv2
import numpy as np

from vision.infer.geometry import axes, order_long_axis_vertical, quad_iou, quad_ious

VIEW_W, VIEW_H = 64, 128  # the network's input: a proposal's surroundings, upright, in pixels
ACROSS, ALONG = 3.0, 1.2  # ... covering this many card widths across and card lengths along
CHANNELS = 5  # B, G, R, how many kept boxes cover the pixel, outlines of the kept boxes
EXTRA = 2  # the detector's score and the IoU with the nearest kept box, for every net
READS = 4  # a net that reads the readings also gets: top probability, p(no face), same code as an overlapping / the nearest kept box
OVERLAP = 0.2  # a kept box this quad IoU or more over a proposal is one it overlaps (readings)


def view(img: np.ndarray, quad: np.ndarray, kept: list[np.ndarray]) -> np.ndarray:
    """The proposal ``quad`` in context: a VIEW_H × VIEW_W × CHANNELS uint8 array, the proposal upright in its
    middle, with the kept boxes ``kept`` drawn as coverage and outlines."""
    m = _frame(quad)
    out = np.zeros((VIEW_H, VIEW_W, CHANNELS), np.uint8)
    out[:, :, :3] = cv2.warpPerspective(img, m, (VIEW_W, VIEW_H), flags=cv2.INTER_AREA,
                                        borderMode=cv2.BORDER_CONSTANT, borderValue=(114, 114, 114))
    cover = np.zeros((VIEW_H, VIEW_W), np.uint8)
    lines = np.zeros((VIEW_H, VIEW_W), np.uint8)
    for p in _all_in_view(m, kept):
        one = np.zeros_like(cover)
        cv2.fillConvexPoly(one, np.round(p).astype(np.int32), 1)
        cover += one
        cv2.polylines(lines, [np.round(p).astype(np.int32)], True, 255, 1)
    out[:, :, 3] = np.minimum(cover.astype(np.int32) * 100, 255)
    out[:, :, 4] = lines
    return out


def _frame(quad: np.ndarray) -> np.ndarray:
    """The perspective transform from the photo to the view of ``quad``."""
    q = order_long_axis_vertical(quad)
    length, width = axes(q)
    c = q.mean(0)
    u = length / 2 * ALONG
    v = width / 2 * ACROSS
    src = np.array([c - u - v, c - u + v, c + u + v, c + u - v], np.float32)
    dst = np.array([[0, 0], [VIEW_W - 1, 0], [VIEW_W - 1, VIEW_H - 1], [0, VIEW_H - 1]], np.float32)
    return cv2.getPerspectiveTransform(src, dst)


def _in_view(m: np.ndarray, quad: np.ndarray) -> np.ndarray | None:
    """``quad`` in the view's pixels (transform ``m``), or None when its bounding box misses the view."""
    p = _all_in_view(m, [quad])
    return p[0] if p else None


def _all_in_view(m: np.ndarray, quads: list[np.ndarray]) -> list[np.ndarray]:
    """The ``quads`` whose bounding box meets the view, in its pixels (transform ``m``), in their order: all of
    them transformed at once."""
    if not len(quads):
        return []
    p = cv2.perspectiveTransform(np.asarray(quads, np.float32).reshape(1, -1, 2), m)[0].reshape(-1, 4, 2)
    lo, hi = p.min(1), p.max(1)
    meet = (hi[:, 0] >= 0) & (lo[:, 0] < VIEW_W) & (hi[:, 1] >= 0) & (lo[:, 1] < VIEW_H)
    return [p[i] for i in np.flatnonzero(meet)]


# a kept box the others cover less than this share of is a card of its own, never pruned: a second box on
# a card or a box across two is covered by the others over half its area or more; a card lying free has
# next to no cover, and the net, trained on dropped boxes (always well covered), cannot judge it (on the 870
# val photos the 16 true cards pruned without this all had under 0.05, the 156 boxes rightly pruned 0.5 or more)
PRUNE_COVER = 0.25
SAME = 0.9  # a proposal overlapping a kept box by this quad IoU is that box again: not judged
APART = 0.5  # two recovered boxes overlapping by this much are one card: the likelier is taken


def inputs(img: np.ndarray, candidates: list[tuple[np.ndarray, float]],
           kept: list[np.ndarray]) -> tuple[list[int], np.ndarray, np.ndarray]:
    """What the net sees of the candidates (quad, detector score) that repeat no kept box: their indices, their
    views (N × VIEW_H × VIEW_W × CHANNELS, uint8) and (detector score, IoU with the nearest kept box) each.
    The same for judging and for collecting training views (vision.train.recover_train)."""
    todo, views, extra = [], [], []
    for i, (q, s) in enumerate(candidates):
        near = max(quad_ious(q, kept), default=0.0)
        if near < SAME:
            todo.append(i)
            views.append(view(img, q, kept))
            extra.append((s, near))
    return (todo, np.array(views, np.uint8).reshape(-1, VIEW_H, VIEW_W, CHANNELS),
            np.array(extra, np.float32).reshape(-1, 2))


def readings(candidates: list[np.ndarray], probs: np.ndarray, p_none: np.ndarray, kept: list[np.ndarray],
             kept_codes: list[int]) -> np.ndarray:
    """What a net that reads the readings gets of each candidate quad besides ``inputs``' extra (N × READS):
    the classifier's top probability and p(no face) for it (``probs`` over the codes, ``p_none``), and whether its
    top code is that of a kept box overlapping it by OVERLAP or more, and of the nearest kept box (``kept_codes``:
    the kept boxes' codes, as indices of ``probs``' columns)."""
    out = np.zeros((len(candidates), READS), np.float32)
    for i, q in enumerate(candidates):
        code = int(np.argmax(probs[i]))
        ious = quad_ious(q, kept)
        near = int(np.argmax(ious)) if ious else -1
        same = any(iou >= OVERLAP and kc == code for iou, kc in zip(ious, kept_codes, strict=True))
        out[i] = (float(probs[i].max()), float(p_none[i]), float(same), float(near >= 0 and kept_codes[near] == code))
    return out


def reads_readings(session) -> bool:
    """Whether the net ``session`` wants the readings (``readings``) as well as the views."""
    return extra_width(session) > EXTRA


def extra_width(session) -> int:
    width = session.get_inputs()[1].shape[1]
    return int(width) if isinstance(width, int) else EXTRA


def judge(session, img: np.ndarray, candidates: list[tuple[np.ndarray, float]], kept: list[np.ndarray],
          reads: np.ndarray | None = None) -> np.ndarray:
    """The probability that each candidate (quad, detector score) is a card none of the ``kept`` quads covers;
    ``reads``: the candidates' ``readings`` (N × READS, all of them), for a net that reads them."""
    probs = np.zeros(len(candidates), np.float32)
    todo, views, extra = inputs(img, candidates, kept)
    if todo:
        if reads is not None:
            extra = np.concatenate([extra, np.asarray(reads, np.float32)[todo]], 1)
        probs[todo] = _run(session, views, extra)
    return probs


def judge_spares(session, img: np.ndarray, spares: list[tuple[np.ndarray, float]], kept: list[np.ndarray]) -> np.ndarray:
    """As ``judge``, for boxes offered as spares: one the kept boxes cover less than PRUNE_COVER of is a card lying
    free (1; the net learned on well-covered boxes, as for ``prune``); one repeating a kept box (SAME) is none (0)."""
    probs = np.zeros(len(spares), np.float32)
    todo, views, extra = inputs(img, spares, kept)
    if todo:
        probs[todo] = _run(session, views, extra)
        free = [i for i, v in zip(todo, views, strict=True) if covered(v) < PRUNE_COVER]
        probs[free] = 1.0
    return probs


def _run(session, views: np.ndarray, extra: np.ndarray) -> np.ndarray:
    if extra.shape[1] != extra_width(session):
        raise ValueError(f"This box net takes {extra_width(session)} numbers besides each view, not {extra.shape[1]} "
                         "(a net that reads the readings only recovers dropped boxes).")
    x = views.transpose(0, 3, 1, 2).astype(np.float32) / 255
    logit = session.run(None, {"view": x, "extra": extra})[0].reshape(-1)
    return 1 / (1 + np.exp(-logit))


def prune(session, img: np.ndarray, boxes: list[tuple[np.ndarray, float]], threshold: float) -> list[tuple[int, float]]:
    """The boxes (quad, detector score) that are no card of their own, in the order left out, each with the
    net's probability: every box is judged as if it had been dropped and the others kept (is it a card none
    of them covers?); the least likely goes while it is below ``threshold``, and the boxes whose view it lay
    in are judged again without it. Of two boxes on one card, both judged covered by the other, only the
    less likely goes. A box the others cover less than PRUNE_COVER of stays unjudged."""
    left = list(range(len(boxes)))
    frames = [_frame(q) for q, _ in boxes]
    probs = np.ones(len(boxes), np.float32)
    todo = list(left)
    free: set[int] = set()  # boxes lying free: pruning only uncovers, so they are not looked at again
    out: list[tuple[int, float]] = []
    while len(left) > 1:
        views, extra, judged = [], [], []
        for i in todo:  # what the net sees of box i, the others kept: as for a dropped box (inputs)
            seen, v, e = inputs(img, [boxes[i]], [boxes[j][0] for j in left if j != i])
            probs[i] = 0.0  # a box repeating another (SAME) is no card of its own
            if seen and covered(v[0]) < PRUNE_COVER:
                probs[i] = 1.0  # a card lying free
                free.add(i)
            elif seen:
                judged.append(i)
                views.append(v[0])
                extra.append(e[0])
        if judged:
            probs[judged] = _run(session, np.array(views, np.uint8), np.array(extra, np.float32))
        worst = min(left, key=lambda i: probs[i])
        if probs[worst] >= threshold:
            break
        out.append((worst, float(probs[worst])))
        left.remove(worst)
        todo = [i for i in left if i not in free and _in_view(frames[i], boxes[worst][0]) is not None]
    return out


def covered(v: np.ndarray) -> float:
    """The share of a view's proposal (its middle: ``view``) that the kept boxes cover."""
    x0, x1 = round(VIEW_W * (1 - 1 / ACROSS) / 2), round(VIEW_W * (1 + 1 / ACROSS) / 2)
    y0, y1 = round(VIEW_H * (1 - 1 / ALONG) / 2), round(VIEW_H * (1 + 1 / ALONG) / 2)
    return float((v[y0:y1, x0:x1, 3] > 0).mean())


def choose(candidates: list[tuple[np.ndarray, float]], probs: np.ndarray, threshold: float) -> list[int]:
    """The candidates judged cards (probability ≥ ``threshold``), likeliest first, one per card."""
    out: list[int] = []
    for i in np.argsort(-probs):
        if probs[i] < threshold:
            break
        if all(quad_iou(candidates[i][0], candidates[j][0]) < APART for j in out):
            out.append(int(i))
    return out
