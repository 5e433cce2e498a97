"""Confidence calibration of the classifier: one temperature fitted on held-out crops (NLL), with the
expected calibration error before and after."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from scoring.cards import CODES


def _val_set(root: Path, limit_per_class: int = 60) -> tuple[list[np.ndarray], np.ndarray]:
    crops, labels = [], []
    for k, code in enumerate(CODES):
        for p in sorted((root / code).glob("*.jpg"))[:limit_per_class]:
            img = cv2.imread(str(p))
            if img is not None:
                crops.append(img)
                labels.append(k)
    return crops, np.array(labels)


def ece(probs: np.ndarray, labels: np.ndarray, bins: int = 15) -> float:
    conf = probs.max(1)
    right = probs.argmax(1) == labels
    edges = np.linspace(0, 1, bins + 1)
    e = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            e += m.mean() * abs(conf[m].mean() - right[m].mean())
    return float(e)


def fit_temperature(classifier_onnx: Path, val_dir: Path) -> dict[str, float]:
    import onnxruntime as ort

    from vision.infer.recognize import classify

    sess = ort.InferenceSession(str(classifier_onnx), providers=["CPUExecutionProvider"])
    crops, labels = _val_set(val_dir)
    if len(crops) < 50:
        return {"temperature": 1.0}
    probs = np.concatenate([classify(sess, crops[i:i + 128], 1.0) for i in range(0, len(crops), 128)])
    logp = np.log(np.clip(probs, 1e-12, 1))
    best_t, best_nll = 1.0, float("inf")
    for t in np.arange(0.4, 4.01, 0.05):
        z = logp / t
        z -= z.max(1, keepdims=True)
        lp = z - np.log(np.exp(z).sum(1, keepdims=True))
        nll = -lp[np.arange(len(labels)), labels].mean()
        if nll < best_nll:
            best_t, best_nll = float(t), float(nll)
    z = logp / best_t
    z -= z.max(1, keepdims=True)
    cal = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    return {"temperature": round(best_t, 3), "val_crops": len(labels), "val_accuracy": round(float((probs.argmax(1) == labels).mean()), 4),
            "ece_before": round(ece(probs, labels), 4), "ece_after": round(ece(cal, labels), 4), "nll_after": round(best_nll, 4)}
