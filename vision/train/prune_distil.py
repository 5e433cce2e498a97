"""A slimmer prune net taught by a model's own (vision.infer.recover: ``prune`` judges every kept box as if NMS had
dropped it, ``judge_spares`` the spares offered to the repairs). The recognizer runs on synthetic scenes with its
prune net wrapped so that every view the net judges is kept with the net's logit; a net whose first layer takes
every second pixel (a third of the work) learns those logits. No ground truth is needed: the new net is to judge
as the old one does, so the thresholds chosen with the old one still hold. torch is imported here, never by
recognize."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from vision.infer.recover import CHANNELS, EXTRA, VIEW_H, VIEW_W

LOGIT_CLIP = 12.0  # teacher logits beyond this (p < 6e-6 or > 1 - 6e-6) are taught as this: no threshold lies there


class _Recording:
    """A box-net session that keeps what it is asked and what it answers."""

    def __init__(self, session) -> None:
        self.session = session
        self.views: list[np.ndarray] = []
        self.extra: list[np.ndarray] = []
        self.logits: list[np.ndarray] = []

    def get_inputs(self):
        return self.session.get_inputs()

    def run(self, outputs, feed):
        out = self.session.run(outputs, feed)
        self.views.append(np.round(feed["view"] * 255).astype(np.uint8))
        self.extra.append(np.asarray(feed["extra"], np.float32))
        self.logits.append(np.asarray(out[0], np.float32).reshape(-1))
        return out


def collect(roots: list[str | Path], model: str | Path | None, out: str | Path, progress: bool = True,
            limit: int | None = None, flips: bool = True) -> dict[str, int]:
    """Every view ``model``'s prune net judges while the recognizer reads the photos of ``roots`` (folders of
    `changpai synth`), with the net's logit for it; ``flips``: each view mirrored across and along as well, with
    the net's logits for those (three times the views for the same photos). Saved to ``out`` (.npz: views N ×
    CHANNELS × VIEW_H × VIEW_W uint8, extra N × EXTRA, logits N)."""
    from tqdm import tqdm

    import vision.infer.model as M
    import vision.infer.recognize as R
    from vision.infer.imageio import IMAGE_EXTS, load_image

    files = [f for r in roots for f in sorted(Path(r, "images").rglob("*")) if f.suffix.lower() in IMAGE_EXTS][:limit]
    if not files:
        raise FileNotFoundError(f"No photos under {', '.join(str(Path(r, 'images')) for r in roots)}.")
    info = M.model_info(model)
    rec = _Recording(M._prune_session(str(info.path)))
    with M.prune_net_as(rec):
        for f in tqdm(files, desc="prune views", unit="photo", disable=not progress):
            R.recognize_array(load_image(f), info)
    views = np.concatenate(rec.views) if rec.views else np.zeros((0, CHANNELS, VIEW_H, VIEW_W), np.uint8)
    extra = np.concatenate(rec.extra) if rec.extra else np.zeros((0, EXTRA), np.float32)
    logits = np.concatenate(rec.logits) if rec.logits else np.zeros(0, np.float32)
    if flips and len(views):  # the same views mirrored across and along, with what the net answers for them
        mirrored = [np.ascontiguousarray(views[:, :, :, ::-1]), np.ascontiguousarray(views[:, :, ::-1])]
        logits = np.concatenate([logits, *(_answers(rec.session, m, extra) for m in mirrored)])
        views, extra = np.concatenate([views, *mirrored]), np.concatenate([extra] * 3)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, views=views, extra=extra, logits=logits)
    return {"photos": len(files), "views": len(views)}


def _answers(session, views: np.ndarray, extra: np.ndarray, batch: int = 256) -> np.ndarray:
    """The net's logits for ``views`` (uint8, N × CHANNELS × VIEW_H × VIEW_W) with their ``extra``."""
    return np.concatenate([session.run(None, {"view": views[i:i + batch].astype(np.float32) / 255,
                                              "extra": extra[i:i + batch]})[0].reshape(-1)
                           for i in range(0, len(views), batch)])


def network():
    """The recover net's layout (vision.train.recover_train.network) with its first layer at stride 2 and fewer channels:
    0.14 M parameters, a batch of 24 views in 9 ms instead of 26 ms on 2 CPU cores."""
    import torch
    import torch.nn as nn

    def block(i: int, o: int, stride: int = 1) -> list[nn.Module]:
        return [nn.Conv2d(i, o, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    class SlimNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(*block(CHANNELS, 16, 2), *block(16, 32), nn.MaxPool2d(2), *block(32, 48),
                                          nn.MaxPool2d(2), *block(48, 64), nn.MaxPool2d(2), *block(64, 128))
            self.head = nn.Sequential(nn.Linear(256 + EXTRA, 64), nn.ReLU(inplace=True), nn.Linear(64, 1))

        def forward(self, x, z):
            x = self.features(x)
            return self.head(torch.cat([x.mean((2, 3)), x.amax((2, 3)), z], 1))[:, 0]

    return SlimNet()


def _load(path: str | Path) -> dict[str, np.ndarray]:
    d = np.load(path)
    return {k: d[k] for k in ("views", "extra", "logits")}


def _predict(net, d: dict[str, np.ndarray]) -> np.ndarray:
    import torch

    net.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(d["logits"]), 512):
            out.append(net(torch.from_numpy(d["views"][i:i + 512]).float() / 255, torch.from_numpy(d["extra"][i:i + 512])).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def agreement(student: np.ndarray, teacher: np.ndarray) -> dict[str, float]:
    """How the student's logits follow the teacher's: their mean absolute gap, and at the probabilities where prune
    and the spares are decided, the share of views both put on the same side."""
    out: dict[str, float] = {"views": len(teacher), "mean_abs_logit_gap": round(float(np.abs(student - teacher).mean()), 4)}
    for p in (0.01, 0.03, 0.1, 0.5):
        cut = float(np.log(p / (1 - p)))
        out[f"same_side_at_{p}"] = round(float(((student < cut) == (teacher < cut)).mean()), 5)
    return out


def fit(train: str | Path, val: str | Path, out: str | Path, epochs: int = 8, batch: int = 128, lr: float = 3e-3,
        progress: bool = True, resume: bool = False) -> dict[str, Any]:
    """Teach the slim net the logits of ``train`` (.npz of collect), measuring on ``val`` after every epoch; ``out``
    gets last.pt (with the optimizer, to resume), prune.onnx and figures.json."""
    import torch
    from tqdm import tqdm

    from vision.train.recover_train import epoch_done, finished, resumed, step

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    d, dv = _load(train), _load(val)
    target = np.clip(d["logits"], -LOGIT_CLIP, LOGIT_CLIP)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    net = network()
    steps = len(target) // batch
    if steps < 1:
        raise ValueError(f"Too few views to learn from ({len(target)}).")
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=epochs * steps)
    start, history = resumed(out, net, opt, sched, rng, f"{out / 'last.pt'} is not a slim prune net's run.") if resume else (0, [])
    for epoch in range(start, epochs):
        net.train()
        perm = rng.permutation(len(target))
        t, total = time.time(), 0.0
        for b in tqdm(range(steps), desc=f"prune net epoch {epoch + 1}/{epochs}", disable=not progress, leave=False):
            i = np.sort(perm[b * batch:(b + 1) * batch])
            x = torch.from_numpy(d["views"][i]).float() / 255
            y = torch.from_numpy(target[i])
            # the thresholds lie at low probabilities: errors there weigh as much as anywhere (squared logit gap)
            loss = ((net(x, torch.from_numpy(d["extra"][i])) - y) ** 2).mean()
            total += step(loss, opt, sched)
        row = {"epoch": epoch + 1, "loss": round(total / steps, 4), "seconds": round(time.time() - t)}
        row |= agreement(_predict(net, dv), np.clip(dv["logits"], -LOGIT_CLIP, LOGIT_CLIP))
        epoch_done(row, history, net, opt, sched, rng, epoch, out, progress)
    return finished(net, history, out / "prune.onnx")
