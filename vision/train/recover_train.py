"""Training the recover net (vision.infer.recover) on synthetic scenes: the recognizer runs on each scene, every
box NMS dropped is cut out in its context and labelled by the ground truth (a card that no kept box
found, or not), then a small CNN learns to tell them apart. torch is imported here, never by recognize."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from vision.eval.tally import match
from vision.infer.imageio import load_image
from vision.infer.recover import CHANNELS, EXTRA, READS, VIEW_H, VIEW_W, inputs, readings

KEEP = ("views", "labels", "extra", "photo")
READINGS = "reads"  # the classifier's readings of the views (vision.infer.recover.readings), for a net that reads them


def collect(roots: list[str | Path], model: str | Path | None, out: str | Path, progress: bool = True,
            limit: int | None = None, workers: int = 1) -> dict[str, int]:
    """Views of the candidates the recognizer's NMS dropped on every scene of ``roots`` (folders of `changpai
    synth` with gt/), labelled 1 when the candidate finds a card no kept box found, with the classifier's readings
    of each (vision.infer.recover.readings: a net trained ``with_readings`` takes them); saved to ``out`` (.npz)."""
    files = [(str(r), str(f)) for r in roots for f in sorted(Path(r, "gt").glob("*.json"))][:limit]
    if not files:
        raise FileNotFoundError(f"No ground truth under {', '.join(map(str, roots))} (gt/*.json of `changpai synth`).")
    parts = [(files[k::workers], str(model) if model else None, progress and k == 0) for k in range(workers)]
    if workers > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(workers) as pool:
            done = pool.map(_collect_part, parts)
    else:
        done = [_collect_part(parts[0])]
    views, labels, extra, photo, reads = (sum((d[k] for d in done), []) for k in range(5))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, views=np.array(views, np.uint8).reshape(-1, VIEW_H, VIEW_W, CHANNELS),
                        labels=np.array(labels, np.float32), extra=np.array(extra, np.float32).reshape(-1, EXTRA),
                        photo=np.array(photo), reads=np.array(reads, np.float32).reshape(-1, READS))
    return {"scenes": len(files), "candidates": len(labels), "cards": int(sum(labels))}


def _collect_part(job: tuple[list[tuple[str, str]], str | None, bool]) -> tuple[list, list, list, list, list]:
    import threading

    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())  # tqdm's default lock is a multiprocessing one, left behind by pool workers

    import vision.infer.model as M
    import vision.infer.recognize as R
    from vision.types import MIN_LABEL_VISIBLE

    files, model, progress = job
    # the boxes kept before any recovery or pruning, as the net will see them
    info = replace(M.model_info(model), recover=2.0, prune=0.0)
    cls_s = M._sessions(str(info.path))[1]
    views, labels, extra, photo, reads = [], [], [], [], []
    for root, f in tqdm(files, desc="recover views", unit="scene", disable=not progress):
        gt = json.loads(Path(f).read_text())
        truth = [np.array(c["quad"], np.float32) for c in gt["cards"] if c.get("visible", 1) >= MIN_LABEL_VISIBLE]
        img = load_image(Path(root) / gt["image"])
        rec, found = R.recognize_found(img, info)
        kept = [np.array(c.quad, np.float32) for c in rec.cards]
        seen = {j for _, j in match(kept, truth)}
        todo, v, e = inputs(img, found.candidates, kept)
        quads = [R.order_long_axis_vertical(found.candidates[i][0]) for i in todo]
        probs, p_none = R.read_boxes(img, quads, cls_s, info)
        reads += readings(quads, probs, p_none, kept, [info.codes.index(c.code) for c in rec.cards]).tolist()
        for i in todo:
            m = match([found.candidates[i][0]], truth)
            labels.append(int(bool(m) and m[0][1] not in seen))
            photo.append(f"{root}/{Path(f).stem}")
        views += list(v)
        extra += e.tolist()
    return views, labels, extra, photo, reads


def load(paths: list[str | Path], with_readings: bool = False) -> dict[str, np.ndarray]:
    """The views of ``paths`` (.npz of collect); ``with_readings``: their readings joined to ``extra``."""
    parts = [np.load(p) for p in paths]
    if with_readings:
        lack = [str(p) for p, d in zip(paths, parts, strict=True) if READINGS not in d.files]
        if lack:
            raise ValueError(f"{', '.join(lack)} holds no readings (collected by an older changpai): delete it to "
                             "collect again.")
    d = {k: np.concatenate([d[k] for d in parts]) for k in KEEP}
    if with_readings:
        d["extra"] = np.concatenate([d["extra"], np.concatenate([p[READINGS] for p in parts])], 1)
    return d


def network(extra: int = EXTRA):
    import torch.nn as nn

    class RecoverNet(nn.Module):
        """Five conv blocks over the view, global mean and max, with the detector score and the overlap with the
        nearest kept box (and, for a net that reads them, the readings) joined before the last layers: one logit."""

        def __init__(self) -> None:
            super().__init__()

            def block(i: int, o: int) -> list[nn.Module]:
                return [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

            self.features = nn.Sequential(*block(CHANNELS, 24), nn.MaxPool2d(2), *block(24, 48), nn.MaxPool2d(2),
                                          *block(48, 64), nn.MaxPool2d(2), *block(64, 96), nn.MaxPool2d(2), *block(96, 128))
            self.head = nn.Sequential(nn.Linear(256 + extra, 64), nn.ReLU(inplace=True), nn.Linear(64, 1))

        def forward(self, x, z):
            import torch

            x = self.features(x)
            return self.head(torch.cat([x.mean((2, 3)), x.amax((2, 3)), z], 1))[:, 0]

    return RecoverNet()


def _tensor(v: np.ndarray):
    import torch

    return torch.from_numpy(v).permute(0, 3, 1, 2).float() / 255


def predict(net, views: np.ndarray, extra: np.ndarray) -> np.ndarray:
    import torch

    net.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(views), 512):
            out.append(torch.sigmoid(net(_tensor(views[i:i + 512]), torch.from_numpy(extra[i:i + 512]))).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def figures(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """ROC AUC, and the share of the cards found at a few precisions with the threshold that gives it."""
    order = np.argsort(-p)
    tp = np.cumsum(y[order])
    precision = tp / np.arange(1, len(y) + 1)
    pos, neg = float(y.sum()), float(len(y) - y.sum())
    rank = np.empty(len(p))
    rank[np.argsort(p, kind="stable")] = np.arange(1, len(p) + 1)
    out: dict[str, float] = {"candidates": len(y), "cards": int(pos),
                             "auc": round(float((rank[y > 0].sum() - pos * (pos + 1) / 2) / max(pos * neg, 1)), 4)}
    for want in (0.8, 0.9, 0.95, 0.98):
        ok = np.where(precision >= want)[0]
        k = int(ok.max()) if len(ok) else -1
        out[f"recall_at_{want}"] = round(float(tp[k] / pos), 3) if k >= 0 and pos else 0.0
        out[f"threshold_at_{want}"] = round(float(p[order][k]), 3) if k >= 0 else 1.0
    return out


def fit(train: list[str | Path], val: list[str | Path], out: str | Path, epochs: int = 12, batch: int = 128,
        lr: float = 3e-3, progress: bool = True, resume: bool = False, with_readings: bool = False) -> dict[str, Any]:
    """Train on the views of ``train`` (.npz of collect), measure on ``val`` after every epoch; ``out`` gets
    last.pt (with the optimizer, to resume), recover.onnx and figures.json. ``with_readings``: the net reads
    the classifier's readings too (vision.infer.recover.readings)."""
    import torch
    import torch.nn as nn
    from tqdm import tqdm

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    d, dv = load(train, with_readings), load(val, with_readings)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    net = network(d["extra"].shape[1])
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    steps = len(d["labels"]) // batch
    if steps < 1:
        raise ValueError(f"Too few candidates to train on ({len(d['labels'])}).")
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=epochs * steps)
    loss_f = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(3.0))  # cards are ~1 in 10 candidates
    start, history = resumed(out, net, opt, sched, rng, f"{out / 'last.pt'} was trained {'without' if with_readings else 'with'} "
                             f"the readings: resume it {'without' if with_readings else 'with'} --readings.") if resume else (0, [])
    for epoch in range(start, epochs):
        net.train()
        perm = rng.permutation(len(d["labels"]))
        t, total = time.time(), 0.0
        for b in tqdm(range(steps), desc=f"recover epoch {epoch + 1}/{epochs}", disable=not progress, leave=False):
            i = np.sort(perm[b * batch:(b + 1) * batch])
            x = _tensor(d["views"][i])
            if rng.random() < 0.5:
                x = x.flip(3)
            if rng.random() < 0.5:
                x = x.flip(2)
            x[:, :3] = (x[:, :3] * (1 + 0.25 * (torch.rand(len(i), 1, 1, 1) - 0.5))).clamp(0, 1)
            loss = loss_f(net(x, torch.from_numpy(d["extra"][i])), torch.from_numpy(d["labels"][i]))
            total += step(loss, opt, sched)
        row = {"epoch": epoch + 1, "loss": round(total / steps, 4), "seconds": round(time.time() - t)}
        row |= figures(predict(net, dv["views"], dv["extra"]), dv["labels"])
        epoch_done(row, history, net, opt, sched, rng, epoch, out, progress)
    return finished(net, history, out / "recover.onnx")


def step(loss, opt, sched) -> float:
    """One optimizer step of a box net on ``loss`` (and its one-cycle schedule's); the loss, for the epoch's mean."""
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    return loss.item()


def resumed(out: Path, net, opt, sched, rng: np.random.Generator, other_net: str) -> tuple[int, list[dict[str, Any]]]:
    """A box net's training as out/last.pt left it (epoch_done): net, optimizer, schedule and random draws (``rng``
    and torch's) restored, so the run goes on as if never stopped; the epoch to go on from and the figures so far.
    FileNotFoundError without a run; ValueError(``other_net``) when the checkpoint is of another net's shape."""
    import torch

    if not (out / "last.pt").is_file():
        raise FileNotFoundError(f"No run to resume at {out / 'last.pt'}.")
    ck = torch.load(out / "last.pt", weights_only=False)
    try:
        net.load_state_dict(ck["net"])
    except RuntimeError:
        raise ValueError(other_net) from None
    opt.load_state_dict(ck["opt"])
    sched.load_state_dict(ck["sched"])
    if "rng" in ck:  # a checkpoint written before the draws were kept goes on with other batch orders
        rng.bit_generator.state = ck["rng"]
        torch.set_rng_state(ck["torch_rng"])
    return ck["epoch"] + 1, ck["history"]


def epoch_done(row: dict[str, Any], history: list[dict[str, Any]], net, opt, sched, rng: np.random.Generator, epoch: int,
               out: Path, progress: bool) -> None:
    """An epoch's figures ``row`` joined to ``history`` (and printed), and the checkpoint to resume from: out/last.pt,
    with the state of the random draws (``rng``: batch orders, flips; torch's: brightness)."""
    import torch

    history.append(row)
    if progress:
        print(json.dumps(row), flush=True)
    torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "epoch": epoch,
                "history": history, "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}, out / "last.pt")


def finished(net, history: list[dict[str, Any]], onnx: Path, export=None) -> dict[str, Any]:
    """The trained box net exported to ``onnx`` (by ``export``, export_onnx by default), its epochs' figures beside it
    (figures.json)."""
    (export or export_onnx)(net, onnx)
    (onnx.parent / "figures.json").write_text(json.dumps(history, indent=1))
    return {"out": str(onnx.parent), "last": history[-1] if history else {}}


def export_onnx(net, path: Path) -> None:
    export_box_net(net, path, {"view": (CHANNELS, VIEW_H, VIEW_W), "extra": (net.head[0].in_features - 256,)}, "logit")


def export_box_net(net, path: Path, inputs: dict[str, tuple[int, ...]], output: str) -> None:
    """A box net to ONNX: its inputs by name with their shapes less the batch axis, which stays free."""
    import warnings

    import torch

    net.eval()
    with warnings.catch_warnings():  # the TorchScript exporter: the dynamo one needs onnxscript, and this net is plain
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(net, tuple(torch.zeros(1, *shape) for shape in inputs.values()), str(path),
                          input_names=list(inputs), output_names=[output], dynamo=False,
                          dynamic_axes={k: {0: "n"} for k in (*inputs, output)}, opset_version=17)
