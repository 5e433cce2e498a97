"""`changpai eval DIR`: recognizer precision, recall, accuracy, exact photos and latency."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="a folder made by `changpai synth` (gt/*.json + images)")
    p.add_argument("--model", help="model folder (default models/changpai-v1)")
    p.add_argument("--limit", type=int, help="only the first N images")
    p.add_argument("--json", metavar="OUT", help="report file (default DIR/eval_report.json)")


def run(args: argparse.Namespace) -> int:
    from vision.evaluate import evaluate, format_report
    from vision.recognize import ModelError

    try:
        r = evaluate(args.dir, args.model, args.limit)
    except (FileNotFoundError, ModelError) as e:
        raise UserError(str(e)) from None
    out = Path(args.json or Path(args.dir) / "eval_report.json")
    out.write_text(json.dumps(r, indent=1, ensure_ascii=False))
    print(format_report(r))
    print(f"report: {out}")
    return 0
