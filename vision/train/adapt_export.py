"""The classifier as an ONNX graph whose BatchNorm layers can take the photo's own statistics (vision.infer.adapt).

Every card of one photo is of one deck; an unknown deck's ink, paper and drawing shift the classifier's activations
away from the statistics its BatchNorm layers were trained with. This graph normalizes each layer with statistics it
is given or, on the photo's first batch of crops, with ``alpha`` × that batch's own + (1 − ``alpha``) × the trained
ones (adaptive BatchNorm in its mixed form, Schneider et al., 2020), and returns the statistics it used, so that the
photo's later reads (turned crops, second looks, a handful of crops each) are normalized the same way:

    inputs  images (N, 3, S, S) as classifier.onnx takes them; stats (K,); use (1,): 1 = normalize with ``stats``,
            0 = with the mixed ones (``stats`` then unread); alpha (1,)
    outputs probs (N, C) as classifier.onnx gives them; used (K,): every layer's mean then variance, in layer order

At ``use`` 1 with the trained statistics (``trained_stats``), or at ``alpha`` 0, it reads as classifier.onnx does. The
released classifier.onnx stays the one read first: its BatchNorm is folded into the convolutions and it is faster.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np


def _adaptive(net):
    """``net`` (an ultralytics classification model, unfused, eval mode) with each BatchNorm2d replaced, in place, by a
    layer that reads its statistics from a shared state; returns that state and the layers' channel counts."""
    import torch

    state: dict = {}

    class AdaptiveBN(torch.nn.Module):
        def __init__(self, bn: torch.nn.BatchNorm2d, offset: int):
            super().__init__()
            self.bn, self.offset = bn, offset

        def forward(self, x):
            bn, c, o = self.bn, self.bn.num_features, self.offset
            a, use = state["alpha"], state["use"]
            mean = a * x.mean((0, 2, 3)) + (1 - a) * bn.running_mean
            var = a * x.var((0, 2, 3), unbiased=False) + (1 - a) * bn.running_var
            mean = use * state["stats"][o:o + c] + (1 - use) * mean
            var = use * state["stats"][o + c:o + 2 * c] + (1 - use) * var
            state["used"][o] = (mean, var)  # the graph returns them in layer order, not run order
            shape = (1, -1, 1, 1)
            return (x - mean.view(shape)) / torch.sqrt(var.view(shape) + bn.eps) * bn.weight.view(shape) + bn.bias.view(shape)

    channels: list[int] = []

    def swap(mod):
        for name, child in mod.named_children():
            if isinstance(child, torch.nn.BatchNorm2d):
                setattr(mod, name, AdaptiveBN(child, 2 * sum(channels)))
                channels.append(child.num_features)
            else:
                swap(child)

    swap(net)
    return state, channels


def trained_stats(net) -> np.ndarray:
    """The trained statistics of every BatchNorm2d of ``net``, in the graph's layout (each layer's mean then variance)."""
    import torch

    parts = []
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            parts += [m.running_mean.detach().float().numpy(), m.running_var.detach().float().numpy()]
    return np.concatenate(parts).astype(np.float32)


def export_adaptive(weights: str | Path, out: str | Path, imgsz: int = 128) -> Path:
    """Write ``weights``' classifier (a .pt whose head is in the model's class order) as the adaptive graph at ``out``."""
    import torch
    from ultralytics import YOLO

    from vision.train.ultra import offline_ultralytics

    offline_ultralytics()
    net = YOLO(str(weights)).model.float().eval()
    k = len(trained_stats(net))
    state, _ = _adaptive(net)

    class Graph(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, images, stats, use, alpha):
            state.update(stats=stats, use=use, alpha=alpha, used={})
            y = self.net(images)
            y = y[0] if isinstance(y, (tuple, list)) else y
            return y, torch.cat([t for o in sorted(state["used"]) for t in state["used"][o]])

    out = Path(out)
    args = (torch.zeros(2, 3, imgsz, imgsz), torch.zeros(k), torch.zeros(1), torch.zeros(1))
    with torch.no_grad(), warnings.catch_warnings():  # the TorchScript exporter: the dynamo one needs onnxscript
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(Graph().eval(), args, str(out), input_names=["images", "stats", "use", "alpha"],
                          output_names=["probs", "used"], dynamic_axes={"images": {0: "n"}, "probs": {0: "n"}},
                          opset_version=17, dynamo=False)
    return out
