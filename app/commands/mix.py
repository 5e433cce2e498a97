"""`changpai mix OUT --hands DIR --val DIR`: a detector training list from several synth folders."""

from __future__ import annotations

import argparse

from ..cli import UserError, comma_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="folder for train.txt, val.txt and dataset.yaml")
    p.add_argument("--hands", required=True, action="append", help="synth folder (`--kind hands`, or `detect`) whose scenes "
                   "of --layouts all join, and whose others are sampled (repeatable)")
    p.add_argument("--layouts", default="fan,stair", help="layouts of which every scene is taken (default fan,stair)")
    p.add_argument("--others", type=int, default=250, help="how many of the other scenes (rows) join them")
    p.add_argument("--detect", action="append", default=[], help="a `--kind detect` folder whose training photos all join "
                   "(repeatable)")
    p.add_argument("--val", required=True, help="synth folder whose val photos measure each epoch")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")


def run(args: argparse.Namespace) -> int:
    from vision.synth.mix import MixError, make_mix

    if args.others < 0:
        raise UserError("--others cannot be negative.")
    try:
        n = make_mix(args.out, tuple(args.hands), args.val, comma_list(args.layouts),
                     args.others, tuple(args.detect), args.seed)
    except MixError as e:
        raise UserError(str(e)) from None
    print(f"{args.out}/dataset.yaml: {n['train']} training photos ({n['by_layout']} picked by layout, "
          f"{n['from_detect']} of whole --detect folders), {n['val']} to measure on")
    return 0
