"""`changpai compare A.json B.json`: two `changpai eval` reports of the same photos, photo by photo."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", help="report of `changpai eval` (e.g. the released model's)")
    p.add_argument("b", help="report of `changpai eval` on the same photos (e.g. a candidate's)")
    p.add_argument("--json", metavar="OUT", help="also write the comparison, with the photos named, to OUT")


def run(args: argparse.Namespace) -> int:
    from vision.eval.compare import CompareError, compare, format_comparison

    try:
        c = compare(args.a, args.b)
    except CompareError as e:
        raise UserError(str(e)) from None
    print(format_comparison(c, args.a, args.b))
    if args.json:
        Path(args.json).write_text(json.dumps(c, indent=1, ensure_ascii=False))
        print(f"comparison: {args.json}")
    return 0
