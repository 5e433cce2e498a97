"""Export trained weights to ONNX and write them, with model.json and a model card, under models/NAME."""

from __future__ import annotations

import csv
import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

from scoring.cards import CODES
from vision.infer.model import MODELS_DIR, NOT_A_CARD
from vision.train.model_card import write_card
from vision.train.ultra import offline_ultralytics


def run_results(run_dir: Path) -> dict[str, Any]:
    """A training run's epochs finished and its last row of metrics (its results.csv)."""
    p = run_dir / "results.csv"
    if not p.exists():
        return {}
    rows = list(csv.DictReader(p.open()))
    if not rows:
        return {}
    last = {k.strip(): v for k, v in rows[-1].items()}
    return {"epochs_done": len(rows), "last_epoch": last}


def _args(run_dir: Path) -> dict[str, Any]:
    import yaml

    p = run_dir / "args.yaml"
    return yaml.safe_load(p.read_text()) if p.exists() else {}


def _relative(path: str | None) -> str | None:
    """A dataset path as the model card shows it: relative to the working folder when inside it."""
    if not path:
        return path
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def export_onnx(weights: Path, imgsz: int, dynamic: bool) -> Path:
    offline_ultralytics()
    from ultralytics import YOLO

    out = YOLO(str(weights)).export(format="onnx", imgsz=imgsz, dynamic=dynamic, simplify=True, opset=17, device="cpu")
    return Path(out)


def _permute_head(weights: Path, out: Path, target: list[str] | None, target_names: list[str] | None = None) -> list[str]:
    """Save ``weights`` with the classifier head's rows in the order of ``target`` (card codes; None: the
    project's order, CODES, then `none` if the classifier has that class). Returns the saved class names."""
    offline_ultralytics()
    import torch
    from ultralytics import YOLO

    m = YOLO(str(weights))
    names = {i: n.split("_", 1)[-1] for i, n in m.model.names.items()}  # "07_8t" (calibration folders) -> "8t"
    rows = {n: i for i, n in names.items()}
    if target is None:
        target = list(CODES) + [NOT_A_CARD] * (NOT_A_CARD in rows)
    head = m.model.model[-1].linear
    new = torch.nn.Linear(head.in_features, len(target))
    with torch.no_grad():
        for k, code in enumerate(target):
            if code in rows:
                new.weight[k] = head.weight[rows[code]]
                new.bias[k] = head.bias[rows[code]]
            elif code == NOT_A_CARD:  # a new not-a-card class starts unlikely: the cards' readings are kept
                new.weight[k] = 0.0
                new.bias[k] = head.bias.min() - 2.0
            else:
                raise ValueError(f"The classifier at {weights} has no class {code}.")
    m.model.model[-1].linear = new.to(head.weight.dtype)  # classes not in target (a not-a-card class) are left out
    m.model.names = dict(enumerate(target_names or target))
    m.model.yaml["nc"] = len(target)
    m.save(str(out))
    return list(target_names or target)


def reorder_classifier(weights: Path, out: Path) -> tuple[Path, list[str]]:
    """ultralytics names classification classes by sorted folder name (1b, 1t, 1w, …); permute the head so
    the outputs follow the project's class order (CODES, DESIGN.md, then `none` if present) and the names
    say so. Returns the saved weights and their class names."""
    return out, _permute_head(weights, out, None)


def align_classifier(weights: Path, data: Path, out: Path) -> Path:
    """The other way round, to fine-tune: permute the head of released weights (CODES order) to the order
    ultralytics gives the folders of ``data/train`` (sorted names), so each output keeps its card."""
    folders = sorted(p.name for p in (Path(data) / "train").iterdir() if p.is_dir())
    codes = [f.split("_", 1)[-1] for f in folders]
    if sorted(c for c in codes if c != NOT_A_CARD) != sorted(CODES):
        raise ValueError(f"{data}/train must have one folder per card code (35, and `{NOT_A_CARD}` for boxes that "
                         f"are not a card, if any), not {len(codes)}.")
    _permute_head(weights, out, codes, folders)
    return out


def release(what: str, run_dir: str | Path, name: str, extra: dict[str, Any] | None = None, card: bool = True) -> Path:
    """models/NAME's ``what`` net from the run's best.pt (else last.pt), in its model.json (and, with ``card``, card)."""
    run_dir = Path(run_dir)
    best = run_dir / "weights" / "best.pt"
    if not best.exists():
        best = run_dir / "weights" / "last.pt"
    if not best.exists():
        raise FileNotFoundError(f"No weights in {run_dir}/weights.")
    args = _args(run_dir)
    dest = MODELS_DIR / name
    dest.mkdir(parents=True, exist_ok=True)
    meta_p = dest / "model.json"
    meta = json.loads(meta_p.read_text()) if meta_p.exists() else {"names": list(CODES)}
    imgsz = int(args.get("imgsz", 640 if what == "detect" else 128))
    if what == "classify":
        best, meta["names"] = reorder_classifier(best, run_dir / "weights" / "release.pt")  # the codes, and `none` if any
    onnx = export_onnx(best, imgsz, dynamic=(what == "classify"))
    target = "detector" if what == "detect" else "classifier"
    shutil.copy(onnx, dest / f"{target}.onnx")
    shutil.copy(best, dest / f"{target}.pt")
    from ultralytics.utils.torch_utils import strip_optimizer

    strip_optimizer(str(dest / f"{target}.pt"))  # weights only (half precision): small enough to commit
    meta[f"{'det' if what == 'detect' else 'cls'}_imgsz"] = imgsz
    calib: dict[str, Any] = {}
    val_dir = Path(str(args.get("data", ""))) / "val"
    if what == "classify" and val_dir.is_dir():
        from vision.train.calibration_temp import fit_temperature

        calib = fit_temperature(dest / "classifier.onnx", val_dir)
        meta["temperature"] = calib["temperature"]
    meta.setdefault("conf", 0.35)
    meta.setdefault("iou", 0.5)
    meta[target] = {
        "trained_from": args.get("model"),
        "data": _relative(args.get("data")),
        "epochs": args.get("epochs"),
        "imgsz": imgsz,
        "batch": args.get("batch"),
        "results": run_results(run_dir),
        "released": dt.date.today().isoformat(),
    } | ({"confidence_calibration": calib} if calib else {}) | (extra or {})
    meta_p.write_text(json.dumps(meta, indent=1, ensure_ascii=False))
    if what == "classify" and meta.get("adapt", 0) > 0:  # the base read hands again with the photo's statistics
        write_adaptive(dest)
    if card:
        write_card(dest, meta)
    return dest


def write_adaptive(dest: Path) -> Path:
    """``dest``'s classifier (its classifier.pt) as the graph that takes the photo's own BatchNorm statistics
    (vision.train.adapt_export), beside it: what model.json's 'adapt' reads with."""
    from vision.infer.model import ADAPT_CLASSIFIER
    from vision.train.adapt_export import export_adaptive

    pt = dest / "classifier.pt"
    if not pt.is_file():
        raise FileNotFoundError(f"The model at {dest} has no classifier.pt to write its adaptive classifier from.")
    meta = json.loads((dest / "model.json").read_text()) if (dest / "model.json").is_file() else {}
    return export_adaptive(pt, dest / ADAPT_CLASSIFIER, int(meta.get("cls_imgsz", 128)))


def release_recover(run_dir: str | Path, base: str | Path, name: str, threshold: float,
                    extra: dict[str, Any] | None = None, prune: float = 0.0, keep_prune_net: bool = False) -> Path:
    """models/NAME = the model ``base`` (its detector and classifier, copied unless NAME is that model) with the
    recover net of ``run_dir`` (vision.train.recover_train.fit) at ``threshold``, pruning kept boxes below ``prune``
    (0: not). ``keep_prune_net``: the new net only recovers; pruning and the spares keep the net ``base`` judged
    them with (its prune.onnx, else its recover.onnx), as prune.onnx."""
    run_dir, base = Path(run_dir), Path(base)
    net = run_dir / "recover.onnx"
    if not net.is_file():
        raise FileNotFoundError(f"No recover net at {net}: train one with `changpai train recover`.")
    if not (base / "model.json").is_file():
        raise FileNotFoundError(f"No model at {base}.")
    from vision.infer.model import PRUNE_NET

    reads = _reads_readings(net)
    if reads and not keep_prune_net:
        raise ValueError(f"The net at {net} reads the classifier's readings, so it only recovers dropped boxes: "
                         "release it with --keep-prune-net.")
    kept_net = None
    if keep_prune_net:  # read before recover.onnx may be replaced (dest may be base)
        old = next((base / f for f in (PRUNE_NET, "recover.onnx") if (base / f).is_file()), None)
        if old is None:
            raise FileNotFoundError(f"The model at {base} has no recover net to keep for pruning.")
        if _reads_readings(old):
            raise ValueError(f"The net at {old} reads the classifier's readings and cannot prune: the model at {base} "
                             "has no net to keep for pruning.")
        kept_net = old.read_bytes()
    dest = MODELS_DIR / name
    if dest.resolve() != base.resolve():
        _copy_base(base, dest, "model.json")
    shutil.copy(net, dest / "recover.onnx")
    if kept_net is not None:
        (dest / PRUNE_NET).write_bytes(kept_net)
    else:
        (dest / PRUNE_NET).unlink(missing_ok=True)  # the new net does both
    meta_p = dest / "model.json"
    meta = json.loads(meta_p.read_text())
    figures = _run_figures(run_dir)
    meta["recover"] = threshold
    meta["prune"] = prune
    if keep_prune_net and "prune_net" not in meta:  # what the base said of the net it pruned with
        meta["prune_net"] = meta.get("recover_net", {}) | {"from": _relative(str(base))}
    elif not keep_prune_net:
        meta.pop("prune_net", None)
    meta["recover_net"] = {"run": _relative(str(run_dir)), "epochs": len(figures),
                           "last_epoch": figures[-1] if figures else {},
                           "released": dt.date.today().isoformat()} | ({"readings": True} if reads else {}) | (extra or {})
    return _released(dest, meta)


def release_prune(run_dir: str | Path, base: str | Path, name: str, extra: dict[str, Any] | None = None,
                  truth: bool = False) -> Path:
    """models/NAME = the model ``base`` with the prune net of ``run_dir`` (vision.train.prune_distil.fit: a slimmer net taught
    by ``base``'s own; ``truth``: vision.train.prune_truth.fit, taught the ground truth on ``base``'s kept boxes), its
    thresholds unchanged."""
    from vision.infer.model import PRUNE_NET

    run_dir, base = Path(run_dir), Path(base)
    net, dest = _box_net_release(run_dir, base, name, PRUNE_NET, "prune", "the new prune net", "it was taught by")
    meta = json.loads((base / "model.json").read_text())
    if meta.get("prune", 0.0) <= 0:
        raise ValueError(f"The model at {base} does not prune: there is no prune net to replace.")
    _copy_base(base, dest, "recover.onnx")
    shutil.copy(net, dest / PRUNE_NET)
    figures = _run_figures(run_dir)
    teacher = meta.get("prune_net") or meta.get("recover_net", {})
    meta["prune_net"] = {"from": _relative(str(base)), "distilled": not truth, "run": _relative(str(run_dir)),
                         "epochs": len(figures), "last_epoch": figures[-1] if figures else {},
                         "released": dt.date.today().isoformat()} | ({"taught": "ground truth on the kept boxes of "
                                                                      f"{_relative(str(base))}"} if truth else
                                                                     {"teacher": teacher}) | (extra or {})
    how = "taught the ground truth on its kept boxes" if truth else "taught the answers of its own"
    meta["version_note"] = (f"{name} = {base.name} with a slimmer prune net (prune.onnx) {how}; "
                            "its detector, classifier, recover net and thresholds unchanged")
    return _released(dest, meta)


REFINE_BELOW = 0.99  # cards read with less than this are refined (chosen on val: recognize._read_refined)


def release_refine(run_dir: str | Path, base: str | Path, name: str, below: float = REFINE_BELOW,
                   extra: dict[str, Any] | None = None) -> Path:
    """models/NAME = the model ``base`` with the refine net of ``run_dir`` (vision.train.refine_train.fit): a card read with
    less than ``below`` whose box the net moves enough is read again at the corners it gives (vision.infer.refine); the
    other networks and thresholds unchanged."""
    from vision.infer.model import PRUNE_NET, REFINE_NET

    run_dir, base = Path(run_dir), Path(base)
    net, dest = _box_net_release(run_dir, base, name, REFINE_NET, "refine", "the refine net", "it was trained with")
    _copy_base(base, dest, "recover.onnx", PRUNE_NET)
    shutil.copy(net, dest / REFINE_NET)  # in the base's place, if it had one
    meta = json.loads((base / "model.json").read_text())
    figures = _run_figures(run_dir)
    meta["refine"] = below
    meta["refine_net"] = {"from": _relative(str(base)), "run": _relative(str(run_dir)), "epochs": len(figures),
                          "last_epoch": figures[-1] if figures else {}, "released": dt.date.today().isoformat()} | (extra or {})
    meta["version_note"] = (f"{name} = {base.name} with a refine net (refine.onnx): a card read with less than {below} whose "
                            "box it moves enough is read again at the corners it gives, the two readings averaged; its "
                            "detector, classifier, box nets and thresholds unchanged")
    return _released(dest, meta)


def release_settings(base: str | Path, name: str, settings: dict[str, float], note: str = "") -> Path:
    """models/NAME = the model ``base`` with some of its thresholds (recognize.SETTINGS) changed, as `changpai eval --set`
    measured them; its networks unchanged. ValueError for a name that is no setting or NAME being ``base``, ModelError
    when ``base`` is no model or a setting needs a net it lacks."""
    from vision.infer.model import ADAPT_CLASSIFIER, BOX_NETS, model_info, with_settings

    base = Path(base)
    own = model_info(base)
    adapt = settings.get("adapt", own.adapt)
    # every name a setting, every net it needs there (the adaptive classifier is written here when the base has none)
    with_settings(own, {k: v for k, v in settings.items() if k != "adapt"} if adapt > 0 else settings)
    if not settings:
        raise ValueError("Name a setting to change (--set NAME=VALUE).")
    if not 0 <= adapt <= 1:
        raise ValueError(f"'adapt' is the share of the photo's own statistics, between 0 and 1, not {adapt}.")
    dest = _new_name(base, name, "Release the changed settings under a new name: the model measured stays as it is.")
    _copy_base(base, dest, *BOX_NETS)
    if adapt > 0 and not (dest / ADAPT_CLASSIFIER).is_file():
        write_adaptive(dest)
    meta = json.loads((base / "model.json").read_text())
    was = {k: getattr(own, k) for k in settings}
    meta.update(settings)
    meta["settings_note"] = note
    meta["version_note"] = (f"{name} = {base.name} with " + ", ".join(f"{k} {v} (was {was[k]})" for k, v in settings.items())
                            + "; its networks unchanged" + (f": {note}" if note else ""))
    return _released(dest, meta)


def release_second(base: str | Path, name: str, second: str | Path, below: float, note: str = "") -> Path:
    """models/NAME = the model ``base`` with the classifier of the model folder ``second`` as a second opinion
    (vision.infer.model.SecondOpinion): asked about each crop ``base``'s classifier reads with less than ``below``.
    Every other network and setting the base's. FileNotFoundError without either model, ValueError when NAME is
    ``base``, ``below`` is not in (0, 1], or the two classifiers do not name the same classes in the same order."""
    from vision.infer.model import BOX_NETS, SECOND_CLASSIFIER

    base, second = Path(base), Path(second)
    for m in (base, second):
        if not (m / "model.json").is_file() or not (m / "classifier.onnx").is_file():
            raise FileNotFoundError(f"No model with a classifier at {m}.")
    if not 0 < below <= 1:
        raise ValueError(f"The second classifier is asked about crops read with less than a probability: {below} is none.")
    meta, other = (json.loads((m / "model.json").read_text()) for m in (base, second))
    if meta.get("names") != other.get("names") or meta.get("cls_imgsz") != other.get("cls_imgsz"):
        raise ValueError(f"The classifiers of {base} and {second} do not read the same classes at one crop size.")
    dest = _new_name(base, name, "Release the second opinion under a new name: the model measured stays as it is.")
    _copy_base(base, dest, *BOX_NETS)
    shutil.copy(second / "classifier.onnx", dest / SECOND_CLASSIFIER)
    cls = other.get("classifier", {})
    meta["second"] = {"from": _relative(str(second)), "below": below, "released": dt.date.today().isoformat()} | \
        {k: cls[k] for k in ("trained_from", "recipe") if cls.get(k)} | ({"note": note} if note else {})
    meta["version_note"] = (f"{name} = {base.name} with the classifier of {second.name} asked about the crops its own "
                            f"reads with less than {below}" + (f": {note}" if note else ""))
    return _released(dest, meta)


def release_run(base: str | Path, name: str, what: str, run_dir: str | Path, note: str = "",
                settings: dict[str, float] | None = None) -> Path:
    """models/NAME = the model ``base`` with its detector (``what`` 'detect') or classifier ('classify') taken from
    the finished training run ``run_dir`` alone (its best.pt, else last.pt; a classifier's temperature fitted on the
    run's val crops), every other network and setting the base's: how a run is released without averaging it.
    FileNotFoundError without the run's weights or the base, ValueError when NAME is ``base`` itself or ``what``
    is neither. ``settings`` (recognize.SETTINGS, e.g. a temperature fitted elsewhere when the run's val crops are
    gone) are set on the release after."""
    from vision.infer.model import BOX_NETS, model_info, with_settings

    base, run_dir = Path(base), Path(run_dir)
    if settings:
        with_settings(model_info(base), settings)  # every name a setting (ValueError), as release_settings checks
    if what not in ("detect", "classify"):
        raise ValueError(f"A run releases a detector or a classifier, not {what!r}.")
    if not (base / "model.json").is_file():
        raise FileNotFoundError(f"No model at {base}.")
    if not any((run_dir / "weights" / f).is_file() for f in ("best.pt", "last.pt")):
        raise FileNotFoundError(f"No weights in {run_dir}/weights: train with `changpai train {what}` first.")
    net_words = "the detector" if what == "detect" else "the classifier"
    dest = _new_name(base, name, f"Release {net_words} under a new name: the model trained from stays as it is.")
    _copy_base(base, dest, *BOX_NETS)
    shutil.copy(base / "model.json", dest / "model.json")
    release(what, run_dir, name, card=False)
    meta = json.loads((dest / "model.json").read_text())
    meta.update(settings or {})
    set_words = "".join(f", {k} {v}" for k, v in (settings or {}).items())
    meta["version_note"] = (f"{name} = {base.name} with {net_words} of the run {run_dir.name}{set_words}"
                            + (f": {note}" if note else ""))
    return _released(dest, meta)


def _box_net_release(run_dir: Path, base: Path, name: str, net_file: str, what: str, net_words: str,
                     how: str) -> tuple[Path, Path]:
    """The trained net (run_dir/net_file) and models/NAME for a release of ``base`` with it: FileNotFoundError without
    either, ValueError when NAME is ``base`` itself."""
    net = run_dir / net_file
    if not net.is_file():
        raise FileNotFoundError(f"No {what} net at {net}: train one with `changpai train {what}`.")
    if not (base / "model.json").is_file():
        raise FileNotFoundError(f"No model at {base}.")
    return net, _new_name(base, name, f"Release {net_words} under a new name: the model {how} stays as it is.")


def _new_name(base: Path, name: str, refusal: str) -> Path:
    """models/NAME for a release made from ``base``: ValueError(``refusal``) when that is ``base`` itself."""
    dest = MODELS_DIR / name
    if dest.resolve() == base.resolve():
        raise ValueError(refusal)
    return dest


def _released(dest: Path, meta: dict[str, Any]) -> Path:
    """``dest`` with ``meta`` as its model.json (less the base model's measured figures) and its model card."""
    meta.pop("evaluation", None)  # the figures measured were the base model's
    (dest / "model.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False))
    write_card(dest, meta)
    return dest


def _copy_base(base: Path, dest: Path, *more: str) -> None:
    """The base model's detector and classifier (ONNX and weights), its refine net if it has one (model.json's 'refine'
    goes with it), and ``more`` of its files, into ``dest``: a release that changes only its box nets."""
    from vision.infer.model import ADAPT_CLASSIFIER, REFINE_NET, SECOND_CLASSIFIER

    dest.mkdir(parents=True, exist_ok=True)
    for f in ("detector.onnx", "detector.pt", "classifier.onnx", "classifier.pt", REFINE_NET, SECOND_CLASSIFIER,
              ADAPT_CLASSIFIER, *more):
        if (base / f).is_file():
            shutil.copy(base / f, dest / f)


def _run_figures(run_dir: Path) -> list[dict[str, Any]]:
    """The per-epoch figures a box net's training wrote (recover_train.finished), none when it wrote none."""
    p = run_dir / "figures.json"
    return json.loads(p.read_text()) if p.is_file() else []


def _reads_readings(net: Path) -> bool:
    """Whether the box net at ``net`` reads the classifier's readings (vision.infer.recover.reads_readings)."""
    from vision.infer.model import _session
    from vision.infer.recover import reads_readings

    return reads_readings(_session(net))
