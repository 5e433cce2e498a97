"""Photo → cards: ONNX detector (oriented boxes) + ONNX crop classifier, with onnxruntime only.

torch and ultralytics are never imported here. The detector sees the photo letterboxed to its input
size; every card is then cut from the full-resolution photo, rectified, folded and classified, both
ways round (the classifier's two readings of a card are averaged).
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scoring.cards import CODES, NAMES_ZH
from scoring.messages import Msg

from . import DEFAULT_MODEL_NAME
from .geometry import CARD_ASPECT, FOLD, axes, fold, order_long_axis_vertical, quad_iou, rectify, swap_ends
from .imageio import READ_SIDE, read_photo
from .recover import choose, judge, judge_spares, prune, readings, reads_readings
from .refine import lies, moved, refined

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
DEFAULT_MODEL = MODELS_DIR / DEFAULT_MODEL_NAME


NOT_A_CARD = "none"  # a classifier may have this class for boxes that are not a card face: such boxes are dropped
NOT_A_CARD_P = 0.5  # ... when it is at least this probable


class ModelError(ValueError):
    """A model folder that is missing or incomplete."""


DOUBT = 0.8  # a card read with less probability is shown with "?" (annotated photos, the page)


@dataclass
class Card:
    code: str
    confidence: float
    alternatives: list[tuple[str, float]]
    quad: list[list[float]]  # 4 corners in pixels of the upright photo, long side vertical first
    det_score: float = 0.0
    recovered: float = 0.0  # a box NMS had dropped: the recover net's probability that it is a card (vision.recover)
    # a spare (Recognition.spares): the recover net's probability that it is a card none of the cards covers (None:
    # not judged, a model without the net)
    judged: float | None = None

    @property
    def name_zh(self) -> str:
        return NAMES_ZH[self.code]

    @property
    def label(self) -> str:
        """The Chinese name, with ? when the reading is unsure (below DOUBT): what annotated photos show."""
        return self.name_zh + ("?" if self.confidence < DOUBT else "")

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "confidence": round(self.confidence, 4),
                "alternatives": [[c, round(p, 4)] for c, p in self.alternatives],
                "quad": [[round(x, 1), round(y, 1)] for x, y in self.quad], "det_score": round(self.det_score, 4)} | \
            ({"recovered": round(self.recovered, 4)} if self.recovered else {}) | \
            ({"judged": round(self.judged, 4)} if self.judged is not None else {})


@dataclass
class Recognition:
    width: int
    height: int
    cards: list[Card] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    model: str = ""
    # boxes read as a card that did not count as cards: scored below the detector's thresholds and away from
    # the cards, or confident but left out by NMS for overlapping a card (Found.crowded). What photo → hu may
    # add when the hand is a card or two short (pipeline); not cards of the recognition
    spares: list[Card] = field(default_factory=list)
    det_conf: float = 0.0  # the detector score a box needed to count on its own (below it, the classifier vouched)

    def scaled(self, f: float) -> Recognition:
        """The same recognition of the photo ``f`` times larger (read from a smaller decode)."""
        def big(c: Card) -> Card:
            return replace(c, quad=[[x * f, y * f] for x, y in c.quad])

        return replace(self, width=round(self.width * f), height=round(self.height * f),
                       cards=[big(c) for c in self.cards], spares=[big(c) for c in self.spares])

    def to_dict(self) -> dict[str, Any]:
        return {"width": self.width, "height": self.height, "model": self.model,
                "cards": [c.to_dict() for c in self.cards], "timings_ms": self.timings_ms}


@dataclass(frozen=True)
class ModelInfo:
    path: Path
    det_imgsz: int
    cls_imgsz: int
    temperature: float
    names: tuple[str, ...]
    conf: float
    iou: float
    # boxes the detector is less sure of (score ≥ rescue_conf) are kept when the classifier reads them
    # with probability ≥ rescue_cls: overlapped cards that the detector half-sees (off when rescue_conf ≥ conf)
    rescue_conf: float = 1.0
    rescue_cls: float = 1.0
    zoom: float = 0.0  # look again at the cards' region when it is this many times smaller than the photo (0: never)
    mirror: bool = False  # the final look also runs on the mirrored image, each box averaged with its mirror's (_fuse)
    # boxes NMS dropped become cards when the recover net (recover.onnx, vision.recover) gives them this probability
    recover: float = 2.0  # (above 1: no net, never)
    # kept boxes the same net, judging each as if NMS had dropped it, gives less than this are left out and
    # offered as spares (recover.prune: a second box on a card, a box across two; 0: never)
    prune: float = 0.0
    # codes the deck has not (a deck calibrated without 福禄寿禧财: changpai calibrate): never read
    absent: tuple[str, ...] = ()
    # a crop the classifier reads with this probability one way round is not read the other way too (above 1:
    # every crop is read both ways, classify)
    one_way: float = 2.0
    # a card read with less than this is looked at by the refine net (refine.onnx, vision.refine), and read again
    # where the net moves its box (0: no net); with ``settle``, a card read with less is read at the detector's box too
    refine: float = 0.0
    # every box scored ≥ SETTLE_CONF is settled on its card by the refine net, and NMS at this IoU runs over the
    # settled boxes instead of the detector's (_settled; 0: the detector's boxes, NMS at ``iou``, the recover net)
    settle: float = 0.0

    @property
    def recovers(self) -> bool:
        return self.recover <= 1

    @property
    def uses_net(self) -> bool:
        """Whether recover.onnx is needed: to recover dropped boxes or to prune kept ones."""
        return self.recovers or self.prune > 0

    @cached_property  # asked for every reading of every card
    def codes(self) -> tuple[str, ...]:
        """The classifier's card classes, in output order (without its not-a-card class, if it has one)."""
        return tuple(n for n in self.names if n != NOT_A_CARD)


def model_info(path: str | Path | None = None) -> ModelInfo:
    p = Path(path) if path else DEFAULT_MODEL
    meta = p / "model.json"
    if not meta.is_file():
        raise ModelError(Msg("model_missing", f"No model at {p} (expected {meta}); train one with `changpai train`, or pass "
                             "--model.", path=str(p)))
    try:
        d = json.loads(meta.read_text())
        if not isinstance(d, dict):
            raise ValueError("not an object")
    except (ValueError, UnicodeDecodeError) as e:
        raise ModelError(Msg("model_json", f"The model at {p} has a model.json that cannot be read ({e}).", path=str(p))) from None
    for f in ("detector.onnx", "classifier.onnx"):
        if not (p / f).is_file():
            raise ModelError(Msg("model_file", f"The model at {p} has no {f}.", path=str(p), file=f))
    try:
        names = tuple(d.get("names", CODES))
        info = ModelInfo(p, int(d.get("det_imgsz", 640)), int(d.get("cls_imgsz", FOLD)), float(d.get("temperature", 1.0)),
                         names, float(d.get("conf", 0.35)), float(d.get("iou", 0.5)),
                         float(d.get("rescue_conf", 1.0)), float(d.get("rescue_cls", 1.0)), float(d.get("zoom", 0.0)),
                         bool(d.get("mirror", False)), float(d.get("recover", 2.0)), float(d.get("prune", 0.0)),
                         tuple(d.get("absent", ())), float(d.get("one_way", 2.0)), float(d.get("refine", 0.0)),
                         float(d.get("settle", 0.0)))
    except (TypeError, ValueError) as e:
        raise ModelError(Msg("model_json", f"The model at {p} has a model.json that cannot be read ({e}).", path=str(p))) from None
    if sorted(str(n) for n in names if n != NOT_A_CARD) != sorted(CODES) or names.count(NOT_A_CARD) > 1:
        raise ModelError(Msg("model_names", f"The model at {p} does not name the 35 card codes (model.json 'names').", path=str(p)))
    if set(info.absent) - set(CODES):
        raise ModelError(Msg("model_absent", f"The model at {p} names codes that are not cards as absent (model.json 'absent').",
                             path=str(p)))
    return _has_its_nets(info)


def _has_its_nets(info: ModelInfo) -> ModelInfo:
    """``info``, when its folder has the box nets its thresholds need and the net that prunes and judges the spares
    can do that (ModelError otherwise, before any photo is read)."""
    if info.uses_net and not (info.path / "recover.onnx").is_file():
        raise ModelError(Msg("model_recover", f"The model at {info.path} names a recover or prune threshold (model.json "
                             "'recover', 'prune') but has no recover.onnx.", path=str(info.path)))
    if info.uses_net:
        _prune_session(str(info.path))  # loaded once (cached) for the recognitions to come
    if (info.refine or info.settle) and not (info.path / REFINE_NET).is_file():
        raise ModelError(Msg("model_refine", f"The model at {info.path} reads cards at refined corners (model.json "
                             f"'refine' or 'settle') but has no {REFINE_NET}.", path=str(info.path)))
    if info.refine or info.settle:
        _refine_session(str(info.path))
    return info


# thresholds that `changpai eval --set` may change, to measure a candidate without writing a model folder
SETTINGS = ("conf", "iou", "rescue_conf", "rescue_cls", "zoom", "recover", "prune", "one_way", "refine", "settle")


def with_settings(info: ModelInfo, settings: dict[str, float]) -> ModelInfo:
    """``info`` with some of its SETTINGS changed: ValueError for a name that is none of them, ModelError when the
    change needs a box net the model folder lacks."""
    bad = sorted(set(settings) - set(SETTINGS))
    if bad:
        raise ValueError(f"{', '.join(bad)} cannot be set: the settings are {', '.join(SETTINGS)}.")
    return _has_its_nets(replace(info, **settings))


def changed_settings(info: ModelInfo) -> dict[str, float]:
    """The SETTINGS of ``info`` that differ from its model folder's model.json."""
    own = model_info(info.path)
    return {k: getattr(info, k) for k in SETTINGS if getattr(info, k) != getattr(own, k)}


def _session(path: Path):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime's own exception types (InvalidProtobuf, NoSuchFile, ...)
        raise ModelError(Msg("model_onnx", f"The model file {path} cannot be loaded: {str(e).splitlines()[0][:200]}",
                             path=str(path))) from None


@lru_cache(maxsize=4)
def _sessions(path: str):
    return _session(Path(path) / "detector.onnx"), _session(Path(path) / "classifier.onnx")


@lru_cache(maxsize=4)
def _recover_session(path: str):
    return _session(Path(path) / "recover.onnx")


# A model may judge its kept boxes and its spares with another net than the one that recovers dropped boxes:
# PRUNE_NET when the folder has it (changpai-v13: a recover net trained on its own detector's dropped boxes
# recovers more fan cards, while the older net, kept as prune.onnx, prunes better; vision.release.release_recover;
# a net that reads the classifier's readings, as changpai-v14's, only recovers and always needs one)
PRUNE_NET = "prune.onnx"
REFINE_NET = "refine.onnx"
BOX_NETS = ("recover.onnx", PRUNE_NET, REFINE_NET)  # the nets that judge boxes, not faces: what a calibrated model carries over


@lru_cache(maxsize=4)
def _refine_session(path: str):
    return _session(Path(path) / REFINE_NET)


@lru_cache(maxsize=4)
def _prune_session(path: str):
    own = Path(path) / PRUNE_NET
    session = _session(own) if own.is_file() else _recover_session(path)
    if reads_readings(session):
        raise ModelError(Msg("model_prune_net", f"The model at {path} prunes or judges spares with a recover net that reads "
                             f"the classifier's readings, which only recovers dropped boxes: it needs a {PRUNE_NET}.", path=path))
    return session


# a session that prunes and judges spares in the model's prune net's place (prune_net_as), in this thread alone
_prune_stand_in: ContextVar[Any] = ContextVar("prune_stand_in", default=None)


@contextmanager
def prune_net_as(session):
    """Within the block, ``session`` prunes and judges the spares instead of the model's own prune net:
    vision.prune_distil hands in a session that passes each question on to that net and keeps it."""
    token = _prune_stand_in.set(session)
    try:
        yield
    finally:
        _prune_stand_in.reset(token)


def _prune_net(info: ModelInfo):
    stand_in = _prune_stand_in.get()
    return stand_in if stand_in is not None else _prune_session(str(info.path))


def letterbox(img: np.ndarray, size: int) -> tuple[np.ndarray, float, tuple[int, int]]:
    h, w = img.shape[:2]
    r = min(size / h, size / w)
    nw, nh = int(round(w * r)), int(round(h * r))
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


MIRROR_NEAR = 0.3  # a box and one from the mirrored look are the same card when their centres are this many
MIRROR_DEG = 5.0  # ... card widths apart at most and their long sides this many degrees


def _fuse(a: np.ndarray, sa: np.ndarray, f: np.ndarray, sf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each box of the first look averaged with its nearest box of the mirrored look, weighted by score (the two
    looks err differently on where a thin overlapped card lies); the score is the mean of both looks', half the
    box's own when the mirrored look did not see it. Boxes only the mirrored look has are not added."""
    if not len(a) or not len(f):
        return a, sa / 2
    d = np.linalg.norm(a[:, None, :2] - f[None, :, :2], axis=-1)
    turn = (f[None, :, 4] - a[:, None, 4] + 90) % 180 - 90  # angle from a to f, the short way
    ok = (d <= MIRROR_NEAR * a[:, None, 3]) & (np.abs(turn) <= MIRROR_DEG)
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


def quads_of(raw: RawBoxes, index: list[int]) -> list[tuple[np.ndarray, float]]:
    """The raw boxes ``index`` as (quad 4×2 in pixels of the image, score)."""
    res = []
    for i in index:
        q = cv2.boxPoints(raw.rects[i]).astype(np.float32)
        q[:, 0] = (q[:, 0] - raw.left) / raw.scale
        q[:, 1] = (q[:, 1] - raw.top) / raw.scale
        res.append((q, float(raw.scores[i])))
    return res


def nms(raw: RawBoxes, conf: float, iou: float) -> list[tuple[np.ndarray, float]]:
    """Boxes scored ≥ ``conf`` after rotated NMS at ``iou``, as (quad 4×2 in pixels of the image, score)."""
    return quads_of(raw, nms_index(raw, conf, iou))


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
                    timings: dict[str, float] | None = None) -> tuple[Recognition, Found]:
    """recognize_array, and the detector's boxes the cards were chosen from."""
    info = model if isinstance(model, ModelInfo) else model_info(model)
    det_s, cls_s = _sessions(str(info.path))
    t0 = time.perf_counter()
    found = find_boxes(det_s, img, info)
    t1 = time.perf_counter()
    dets, quads, probs, judged, spares = (_settled if info.settle else _kept)(img, found, cls_s, info, top_k)
    t2 = time.perf_counter()
    cards = [_card(qo, s, p, info, top_k, r) for (_, s), qo, p, r in zip(dets, quads, probs, judged, strict=True)]
    if info.prune > 0:
        out = {i for i, _ in prune(_prune_net(info), img, dets, info.prune)}
        spares = [c for i, c in enumerate(cards) if i in out] + spares
        cards = [c for i, c in enumerate(cards) if i not in out]
    if info.uses_net and spares:
        spares = _judged(img, spares, cards, info)
    cards = reading_order(cards)
    tm = dict(timings or {})
    tm.update({"detect": round((t1 - t0) * 1000, 1), "classify": round((t2 - t1) * 1000, 1)})
    if info.prune > 0:  # the recover net's look at every kept box
        tm["prune"] = round((time.perf_counter() - t2) * 1000, 1)
    return Recognition(img.shape[1], img.shape[0], cards, tm, info.path.name, spares, info.conf), found


def _kept(img: np.ndarray, found: Found, cls_s, info: ModelInfo,
          top_k: int) -> tuple[list[tuple[np.ndarray, float]], list[np.ndarray], np.ndarray, list[float], list[Card]]:
    """The cards among the detector's boxes (NMS at the model's IoU; boxes it dropped that the recover net judges
    cards): their boxes with scores, quads, readings and the recover net's word (0 for a box NMS kept), and the
    spares."""
    dets = found.boxes + found.crowded  # crowded boxes are read only to be offered as spares
    quads = [order_long_axis_vertical(q) for q, _ in dets]
    probs, p_none = read_boxes(img, quads, cls_s, info)
    face = p_none < NOT_A_CARD_P
    n = len(found.boxes)
    keep = [k for k, (_, s) in enumerate(dets[:n])
            if face[k] and s >= min(info.conf, info.rescue_conf) and (s >= info.conf or probs[k].max() >= info.rescue_cls)]
    # the second look reads each unsure card on its own: the kept ones before recovery (a net that reads the
    # readings compares a dropped box's code with theirs, as in training), the recovered ones after
    kept_p = _second_look(img, [quads[k] for k in keep], probs[keep], cls_s, info)
    more, more_p, judged = _recovered(img, found, [dets[k][0] for k in keep], kept_p, cls_s, info)
    got = [dets[k] for k in keep] + more
    spare = [k for k in range(n) if face[k] and k not in keep
             and all(quad_iou(dets[k][0], q) < SPARE_APART for q, _ in got)][:SPARES]
    spare += [k for k in range(n, len(dets)) if face[k]
              and all(quad_iou(dets[k][0], q) < CROWD_APART for q, _ in got)][:SPARES]
    spares = [_card(quads[k], dets[k][1], probs[k], info, top_k) for k in spare]
    more_q = [order_long_axis_vertical(q) for q, _ in more]
    dets, quads = got, [quads[k] for k in keep] + more_q
    probs = np.concatenate([kept_p, _second_look(img, more_q, more_p, cls_s, info)])
    if info.refine:
        probs = _read_refined(img, quads, probs, cls_s, info)
    return dets, quads, probs, [0.0] * len(keep) + judged, spares


SETTLE_CONF = 0.3  # boxes settled by the refine net (ModelInfo.settle): detector score at least this (CANDIDATE_CONF)
SETTLE_PASSES = 2  # ... each moved this many times (once leaves boxes on one card farther apart: more kept twice)
NONE_CHECK = 0.01  # a settled box read as no card face with this probability or more is read at the detector's box too
SETTLED = 0.02  # a box moved less than this (÷ its size across or along, in radians, log of its size) is not moved again


def _settled(img: np.ndarray, found: Found, cls_s, info: ModelInfo,
             top_k: int) -> tuple[list[tuple[np.ndarray, float]], list[np.ndarray], np.ndarray, list[float], list[Card]]:
    """_kept with every box scored ≥ SETTLE_CONF (NMS's, the crowded ones, the recover net's candidates) first
    settled on the card it sits on by the refine net, SETTLE_PASSES times (a box it hardly moves, not again).
    Settled boxes on one card overlap far more than two neighbours in a tight stair or fan, so NMS at
    ``info.settle`` over them keeps one box a card where NMS over the detector's boxes either drops a half-covered
    card or keeps a box across two. Only the boxes NMS keeps are read; one that either reading, at the detector's
    box or the settled one, sees no card face in is dropped (settled on a ruled notepad, a box can look like a card;
    the detector's box is read only when the settled one is not clearly a face, NONE_CHECK). A box is kept as _kept
    keeps one (scored ≥ conf, or ≥ rescue_conf and read with ≥ rescue_cls); the others, and the boxes scored below
    SETTLE_CONF, are the spares. A kept card read with less than ``info.refine`` is read at its detector's box too
    (_with_detectors_reading)."""
    boxes = [(q, s) for q, s in found.boxes + found.crowded + found.candidates if s >= SETTLE_CONF]
    low = [(q, s) for q, s in found.boxes if s < SETTLE_CONF]
    quads = [order_long_axis_vertical(q) for q, _ in boxes]
    session = _refine_session(str(info.path))
    move = list(range(len(quads)))
    for _ in range(SETTLE_PASSES):
        t = lies(session, img, [quads[k] for k in move])
        for k, tk in zip(move, t, strict=True):
            quads[k] = order_long_axis_vertical(refined(quads[k], tk))
        move = [k for k, tk in zip(move, t, strict=True) if np.abs(tk).max() >= SETTLED]
    n = len(boxes)
    order = []
    if n:  # NMS first: only the boxes it keeps are read
        order = [int(i) for i in np.array(cv2.dnn.NMSBoxesRotated(
            [cv2.minAreaRect(q) for q in quads], [float(s) for _, s in boxes], SETTLE_CONF, info.settle)).reshape(-1)]
    p_all, none_all = read_boxes(img, [quads[k] for k in order] + [order_long_axis_vertical(q) for q, _ in low], cls_s, info)
    probs, p_none = np.zeros((n, p_all.shape[1]), np.float32), np.ones(n, np.float32)
    probs[order], p_none[order] = p_all[:len(order)], none_all[:len(order)]
    check = [k for k in order if NONE_CHECK <= p_none[k] < NOT_A_CARD_P]
    if check:
        p_none[check] = np.maximum(p_none[check], read_boxes(img, [order_long_axis_vertical(boxes[k][0]) for k in check],
                                                             cls_s, info)[1])
    order = [k for k in order if p_none[k] < NOT_A_CARD_P]
    keep = [k for k in order if boxes[k][1] >= min(info.conf, info.rescue_conf)
            and (boxes[k][1] >= info.conf or probs[k].max() >= info.rescue_cls)]
    kept_q = [quads[k] for k in keep]
    kept_p = _second_look(img, kept_q, probs[keep], cls_s, info)
    kept_p = _with_detectors_reading(img, [boxes[k][0] for k in keep], kept_p, cls_s, info)
    spare = [(quads[k], boxes[k][1], probs[k]) for k in order if k not in keep]
    m = len(p_all) - len(low)  # the low boxes' readings come last
    spare += [(order_long_axis_vertical(q), s, p_all[m + i]) for i, (q, s) in enumerate(low) if none_all[m + i] < NOT_A_CARD_P]
    spares = [_card(q, s, p, info, top_k) for q, s, p in spare
              if all(quad_iou(q, k) < SPARE_APART for k in kept_q)][:SPARES]
    return [(quads[k], boxes[k][1]) for k in keep], kept_q, kept_p, [0.0] * len(keep), spares


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
        if pn < NOT_A_CARD_P:
            probs[k] = (probs[k] + p) / 2
    return probs


def _read_refined(img: np.ndarray, quads: list[np.ndarray], probs: np.ndarray, cls_s, info: ModelInfo) -> np.ndarray:
    """The cards read with less than ``info.refine`` whose boxes the refine net moves enough (vision.refine.moved)
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
    face = [k for k in range(len(chosen)) if p_none[k] < NOT_A_CARD_P]
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


SPARE_CONF = 0.1  # boxes down to this score are read, to offer a card the detector half-saw (Recognition.spares)
SPARE_APART = 0.3  # ... when they overlap no kept card by this quad IoU or more
SPARES = 6  # ... the most likely few (and as many crowded boxes, Found.crowded)
CROWD_APART = 0.7  # a crowded box is a spare when it overlaps no kept card by this quad IoU or more


def _floor(info: ModelInfo) -> float:
    """The lowest detector score read at all: greedy NMS keeps the higher-scored boxes first, so the boxes
    above the thresholds are the same whatever the floor."""
    return min(info.conf, info.rescue_conf, SPARE_CONF)


@dataclass
class Found:
    """The detector's boxes in pixels of the photo, as (quad 4×2, score)."""

    boxes: list[tuple[np.ndarray, float]]  # after NMS at the model's IoU, down to the lowest score read (_floor)
    # scored ≥ CROWD_CONF and left out by that NMS only for overlapping a kept box (a looser NMS keeps them):
    # in a tight stair or fan a card's own box can overlap its neighbour's that much
    crowded: list[tuple[np.ndarray, float]] = field(default_factory=list)
    raw: RawBoxes | None = None  # what they were cut from
    # scored ≥ CANDIDATE_CONF, kept by NMS at CANDIDATE_IOU and not at the model's: what the recover net judges
    candidates: list[tuple[np.ndarray, float]] = field(default_factory=list)


CROWD_CONF = 0.4  # crowded boxes: detector score at least this
CROWD_IOU = 0.6  # ... kept by rotated NMS at this IoU (and not at the model's)
CANDIDATE_CONF = 0.3  # boxes the recover net judges (vision.recover): detector score at least this
CANDIDATE_IOU = 0.7  # ... kept by rotated NMS at this IoU (and not at the model's)


def _look(det_s, img: np.ndarray, info: ModelInfo, off: tuple[int, int] = (0, 0), mirror: bool = False,
          plain: Found | None = None) -> Found:
    """One pass of the detector over ``img`` (a part of the photo whose top-left corner is ``off``); ``plain``:
    this pass already made without the mirrored look, to add that look to it."""
    raw = decode(det_s, img, info.det_imgsz, _floor(info), mirror, plain.raw if plain else None)
    keep = nms_index(raw, _floor(info), info.iou)
    kept = set(keep)
    crowded = [i for i in nms_index(raw, max(CROWD_CONF, _floor(info)), CROWD_IOU) if i not in kept]
    candidates = [i for i in nms_index(raw, max(CANDIDATE_CONF, _floor(info)), CANDIDATE_IOU) if i not in kept]
    shift = np.array(off, np.float32)

    def boxes(index: list[int]) -> list[tuple[np.ndarray, float]]:
        return [(q + shift, sc) for q, sc in quads_of(raw, index)]

    return Found(boxes(keep), boxes(crowded), raw, boxes(candidates))


def find_boxes(det_s, img: np.ndarray, info: ModelInfo) -> Found:
    """Every box the classifier will see, down to the lowest score read (``_floor``), through the second look
    at the cards' region when the model zooms: what recognize reads, and what training crops are cut at."""
    found = _look(det_s, img, info)
    zoomed = _zoom_in(det_s, img, found, info) if info.zoom else found
    # the mirrored look (when the model has it) joins the final pass: the zoomed one, or else the first
    return _look(det_s, img, info, mirror=True, plain=found) if zoomed is found and info.mirror else zoomed


def _card(quad: np.ndarray, det_score: float, p: np.ndarray, info: ModelInfo, top_k: int, recovered: float = 0.0) -> Card:
    order = np.argsort(-p)[:top_k]
    alts = [(info.codes[j], float(p[j])) for j in order]
    return Card(alts[0][0], alts[0][1], alts, quad.tolist(), det_score, recovered)


CARDS_ACROSS = 18  # the zoomed view is at least this many card widths across (cards trained at 1/15–1/40)


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
    side = max(x1 - x0, y1 - y0, CARDS_ACROSS * max(width, length / CARD_ASPECT))
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    x0, x1 = int(max(0, cx - side / 2)), int(min(w, cx + side / 2))
    y0, y1 = int(max(0, cy - side / 2)), int(min(h, cy + side / 2))
    if max(x1 - x0, y1 - y0) > max(w, h) / info.zoom:
        return found  # the cards already fill the photo
    again = _look(det_s, img[y0:y1, x0:x1], info, (x0, y0), info.mirror)
    if sum(sc >= info.conf for _, sc in again.boxes) < len(confident):
        return found
    return again


UNSURE = 0.9  # a card read with less than this probability gets a second look
SHIFTS = (-0.06, 0.06)  # ... through boxes moved across the card by these fractions of its width


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
    unsure = [k for k in range(len(quads)) if probs[k].max() < UNSURE]
    if not unsure:
        return probs
    which = [k for k in unsure for _ in SHIFTS]
    # read both ways (not ModelInfo.one_way): the surest reading wins here, and a one-way reading is surer than
    # its card's two-way one (read one way here: 2 more misreads on the 150 loose val photos)
    p2, p_none = faces_only(classify(cls_s, [fold(rectify(img, quads[k] + axes(quads[k])[1] * s, ordered=True))
                                             for k in unsure for s in SHIFTS], info.temperature), info)
    probs = probs.copy()
    for k, p, pn in zip(which, p2, p_none, strict=True):
        if pn < NOT_A_CARD_P and p.max() > probs[k].max():
            probs[k] = p  # the box stays the detector's: a reading is chosen, not a position
    return probs


def reading_order(cards: list[Card]) -> list[Card]:
    """The cards in reading order, also in a tilted photo: rows run across the cards' long axis; a new row
    starts where the cards' positions along that axis jump by more than half a card length (banding by
    pixel rows would split a slanted row; calibration names faces by this order)."""
    if not cards:
        return []
    quads = [np.array(c.quad, np.float32) for c in cards]
    along = np.array([axes(q)[0] for q in quads])
    length = float(np.median(np.linalg.norm(along, axis=1)))
    a = np.median(along / np.linalg.norm(along, axis=1, keepdims=True), axis=0)
    a = a / np.linalg.norm(a) * (1 if a[1] >= 0 else -1)  # rows follow one another top to bottom
    r = np.array([a[1], -a[0]])  # across the cards: left to right (top to bottom for cards lying flat)
    if (r[0], r[1]) < (0, 0):
        r = -r
    ctr = np.array([q.mean(0) for q in quads])
    s, t = ctr @ a, ctr @ r
    order = np.argsort(s)
    rows: list[list[int]] = [[int(order[0])]]
    for i, j in zip(order[:-1], order[1:], strict=True):
        if s[j] - s[i] > 0.5 * length:
            rows.append([])
        rows[-1].append(int(j))
    return [cards[k] for row in rows for k in sorted(row, key=lambda k: t[k])]


def recognize(image: str | Path | bytes | np.ndarray, model: str | Path | ModelInfo | None = None,
              top_k: int = 5) -> Recognition:
    """Recognize every card in a photo (a path, the file's bytes, or a BGR array). A large JPEG is read from a
    smaller decode (imageio.READ_SIDE); the cards' corners are given in the photo's own pixels all the same."""
    t = time.perf_counter()
    img, scale = (image, 1.0) if isinstance(image, np.ndarray) else read_photo(image, min_side=READ_SIDE)
    load_ms = round((time.perf_counter() - t) * 1000, 1)
    rec = recognize_array(img, model, top_k, {"load": load_ms})
    return rec if scale == 1.0 else rec.scaled(scale)


__all__ = ["Card", "Recognition", "recognize", "recognize_array", "model_info", "ModelError", "asdict"]
