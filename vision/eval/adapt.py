"""Would the classifier read an unknown deck better if its BatchNorm statistics came from the photo itself? A probe.

Every card of one photo is of one deck, and an unknown deck's ink, paper and drawing shift the classifier's
activations away from the statistics it was trained with. Adaptive batch normalization (AdaBN; the mixed form of
Schneider et al., 2020, "Improving robustness against common corruptions by covariate shift adaptation") normalizes
each BatchNorm layer with ``alpha`` × the statistics of the photo's crops + (1 − ``alpha``) × the trained ones: no
training, no labels, one pass over the photo's crops (both ways round, as one batch). This measures it on the
classifier alone: each labelled card of a rendered scene is cut at a box with the detector's errors
(geometry.jitter_quad, as vision.eval.occlusion cuts them) and read by the adaptive classifier the recognizer runs
(classifier_adapt.onnx through vision.infer.adapt.PhotoStatistics; no heads, no second look) with each ``alpha``;
``alpha`` 0 is the classifier as released. A training run's classifier is measured from a model folder released with
it (`changpai release BASE --name NAME --classifier runs/RUN --set adapt=0.2` writes its graph). Each scene's record
keeps the plain reading's mean top probability, so a gate (adapt only photos the classifier is unsure of) can be
chosen on val scenes from the same report.

    python -m vision.eval.adapt data/val40/side_hands --model models/changpai-v30 --alpha 0,0.2,0.3 --json out.json

End to end, a model folder's hands are read with any share by `changpai eval DIR --hands --set adapt=A`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.eval.mine import _scenes
from vision.eval.occlusion import VAL_EVERY, scene_cuts
from vision.infer.detect import _rgb_planes
from vision.infer.geometry import swap_ends


def adaptive_session(model: str | Path | None):
    """An onnxruntime session of the adaptive classifier of the model folder ``model`` (by default the released one)
    and the names of its classes."""
    import onnxruntime as ort

    from vision.infer.model import ADAPT_CLASSIFIER, model_info

    p = Path(model) if model else model_info(None).path
    graph = p / ADAPT_CLASSIFIER
    if not graph.is_file():
        raise FileNotFoundError(f"{graph} does not exist: the probe reads a model folder's {ADAPT_CLASSIFIER}; a "
                                "classifier of a training run gets one with `changpai release BASE --name NAME "
                                "--classifier runs/RUN --set adapt=0.2`.")
    names = list(model_info(p).names)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(str(graph), so, providers=["CPUExecutionProvider"]), names, str(graph)


def probe(root: str | Path, model: str | Path | None = None, alphas: tuple[float, ...] = (0.0, 0.2, 0.3, 0.5),
          limit: int | None = None, seed: int = 64, progress: bool = True) -> dict:
    """Cards read right by the classifier alone with each ``alpha``, over the scenes of a `synth` folder and per
    scene (with the plain reading's mean top probability)."""
    from vision.infer.adapt import PhotoStatistics

    session, names, graph = adaptive_session(model)
    rng = np.random.default_rng(seed)
    per_scene = []
    for p, gt, img, _ in _scenes(Path(root), limit, VAL_EVERY, "read crops", progress):
        cs = scene_cuts(gt, img, rng)
        if not cs:
            continue
        crops = [c[2] for c in cs]
        x = _rgb_planes(np.stack(crops + [swap_ends(c) for c in crops]))  # one batch: both ways round
        n, row = len(crops), {"scene": p.stem, "cards": len(crops), "right": {}}
        for a in alphas:
            prob = PhotoStatistics(session, a).run(None, {"images": x})[0]
            logp = (np.log(np.clip(prob[:n], 1e-9, 1.0)) + np.log(np.clip(prob[n:], 1e-9, 1.0))) / 2
            if a == 0:
                top = np.exp(logp - logp.max(1, keepdims=True))
                row["plain_top"] = round(float((1 / top.sum(1)).mean()), 4)
            row["right"][str(a)] = int(sum(names[int(k)] == c[0] for k, c in zip(logp.argmax(1), cs, strict=True)))
        per_scene.append(row)
    cards = sum(r["cards"] for r in per_scene)
    right = {str(a): sum(r["right"][str(a)] for r in per_scene) / max(cards, 1) for a in alphas}
    return {"model": graph, "scenes": str(root), "cards": cards, "right": right, "per_scene": per_scene}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.eval.adapt", description=__doc__.split("\n\n")[0])
    ap.add_argument("scenes", help="a `changpai synth` folder (gt/ lists each scene's cards)")
    ap.add_argument("--model", default=None, help="a model folder with classifier_adapt.onnx (default: the released model)")
    ap.add_argument("--alpha", default="0,0.2,0.3,0.5", help="comma-separated shares of the photo's own statistics")
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


if __name__ == "__main__":
    raise SystemExit(main())
