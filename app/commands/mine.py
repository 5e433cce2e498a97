"""`changpai mine SCENES --out CROPS`: classifier crops cut from rendered scenes where the detector puts its
boxes (the crops it will see at inference), and with `--negatives` boxes that show no card face (the
classifier's `none` class, which drops the detector's false alarms)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenes", help="a `changpai synth --kind detect` or `--kind hands` folder (images + gt/)")
    p.add_argument("--out", required=True, help="crops folder: OUT/{train,val}/<code>/ (added to, never cleared)")
    p.add_argument("--negatives", action="store_true", help="cut boxes that are not a card instead (OUT/{train,val}/none/)")
    p.add_argument("--limit", type=int, help="only the first N scenes")
    p.add_argument("--model", help="model whose detector places the boxes (default: the released one)")
    p.add_argument("--seed", type=int, default=0, help="--negatives: placement of the boxes laid over objects")
    p.add_argument("--bare", type=int, default=1, metavar="N",
                   help="--negatives: boxes cut over bare table in each scene (default 1; more for printed cloths)")
    p.add_argument("--hard", type=float, metavar="P",
                   help="only the boxes the model's classifier reads wrong, or right with less than P (e.g. 0.9): "
                        "the crops it still errs on, to train on more often (give the folder to --data several times)")


def run(args: argparse.Namespace) -> int:
    import vision.eval.mine as mine
    from vision.infer.model import ModelError

    if not (Path(args.scenes) / "gt").is_dir():
        raise UserError(f"No ground truth at {args.scenes}/gt: render scenes with `changpai synth --kind detect` first.")
    if args.hard is not None and (args.negatives or not 0 < args.hard <= 1):
        raise UserError("--hard takes a probability above 0 and at most 1, and does not go with --negatives.")
    if args.bare < 0:
        raise UserError("--bare takes a number of boxes, 0 or more.")
    try:
        if args.negatives:
            n = mine.mine_negatives(args.scenes, args.out, args.model, args.limit, seed=args.seed, bare=args.bare)
        else:
            n = mine.mine(args.scenes, args.out, args.model, args.limit, hard=args.hard)
    except ModelError as e:
        raise UserError(str(e)) from None
    print(f"{n} crops → {args.out}")
    return 0
