"""`changpai average NAME A.pt B.pt ...`: a network whose weights are the mean of several checkpoints."""

from __future__ import annotations

import argparse

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="run name under runs/ for the averaged weights (runs/NAME/weights/last.pt)")
    p.add_argument("weights", nargs="+", help="checkpoints of one architecture (released .pt files, runs/*/weights/last.pt); one named "
                   "twice counts twice (START START RUN: the start weighs 2 : 1 against the fine-tune)")
    p.add_argument("--release", metavar="MODEL", help="then export ONNX into models/MODEL (as `changpai train --release`)")


def run(args: argparse.Namespace) -> int:
    import yaml

    from vision.train.average import AverageError, average_weights
    from vision.train.yolo import RUNS

    run_dir = RUNS / args.name
    try:
        last = average_weights(args.weights, run_dir)
    except AverageError as e:
        raise UserError(str(e)) from None
    print(f"averaged {len(args.weights)} checkpoints: {last}")
    if args.release:
        from vision.train.release import release

        task = yaml.safe_load((run_dir / "args.yaml").read_text()).get("task")
        print(f"released: {release('classify' if task == 'classify' else 'detect', run_dir, args.release)}")
    return 0
