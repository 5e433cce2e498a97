"""Training the refine net (vision.infer.refine): views around the boxes a model's recognizer keeps on rendered scenes,
each with how its labelled card lies in it, and views around the labelled cards' corners jittered as a detector
misses them (geometry.jitter_quad), so the net also sees boxes further off than its own detector's. torch is
imported here, never by recognize."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from vision.infer.geometry import quad_ious
from vision.infer.refine import TARGETS, VIEW_H, VIEW_W, target, view

JITTERED = 12  # labelled cards per scene also seen through a jittered box
JITTER = 1.5  # ... that many times the detector's usual error (geometry.BOX_ERROR)
MATCH_IOU = 0.3  # a kept box is a view of the labelled card it overlaps this much
SETTLING = 24  # with settling views: boxes before NMS per scene also seen (a random choice of those on a card)


def collect(roots: list[str | Path], model: str | Path | None, out: str | Path, progress: bool = True,
            limit: int | None = None, seed: int = 5, settling: bool = False) -> dict[str, int]:
    """Views and targets from the scenes of ``roots`` (folders of `changpai synth`, with gt/), saved to ``out``
    (.npz: views N × 3 × VIEW_H × VIEW_W uint8, targets N × 5, jittered N: 0 a kept box, 1 a box seen otherwise).
    ``settling``: also up to SETTLING boxes a scene among those a settling model moves (every box the detector scores
    Knobs.settle_conf or more, before NMS: duplicates and boxes on mostly covered cards among them), each a view of the
    card it overlaps most if at least MATCH_IOU; the views of kept boxes alone hold few of them."""
    from tqdm import tqdm

    import vision.infer.model as M
    import vision.infer.recognize as R
    from vision.eval.tally import match
    from vision.infer.geometry import jitter_quad
    from vision.infer.imageio import READ_SIDE, read_photo
    from vision.types import MIN_LABEL_VISIBLE

    gts = [p for r in roots for p in sorted(Path(r, "gt").glob("*.json"))][:limit]
    if not gts:
        raise FileNotFoundError(f"No labelled scenes under {', '.join(str(Path(r, 'gt')) for r in roots)}.")
    # the boxes the detector's NMS keeps, where the net will meet them first: a model that settles its boxes
    # (model.json 'settle') would give boxes the net has already moved
    info = replace(M.model_info(model), settle=0.0)
    rng = np.random.default_rng(seed)
    views, targets, jittered, before_nms, off = [], [], [], 0, 0
    for p in tqdm(gts, desc="refine views", unit="photo", disable=not progress):
        gt = json.loads(p.read_text())
        img, scale = read_photo(p.parent.parent / gt["image"], min_side=READ_SIDE)
        true = [np.array(c["quad"], np.float32) / scale for c in gt["cards"] if c["visible"] >= MIN_LABEL_VISIBLE]
        rec, found = R.recognize_found(img, info)
        boxes = [np.array(c.quad, np.float32) for c in rec.cards]
        pairs = [(boxes[i], true[j]) for i, j in match(boxes, true, MATCH_IOU)]
        kept = len(pairs)
        if settling and true:
            pre = _settling_pairs(found, true, info.knobs.settle_conf, rng)
            pairs, before_nms = pairs + pre, before_nms + len(pre)
        shaken = [(jitter_quad(true[j], rng, JITTER), true[j]) for j in
                  (rng.choice(len(true), size=min(len(true), JITTERED), replace=False) if true else [])]
        pairs, off = pairs + shaken, off + len(shaken)
        for k, (box, card) in enumerate(pairs):
            views.append(view(img, box).transpose(2, 0, 1))
            targets.append(target(box, card))
            jittered.append(k >= kept)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, views=np.stack(views) if views else np.zeros((0, 3, VIEW_H, VIEW_W), np.uint8),
                        targets=np.array(targets, np.float32).reshape(-1, len(TARGETS)), jittered=np.array(jittered, bool))
    return {"photos": len(gts), "views": len(views), "jittered": off, "before_nms": before_nms}


def _settling_pairs(found, true: list[np.ndarray], least: float, rng) -> list[tuple[np.ndarray, np.ndarray]]:
    """(box, card) for up to SETTLING of the detector's boxes scored ``least`` or more before NMS, each with the labelled
    card it overlaps most, if at least MATCH_IOU."""
    pairs = []
    for q, s in found.boxes + found.crowded + found.candidates:
        if s < least:
            continue
        q = np.asarray(q, np.float32)
        ious = quad_ious(q, true)
        j = int(np.argmax(ious))
        if ious[j] >= MATCH_IOU:
            pairs.append((q, true[j]))
    pick = rng.choice(len(pairs), size=min(len(pairs), SETTLING), replace=False) if pairs else []
    return [pairs[k] for k in pick]


def network(scale: np.ndarray | None = None):
    """A small conv net on the view, its output in TARGETS' units (``scale``: the targets' spread, kept in the
    net so the exported one answers in those units)."""
    import torch
    from torch import nn

    def block(i: int, o: int) -> nn.Module:
        return nn.Sequential(nn.Conv2d(i, o, 3, 2, 1, bias=False), nn.BatchNorm2d(o), nn.SiLU(),
                             nn.Conv2d(o, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o), nn.SiLU())

    class RefineNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(block(3, 24), block(24, 32), block(32, 48), block(48, 64), block(64, 96))
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(96 * (VIEW_H // 32) * (VIEW_W // 32), 128), nn.SiLU(),
                                      nn.Linear(128, len(TARGETS)))
            self.register_buffer("scale", torch.ones(len(TARGETS)) if scale is None else torch.tensor(scale, dtype=torch.float32))

        def forward(self, x):
            return self.head(self.features(x)) * self.scale

    return RefineNet()


def _load(path: str | Path) -> dict[str, np.ndarray]:
    with np.load(path) as d:
        return {k: d[k] for k in d.files}


def predict(net, views: np.ndarray, batch: int = 512) -> np.ndarray:
    import torch

    net.eval()
    with torch.no_grad():
        out = [net(torch.from_numpy(views[i:i + batch]).float() / 255).numpy() for i in range(0, len(views), batch)]
    return np.concatenate(out) if out else np.zeros((0, len(TARGETS)), np.float32)


def figures(pred: np.ndarray, d: dict[str, np.ndarray]) -> dict[str, float]:
    """Mean absolute error of each target on the kept boxes' views, beside how far the boxes themselves are off."""
    kept = ~d["jittered"]
    t, p = d["targets"][kept], pred[kept]
    return {f"{name}_box": round(float(np.abs(t[:, k]).mean()), 4) for k, name in enumerate(TARGETS)} | \
        {f"{name}_refined": round(float(np.abs(t[:, k] - p[:, k]).mean()), 4) for k, name in enumerate(TARGETS)}


def fit(train: str | Path, val: str | Path, out: str | Path, epochs: int = 8, batch: int = 256, lr: float = 2e-3,
        progress: bool = True, resume: bool = False) -> dict[str, Any]:
    """Train the refine net on ``train`` (.npz of collect), measuring on ``val`` after every epoch; ``out`` gets
    last.pt (to resume), refine.onnx and figures.json. Each view is also seen mirrored across and along (the
    targets turned to match)."""
    import torch
    from tqdm import tqdm

    from vision.train.recover_train import epoch_done, finished, resumed, step

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    d, dv = _load(train), _load(val)
    n = len(d["targets"])
    steps = n // batch
    if steps < 1:
        raise ValueError(f"Too few views to learn from ({n}).")
    spread = d["targets"].std(0) + 1e-6
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    net = network(spread)
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=epochs * steps, pct_start=0.1)
    start, history = resumed(out, net, opt, sched, rng, f"{out / 'last.pt'} is not a refine net's run.") if resume else (0, [])
    s = torch.tensor(spread)
    for epoch in range(start, epochs):
        net.train()
        perm = rng.permutation(n)
        t0, total = time.time(), 0.0
        for b in tqdm(range(steps), desc=f"refine net epoch {epoch + 1}/{epochs}", disable=not progress, leave=False):
            i = np.sort(perm[b * batch:(b + 1) * batch])
            x = torch.from_numpy(d["views"][i]).float() / 255
            y = torch.from_numpy(d["targets"][i]).clone()
            across, along = torch.from_numpy(rng.random(len(i)) < 0.5), torch.from_numpy(rng.random(len(i)) < 0.5)
            x[across] = x[across].flip(3)  # mirrored across: the shift across and the turn change sign
            y[across, 0] *= -1
            y[across, 2] *= -1
            x[along] = x[along].flip(2)  # mirrored along: the shift along and the turn change sign
            y[along, 1] *= -1
            y[along, 2] *= -1
            loss = torch.nn.functional.smooth_l1_loss(net(x) / s, y / s, beta=0.5)
            total += step(loss, opt, sched)
        row = {"epoch": epoch + 1, "loss": round(total / steps, 4), "seconds": round(time.time() - t0)}
        row |= figures(predict(net, dv["views"]), dv)
        epoch_done(row, history, net, opt, sched, rng, epoch, out, progress)
    return finished(net, history, out / "refine.onnx", export_onnx)


def export_onnx(net, path: Path) -> None:
    from vision.train.recover_train import export_box_net

    export_box_net(net, path, {"view": (3, VIEW_H, VIEW_W)}, "lies")
