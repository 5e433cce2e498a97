"""Training of the detector (YOLO OBB, single class "card") and the crop classifier (YOLO cls), on CPU,
from the model YAMLs (no pretrained weights can be had), with resume and checkpoints every epoch."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from vision.train.ultra import offline_ultralytics

RUNS = Path("runs")


KEEP_FILE = "keep.json"  # a --keep run's start and weight, for its resumption


def _common(device: str, workers: int) -> dict[str, Any]:
    return dict(device=device, workers=workers, amp=False, plots=False, verbose=False, exist_ok=True,
                pretrained=False, save_period=1, deterministic=False)


def _resume(run_dir: Path, device: str, workers: int) -> Path:
    """Continue a run from its last checkpoint (ultralytics keeps the optimizer and epoch there); a classifier run
    made with ``keep`` goes on with its pull toward the start (KEEP_FILE beside its weights)."""
    from ultralytics import YOLO

    last = run_dir / "weights" / "last.pt"
    if not last.exists():
        raise FileNotFoundError(f"No checkpoint to resume at {last}.")
    m = YOLO(str(last))
    if (run_dir / KEEP_FILE).is_file():
        from vision.train.keep import keep_callback

        kept = json.loads((run_dir / KEEP_FILE).read_text())
        m.add_callback("on_pretrain_routine_end", keep_callback(kept["start"], float(kept["weight"])))
    m.train(resume=True, device=device, workers=workers)
    return run_dir


def train_detect(data: str, epochs: int = 10, imgsz: int = 640, batch: int = 8, name: str = "detect",
                 model: str = "yolo11n-obb.yaml", resume: bool = False, device: str = "cpu", workers: int = 2,
                 fraction: float = 1.0, extra: dict[str, Any] | None = None, deadline: float | None = None) -> Path:
    """``deadline`` (time.time()): the run is cut to the epochs that end by then (stop_before; at least one)."""
    offline_ultralytics()
    from ultralytics import YOLO

    run_dir = RUNS / name
    if resume:
        return _resume(run_dir, device, workers)
    m = YOLO(model, task="obb")  # a YAML (from scratch) or weights to fine-tune
    if deadline is not None:
        m.add_callback("on_fit_epoch_end", stop_before(deadline))
    # fine-tuning released weights: a gentle rate that decays to nothing, not the from-scratch warm-up
    # (pretrained=True: with False, ultralytics builds the network afresh and drops the given weights;
    # warmup_bias_lr=0: by default the biases start the warm-up at 0.1, which under AdamW throws a trained
    # detector's losses back up for the whole warm-up)
    fine_tune = {} if str(model).endswith((".yaml", ".yml")) else dict(
        optimizer="AdamW", lr0=0.001, cos_lr=True, warmup_epochs=0.3, warmup_bias_lr=0.0, pretrained=True)
    args = _common(device, workers) | dict(
        data=str(Path(data).resolve()), epochs=epochs, imgsz=imgsz, batch=batch, project=str(RUNS.resolve()), name=name,
        single_cls=True, fraction=fraction,
        # augmentation: cards are seen at any angle and scale; colours are meaningful (red vs black)
        degrees=10.0, fliplr=0.5, flipud=0.0, mosaic=1.0, close_mosaic=2, scale=0.4, hsv_h=0.01, hsv_s=0.4, hsv_v=0.4,
        translate=0.1, patience=50, cache=False,
    ) | fine_tune | (extra or {})
    m.train(**args)
    return run_dir


def combine_crops(sources: list[str | Path], out: str | Path, repeat: dict[str, int] | None = None) -> Path:
    """One classifier dataset from several crop folders (``SRC/{train,val}/<code>/``) as links, with the
    training crops of the codes in ``repeat`` listed that many times (rare kinds seen more often)."""
    import os

    out = Path(out)
    for k, src in enumerate(map(Path, sources)):
        if not (src / "train").is_dir():
            raise FileNotFoundError(f"No crops at {src}/train (make them with `changpai synth --kind classify`).")
        for split in ("train", "val"):
            for d in sorted(p for p in (src / split).iterdir() if p.is_dir()) if (src / split).is_dir() else []:
                (out / split / d.name).mkdir(parents=True, exist_ok=True)
                times = (repeat or {}).get(d.name, 1) if split == "train" else 1
                for f in d.iterdir():
                    for r in range(times):
                        link = out / split / d.name / f"{k}_{r}_{f.name}"
                        if not link.exists():
                            os.symlink(f.resolve(), link)
    return out


def stop_before(deadline: float):
    """An ultralytics callback (on_fit_epoch_end) that keeps training within ``deadline`` (time.time()): when the
    epochs left, each as long as the last one (the mean of those so far where the trainer does not say), would end
    after it, the run is cut to the epochs that fit and its learning-rate schedule planned again over them (as
    ultralytics' own ``time`` does); with none left to fit, it ends. A run cut while its first epochs were slow (on a
    lent GPU machine the detector's first epochs share the cores with the crops being cut) is lengthened again, up to
    the epochs asked, once its epochs run faster."""
    asked: list[int] = []

    def check(trainer) -> None:
        now = time.time()
        if not asked:
            asked.append(trainer.epochs)
        done = trainer.epoch + 1 - trainer.start_epoch
        last = getattr(trainer, "epoch_time", None)
        per = last if isinstance(last, (int, float)) and last > 0 else (now - trainer.train_time_start) / max(done, 1)
        fit = min(asked[0], trainer.epoch + 1 + max(int((deadline - now) // per), 0))  # the epochs that end by the deadline
        if fit == trainer.epochs or (fit > trainer.epochs and (trainer.stop or trainer.epoch + 1 >= trainer.epochs)):
            return  # as planned; or longer, but this epoch was planned as the last and the run ends with it
        trainer.epochs = trainer.args.epochs = fit  # the trainer ends its run there
        if fit <= trainer.epoch + 1:
            trainer.stop = True
        elif hasattr(trainer, "_setup_scheduler"):  # ultralytics' own (private) step for time=; without it the run
            trainer._setup_scheduler()  # still ends in time, its rate not fully annealed
            trainer.scheduler.last_epoch = trainer.epoch

    return check


def train_classify(data: str, epochs: int = 15, imgsz: int = 128, batch: int = 64, name: str = "classify",
                   model: str = "yolo11n-cls.yaml", resume: bool = False, device: str = "cpu", workers: int = 2,
                   extra: dict[str, Any] | None = None, deadline: float | None = None, keep: float = 0.0) -> Path:
    """``deadline`` (time.time()): the run is cut to the epochs that end by then (stop_before; at least one).
    ``keep`` > 0 (a fine-tune from weights): the loss pulls toward the start's readings where they are right
    (vision.train.keep)."""
    offline_ultralytics()
    from ultralytics import YOLO

    run_dir = RUNS / name
    if resume:
        return _resume(run_dir, device, workers)
    fine_tune: dict[str, Any] = {}
    if not str(model).endswith((".yaml", ".yml")):
        # released weights list the codes in project order; the dataset's folders sort differently
        from vision.train.release import align_classifier

        RUNS.mkdir(parents=True, exist_ok=True)
        model = str(align_classifier(Path(model), Path(data), RUNS / f"{name}_start.pt"))
        fine_tune = dict(lr0=0.001, warmup_epochs=0.3, warmup_bias_lr=0.0, pretrained=True)  # as train_detect
    if keep > 0 and not fine_tune:
        raise ValueError("keep pulls a fine-tune toward its start: give the weights to start from.")
    m = YOLO(model, task="classify")
    if keep > 0:
        from vision.train.keep import keep_callback

        m.add_callback("on_pretrain_routine_end", keep_callback(model, keep))
        run_dir.mkdir(parents=True, exist_ok=True)  # a resumed run reads it (_resume)
        (run_dir / KEEP_FILE).write_text(json.dumps({"start": str(Path(model).resolve()), "weight": keep}))
    if deadline is not None:
        m.add_callback("on_fit_epoch_end", stop_before(deadline))
    args = _common(device, workers) | dict(
        data=str(Path(data).resolve()), epochs=epochs, imgsz=imgsz, batch=batch, project=str(RUNS.resolve()), name=name,
        # the fold already shows both card ends upright: no flips; mild colour and scale changes
        fliplr=0.0, flipud=0.0, hsv_h=0.01, hsv_s=0.3, hsv_v=0.3, erasing=0.1, auto_augment=None, scale=0.1,
        translate=0.05, degrees=0.0, patience=50,
        # from scratch the automatic optimizer picks a very small rate for 35 classes; this converges in ~15 epochs
        optimizer="AdamW", lr0=0.003, warmup_epochs=1, cos_lr=True,
    ) | fine_tune | (extra or {})
    m.train(**args)
    return run_dir
