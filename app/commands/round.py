"""`changpai round --out D`: one training round of the detector and the classifier from a released model, held to
a time budget (vision.train.round): made for a GPU machine lent for minutes (docs/training.md)."""

from __future__ import annotations

import argparse
import os

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    from vision import DEFAULT_MODEL_NAME

    p.add_argument("--out", required=True, help="scratch folder for the round's scenes and crops (several GB at full size)")
    p.add_argument("--base", default=f"models/{DEFAULT_MODEL_NAME}", help="released model to start from (default %(default)s)")
    p.add_argument("--name", default="round", help="runs/NAME_det, runs/NAME_cls and runs/NAME_cls_mean (default %(default)s)")
    p.add_argument("--minutes", type=float, default=7.5, help="the round ends about then: the trainings' epochs are cut to "
                   "those that fit (default %(default)s; rendering and mining are inside it)")
    p.add_argument("--scale", type=float, default=1.0, help="every scene and crop count times this (1: changpai-v23's round, "
                   "4,600 scenes)")
    p.add_argument("--seed-shift", type=int, default=0, help="added to every part's seed: 0 renders with changpai-v23's "
                   "round's seeds, another number new scenes and decks (keep clear of the val and test seeds, 7000-9999)")
    p.add_argument("--keep", type=float, default=0.0, help="pull the classifier toward the base's readings on the crops the "
                   "base reads right, this weight beside the labels' loss (changpai train --keep; default 0: off)")
    p.add_argument("--device", default="0", help="a CUDA device index, or cpu (default %(default)s)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="rendering processes and loaders (default: the cores)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vision.synth.write import SynthError
    from vision.train.round import Budget, run_round

    if args.minutes <= 0 or args.scale <= 0 or args.workers < 1 or args.seed_shift < 0 or args.keep < 0:
        raise UserError("--minutes and --scale take positive numbers, --workers at least 1, --seed-shift and --keep 0 or more.")
    base = Path(args.base)
    if not (base / "detector.pt").is_file() or not (base / "classifier.pt").is_file():
        raise UserError(f"No detector.pt and classifier.pt at {base}: a round starts from a released model folder.")
    if (Path(args.out) / "det.yaml").exists():
        raise UserError(f"{args.out} holds a round already (its crops would be cut twice): give a new --out folder.")
    if args.device != "cpu":
        import torch

        if not torch.cuda.is_available():
            raise UserError(f"No CUDA device here for --device {args.device}: give --device cpu to run the round on the CPU.")
    budget = Budget(minutes=args.minutes, scale=args.scale, device=args.device, workers=args.workers,
                    seed_shift=args.seed_shift, keep=args.keep)
    try:
        r = run_round(args.out, base, args.name, budget)
    except (SynthError, FileNotFoundError, RuntimeError) as e:
        raise UserError(str(e)) from None
    print(f"detector: {r['detector']}/weights/last.pt ({r['detector_epochs']} epochs)")
    print(f"classifier: {r['classifier_mean']} (the mean of {base.name}'s and {r['classifier_epochs']} epochs, "
          f"{r['classifier']}/weights/last.pt)")
    print("measure them on the val photos before a release (docs/training.md: changpai measure, and the val sets there)")
    return 0
