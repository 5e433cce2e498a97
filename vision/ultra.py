"""Import ultralytics set up never to reach the network (fonts, hub, AMP check weights, pip)."""

from __future__ import annotations

import os


def offline_ultralytics():
    """Return the ultralytics module, configured offline. Only training and export need it."""
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
    return ultralytics
