"""`changpai release BASE --name NAME --set NAME=VALUE`: a model folder with some thresholds changed, as measured with
`changpai eval --set`; with `--classifier RUN` (or `--detector RUN`), the base with that network taken from a
finished training run alone (no averaging), and with --set too those settings on it (e.g. the classifier's temperature
when the run's val crops are gone); with `--second MODEL`, the base with MODEL's classifier asked about the crops its own
is unsure of (vision.infer.model.SecondOpinion)."""

from __future__ import annotations

import argparse

from vision.infer.model import SETTINGS

from ..cli import UserError
from .evaluate import parse_settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", help="the model folder released from (e.g. models/changpai-v21)")
    p.add_argument("--name", required=True, help="the new model's name: models/NAME")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a threshold changed (repeatable): " + ", ".join(SETTINGS) + ", e.g. settle=0.5; "
                        "with --classifier or --detector, set on the released run")
    run = p.add_mutually_exclusive_group()
    run.add_argument("--classifier", metavar="RUN", help="the classifier of this finished run (runs/NAME) instead of the base's")
    run.add_argument("--detector", metavar="RUN", help="the detector of this finished run (runs/NAME) instead of the base's")
    run.add_argument("--second", metavar="MODEL", help="the classifier of this model folder asked, as a second opinion, "
                                                       "about the crops the base's reads with less than --below")
    p.add_argument("--below", type=float, default=0.99, help="with --second: the crops read with less than this are "
                                                              "asked about (default 0.99)")
    p.add_argument("--note", default="", help="why, in a sentence (how it was chosen): kept in model.json and the model card")


def run(args: argparse.Namespace) -> int:
    from vision.infer.model import ModelError
    from vision.train.release import release_run, release_second, release_settings

    run = args.classifier or args.detector
    if not run and not args.set and not args.second:
        raise UserError("Name a setting to change (--set NAME=VALUE), a run's network (--classifier RUN or --detector RUN) "
                        "or a second classifier (--second MODEL).")
    if args.second and args.set:
        raise UserError("Release a second classifier and changed settings one after the other, not at once.")
    try:
        if args.second:
            dest = release_second(args.base, args.name, args.second, args.below, args.note)
        elif run:
            dest = release_run(args.base, args.name, "classify" if args.classifier else "detect", run, args.note,
                               parse_settings(args.set))
        else:
            dest = release_settings(args.base, args.name, parse_settings(args.set), args.note)
    except (ModelError, ValueError, FileNotFoundError) as e:
        raise UserError(str(e)) from None
    print(f"released: {dest}")
    return 0
