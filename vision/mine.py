"""Classifier crops cut where the detector puts its boxes: the classifier then learns the crops it will
see at inference (boxes a little off the card), not only crops around the true corners."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from .evaluate import MIN_VISIBLE, match
from .geometry import fold, order_long_axis_vertical, rectify
from .imageio import load_image
from .recognize import _sessions, detect, model_info


def mine(scenes: str | Path, out: str | Path, model: str | Path | None = None, limit: int | None = None,
         val_every: int = 10, progress: bool = True) -> int:
    """For each scene of a `synth --kind detect` folder, crop every detected card matched to a ground-truth
    card and file it under ``out/{train,val}/<true code>/``. Returns the number of crops."""
    from tqdm import tqdm

    scenes, out = Path(scenes), Path(out)
    info = model_info(model)
    det, _ = _sessions(str(info.path))
    gts = sorted((scenes / "gt").glob("*.json"))[:limit]
    n = 0
    for k, p in enumerate(tqdm(gts, desc="mine crops", disable=not progress)):
        gt = json.loads(p.read_text())
        cards = [c for c in gt["cards"] if c["visible"] >= MIN_VISIBLE]
        if not cards:
            continue
        img = load_image(scenes / gt["image"])
        dets = detect(det, img, info.det_imgsz, info.conf, info.iou)
        for i, j in match([d[0] for d in dets], [np.array(c["quad"], np.float32) for c in cards]):
            crop = fold(rectify(img, order_long_axis_vertical(dets[i][0]), ordered=True))
            split = "val" if k % val_every == val_every - 1 else "train"
            d = out / split / cards[j]["code"]
            d.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(d / f"det_{p.stem}_{j:02d}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
            n += 1
    return n
