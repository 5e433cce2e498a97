"""Would the classifier read an unknown deck better if its BatchNorm statistics came from the photo itself? A probe.

Every card of one photo is of one deck, and an unknown deck's ink, paper and drawing shift the classifier's
activations away from the statistics it was trained with. Adaptive batch normalization (AdaBN; the mixed form of
Schneider et al., 2020, "Improving robustness against common corruptions by covariate shift adaptation") normalizes
each BatchNorm layer with ``alpha`` × the statistics of the photo's crops + (1 − ``alpha``) × the trained ones: no
training, no labels, one pass over the photo's crops (both ways round, as one batch). This measures it before any of
it is built into the recognizer: each labelled card of a rendered scene is cut at a box with the detector's errors
(geometry.jitter_quad, as vision.eval.occlusion cuts them), and a model's classifier alone (PyTorch weights, no heads,
no second look) reads the scene's crops with each ``alpha``; ``alpha`` 0 is the classifier as released. Each scene's
record keeps the plain reading's mean top probability, so a gate (adapt only photos the classifier is unsure of) can
be chosen on val scenes from the same report.

    python -m vision.eval.adapt data/val40/side_hands --model models/changpai-v29 --alpha 0,0.2,0.3 --json out.json
    python -m vision.eval.adapt data/val40/side_hands --hands --alpha 0.2 --json out.json

``--hands`` measures it end to end instead (`changpai eval --hands`'s report): the recognizer's ONNX classifier is
replaced, for the probe only, by the model's PyTorch classifier with mixed BatchNorm, each photo's statistics taken
from its first batch of crops and kept for its later reads (turned crops, the second look).
"""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from vision.eval.mine import _scenes
from vision.eval.occlusion import VAL_EVERY, scene_cuts
from vision.infer.detect import _rgb_planes
from vision.infer.geometry import swap_ends


def mixed_bn(net, alpha: float = 0.0) -> list:
    """Replace every BatchNorm2d of the PyTorch module ``net`` (in place) by one that normalizes with ``alpha`` ×
    the batch's statistics + (1 − ``alpha``) × its trained ones; returns the new layers (set their ``alpha``)."""
    import torch

    class MixedBN(torch.nn.Module):
        def __init__(self, bn: torch.nn.BatchNorm2d):
            super().__init__()
            self.bn, self.alpha = bn, alpha
            self.keep, self.kept = False, None  # keep: the first batch's statistics serve the later ones

        def forward(self, x):
            bn, a = self.bn, self.alpha
            if self.kept is not None:
                mean, var = self.kept
            else:
                mean, var = bn.running_mean, bn.running_var
                if a > 0:
                    mean = a * x.mean((0, 2, 3)) + (1 - a) * mean
                    var = a * x.var((0, 2, 3), unbiased=False) + (1 - a) * var
                if self.keep:
                    self.kept = (mean, var)
            shape = (1, -1, 1, 1)
            return (x - mean.view(shape)) / torch.sqrt(var.view(shape) + bn.eps) * bn.weight.view(shape) + bn.bias.view(shape)

    layers = []

    def swap(mod):
        for name, child in mod.named_children():
            if isinstance(child, torch.nn.BatchNorm2d):
                layers.append(MixedBN(child))
                setattr(mod, name, layers[-1])
            else:
                swap(child)

    swap(net)
    return layers


def _classifier(model: str | Path | None):
    """The PyTorch classifier of a model folder (its ``classifier.pt``) or a checkpoint, unfused, in eval mode."""
    from ultralytics import YOLO

    from vision.infer.model import model_info

    p = Path(model) if model else model_info(None).path
    pt = p / "classifier.pt" if p.is_dir() else p
    if not pt.is_file():
        raise FileNotFoundError(f"{pt} does not exist: the probe needs the classifier's PyTorch weights.")
    net = YOLO(str(pt)).model.float().eval()
    return net, [net.names[k] for k in range(len(net.names))], str(pt)


def _probs(net, crops: list[np.ndarray]) -> np.ndarray:
    """The PyTorch classifier's class probabilities for folded BGR crops (as the ONNX one takes them)."""
    import torch

    with torch.no_grad():
        y = net(torch.from_numpy(_rgb_planes(np.stack(crops))))
    return (y[0] if isinstance(y, (tuple, list)) else y).numpy()


def probe(root: str | Path, model: str | Path | None = None, alphas: tuple[float, ...] = (0.0, 0.2, 0.3, 0.5),
          limit: int | None = None, seed: int = 64, progress: bool = True) -> dict:
    """Cards read right by the classifier alone with each ``alpha``, over the scenes of a `synth` folder and per
    scene (with the plain reading's mean top probability)."""
    net, names, pt = _classifier(model)
    layers = mixed_bn(net)
    rng = np.random.default_rng(seed)
    per_scene = []
    for p, gt, img, _ in _scenes(Path(root), limit, VAL_EVERY, "read crops", progress):
        cs = scene_cuts(gt, img, rng)
        if not cs:
            continue
        crops = [c[2] for c in cs]
        both = crops + [swap_ends(c) for c in crops]  # one batch: the photo's statistics over both ways round
        n, row = len(crops), {"scene": p.stem, "cards": len(crops), "right": {}}
        for a in alphas:
            for layer in layers:
                layer.alpha = a
            prob = _probs(net, both)
            logp = (np.log(np.clip(prob[:n], 1e-9, 1.0)) + np.log(np.clip(prob[n:], 1e-9, 1.0))) / 2
            if a == 0:
                top = np.exp(logp - logp.max(1, keepdims=True))
                row["plain_top"] = round(float((1 / top.sum(1)).mean()), 4)
            row["right"][str(a)] = int(sum(names[int(k)] == c[0] for k, c in zip(logp.argmax(1), cs, strict=True)))
        per_scene.append(row)
    cards = sum(r["cards"] for r in per_scene)
    right = {str(a): sum(r["right"][str(a)] for r in per_scene) / max(cards, 1) for a in alphas}
    return {"model": pt, "scenes": str(root), "cards": cards, "right": right, "per_scene": per_scene}


@contextmanager
def adapted_recognizer(model: str | Path | None, alpha: float):
    """Within: vision.infer.recognize reads crops with ``model``'s PyTorch classifier under mixed BatchNorm (one
    set of statistics per photo, from its first batch of crops) instead of its ONNX classifier; restored after."""
    import vision.infer.recognize as rec
    from vision.infer.model import model_info

    net, names, pt = _classifier(model)
    if list(model_info(model).names) != names:
        raise ValueError(f"{pt} names its classes in another order than the model's ONNX classifier.")
    layers = mixed_bn(net, alpha)
    for layer in layers:
        layer.keep = True
    run, found = rec._classifier_run, rec.recognize_found

    def classifier_run(_session, crops):
        return _probs(net, crops)

    def recognize_found(*a, **k):
        for layer in layers:
            layer.kept = None  # a new photo: its statistics from its first batch
        return found(*a, **k)

    rec._classifier_run, rec.recognize_found = classifier_run, recognize_found
    try:
        yield names
    finally:
        rec._classifier_run, rec.recognize_found = run, found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.eval.adapt", description=__doc__.split("\n\n")[0])
    ap.add_argument("scenes", help="a `changpai synth` folder (gt/ lists each scene's cards)")
    ap.add_argument("--model", default=None, help="a model folder with classifier.pt, or a checkpoint (default: released)")
    ap.add_argument("--alpha", default="0,0.2,0.3,0.5", help="comma-separated shares of the photo's own statistics")
    ap.add_argument("--hands", action="store_true", help="end to end over winning hands, at the one --alpha given")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", default=None, help="write the figures and the per-scene records here too")
    a = ap.parse_args(argv)
    if not (Path(a.scenes) / "gt").is_dir():
        ap.exit(2, f"{a.scenes} is not a `changpai synth` folder: it has no gt/.\n")
    try:
        alphas = tuple(float(x) for x in a.alpha.split(","))
    except ValueError:
        ap.exit(2, f"--alpha takes numbers between 0 and 1 separated by commas, not {a.alpha!r}.\n")
    if not all(0 <= x <= 1 for x in alphas):
        ap.exit(2, f"--alpha takes numbers between 0 and 1, not {a.alpha!r}.\n")
    if a.hands:
        if len(alphas) != 1:
            ap.exit(2, "--hands measures one --alpha at a time.\n")
        return _hands(ap, a, alphas[0])
    if 0.0 not in alphas:
        alphas = (0.0, *alphas)
    try:
        r = probe(a.scenes, a.model, alphas, a.limit)
    except FileNotFoundError as e:
        ap.exit(2, f"{e}\n")
    for k, v in r["right"].items():
        print(f"alpha {float(k):.2f}: {100 * v:6.2f} % of {r['cards']} cards read right")
    if a.json:
        Path(a.json).write_text(json.dumps(r, indent=1))
    return 0


def _hands(ap: argparse.ArgumentParser, a: argparse.Namespace, alpha: float) -> int:
    from vision.eval.evaluate import evaluate_hands

    if a.model and not Path(a.model).is_dir():
        ap.exit(2, f"--hands reads with a model folder (classifier.pt beside its ONNX networks), not {a.model}.\n")
    try:
        with adapted_recognizer(a.model, alpha):
            r = evaluate_hands(a.scenes, a.model, a.limit)
    except (FileNotFoundError, ValueError) as e:
        ap.exit(2, f"{e}\n")
    print(f"alpha {alpha:.2f}: {len(r['per_photo'])} hands, right {100 * r['exact_with_repair']:.2f} % with repair, "
          f"{100 * r['exact_without_repair']:.2f} % without; {r['wrong_total_on_a_win_unflagged']} wrong totals on a "
          f"legal win without a check: warning; cards read right {100 * r['cards']['classification_accuracy']:.2f} %")
    if a.json:
        Path(a.json).write_text(json.dumps(r, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
