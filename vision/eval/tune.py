"""Pick the detector's thresholds on held-out scenes: confidence and NMS by the F1 of card matches at IoU 0.5,
then the second look (recognize.ModelInfo.rescue_conf / rescue_cls) by the F1 of cards found *and read right*.

`python -m vision.eval.tune SCENES --model models/NAME [--write]` prints the tables; --write stores the best in
the model's model.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from vision.eval.tally import MIN_VISIBLE, match
from vision.infer.detect import RawBoxes, decode, nms
from vision.infer.geometry import order_long_axis_vertical
from vision.infer.imageio import load_image
from vision.infer.model import NOT_A_CARD_P, _sessions, model_info
from vision.infer.recognize import read_boxes

FLOOR = 0.05  # the lowest detector score any setting tried here looks at


def tune(scenes: str | Path, model: str | Path | None = None, limit: int = 60) -> dict:
    info = model_info(model)
    det, _ = _sessions(str(info.path))
    cache = []
    gts = [json.loads(p.read_text()) for p in sorted((Path(scenes) / "gt").glob("*.json"))]
    val = [g for g in gts if g.get("split") == "val"] or gts  # never the test sets: tune on the val split
    for gt in val[:limit]:
        img = load_image(Path(scenes) / gt["image"])
        gq = [np.array(c["quad"], np.float32) for c in gt["cards"] if c["visible"] >= MIN_VISIBLE]
        cache.append((decode(det, img, info.det_imgsz, FLOOR, info.mirror), gq))  # the network runs once per scene
    best = None
    table = []
    for conf in (0.2, 0.25, 0.3, 0.35, 0.4, 0.5):
        for iou in (0.3, 0.4, 0.5, 0.6):
            tp = fp = fn = 0
            for raw, gq in cache:
                quads = [q for q, _ in nms(raw, conf, iou)]
                m = match(quads, gq)
                tp += len(m)
                fp += len(quads) - len(m)
                fn += len(gq) - len(m)
            prec, rec = tp / max(1, tp + fp), tp / max(1, tp + fn)
            f1 = 2 * prec * rec / max(1e-9, prec + rec)
            table.append({"conf": conf, "iou": iou, "precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4)})
            if best is None or f1 > best["f1"]:
                best = table[-1]
    rescue = tune_rescue(scenes, val[:limit], info, best["iou"], [raw for raw, _ in cache])
    return {"best": best, "table": table, "rescue": rescue}


def tune_rescue(scenes: str | Path, val: list[dict], info, iou: float, raws: list[RawBoxes],
                confs=(0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)) -> dict:
    """The confidence again, with the second look (boxes scored below it kept when the classifier is sure),
    by what the table needs: the F1 of cards found *and read right*. ``raws``: each scene's decoded boxes."""
    _, cls = _sessions(str(info.path))
    cache = []
    for gt, raw in zip(val, raws, strict=True):
        img = load_image(Path(scenes) / gt["image"])
        cards = [c for c in gt["cards"] if c["visible"] >= MIN_VISIBLE]
        dets = nms(raw, 0.1, iou)
        quads = [order_long_axis_vertical(q) for q, _ in dets]
        probs, p_none = read_boxes(img, quads, cls, info)
        face = p_none < NOT_A_CARD_P
        cache.append(([q for q, f in zip(quads, face, strict=True) if f], np.array([sc for _, sc in dets])[face], probs[face],
                      [np.array(c["quad"], np.float32) for c in cards], [info.codes.index(c["code"]) for c in cards]))
    table, best = [], None
    for conf, rconf, rcls in ((c, rc, rk) for c in confs for rc in (0.1, 0.15, 0.2, 0.3, 1.0) for rk in (0.9, 0.95, 0.97, 0.99)):
        if rconf >= conf and rcls != 0.9:
            continue
        kept = right = total = 0
        for quads, scores, probs, gq, gc in cache:
            keep = [k for k in range(len(quads)) if scores[k] >= conf or (scores[k] >= rconf and probs[k].max() >= rcls)]
            m = match([quads[k] for k in keep], gq)
            right += sum(int(probs[keep[i]].argmax() == gc[j]) for i, j in m)
            kept += len(keep)
            total += len(gq)
        prec, rec = right / max(1, kept), right / max(1, total)
        f1 = 2 * prec * rec / max(1e-9, prec + rec)
        table.append({"conf": conf, "rescue_conf": rconf, "rescue_cls": rcls, "right_of_kept": round(prec, 4),
                      "right_of_cards": round(rec, 4),
                      "f1": round(f1, 4)})
        if best is None or f1 > best["f1"]:
            best = table[-1]
    return {"best": best, "table": table}


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m vision.eval.tune", description=__doc__.splitlines()[0])
    ap.add_argument("scenes", help="a `changpai synth --kind detect` folder (its val split is used)")
    ap.add_argument("--model", default=None)
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("--write", action="store_true", help="store the best thresholds in the model's model.json")
    ap.add_argument("--json", help="write the tables here")
    a = ap.parse_args(argv)
    r = tune(a.scenes, a.model, a.limit)
    b, rb = r["best"], r["rescue"]["best"]
    print(f"conf {b['conf']} iou {b['iou']}: precision {b['precision']} recall {b['recall']} F1 {b['f1']}")
    print(f"with the second look: conf {rb['conf']} rescue_conf {rb['rescue_conf']} rescue_cls {rb['rescue_cls']}: "
          f"right of kept {rb['right_of_kept']}, "
          f"right of cards {rb['right_of_cards']}, F1 {rb['f1']}")
    if a.json:
        Path(a.json).write_text(json.dumps(r, indent=1))
    if a.write:
        p = model_info(a.model).path / "model.json"
        meta = json.loads(p.read_text())
        meta.update(conf=rb["conf"], iou=b["iou"], rescue_conf=rb["rescue_conf"], rescue_cls=rb["rescue_cls"],
                    thresholds_note=f"chosen on up to {a.limit} val scenes of {a.scenes} (python -m vision.eval.tune)")
        p.write_text(json.dumps(meta, indent=1, ensure_ascii=False))
        print(f"written to {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
