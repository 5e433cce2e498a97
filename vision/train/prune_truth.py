"""A prune net taught by the ground truth on a model's own kept boxes (vision.infer.recover.prune), not by an older
net's answers (vision.train.prune_distil). The prune net judges every kept box as if NMS had dropped it and the others
were kept: is it a card none of them covers? A model whose boxes are placed differently (the refine net taught rims
settles boxes on the whole card, rim included) shows the old net views it never learned, and it prunes true cards.
Here the model reads labelled scenes with pruning off; every kept box that prune would judge is seen as prune sees it
and labelled 1 when its card (quad IoU ≥ MATCH with a true card showing) is no other remaining box's card, else 0
(a second box on a card, or no card). The boxes labelled 0 are then taken away one at a time, as prune does (a box on
no card first, then of two on one card the one lying less well on it), and the boxes left are seen again without
it: the views of every round prune would run. torch is imported here, never by recognize."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from vision.infer.geometry import quad_iou
from vision.infer.recover import PRUNE_COVER, covered, inputs

MATCH = 0.5  # a box lies on a card at this quad IoU (as changpai eval matches them)
PRUNE_AT = (0.01, 0.03, 0.1, 0.3)  # thresholds the val figures are given at


def collect(roots: list[str | Path], model: str | Path | None, out: str | Path, progress: bool = True,
            limit: int | None = None) -> dict[str, int]:
    """The views prune judges on every scene of ``roots`` (folders of `changpai synth` with gt/) as ``model`` keeps
    its boxes with pruning off, labelled by the ground truth (the module's docstring); saved to ``out`` (.npz: views
    N × CHANNELS × VIEW_H × VIEW_W uint8, extra N × EXTRA, labels N, photo N)."""
    from tqdm import tqdm

    import vision.infer.model as M
    import vision.infer.recognize as R
    from vision.infer.imageio import load_image
    from vision.types import MIN_LABEL_VISIBLE

    files = [(Path(r), f) for r in roots for f in sorted(Path(r, "gt").glob("*.json"))][:limit]
    if not files:
        raise FileNotFoundError(f"No ground truth under {', '.join(map(str, roots))} (gt/*.json of `changpai synth`).")
    info = replace(M.model_info(model), prune=0.0)
    views, extra, labels, photo = [], [], [], []
    for root, f in tqdm(files, desc="prune views", unit="scene", disable=not progress):
        gt = json.loads(f.read_text())
        truth = [np.array(c["quad"], np.float32) for c in gt["cards"] if c.get("visible", 1) >= MIN_LABEL_VISIBLE]
        img = load_image(root / gt["image"])
        rec = R.recognize_array(img, info)
        boxes = [(np.array(c.quad, np.float32), c.det_score) for c in rec.cards]
        for _, v, e, y in scene_views(img, boxes, truth):
            views.append(v)
            extra.append(e)
            labels.append(y)
            photo.append(f"{root}/{f.stem}")
    from vision.infer.recover import CHANNELS, EXTRA, VIEW_H, VIEW_W

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    v = np.array(views, np.uint8).reshape(-1, VIEW_H, VIEW_W, CHANNELS).transpose(0, 3, 1, 2)
    np.savez_compressed(out, views=np.ascontiguousarray(v), extra=np.array(extra, np.float32).reshape(-1, EXTRA),
                        labels=np.array(labels, np.float32), photo=np.array(photo))
    return {"scenes": len(files), "views": len(labels), "cards": int(sum(labels))}


def card_of(boxes: list[tuple[np.ndarray, float]], truth: list[np.ndarray]) -> list[tuple[int, float]]:
    """Each box's card (the true card it overlaps most, at quad IoU ≥ MATCH; -1 for none) and that IoU."""
    out = []
    for q, _ in boxes:
        ious = [quad_iou(q, t) for t in truth]
        j = int(np.argmax(ious)) if ious else -1
        out.append((j, ious[j]) if j >= 0 and ious[j] >= MATCH else (-1, 0.0))
    return out


def scene_views(img: np.ndarray, boxes: list[tuple[np.ndarray, float]],
                truth: list[np.ndarray]) -> list[tuple[int, np.ndarray, np.ndarray, int]]:
    """(box, view, extra, label) of every judgement prune would make on ``boxes`` (quad, detector score) in every round,
    the boxes labelled 0 taken away as the ground truth says (the module's docstring); a view seen again unchanged
    is not repeated."""
    cards = card_of(boxes, truth)
    left = list(range(len(boxes)))
    out: list[tuple[int, np.ndarray, np.ndarray, int]] = []
    seen: dict[int, tuple[int, ...]] = {}  # the others each box was last seen with
    while len(left) > 1:
        wrong = []
        for i in left:
            others = tuple(j for j in left if j != i)
            label = int(cards[i][0] >= 0 and all(cards[j][0] != cards[i][0] for j in others))
            got, v, e = inputs(img, [boxes[i]], [boxes[j][0] for j in others])
            if not got or covered(v[0]) < PRUNE_COVER:
                continue  # repeating another box (prune drops it unjudged) or lying free (never judged)
            if label == 0:
                wrong.append(i)
            if seen.get(i) is None or _changed(boxes, i, seen[i], others):
                out.append((i, v[0], e[0], label))
                seen[i] = others
        if not wrong:
            break
        left.remove(min(wrong, key=lambda i: (cards[i][0] >= 0, cards[i][1])))
    return out


def _changed(boxes: list[tuple[np.ndarray, float]], i: int, before: tuple[int, ...], now: tuple[int, ...]) -> bool:
    """Whether box i's view changed: a box taken away since overlapped it."""
    return any(quad_iou(boxes[i][0], boxes[j][0]) > 0 for j in set(before) - set(now))


def _load(path: str | Path) -> dict[str, np.ndarray]:
    d = np.load(path)
    return {k: d[k] for k in ("views", "extra", "labels")}


def _logits(net, d: dict[str, np.ndarray]) -> np.ndarray:
    import torch

    net.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(d["labels"]), 512):
            out.append(net(torch.from_numpy(d["views"][i:i + 512]).float() / 255, torch.from_numpy(d["extra"][i:i + 512])).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def judged(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """How a prune net's probabilities ``p`` split the views of labels ``y`` (1: a card of its own): ROC AUC, and at
    each threshold of PRUNE_AT the share of the cards it would prune and of the other boxes it would keep."""
    from vision.train.recover_train import figures

    out: dict[str, float] = {"views": len(y), "cards": int(y.sum()), "others": int(len(y) - y.sum()),
                             "auc": figures(p, y)["auc"]}
    for t in PRUNE_AT:
        out[f"cards_pruned_at_{t}"] = round(float((p[y > 0] < t).mean()), 4) if y.sum() else 0.0
        out[f"others_kept_at_{t}"] = round(float((p[y == 0] >= t).mean()), 4) if (y == 0).any() else 0.0
    return out


def fit(train: str | Path, val: str | Path, out: str | Path, epochs: int = 8, batch: int = 128, lr: float = 3e-3,
        progress: bool = True, resume: bool = False) -> dict[str, Any]:
    """The slim prune net (vision.train.prune_distil.network) trained on the labelled views of ``train`` (.npz of
    collect; each batch mirrored across and along at random, as a box is judged either way round), measured on
    ``val`` after every epoch; ``out`` gets last.pt (to resume), prune.onnx and figures.json."""
    import torch
    from tqdm import tqdm

    from vision.train.prune_distil import network
    from vision.train.recover_train import epoch_done, finished, resumed, step

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    d, dv = _load(train), _load(val)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    net = network()
    steps = len(d["labels"]) // batch
    if steps < 1:
        raise ValueError(f"Too few views to learn from ({len(d['labels'])}).")
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=epochs * steps)
    start, history = resumed(out, net, opt, sched, rng, f"{out / 'last.pt'} is not a slim prune net's run.") if resume else (0, [])
    lossf = torch.nn.BCEWithLogitsLoss()
    for epoch in range(start, epochs):
        net.train()
        perm = rng.permutation(len(d["labels"]))
        t, total = time.time(), 0.0
        for b in tqdm(range(steps), desc=f"prune net epoch {epoch + 1}/{epochs}", disable=not progress, leave=False):
            i = np.sort(perm[b * batch:(b + 1) * batch])
            x = torch.from_numpy(d["views"][i]).float() / 255
            if rng.random() < 0.5:
                x = x.flip(3)
            if rng.random() < 0.5:
                x = x.flip(2)
            total += step(lossf(net(x, torch.from_numpy(d["extra"][i])), torch.from_numpy(d["labels"][i])), opt, sched)
        row = {"epoch": epoch + 1, "loss": round(total / steps, 4), "seconds": round(time.time() - t)}
        row |= judged(1 / (1 + np.exp(-_logits(net, dv))), dv["labels"])
        epoch_done(row, history, net, opt, sched, rng, epoch, out, progress)
    return finished(net, history, out / "prune.onnx")
