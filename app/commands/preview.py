"""`changpai preview`: contact sheets of rendered faces and scenes."""

from __future__ import annotations

import argparse

from ..cli import UserError, comma_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="docs/preview", help="folder for faces.jpg and scenes.jpg")
    p.add_argument("--styles", default="classic,bold,fine,folk,holdout",
                   help="deck style families, comma-separated (default: the renderer's own five; deck families too, "
                        "e.g. woodblock,assorted)")
    p.add_argument("--seed", type=int, default=0, help="seed of the decks and scenes (default 0)")
    p.add_argument("--faces", help="folder of your own deck's faces: FACES/<code>/*.jpg")
    p.add_argument("--scenes", type=int, default=12, help="scenes on the scenes sheet (default 12)")


def run(args: argparse.Namespace) -> int:
    from vision.synth.decks import ALL_FAMILIES as FAMILIES
    from vision.synth.preview import write_previews

    styles = list(comma_list(args.styles))
    bad = [s for s in styles if s not in FAMILIES]
    if bad:
        raise UserError(f"Unknown style {bad[0]!r}; styles are {', '.join(FAMILIES)}.")
    try:
        paths = write_previews(args.out, styles, args.seed, args.faces, args.scenes)
    except ValueError as e:
        raise UserError(str(e)) from None
    for p in paths:
        print(p)
    return 0
