"""Weight averaging ("model soup"): one network whose weights are the mean of several checkpoints of the same
architecture, e.g. a released detector and its fine-tunes. Fine-tunes from one start err on different cards;
their mean keeps what they agree on (changpai-v12's detector: v11's and one epoch from it, see its model card).

The result is written as a run folder (runs/NAME/weights/last.pt and args.yaml), so `release` exports it like
any training run."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from vision.train.ultra import offline_ultralytics


class AverageError(ValueError):
    """Checkpoints that cannot be averaged, said in one sentence."""


def checkpoint_network(ckpt: dict[str, Any], path: Path):
    """The network a checkpoint holds (its EMA weights where it has them), in float; AverageError if none."""
    net = (ckpt.get("ema") or ckpt.get("model")) if isinstance(ckpt, dict) else None
    if net is None or not hasattr(net, "state_dict"):
        raise AverageError(f"{path} is not an ultralytics checkpoint (no model in it).")
    return net.float()


def _names(net) -> list[str]:
    names = getattr(net, "names", None) or {}
    return [str(v) for _, v in sorted(names.items())] if isinstance(names, dict) else [str(v) for v in names]


def average_weights(sources: list[str | Path], run_dir: str | Path) -> Path:
    """Write the mean of ``sources``' weights (their EMA weights where a checkpoint has them) to
    ``run_dir``/weights/last.pt, with the training arguments of the last source as ``run_dir``/args.yaml."""
    offline_ultralytics()
    import torch
    import yaml

    if len(sources) < 2:
        raise AverageError("Averaging takes two checkpoints or more.")
    paths = [Path(s) for s in sources]
    for p in paths:
        if not p.is_file():
            raise AverageError(f"No checkpoint at {p}.")
    ckpts = []
    for p in paths:
        try:
            ckpts.append(torch.load(p, map_location="cpu", weights_only=False))
        except Exception as e:  # torch's unpickling errors have no common type
            raise AverageError(f"{p} cannot be read as a checkpoint ({str(e).splitlines()[0][:120]}).") from None
    nets = [checkpoint_network(c, p) for c, p in zip(ckpts, paths, strict=True)]
    states = [n.state_dict() for n in nets]
    keys = list(states[0])
    for p, s in zip(paths[1:], states[1:], strict=True):
        if list(s) != keys or any(s[k].shape != states[0][k].shape for k in keys):
            raise AverageError(f"{p} is not the same network as {paths[0]}: only checkpoints of one architecture average.")
    names = [_names(n) for n in nets]
    for p, n in zip(paths[1:], names[1:], strict=True):
        if n != names[0]:  # a released classifier lists its classes in the project's order, a training run by folder name
            where = next(i for i, (a, b) in enumerate(zip(names[0], n, strict=True)) if a != b)
            raise AverageError(f"{p} orders its classes differently from {paths[0]} (class {where}: {n[where]} against "
                               f"{names[0][where]}): average a run with the start checkpoint it was trained from "
                               "(runs/NAME_start.pt), not with the released network.")
    mean = {k: (sum(s[k].double() for s in states) / len(states)).to(v.dtype) if v.is_floating_point() else v
            for k, v in states[0].items()}
    net = copy.deepcopy(nets[0])
    net.load_state_dict(mean)
    out = dict(ckpts[-1])
    out.update(model=net, ema=None, optimizer=None, updates=None, epoch=-1)
    run_dir = Path(run_dir)
    (run_dir / "weights").mkdir(parents=True, exist_ok=True)
    last = run_dir / "weights" / "last.pt"
    torch.save(out, last)
    args = dict(out.get("train_args") or {})
    args["model"] = " + ".join(str(p) for p in paths)
    (run_dir / "args.yaml").write_text(yaml.safe_dump(args, sort_keys=False))
    return last
