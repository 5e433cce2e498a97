"""`changpai release BASE --name NAME --set NAME=VALUE`: a model folder with some thresholds changed, as measured with
`changpai eval --set`."""

from __future__ import annotations

import argparse

from vision.infer.model import SETTINGS

from ..cli import UserError
from .evaluate import parse_settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", help="the model folder released from (e.g. models/changpai-v21)")
    p.add_argument("--name", required=True, help="the new model's name: models/NAME")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", required=True,
                   help="a threshold changed (repeatable): " + ", ".join(SETTINGS) + ", e.g. settle=0.5")
    p.add_argument("--note", default="", help="why, in a sentence (how it was chosen): kept in model.json and the model card")


def run(args: argparse.Namespace) -> int:
    from vision.infer.model import ModelError
    from vision.train.release import release_settings

    try:
        dest = release_settings(args.base, args.name, parse_settings(args.set), args.note)
    except (ModelError, ValueError) as e:
        raise UserError(str(e)) from None
    print(f"released: {dest}")
    return 0
