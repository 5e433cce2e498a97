"""Pick the detector's confidence and NMS thresholds on held-out scenes (F1 of card matches at IoU 0.5)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from .evaluate import MIN_VISIBLE, match
from .imageio import load_image
from .recognize import _sessions, letterbox, model_info


def _raw(det_session, img, imgsz):
    lb, r, (left, top) = letterbox(img, imgsz)
    x = lb[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / 255
    out = det_session.run(None, {det_session.get_inputs()[0].name: x})[0][0]
    scores = out[4:-1].max(0)
    keep = scores >= 0.05
    boxes, angle, scores = out[:4, keep].T, out[-1, keep], scores[keep]
    rects = [((float(b[0]), float(b[1])), (float(b[2]), float(b[3])), float(np.degrees(a))) for b, a in zip(boxes, angle, strict=True)]
    return rects, scores, r, left, top


def tune(scenes: str | Path, model: str | Path | None = None, limit: int = 60) -> dict:
    info = model_info(model)
    det, _ = _sessions(str(info.path))
    cache = []
    gts = [json.loads(p.read_text()) for p in sorted((Path(scenes) / "gt").glob("*.json"))]
    val = [g for g in gts if g.get("split") == "val"] or gts  # never the test sets: tune on the val split
    for gt in val[:limit]:
        img = load_image(Path(scenes) / gt["image"])
        gq = [np.array(c["quad"], np.float32) for c in gt["cards"] if c["visible"] >= MIN_VISIBLE]
        cache.append((_raw(det, img, info.det_imgsz), gq))
    best = None
    table = []
    for conf in (0.2, 0.25, 0.3, 0.35, 0.4, 0.5):
        for iou in (0.3, 0.4, 0.5, 0.6):
            tp = fp = fn = 0
            for (rects, scores, r, left, top), gq in cache:
                idx = [i for i in range(len(scores)) if scores[i] >= conf]
                keep = cv2.dnn.NMSBoxesRotated([rects[i] for i in idx], [float(scores[i]) for i in idx], conf, iou) if idx else []
                quads = []
                for k in np.array(keep).reshape(-1):
                    q = cv2.boxPoints(rects[idx[int(k)]]).astype(np.float32)
                    q[:, 0] = (q[:, 0] - left) / r
                    q[:, 1] = (q[:, 1] - top) / r
                    quads.append(q)
                m = match(quads, gq)
                tp += len(m)
                fp += len(quads) - len(m)
                fn += len(gq) - len(m)
            prec, rec = tp / max(1, tp + fp), tp / max(1, tp + fn)
            f1 = 2 * prec * rec / max(1e-9, prec + rec)
            table.append({"conf": conf, "iou": iou, "precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4)})
            if best is None or f1 > best["f1"]:
                best = table[-1]
    return {"best": best, "table": table}
