"""Classifier crops cut where the detector puts its boxes: the classifier then learns the crops it will
see at inference (boxes a little off the card), not only crops around the true corners."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from vision.eval.tally import MIN_VISIBLE, match
from vision.infer.detect import find_boxes
from vision.infer.geometry import CARD_ASPECT, fold, obb_to_quad, order_long_axis_vertical, quad_iou, rectify
from vision.infer.imageio import load_image
from vision.infer.model import NOT_A_CARD, NOT_A_CARD_P, _sessions, model_info
from vision.infer.recognize import read_crops


def _scenes(scenes: Path, limit: int | None, val_every: int, desc: str, progress: bool):
    """Each scene of a `synth` folder: (gt file, ground truth, image, split — the scene's own, else every
    ``val_every``-th scene goes to val)."""
    from tqdm import tqdm

    for k, p in enumerate(tqdm(sorted((scenes / "gt").glob("*.json"))[:limit], desc=desc, disable=not progress)):
        gt = json.loads(p.read_text())
        yield p, gt, load_image(scenes / gt["image"]), gt.get("split") or ("val" if k % val_every == val_every - 1 else "train")


def _cut(img: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The classifier's view of the box ``quad``: the card cut upright and folded, as recognize reads it."""
    return fold(rectify(img, order_long_axis_vertical(quad), ordered=True))


def _save_crop(crop: np.ndarray, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), crop, [cv2.IMWRITE_JPEG_QUALITY, 92])


def mine(scenes: str | Path, out: str | Path, model: str | Path | None = None, limit: int | None = None,
         val_every: int = 10, progress: bool = True, hard: float | None = None) -> int:
    """For each scene of a `synth --kind detect|hands` folder, crop every box recognize reads
    (recognize.find_boxes) that matches a ground-truth card and file it under ``out/{train,val}/<true code>/``.
    With ``hard``, only the boxes the model's own classifier reads wrong, or right with less than ``hard``
    probability (the crops it still errs on: half-covered cards in stairs and fans), are cut.
    Returns the number of crops."""
    scenes, out = Path(scenes), Path(out)
    info = model_info(model)
    det, cls = _sessions(str(info.path))
    n = 0
    for p, gt, img, split in _scenes(scenes, limit, val_every, "mine hard crops" if hard is not None else "mine crops", progress):
        cards = [c for c in gt["cards"] if c["visible"] >= MIN_VISIBLE]
        if not cards:
            continue
        dets = find_boxes(det, img, info).boxes
        pairs = match([d[0] for d in dets], [np.array(c["quad"], np.float32) for c in cards])
        crops = [_cut(img, dets[i][0]) for i, _ in pairs]
        which = range(len(pairs)) if hard is None else _misread(crops, [cards[j]["code"] for _, j in pairs], cls, info, hard)
        for k in which:
            j = pairs[k][1]
            _save_crop(crops[k], out / split / cards[j]["code"] / f"det_{p.stem}_{j:02d}.jpg")
            n += 1
    return n


def _misread(crops: list[np.ndarray], codes: list[str], cls, info, sure: float) -> list[int]:
    """Which of the boxes' ``crops`` (``_cut``; true codes ``codes``) the classifier reads wrong, or right with less
    than ``sure``, or as no card face."""
    if not crops:
        return []
    probs, p_none = read_crops(crops, cls, info)
    return [k for k, (p, pn, code) in enumerate(zip(probs, p_none, codes, strict=True))
            if pn >= NOT_A_CARD_P or info.codes[int(np.argmax(p))] != code or float(p.max()) < sure]


def negative_quads(gt: dict, found: list[np.ndarray], rng: np.random.Generator, bare: int = 1) -> list[np.ndarray]:
    """Boxes of a scene (its ground truth ``gt``) that show no card face: of the detector's boxes ``found``, those
    that touch no card (quad IoU < 0.1 with every card, however hidden); a card-shaped box over each object on
    the table (coin, phone, ruled paper, mahjong tile) and each face-down card; ``bare`` over bare table (more of
    them teach the table cloths whose printed stripes and rules look like a card's long strip)."""
    h, w = gt["height"], gt["width"]
    cards = [np.array(c["quad"], np.float32) for c in gt["cards"]]
    width = float(gt.get("card_px", 40))

    def clear(q: np.ndarray) -> bool:
        return all(quad_iou(q, c) < 0.1 for c in cards)

    def card_shaped(cx: float, cy: float) -> np.ndarray:
        return obb_to_quad(cx, cy, width * rng.uniform(0.85, 1.15), width * CARD_ASPECT, rng.uniform(0, np.pi))

    quads = [q for q in found if clear(q)]
    for d in gt.get("distractors", []):
        if "quad" in d:  # a face-down card: its back is not a face
            quads.append(np.array(d["quad"], np.float32))
            continue
        q = card_shaped(*(np.array(d["center"]) + rng.uniform(-0.25, 0.25, 2) * d["size"]))
        if clear(q):
            quads.append(q)
    placed = 0
    for _ in range(5 * bare):  # bare table
        q = card_shaped(rng.uniform(0, w), rng.uniform(0, h))
        if clear(q) and (q.min(0) >= 0).all() and (q[:, 0] < w).all() and (q[:, 1] < h).all():
            quads.append(q)
            placed += 1
            if placed == bare:
                break
    return quads


def mine_negatives(scenes: str | Path, out: str | Path, model: str | Path | None = None, limit: int | None = None,
                   val_every: int = 10, seed: int = 0, progress: bool = True, bare: int = 1) -> int:
    """Crops that are not a card face (negative_quads, ``bare`` boxes over bare table a scene), cut from the
    scenes of a `synth --kind detect|hands` folder and filed under ``out/{train,val}/none/`` for the
    classifier's not-a-card class. The detector's boxes are those recognize reads (recognize.find_boxes: down
    to the lowest score classified, zoomed in as recognize does). Returns the number of crops."""
    scenes, out = Path(scenes), Path(out)
    info = model_info(model)
    det, _ = _sessions(str(info.path))
    rng = np.random.default_rng(seed)
    n = 0
    for p, gt, img, split in _scenes(scenes, limit, val_every, "mine negatives", progress):
        found = [q for q, _ in find_boxes(det, img, info).boxes]
        (out / split / NOT_A_CARD).mkdir(parents=True, exist_ok=True)
        for j, q in enumerate(negative_quads(gt, found, rng, bare)):
            _save_crop(_cut(img, q), out / split / NOT_A_CARD / f"neg_{scenes.name}_{p.stem}_{j:02d}.jpg")
            n += 1
    return n
