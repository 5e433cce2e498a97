"""`changpai train detect|classify`: train the recognizer's models on CPU, resumable."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", choices=["detect", "classify"])
    p.add_argument("--data", help="detect: dataset.yaml of `changpai synth --kind detect`; classify: the crops folder")
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--imgsz", type=int, default=None)
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--name", default=None, help="run name under runs/ (default: detect or classify)")
    p.add_argument("--resume", action="store_true", help="continue the run's last checkpoint")
    p.add_argument("--weights", help="start from these weights (e.g. models/changpai-v1/detector.pt) instead of the model YAML")
    p.add_argument("--device", default="cpu", help="cpu, or a CUDA device index such as 0")
    p.add_argument("--workers", type=int, default=2, help="data-loading workers")
    p.add_argument("--release", metavar="NAME", help="after training, export ONNX and write models/NAME with a model card")


def run(args: argparse.Namespace) -> int:
    from vision import train

    name = args.name or args.what
    if args.weights and not Path(args.weights).is_file():
        raise UserError(f"No weights at {args.weights}.")
    if not args.resume:
        if not args.data:
            raise UserError("--data is needed (or --resume to continue a run).")
        if not Path(args.data).exists():
            raise UserError(f"No dataset at {args.data}.")
    try:
        if args.what == "detect":
            kw = {k: v for k, v in dict(epochs=args.epochs, imgsz=args.imgsz, batch=args.batch).items() if v is not None}
            if args.weights:
                kw["model"] = args.weights
            run_dir = train.train_detect(args.data, name=name, resume=args.resume, device=args.device,
                                         workers=args.workers, **kw)
        else:
            kw = {k: v for k, v in dict(epochs=args.epochs, imgsz=args.imgsz, batch=args.batch).items() if v is not None}
            if args.weights:
                kw["model"] = args.weights
            run_dir = train.train_classify(args.data, name=name, resume=args.resume, device=args.device,
                                           workers=args.workers, **kw)
    except FileNotFoundError as e:
        raise UserError(str(e)) from None
    print(f"trained: {run_dir}/weights/best.pt")
    if args.release:
        from vision.release import release

        out = release(args.what, run_dir, args.release)
        print(f"released: {out}")
    return 0
