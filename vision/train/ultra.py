"""Import ultralytics set up never to reach the network (fonts, hub, AMP check weights, pip)."""

from __future__ import annotations

import os
from pathlib import Path


def train_threads() -> int:
    """The CPU threads torch trains with: every core this process may run on (so two runs pinned to a core
    each, `taskset -c 0` and `taskset -c 1`, share a 2-core machine without crowding each other).
    ultralytics would take one less than the cores (utils.NUM_THREADS, set by select_device for CPU
    training) and OMP_NUM_THREADS=1 on import: one thread on a 2-core machine."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this platform
        return max(1, os.cpu_count() or 1)


def offline_ultralytics():
    """Return the ultralytics module, configured offline and to train on every core (train_threads). Only
    training and export need it."""
    os.environ.setdefault("OMP_NUM_THREADS", str(train_threads()))
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_AUTOINSTALL", "False")
    os.environ.setdefault("YOLO_VERBOSE", "False")
    os.environ.setdefault("HUB_DATASETS_DIR", "")
    import ultralytics
    from ultralytics.utils import SETTINGS

    changes = {k: v for k, v in {"sync": False, "hub": False, "wandb": False, "mlflow": False, "tensorboard": False,
                                 "clearml": False, "comet": False, "dvc": False, "neptune": False,
                                 "raytune": False}.items() if k in SETTINGS and SETTINGS[k] != v}
    if changes:
        SETTINGS.update(changes)
    from ultralytics.utils import torch_utils

    torch_utils.NUM_THREADS = train_threads()  # what select_device gives torch.set_num_threads for CPU training
    _results_without_polars()
    return ultralytics


def read_results(csv_path: Path) -> dict[str, list]:
    """A run's results.csv as {column: values} (numbers as floats), read with the csv module."""
    import csv

    try:
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return {}
    out: dict[str, list] = {}
    for row in rows:
        for k, v in row.items():
            try:
                out.setdefault(k.strip(), []).append(float(v))
            except (TypeError, ValueError):
                out.setdefault(k.strip(), []).append(v)
    return out


def _results_without_polars() -> None:
    """ultralytics reads results.csv with polars for every checkpoint it saves (the checkpoint's train_results);
    where polars is not installed (a lent GPU machine has no package index, and its 50 MB wheel is too big to carry)
    the trainer reads it with the csv module instead."""
    import importlib.util

    if importlib.util.find_spec("polars") is not None:  # found without importing it (a heavy import)
        return
    from ultralytics.engine.trainer import BaseTrainer

    BaseTrainer.read_results_csv = lambda self: read_results(Path(self.csv))
