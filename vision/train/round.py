"""One training round of both networks from a released model, held to a time budget: scenes of the trained deck
families and the own styles, tight and loose, rendered on every core; the detector fine-tuned on them while
classifier crops are cut where the base model boxes the tight ones; then the classifier fine-tuned beside it (one
GPU takes both); both end by the deadline (stop_before), and the classifier is averaged with the base's.

Made for a GPU machine lent for minutes, where photos cannot be carried in and rendering there is fastest
(docs/training.md; changpai-v23 came from such a round), and runs anywhere: the tests run it tiny on CPU. The
sideways family and the held-out style are never drawn: they stay the never-trained test families."""

from __future__ import annotations

import json
import multiprocessing as mp
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# changpai-v23's round drew the first five; heroes (万 drawn as each rank's own figure) and medley (the named cards
# drawn the printer's way, rims) are drawn since
FAMILIES = ("assorted", "woodblock", "dotted", "boxed", "formal", "heroes", "medley")
OWN = ("classic", "bold", "fine", "folk")
WILD = ("fu", "lu", "shou", "xi", "cai")


@dataclass(frozen=True)
class Part:
    """One rendered set of the round: ``mine`` of its scenes are cut into classifier crops (0: none)."""

    name: str
    kind: str
    n: int
    seed: int
    styles: tuple[str, ...]
    tight: bool
    mine: int


# changpai-v23's round (seeds apart from every val and test set's)
PARTS = (
    Part("famtight", "detect", 1500, 401, FAMILIES, True, 250),
    Part("famtight2", "detect", 700, 407, FAMILIES, True, 200),
    Part("famhands", "hands", 800, 402, FAMILIES, True, 200),
    Part("owntight", "detect", 500, 403, OWN, True, 200),
    Part("famloose", "detect", 700, 404, FAMILIES, False, 100),
    Part("ownhands", "hands", 500, 405, OWN, False, 0),
    Part("ownloose", "detect", 400, 406, OWN, False, 0),
)
FACES = ((FAMILIES, 250, 411, "clsfam"), (OWN, 150, 412, "clsown"))  # whole faces for the classifier
NEGATIVES = ("ownloose", 300)  # boxes that show no card, for the classifier's `none` class


@dataclass(frozen=True)
class Budget:
    """How big and how long: ``scale`` multiplies every count (1: changpai-v23's round); the networks' sizes."""

    minutes: float = 7.5
    scale: float = 1.0
    device: str = "0"
    workers: int = 16
    det_imgsz: int = 832
    det_batch: int = 32
    cls_batch: int = 256
    det_epochs: int = 40
    cls_epochs: int = 60
    lr0: float = 0.0005
    seed_shift: int = 0  # added to every part's seed: 0 draws changpai-v23's seeds; another draws new scenes and decks
    keep: float = 0.0  # the classifier's pull toward the base's readings where they are right (vision.train.keep; 0: off)


def _n(n: int, scale: float, least: int) -> int:
    return max(least, round(n * scale))


def render(out: Path, budget: Budget, progress: bool = True) -> Path:
    """Every part rendered under ``out``, and ``out/det.yaml`` listing their training images (val: the tight
    family, own and loose family parts' val photos)."""
    import yaml

    from vision.synth.tables import ALL_TABLES
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run

    val_frac = 0.03 if budget.scale >= 0.5 else 0.25
    for p in PARTS:
        job = Job(str(out / p.name), p.kind, p.seed + budget.seed_shift, _n(p.n, budget.scale, 4), p.styles, None, val_frac, 1280, 960,
                  tables=ALL_TABLES, least_show=0.2 if p.tight else None)
        synth_run(job, workers=budget.workers, progress=progress)
    names = yaml.safe_load((out / PARTS[0].name / "dataset.yaml").read_text())["names"]
    det = {"train": [str((out / p.name / "images" / "train").resolve()) for p in PARTS],
           "val": [str((out / p / "images" / "val").resolve()) for p in ("famtight", "owntight", "famloose")],
           "names": names}
    (out / "det.yaml").write_text(yaml.safe_dump(det, allow_unicode=True))
    return out / "det.yaml"


def _mine_one(args: tuple[str, str, str, int, bool]) -> int:
    from vision.eval.mine import mine, mine_negatives

    scenes, crops, model, limit, negatives = args
    return (mine_negatives if negatives else mine)(scenes, crops, model, limit, progress=False)


def crops(out: Path, base: Path, budget: Budget, progress: bool = True) -> Path:
    """Classifier crops: cut where ``base`` boxes the mined parts' scenes, the `none` boxes, whole faces; one
    dataset ``out/clsdata`` (links), the extras' crops four times. The base is read with its heads reader off
    (a copy): mining reads no heads, and a lent machine may not have the text recognizer."""
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run
    from vision.train.yolo import combine_crops

    model = out / "base_for_mining"
    shutil.copytree(base, model, dirs_exist_ok=True)
    info = json.loads((model / "model.json").read_text())
    (model / "model.json").write_text(json.dumps(info | {"heads": 0}, ensure_ascii=False))
    jobs = [(str(out / p.name), str(out / f"mine_{p.name}"), str(model), _n(p.mine, budget.scale, 2), False)
            for p in PARTS if p.mine]
    jobs.append((str(out / NEGATIVES[0]), str(out / "neg"), str(model), _n(NEGATIVES[1], budget.scale, 2), True))
    # each a process of its own (onnxruntime takes two threads a session): as many as the cores allow
    with ProcessPoolExecutor(max(1, min(len(jobs), budget.workers // 2)), mp_context=mp.get_context("spawn")) as pool:
        cut = sum(pool.map(_mine_one, jobs))
    for styles, n, seed, name in FACES:
        synth_run(Job(str(out / name), "classify", seed + budget.seed_shift, _n(n, budget.scale, 12), styles, None,
                      0.1 if budget.scale >= 0.5 else 0.5, 1280, 960), workers=max(1, budget.workers // 4), progress=progress)
    sources = [Path(j[1]) for j in jobs] + [out / name for *_, name in FACES]
    if progress:
        print(f"{cut} crops cut where {base.name} puts its boxes")
    return combine_crops(sources, out / "clsdata", {w: 4 for w in WILD})


def _train(what: str, data: str, base: str, name: str, budget: Budget, deadline: float) -> None:
    """One network's fine-tune (in a process of its own, so the two train at once)."""
    from vision.train.yolo import train_classify, train_detect

    common = dict(device=budget.device, deadline=deadline, name=name)
    if what == "detect":
        train_detect(data, epochs=budget.det_epochs, imgsz=budget.det_imgsz, batch=budget.det_batch,
                     model=str(Path(base) / "detector.pt"), workers=min(10, budget.workers),
                     extra=dict(mosaic=0.0, lr0=budget.lr0, lrf=0.05, warmup_epochs=0.3), **common)
    else:
        imgsz = json.loads((Path(base) / "model.json").read_text()).get("cls_imgsz", 128)  # not model_info: no heads reader here
        train_classify(data, epochs=budget.cls_epochs, imgsz=imgsz, batch=budget.cls_batch,
                       model=str(Path(base) / "classifier.pt"), workers=min(6, budget.workers),
                       extra=dict(lr0=budget.lr0, lrf=0.05), keep=budget.keep, **common)


def run_round(out: str | Path, base: str | Path, name: str, budget: Budget, progress: bool = True) -> dict[str, Any]:
    """The whole round, ending about ``budget.minutes`` after it starts (the trainings' epochs end by then, the
    classifier's mean after). Returns the runs' paths: ``detector`` (runs/NAME_det, its last epoch), ``classifier``
    (runs/NAME_cls), ``classifier_mean`` (the mean of the base's classifier and the run, runs/NAME_cls_mean/weights/last.pt), and
    how many epochs each fitted."""
    from vision.train.average import average_weights
    from vision.train.yolo import RUNS

    out, base = Path(out), Path(base)
    if not (base / "detector.pt").is_file() or not (base / "classifier.pt").is_file():
        raise FileNotFoundError(f"No detector.pt and classifier.pt at {base}: a round starts from a released model.")
    deadline = time.time() + 60 * budget.minutes
    out.mkdir(parents=True, exist_ok=True)
    det_yaml = render(out, budget, progress)
    ctx = mp.get_context("spawn")
    det = ctx.Process(target=_train, args=("detect", str(det_yaml), str(base), f"{name}_det", budget, deadline))
    det.start()
    try:
        data = crops(out, base, budget, progress)
        cls = ctx.Process(target=_train, args=("classify", str(data), str(base), f"{name}_cls", budget, deadline))
        cls.start()
        cls.join()
    except BaseException:
        det.terminate()
        det.join()
        raise
    det.join()
    if det.exitcode or cls.exitcode:
        raise RuntimeError(f"a training run failed (detector exit {det.exitcode}, classifier exit {cls.exitcode}).")
    mean = average_weights([RUNS / f"{name}_cls_start.pt", RUNS / f"{name}_cls" / "weights" / "last.pt"], RUNS / f"{name}_cls_mean")
    from vision.train.release import run_results

    return {"detector": RUNS / f"{name}_det", "classifier": RUNS / f"{name}_cls", "classifier_mean": mean,
            "detector_epochs": run_results(RUNS / f"{name}_det").get("epochs_done"),
            "classifier_epochs": run_results(RUNS / f"{name}_cls").get("epochs_done")}
