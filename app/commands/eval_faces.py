"""`changpai eval-faces`: how many rendered calibration photos are split into their faces and named right without
knowing the deck (the finder alone, and with the detector's boxes as calibrate's second opinion)."""

from __future__ import annotations

import argparse
import json

from ..cli import UserError, comma_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    from vision.deck.evaluate import FAMILIES

    p.add_argument("--families", default=",".join(FAMILIES), help=f"deck families, comma-separated (default all: {','.join(FAMILIES)})")
    p.add_argument("--seeds", type=int, default=10, help="photos per family, seeds 0..N-1 (default 10)")
    p.add_argument("--model", help="model whose detector is the second opinion (default the released one)")
    p.add_argument("--finder-only", action="store_true", help="the finder alone, no detector (no model needed)")
    p.add_argument("--json", metavar="OUT", help="also write the report to this JSON file")


def run(args: argparse.Namespace) -> int:
    from vision.deck.evaluate import measure_faces
    from vision.infer.model import ModelError

    if args.seeds < 1:
        raise UserError("--seeds must be at least 1.")
    try:
        r = measure_faces(comma_list(args.families), range(args.seeds), args.model,
                          not args.finder_only)
    except (ValueError, ModelError) as e:
        raise UserError(str(e)) from None
    for who, what in (("finder", "the finder alone"), ("calibrate", "as calibrate names them (detector's second opinion)")):
        if who in r:
            v = r[who]
            fams = ", ".join(f"{f} {n}" for f, n in v["by_family"].items())
            print(f"{what}: {v['right']} of {r['photos']} photos named right, {v['loose']} with every name right but an "
                  f"outline off its card (IoU under 0.8), {v['wrong']} with a card missed or misnamed, {v['refused']} refused "
                  f"({fams}; of {args.seeds} each)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1, ensure_ascii=False)
    return 0
