"""The fast fit: the classifier's last layer refitted to a player's deck in its embedding space, in seconds on a CPU.

The released classifier ends in global pooling, one linear layer (1280 features → the card codes and `none`) and a
softmax. Everything before the linear layer has learnt what a card's drawing looks like in general; what a new deck
changes is which drawing means which code. So the deck's faces are rendered into a few thousand crops as the
detector cuts them (covered, tilted, blurred, lit: vision.synth with the faces of the calibration photo), each crop's
features are read once with onnxruntime, and the linear layer alone is refitted to them by softmax regression, pulled
toward the released weights (an L2 penalty on the change) so that what the base model knew and the deck does not
show stays as it was; the rows of kinds the deck has no face for (and `none`) are kept. The new weights are written
into a copy of the classifier's ONNX file: every command reads the calibrated model as any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.infer.detect import _rgb_planes
from vision.infer.geometry import swap_ends

GEMM_WEIGHT = "model.10.linear.weight"  # the classifier's last layer (ultralytics' Classify head)
GEMM_BIAS = "model.10.linear.bias"
BATCH = 256


@dataclass(frozen=True)
class FitSettings:
    """How the layer is refitted: steps of Adam at ``lr``, the pull toward the released weights ``pull`` (L2 on the
    change, per example), and the share of crops held out to report the fit's accuracy."""

    steps: int = 500
    lr: float = 0.01
    pull: float = 0.001
    val_frac: float = 0.1


FIT = FitSettings()


def _graph(onnx_path: Path):
    import onnx

    model = onnx.load(str(onnx_path))
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm" and GEMM_WEIGHT in n.input)
    return model, gemm


def embedder(onnx_path: Path):
    """An onnxruntime session of the classifier that also outputs the features its last layer reads, with that
    layer's weights (classes × features) and bias."""
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    model, gemm = _graph(onnx_path)
    feat = gemm.input[0]
    model.graph.output.append(onnx.helper.make_tensor_value_info(feat, onnx.TensorProto.FLOAT, None))
    inits = {i.name: i for i in model.graph.initializer}
    w = numpy_helper.to_array(inits[GEMM_WEIGHT]).astype(np.float64)
    b = numpy_helper.to_array(inits[GEMM_BIAS]).astype(np.float64)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return session, w, b


def features(session, crops: list[np.ndarray], progress=None) -> np.ndarray:
    """The last layer's input for each folded crop (BGR, the classifier's size)."""
    out = []
    name = session.get_inputs()[0].name
    for k in range(0, len(crops), BATCH):
        out.append(session.run(None, {name: _rgb_planes(np.stack(crops[k:k + BATCH]))})[1])
        if progress is not None:
            progress(min(k + BATCH, len(crops)))
    return np.concatenate(out).astype(np.float64) if out else np.zeros((0, 0))


def refit(x: np.ndarray, y: np.ndarray, w0: np.ndarray, b0: np.ndarray, rows: np.ndarray,
          settings: FitSettings | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray, dict]:
    """Softmax regression of labels ``y`` (class indices) on features ``x``, from ``w0``/``b0``, changing only the
    ``rows`` (bool per class), with an L2 pull toward the start. Returns the weights, bias and the held-out
    accuracy before and after."""
    settings = settings or FIT
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    n_val = int(round(len(y) * settings.val_frac))
    val, tr = idx[:n_val], idx[n_val:]
    w, b = w0.copy(), b0.copy()
    m_w, v_w, m_b, v_b = (np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b))
    mask = rows.astype(np.float64)[:, None]
    xt, yt = x[tr], y[tr]
    onehot = np.eye(len(b0))[yt]

    def acc(w_, b_):
        return float(np.mean(np.argmax(x[val] @ w_.T + b_, 1) == y[val])) if n_val else float("nan")

    before = acc(w, b)
    for t in range(1, settings.steps + 1):
        z = xt @ w.T + b
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        g = (p - onehot) / len(yt)
        gw = (g.T @ xt + settings.pull * (w - w0)) * mask
        gb = g.sum(0) * rows
        for par, grad, m, v in ((w, gw, m_w, v_w), (b, gb, m_b, v_b)):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            par -= settings.lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w, b, {"val_crops": int(n_val), "val_accuracy_before": before, "val_accuracy_after": acc(w, b)}


def write_classifier(src: Path, dest: Path, w: np.ndarray, b: np.ndarray) -> None:
    """A copy of the classifier ONNX file ``src`` at ``dest`` with its last layer's weights replaced."""
    import onnx
    from onnx import numpy_helper

    model, _ = _graph(src)
    for init in model.graph.initializer:
        if init.name == GEMM_WEIGHT:
            init.CopyFrom(numpy_helper.from_array(w.astype(np.float32), GEMM_WEIGHT))
        elif init.name == GEMM_BIAS:
            init.CopyFrom(numpy_helper.from_array(b.astype(np.float32), GEMM_BIAS))
    onnx.save(model, str(dest))


def training_set(crops_root: Path, names: list[str]) -> tuple[list[np.ndarray], np.ndarray]:
    """The crops of a rendered crop folder (``ROOT/{train,val}/<code>/*.jpg``, both splits) and their class indices in
    the classifier's ``names``; each crop also turned end for end (the classifier reads both ways round)."""
    import cv2

    crops, labels = [], []
    for p in sorted(crops_root.glob("*/*/*.jpg")):
        code = p.parent.name
        if code not in names:
            continue
        img = cv2.imread(str(p))
        if img is None:
            continue
        for c in (img, swap_ends(img)):
            crops.append(c)
            labels.append(names.index(code))
    return crops, np.array(labels, np.int64)
