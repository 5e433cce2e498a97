"""Would the classifier read half-covered cards better if it were told which part of the box shows? An oracle test.

In a stair or a row the cards overlap across their width: the box of a covered card holds a strip of its own face
and, beside it, part of the card lying over it. Masking that part (painting it grey) would need the z-order of the
overlapping boxes at inference. Before building a judge of it, this measures what the true z-order would buy: each
card of a rendered scene is cut at a box with the detector's errors (geometry.jitter_quad), once as the recognizer
cuts it and once with the parts the cards pasted over it cover (the renderer's paste order, the covering boxes
jittered as well) painted grey, and both are read by a model's classifier alone (no heads, no second look), counted
by the share of the card showing. ``mine`` cuts both kinds of crops from scenes, to train a classifier on them.

    python -m vision.eval.occlusion eval data/val40/side_hands --model models/changpai-v30
    python -m vision.eval.occlusion mine data/zo/hands data/zo/mask
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from vision.eval.mine import _save_crop, _scenes
from vision.infer.geometry import fold, jitter_quad, order_long_axis_vertical, rectify
from vision.types import MIN_LABEL_VISIBLE

FILL = 128  # the grey the covered part is painted
BINS = (0.2, 0.3, 0.4, 0.5, 0.7)  # shares of a card showing the figures are counted by
VAL_EVERY = 10  # scenes without a split of their own: every tenth to val (as `changpai mine`)


def cuts(img: np.ndarray, quad: np.ndarray, cover: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The classifier's view of ``quad`` as the recognizer cuts it, and the same with ``cover`` (a mask of the image:
    where other cards lie over this one) painted grey."""
    q = order_long_axis_vertical(quad)
    crop = rectify(img, q, ordered=True)
    masked = crop.copy()
    if cover is not None:
        masked[rectify(cover, q, ordered=True) > 127] = FILL
    return fold(crop), fold(masked)


def scene_cuts(gt: dict, img: np.ndarray, rng: np.random.Generator) -> list[tuple[str, float, np.ndarray, np.ndarray]]:
    """(code, share showing, as cut, masked) for each labelled card of a rendered scene; ``gt["cards"]`` lists them in
    the order they were pasted, so a card is covered by those after it."""
    cards = gt["cards"]
    boxes = [jitter_quad(np.array(c["quad"], np.float32), rng) for c in cards]
    out = []
    for i, c in enumerate(cards):
        if c["visible"] < MIN_LABEL_VISIBLE:  # not labelled
            continue
        cover = None
        if i + 1 < len(boxes):
            cover = np.zeros(img.shape[:2], np.uint8)
            for q in boxes[i + 1:]:
                cv2.fillConvexPoly(cover, np.round(q).astype(np.int32), 255)
        plain, masked = cuts(img, boxes[i], cover)
        out.append((c["code"], float(c["visible"]), plain, masked))
    return out


def oracle(root: str | Path, model: str | Path | None = None, limit: int | None = None, seed: int = 64) -> dict:
    """Cards read right as cut and masked, by share showing (``BINS``), for the scenes of a `synth` folder."""
    from vision.infer.model import _sessions, model_info
    from vision.infer.recognize import read_crops

    info = model_info(model)
    _, cls = _sessions(str(info.path))
    rng = np.random.default_rng(seed)
    rows = {b: [0, 0, 0] for b in BINS}
    for _, gt, img, _ in _scenes(Path(root), limit, VAL_EVERY, "read crops", True):
        cs = scene_cuts(gt, img, rng)
        if not cs:
            continue
        plain, _ = read_crops([c[2] for c in cs], cls, info)
        masked, _ = read_crops([c[3] for c in cs], cls, info)
        for (code, vis, _, _), a, b in zip(cs, plain, masked, strict=True):
            row = rows[max(x for x in BINS if x <= vis)]
            row[0] += 1
            row[1] += info.codes[int(np.argmax(a))] == code
            row[2] += info.codes[int(np.argmax(b))] == code
    return {"model": str(info.path), "scenes": str(root),
            "by_showing": [{"from": b, "cards": n, "as_cut": u / n, "masked": m / n} for b, (n, u, m) in rows.items() if n]}


def mine(root: str | Path, out: str | Path, limit: int | None = None, seed: int = 64) -> int:
    """Crops of every labelled card as cut (``u_*``) and, for the cards others cover, masked (``m_*``), filed under
    ``out/{train,val}/<code>/`` as `changpai train classify` reads them. Returns the number of cards."""
    rng = np.random.default_rng(seed)
    out = Path(out)
    n = 0
    for p, gt, img, split in _scenes(Path(root), limit, VAL_EVERY, "cut crops", True):
        for k, (code, vis, plain, masked) in enumerate(scene_cuts(gt, img, rng)):
            _save_crop(plain, out / split / code / f"u_{p.stem}_{k:02d}.jpg")
            if vis < 0.97:
                _save_crop(masked, out / split / code / f"m_{p.stem}_{k:02d}.jpg")
            n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.eval.occlusion", description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("eval", "mine"))
    ap.add_argument("scenes", help="a `changpai synth` folder (gt/ lists each scene's cards in paste order)")
    ap.add_argument("out", nargs="?", help="mine: the crops folder")
    ap.add_argument("--model", default=None, help="eval: the model folder whose classifier reads (default: released)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", default=None, help="eval: write the figures here too")
    a = ap.parse_args(argv)
    if not (Path(a.scenes) / "gt").is_dir():
        ap.exit(2, f"{a.scenes} is not a `changpai synth` folder: it has no gt/.\n")
    if a.what == "mine":
        if not a.out:
            ap.exit(2, "mine needs the folder to write the crops to.\n")
        print(f"{mine(a.scenes, a.out, a.limit)} cards → {a.out}")
        return 0
    r = oracle(a.scenes, a.model, a.limit)
    for row in r["by_showing"]:
        print(f"showing ≥ {row['from']:.1f}: {row['cards']:5d} cards, read right as cut {100 * row['as_cut']:6.2f} %, "
              f"masked {100 * row['masked']:6.2f} %")
    if a.json:
        Path(a.json).write_text(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
