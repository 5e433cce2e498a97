"""Photo → cards: ONNX detector (oriented boxes) + ONNX crop classifier, with onnxruntime only.

torch and ultralytics are never imported here. The detector sees the photo letterboxed to its input
size; every card is then cut from the full-resolution photo, rectified, folded and classified, both
ways round (the classifier's two readings of a card are averaged).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from scoring.cards import CODES
from vision.infer.adapt import PhotoStatistics
from vision.infer.deck_count import within_deck
from vision.infer.detect import Found, _rgb_planes, find_boxes
from vision.infer.geometry import axes, fold, order_long_axis_vertical, quad_iou, rectify, rows_of, swap_ends
from vision.infer.heads import read_heads_kept
from vision.infer.imageio import READ_SIDE, read_photo
from vision.infer.model import (
    NOT_A_CARD,
    ModelInfo,
    _adapt_session,
    _prune_net,
    _recover_session,
    _refine_session,
    _sessions,
    model_info,
)
from vision.infer.recover import choose, judge, judge_spares, prune, readings, reads_readings
from vision.infer.refine import lies, moved, refined
from vision.types import Card, Recognition


def classify(cls_session, crops: list[np.ndarray], temperature: float, one_way: float = 2.0) -> np.ndarray:
    """Class probabilities for folded BGR crops, averaged over both ways round.

    The card turned end for end folds into the same square with its two halves swapped (geometry.fold);
    turning the square itself by 180° would show both ends upside down, which no card ever does. A crop read
    one way with probability ``one_way`` or more is not read the other way (ModelInfo.one_way)."""
    if not crops:
        return np.zeros((0, len(CODES)), np.float32)
    logp = np.log(np.clip(_classifier_run(cls_session, crops), 1e-9, 1.0))
    again = np.arange(len(crops)) if one_way > 1 else np.flatnonzero(logp.max(1) < np.log(max(one_way, 1e-9)))  # 0 or less: none
    if len(again):
        turned = _classifier_run(cls_session, [swap_ends(crops[k]) for k in again])
        logp[again] = (logp[again] + np.log(np.clip(turned, 1e-9, 1.0))) / 2
    logp /= temperature
    logp -= logp.max(1, keepdims=True)
    p = np.exp(logp)
    return p / p.sum(1, keepdims=True)


def _classifier_run(cls_session, crops: list[np.ndarray]) -> np.ndarray:
    return cls_session.run(None, {cls_session.get_inputs()[0].name: _rgb_planes(np.stack(crops))})[0]


def recognize_array(img: np.ndarray, model: str | Path | ModelInfo | None = None, top_k: int = 5,
                    timings: dict[str, float] | None = None) -> Recognition:
    return recognize_found(img, model, top_k, timings)[0]


def recognize_found(img: np.ndarray, model: str | Path | ModelInfo | None = None, top_k: int = 5,
                    timings: dict[str, float] | None = None, found: Found | None = None,
                    adapted: bool = False, heads: dict | None = None) -> tuple[Recognition, Found]:
    """recognize_array, and the detector's boxes the cards were chosen from. ``found``: those boxes already (the
    detector is not run again); ``adapted``: every crop read by the model's adaptive classifier with the photo's own
    statistics (vision.infer.adapt; the model's ``adapt`` share, which must be above 0); ``heads``: the heads read of
    this photo's boxes so far, kept by box (a second reading reads again only the heads of boxes not read yet)."""
    info = model if isinstance(model, ModelInfo) else model_info(model)
    det_s, cls_s = _sessions(str(info.path))
    if adapted:
        if info.adapt <= 0:
            raise ValueError(f"The model at {info.path} reads with the photo's own statistics only when its 'adapt' is above 0.")
        cls_s = PhotoStatistics(_adapt_session(str(info.path)), info.adapt)
    t0 = time.perf_counter()
    found = find_boxes(det_s, img, info) if found is None else found
    t1 = time.perf_counter()
    dets, quads, probs, judged, spares = (_settled if info.settle else _kept)(img, found, cls_s, info, top_k)
    t2 = time.perf_counter()
    read_heads_of = info.heads > 0 and len(probs) and bool((probs.max(1) < info.heads).any())
    if read_heads_of:
        probs = _with_heads(img, quads, probs, info, heads)
    t_heads = time.perf_counter()
    cards = [_card(qo, s, p, info, top_k, r) for (_, s), qo, p, r in zip(dets, quads, probs, judged, strict=True)]
    if info.prune > 0:
        out = _pruned(img, dets, info)
        spares = [c for i, c in enumerate(cards) if i in out] + spares
        cards = [c for i, c in enumerate(cards) if i not in out]
        probs = probs[[i for i in range(len(dets)) if i not in out]]
    cards = _within_deck(cards, probs, info)
    if info.uses_net and spares:
        spares = _judged(img, spares, cards, info)
    cards = reading_order(cards)
    tm = dict(timings or {})
    tm.update({"detect": round((t1 - t0) * 1000, 1), "classify": round((t2 - t1) * 1000, 1)})
    if read_heads_of:  # a stage that ran: some card was unsure
        tm["heads"] = round((t_heads - t2) * 1000, 1)
    if info.prune > 0:  # the recover net's look at every kept box
        tm["prune"] = round((time.perf_counter() - t_heads) * 1000, 1)
    return Recognition(img.shape[1], img.shape[0], cards, tm, info.path.name, spares, info.conf), found


def _kept(img: np.ndarray, found: Found, cls_s, info: ModelInfo,
          top_k: int) -> tuple[list[tuple[np.ndarray, float]], list[np.ndarray], np.ndarray, list[float], list[Card]]:
    """The cards among the detector's boxes (NMS at the model's IoU; boxes it dropped that the recover net judges
    cards): their boxes with scores, quads, readings and the recover net's word (0 for a box NMS kept), and the
    spares."""
    dets = found.boxes + found.crowded  # crowded boxes are read only to be offered as spares
    quads = [order_long_axis_vertical(q) for q, _ in dets]
    probs, p_none = read_boxes(img, quads, cls_s, info)
    face = p_none < info.knobs.not_a_card_p
    n = len(found.boxes)
    keep = [k for k, (_, s) in enumerate(dets[:n])
            if face[k] and s >= min(info.conf, info.rescue_conf) and (s >= info.conf or probs[k].max() >= info.rescue_cls)]
    # the second look reads each unsure card on its own: the kept ones before recovery (a net that reads the
    # readings compares a dropped box's code with theirs, as in training), the recovered ones after
    kept_p = _second_look(img, [quads[k] for k in keep], probs[keep], cls_s, info)
    more, more_p, judged = _recovered(img, found, [dets[k][0] for k in keep], kept_p, cls_s, info)
    got = [dets[k] for k in keep] + more
    spare = [k for k in range(n) if face[k] and k not in keep
             and all(quad_iou(dets[k][0], q) < info.knobs.spare_apart for q, _ in got)][:info.knobs.spares]
    spare += [k for k in range(n, len(dets)) if face[k]
              and all(quad_iou(dets[k][0], q) < info.knobs.crowd_apart for q, _ in got)][:info.knobs.spares]
    spares = [_card(quads[k], dets[k][1], probs[k], info, top_k) for k in spare]
    more_q = [order_long_axis_vertical(q) for q, _ in more]
    dets, quads = got, [quads[k] for k in keep] + more_q
    probs = np.concatenate([kept_p, _second_look(img, more_q, more_p, cls_s, info)])
    if info.refine:
        probs = _read_refined(img, quads, probs, cls_s, info)
    return dets, quads, probs, [0.0] * len(keep) + judged, spares


def _settled(img: np.ndarray, found: Found, cls_s, info: ModelInfo,
             top_k: int) -> tuple[list[tuple[np.ndarray, float]], list[np.ndarray], np.ndarray, list[float], list[Card]]:
    """_kept with every box scored ≥ SETTLE_CONF (NMS's, the crowded ones, the recover net's candidates) first
    settled on the card it sits on by the refine net, info.knobs.settle_passes times (a box it hardly moves, not again).
    Settled boxes on one card overlap far more than two neighbours in a tight stair or fan, so NMS at
    ``info.settle`` over them keeps one box a card where NMS over the detector's boxes either drops a half-covered
    card or keeps a box across two. Only the boxes NMS keeps are read; one that either reading, at the detector's
    box or the settled one, sees no card face in is dropped (settled on a ruled notepad, a box can look like a card;
    the detector's box is read only when the settled one is not clearly a face, info.knobs.none_check). A box is kept as _kept
    keeps one (scored ≥ conf, or ≥ rescue_conf and read with ≥ rescue_cls); the others, and the boxes scored below
    info.knobs.settle_conf, are the spares. A kept card read with less than ``info.refine`` is read at its detector's box too
    (_with_detectors_reading)."""
    boxes = [(q, s) for q, s in found.boxes + found.crowded + found.candidates if s >= info.knobs.settle_conf]
    low = [(q, s) for q, s in found.boxes if s < info.knobs.settle_conf]
    quads = [order_long_axis_vertical(q) for q, _ in boxes]
    session = _refine_session(str(info.path))
    move = list(range(len(quads)))
    for _ in range(info.knobs.settle_passes):
        t = lies(session, img, [quads[k] for k in move])
        for k, tk in zip(move, t, strict=True):
            quads[k] = order_long_axis_vertical(refined(quads[k], tk))
        move = [k for k, tk in zip(move, t, strict=True) if np.abs(tk).max() >= info.knobs.settled]
    n = len(boxes)
    order = []
    if n:  # NMS first: only the boxes it keeps are read
        order = [int(i) for i in np.array(cv2.dnn.NMSBoxesRotated(
            [cv2.minAreaRect(q) for q in quads], [float(s) for _, s in boxes], info.knobs.settle_conf, info.settle)).reshape(-1)]
    p_all, none_all = read_boxes(img, [quads[k] for k in order] + [order_long_axis_vertical(q) for q, _ in low], cls_s, info)
    probs, p_none = np.zeros((n, p_all.shape[1]), np.float32), np.ones(n, np.float32)
    probs[order], p_none[order] = p_all[:len(order)], none_all[:len(order)]
    check = [k for k in order if info.knobs.none_check <= p_none[k] < info.knobs.not_a_card_p]
    if check:
        p_none[check] = np.maximum(p_none[check], read_boxes(img, [order_long_axis_vertical(boxes[k][0]) for k in check],
                                                             cls_s, info)[1])
    if info.knobs.face_at_box > 0:
        quads, probs, p_none = _unsettled(img, boxes, quads, probs, p_none, order, check, cls_s, info)
    order = [k for k in order if p_none[k] < info.knobs.not_a_card_p or _surely_a_card(boxes[k][1], probs[k], info)]
    keep = [k for k in order if boxes[k][1] >= min(info.conf, info.rescue_conf)
            and (boxes[k][1] >= info.conf or probs[k].max() >= info.rescue_cls)]
    kept_q = [quads[k] for k in keep]
    kept_p = _second_look(img, kept_q, probs[keep], cls_s, info)
    kept_p = _with_detectors_reading(img, [boxes[k][0] for k in keep], kept_p, cls_s, info)
    spare = [(quads[k], boxes[k][1], probs[k]) for k in order if k not in keep]
    m = len(p_all) - len(low)  # the low boxes' readings come last
    spare += [(order_long_axis_vertical(q), s, p_all[m + i]) for i, (q, s) in enumerate(low) if none_all[m + i] < info.knobs.not_a_card_p]
    spares = [_card(q, s, p, info, top_k) for q, s, p in spare
              if all(quad_iou(q, k) < info.knobs.spare_apart for k in kept_q)][:info.knobs.spares]
    return [(quads[k], boxes[k][1]) for k in keep], kept_q, kept_p, [0.0] * len(keep), spares


def _pruned(img: np.ndarray, dets: list[tuple[np.ndarray, float]], info: ModelInfo) -> set[int]:
    """The kept boxes the prune net leaves out (recover.prune: a second box on a card, a box across two), less those the
    detector scored at least ``info.knobs.free_box`` that overlap no card kept by ``info.knobs.free_apart`` or more (the
    surest first, each kept one counted for the next). A second box on a card overlaps the card's other box far more;
    a whole card lying over the end of a neighbour whose box reaches under it was left out for that box
    (docs/recognizer.md)."""
    out = [i for i, _ in prune(_prune_net(info), img, dets, info.prune)]
    if info.knobs.free_box <= 0:
        return set(out)
    kept = [q for i, (q, _) in enumerate(dets) if i not in out]
    back = set()
    for i in sorted(out, key=lambda i: -dets[i][1]):
        q, s = dets[i]
        if s >= info.knobs.free_box and all(quad_iou(q, k) < info.knobs.free_apart for k in kept):
            back.add(i)
            kept.append(q)
    return set(out) - back


def _surely_a_card(score: float, p: np.ndarray, info: ModelInfo) -> bool:
    """A box the classifier reads as no card face is kept all the same when the detector scored it at least
    ``info.knobs.sure_box`` and, as a face, it reads one code with at least ``info.knobs.sure_face`` (0: never): a whole
    card of a deck drawn sparsely (the 二丙 of a deck whose field holds two small coins) can look like no card to a
    classifier that never saw the deck, while the detector is sure of it (docs/recognizer.md)."""
    return info.knobs.sure_box > 0 and score >= info.knobs.sure_box and float(p.max()) >= info.knobs.sure_face


def _unsettled(img: np.ndarray, boxes: list[tuple[np.ndarray, float]], quads: list[np.ndarray], probs: np.ndarray,
               p_none: np.ndarray, order: list[int], checked: list[int], cls_s,
               info: ModelInfo) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Boxes the refine net settled where the classifier sees no card face, though the detector's own box reads as one
    (no card face below ``info.knobs.face_at_box``), go back to the detector's box and its reading, unless that box
    overlaps another card kept by the model's IoU. A settled box can grow past its card onto the table (a whole card
    lying alone, of a deck whose rim the refine net never saw), and the card was then dropped as no card: the
    detector found it and the classifier read it surely at the detector's box (docs/recognizer.md)."""
    # a ``checked`` box (its detector's box read already, for the none check) that is lost showed no face there either
    lost = [k for k in order if p_none[k] >= info.knobs.not_a_card_p and k not in checked]
    if not lost:
        return quads, probs, p_none
    at_box = [order_long_axis_vertical(boxes[k][0]) for k in lost]
    p2, none2 = read_boxes(img, at_box, cls_s, info)
    kept = [quads[k] for k in order if p_none[k] < info.knobs.not_a_card_p]
    quads, probs, p_none = list(quads), probs.copy(), p_none.copy()
    for k, q, p, pn in zip(lost, at_box, p2, none2, strict=True):
        if pn < info.knobs.face_at_box and all(quad_iou(q, o) < info.iou for o in kept):
            quads[k], probs[k], p_none[k] = q, p, pn
            kept.append(q)
    return quads, probs, p_none


def _with_detectors_reading(img: np.ndarray, boxes: list[np.ndarray], probs: np.ndarray, cls_s, info: ModelInfo) -> np.ndarray:
    """Settled cards read with less than ``info.refine``, their readings averaged with the reading at the detector's box
    (``boxes``; unless it sees no card face there), as _read_refined averages the other way round. Chosen on the 1,600
    val hands (data/val_hands3, 4, 5) against the settled reading alone: right without repair 1,481 -> 1,477, with
    repair 1,535 -> 1,535, wrong totals on a legal win 9 -> 7 (without a check: warning 9 -> 6)."""
    look = [i for i in range(len(boxes)) if probs[i].max() < info.refine]
    return _averaged(img, probs, look, [order_long_axis_vertical(boxes[i]) for i in look], cls_s, info)


def _averaged(img: np.ndarray, probs: np.ndarray, which: list[int], quads: list[np.ndarray], cls_s, info: ModelInfo) -> np.ndarray:
    """``probs`` with the cards ``which`` read again at ``quads`` (in order_long_axis_vertical's order), each new
    reading averaged with the old unless it sees no card face there (a copy; ``probs`` itself when none)."""
    if not which:
        return probs
    p2, p_none = read_boxes(img, quads, cls_s, info)
    probs = probs.copy()
    for k, p, pn in zip(which, p2, p_none, strict=True):
        if pn < info.knobs.not_a_card_p:
            probs[k] = (probs[k] + p) / 2
    return probs


def _read_refined(img: np.ndarray, quads: list[np.ndarray], probs: np.ndarray, cls_s, info: ModelInfo) -> np.ndarray:
    """The cards read with less than ``info.refine`` whose boxes the refine net moves enough (vision.infer.refine.moved)
    are read again at the corners it gives them, and that reading is averaged with the box's (unless it sees no card
    face there). The boxes stay the detector's. Chosen on the 600 val hands of data/val_hands3: taking the refined
    reading alone gave 4 wrong totals on a legal win instead of 1, two of them unwarned; looking at every card
    instead of those below 0.99 read as well and cost 80 ms instead of 10."""
    look = [k for k in range(len(quads)) if probs[k].max() < info.refine]
    if not look:
        return probs
    t = lies(_refine_session(str(info.path)), img, [quads[k] for k in look])
    again = [(look[i], t[i]) for i in np.flatnonzero(moved(t))]
    return _averaged(img, probs, [k for k, _ in again], [order_long_axis_vertical(refined(quads[k], tk)) for k, tk in again],
                     cls_s, info)


def _recovered(img: np.ndarray, found: Found, kept: list[np.ndarray], kept_p: np.ndarray, cls_s,
               info: ModelInfo) -> tuple[list[tuple[np.ndarray, float]], np.ndarray, list[float]]:
    """The candidates NMS dropped that the recover net judges cards and the classifier sees a face in, with
    their readings and the net's probabilities (``kept_p``: the readings of the ``kept`` boxes)."""
    cands = found.candidates
    if not (info.recovers and cands):
        return [], np.zeros((0, len(info.codes)), np.float32), []
    session = _recover_session(str(info.path))
    if reads_readings(session):  # every candidate read first: the net weighs the readings
        probs, p_none = read_boxes(img, [order_long_axis_vertical(q) for q, _ in cands], cls_s, info)
        reads = readings([q for q, _ in cands], probs, p_none, kept, [int(np.argmax(p)) for p in kept_p])
        judged = judge(session, img, cands, kept, reads)
        chosen = choose(cands, judged, info.recover)
        probs, p_none = probs[chosen], p_none[chosen]
    else:
        judged = judge(session, img, cands, kept)
        chosen = choose(cands, judged, info.recover)
        probs, p_none = read_boxes(img, [order_long_axis_vertical(cands[i][0]) for i in chosen], cls_s, info)
    face = [k for k in range(len(chosen)) if p_none[k] < info.knobs.not_a_card_p]
    return [cands[chosen[k]] for k in face], probs[face], [float(judged[chosen[k]]) for k in face]


def read_boxes(img: np.ndarray, quads: list[np.ndarray], cls_s, info: ModelInfo) -> tuple[np.ndarray, np.ndarray]:
    """The classifier's reading of each box (quads with their corners in order_long_axis_vertical's order):
    probabilities over the codes, and p(no card face)."""
    return read_crops([fold(rectify(img, q, ordered=True)) for q in quads], cls_s, info)


def read_crops(crops: list[np.ndarray], cls_s, info: ModelInfo) -> tuple[np.ndarray, np.ndarray]:
    """read_boxes for crops already cut and folded (geometry.fold)."""
    return faces_only(classify(cls_s, crops, info.temperature, info.one_way), info)


def _judged(img: np.ndarray, spares: list[Card], cards: list[Card], info: ModelInfo) -> list[Card]:
    """The spares with the recover net's word on each: is it a card none of the cards covers? A missed card
    usually is; a second box on a card, or a box across two, is not (on the 870 val photos of changpai-v11, of
    1,615 spares 62 were cards the detector missed: 58 of them judged ≥ 0.1, and 69 of the other 1,553)."""
    kept = [np.array(c.quad, np.float32) for c in cards]
    p = judge_spares(_prune_net(info), img, [(np.array(c.quad, np.float32), c.det_score) for c in spares], kept)
    return [replace(c, judged=float(pk)) for c, pk in zip(spares, p, strict=True)]


def _with_heads(img: np.ndarray, quads: list[np.ndarray], probs: np.ndarray, info: ModelInfo,
                memo: dict | None = None) -> np.ndarray:
    """The unsure cards' readings (below ``info.heads``) fused with what their heads spell (vision.infer.heads): the
    product of the classifier's probabilities and the heads' raised to ``info.head_weight``, normalized — for heads
    legible as a card's name (``info.head_legible`` or more likely to spell one); the others keep their reading."""
    unsure = [k for k in range(len(probs)) if probs[k].max() < info.heads]
    if not unsure:
        return probs
    spelled, legible = read_heads_kept(img, [quads[k] for k in unsure], memo)
    keep = legible >= info.head_legible
    unsure = [k for k, ok in zip(unsure, keep, strict=True) if ok]
    if not unsure:
        return probs
    spelled = spelled[keep][:, [CODES.index(c) for c in info.codes]]
    fused = np.log(np.clip(probs[unsure], 1e-9, 1.0)) + info.head_weight * spelled
    fused -= fused.max(1, keepdims=True)
    out = probs.copy()
    out[unsure] = np.exp(fused) / np.exp(fused).sum(1, keepdims=True)
    return out


def _card(quad: np.ndarray, det_score: float, p: np.ndarray, info: ModelInfo, top_k: int, recovered: float = 0.0) -> Card:
    order = np.argsort(-p)[:top_k]
    alts = [(info.codes[j], float(p[j])) for j in order]
    return Card(alts[0][0], alts[0][1], alts, quad.tolist(), det_score, recovered)


def _within_deck(cards: list[Card], probs: np.ndarray, info: ModelInfo) -> list[Card]:
    """The cards read together when some kind is read more often than a deck has copies of it (deck_count.within_deck,
    ``info.knobs.deck_copies``, ``extra_copies``): a card given another code is read as it (Card.read_as), with the
    probability the classifier gave that code."""
    if not cards:
        return cards
    codes = within_deck(probs, info.codes, info.knobs.deck_copies, info.knobs.extra_copies)
    return [c if info.codes[j] == c.code else c.read_as(info.codes[j], float(probs[i, j]))
            for i, (c, j) in enumerate(zip(cards, codes, strict=True))]


def faces_only(probs: np.ndarray, info: ModelInfo) -> tuple[np.ndarray, np.ndarray]:
    """Split a classifier's output into the card codes' probabilities (``info.codes`` order, summing to 1;
    none for the codes the deck has not, ``info.absent``) and the probability that the box is not a card
    face (zeros for a classifier without that class)."""
    if NOT_A_CARD not in info.names or not len(probs):
        faces, p_none = probs[:, :len(info.codes)], np.zeros(len(probs), np.float32)
    else:
        j = info.names.index(NOT_A_CARD)
        p_none = probs[:, j]
        faces = np.delete(probs, j, axis=1)
    if info.absent:  # the deck has no such card: what the classifier gives them goes to the others
        faces = faces.copy()
        faces[:, [info.codes.index(c) for c in info.absent]] = 0
    return faces / np.clip(faces.sum(1, keepdims=True), 1e-9, None), p_none


def _second_look(img: np.ndarray, quads: list[np.ndarray], probs: np.ndarray, cls_s, info: ModelInfo) -> np.ndarray:
    """The detector's boxes miss cards mostly across their width (geometry.BOX_ERROR): an unsure card is
    read again through boxes shifted sideways, and the most confident of its readings is kept (a shifted
    box that shows no card face is not a reading)."""
    unsure = [k for k in range(len(quads)) if probs[k].max() < info.knobs.unsure]
    if not unsure:
        return probs
    which = [k for k in unsure for _ in info.knobs.shifts]
    # read both ways (not ModelInfo.one_way): the surest reading wins here, and a one-way reading is surer than
    # its card's two-way one (read one way here: 2 more misreads on the 150 loose val photos)
    p2, p_none = faces_only(classify(cls_s, [fold(rectify(img, quads[k] + axes(quads[k])[1] * s, ordered=True))
                                             for k in unsure for s in info.knobs.shifts], info.temperature), info)
    probs = probs.copy()
    for k, p, pn in zip(which, p2, p_none, strict=True):
        if pn < info.knobs.not_a_card_p and p.max() > probs[k].max():
            probs[k] = p  # the box stays the detector's: a reading is chosen, not a position
    return probs


def reading_order(cards: list[Card]) -> list[Card]:
    """The cards in reading order, also in a tilted photo (geometry.rows_of, each card's axis as its box gives it)."""
    if not cards:
        return []
    rows, _, _ = rows_of([np.array(c.quad, np.float32) for c in cards], align=False)
    return [cards[k] for row in rows for k in row]


def _loaded(image: str | Path | bytes | np.ndarray) -> tuple[np.ndarray, float, float]:
    """The photo as recognition reads it (a large JPEG from a smaller decode, imageio.READ_SIDE), the scale back to its
    own pixels, and the ms it took."""
    t = time.perf_counter()
    img, scale = (image, 1.0) if isinstance(image, np.ndarray) else read_photo(image, min_side=READ_SIDE)
    return img, scale, round((time.perf_counter() - t) * 1000, 1)


def _in_photo(rec: Recognition, scale: float) -> Recognition:
    return rec if scale == 1.0 else rec.scaled(scale)


def recognize(image: str | Path | bytes | np.ndarray, model: str | Path | ModelInfo | None = None,
              top_k: int = 5) -> Recognition:
    """Recognize every card in a photo (a path, the file's bytes, or a BGR array). A large JPEG is read from a
    smaller decode (imageio.READ_SIDE); the cards' corners are given in the photo's own pixels all the same."""
    img, scale, load_ms = _loaded(image)
    return _in_photo(recognize_array(img, model, top_k, {"load": load_ms}), scale)


def recognize_and_again(image: str | Path | bytes | np.ndarray, model: str | Path | ModelInfo | None = None,
                        top_k: int = 5) -> tuple[Recognition, Callable[[], Recognition] | None]:
    """recognize, and a function that reads the same photo again, at the same detector's boxes, with the photo's own
    BatchNorm statistics (the model's ``adapt``; None when it is 0): photo → hu calls it for a hand whose first reading
    is no clean win (vision.table.second_reading)."""
    img, scale, load_ms = _loaded(image)
    info = model if isinstance(model, ModelInfo) else model_info(model)
    heads: dict = {}
    rec, found = recognize_found(img, info, top_k, {"load": load_ms}, heads=heads)

    def again() -> Recognition:
        return _in_photo(recognize_found(img, info, top_k, found=found, adapted=True, heads=heads)[0], scale)

    return _in_photo(rec, scale), (again if info.adapt > 0 else None)


def recognize_adapted(image: str | Path | bytes | np.ndarray, model: str | Path | ModelInfo | None = None,
                      top_k: int = 5) -> Recognition:
    """The photo read with its own statistics alone (recognize_and_again's second reading, the detector run too): for a
    first reading kept from before (`changpai eval --recognitions`)."""
    img, scale, _ = _loaded(image)
    return _in_photo(recognize_found(img, model, top_k, adapted=True)[0], scale)


__all__ = ["recognize", "recognize_adapted", "recognize_and_again",
           "recognize_array", "recognize_found", "read_boxes", "read_crops", "classify", "reading_order"]
