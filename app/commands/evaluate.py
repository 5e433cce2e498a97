"""`changpai eval DIR`: recognizer precision, recall, accuracy, exact photos and latency."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vision import DEFAULT_MODEL_NAME
from vision.infer.model import SETTINGS

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="a folder made by `changpai synth` (gt/*.json + images)")
    p.add_argument("--model", help=f"model folder (default models/{DEFAULT_MODEL_NAME})")
    p.add_argument("--limit", type=int, help="only the first N images")
    p.add_argument("--split", choices=["train", "val"], help="only the photos of this split (e.g. a training set's val photos)")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="recognize each photo N times; its latency is their median (steadier on a busy machine)")
    p.add_argument("--json", metavar="OUT", help="report file (default DIR/eval_report.json)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (a report kept as text, as `changpai measure` keeps it)")
    p.add_argument("--hands", action="store_true",
                   help="end to end on winning-hand photos (synth --kind hands): share of exactly right totals")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="measure the model with one of "
                   "its thresholds changed, model.json untouched (repeatable): " + ", ".join(SETTINGS) + ", e.g. recover=0.9")
    p.add_argument("--truth", action="store_true", help="--hands: score each photo from its true cards (codes and corners "
                   "from gt/, no network): what the arrangement and the scoring alone get right")
    p.add_argument("--true-corners", action="store_true", help="also read each card found at its true corners (from gt/) "
                   "instead of the detector's box: how much the boxes' errors cost the reading")
    p.add_argument("--context-jiang", action="store_true", help="--hands: take the 将 from each photo's hand file, as "
                   "`changpai score PHOTO --context HAND.json` does (default: read them from the cards lying apart)")
    p.add_argument("--sheet", metavar="PNG", help="also draw the wrong cards (misread: at the box read; missed: at their "
                   "true corners) into one picture, each labelled true>read, its photo and how much of it showed")
    p.add_argument("--recognitions", metavar="FILE", help="--hands: keep the photos' recognitions in FILE and, when it "
                   "exists, reuse them (repairs and scoring measured again in seconds; latency then excludes recognition)")


def run(args: argparse.Namespace) -> int:
    from vision.eval.evaluate import evaluate, format_errors, format_report, format_span, format_stages
    from vision.eval.recognitions import RecognitionsError
    from vision.infer.model import ModelError

    if args.repeat < 1:
        raise UserError("--repeat must be at least 1.")
    if (args.repeat > 1 or args.true_corners or args.sheet) and args.hands:
        flag = "repeat" if args.repeat > 1 else "true-corners" if args.true_corners else "sheet"
        raise UserError(f"--{flag} is for the recognizer's figures, not --hands.")
    try:
        model = _model(args.model, args.set)
        if args.hands:
            from vision.eval.evaluate import evaluate_hands

            if args.truth and (args.model or args.set or args.recognitions):
                raise UserError("--truth scores the photos' true cards: it takes no --model, --set or --recognitions.")
            r = evaluate_hands(args.dir, model, args.limit, recognitions=args.recognitions, split=args.split, truth=args.truth,
                               jiang_from_photo=not args.context_jiang, progress=not args.quiet)
        else:
            if args.recognitions or args.truth:
                raise UserError(f"--{'truth' if args.truth else 'recognitions'} is for --hands.")
            if args.sheet and Path(args.sheet).suffix.lower() != ".png":
                raise UserError(f"--sheet {args.sheet}: name a .png file.")
            r = evaluate(args.dir, model, args.limit, split=args.split, repeat=args.repeat, true_corners=args.true_corners,
                         progress=not args.quiet)
    except (FileNotFoundError, ModelError, RecognitionsError) as e:
        raise UserError(str(e)) from None
    out = Path(args.json or Path(args.dir) / ("eval_hands_report.json" if args.hands else "eval_report.json"))
    try:
        out.write_text(json.dumps(r, indent=1, ensure_ascii=False))
    except OSError as e:
        raise UserError(f"Cannot write the report to {out} ({e.strerror}): name another file with --json.") from None
    if r.get("settings"):
        print("settings changed from model.json: " + ", ".join(f"{k} {v}" for k, v in r["settings"].items()))
    if args.hands:
        print(f"photos {r['photos']}: total exactly right {r['exact_without_repair'] * 100:.1f} % without repair, "
              f"{r['exact_with_repair'] * 100:.1f} % with repair ({r['photos_repaired']} repaired, {r['errors']} without a total, "
              f"{r['wrong_total_with_repair']} with a wrong one, {r['wrong_total_on_a_win']} of them on a legal win, "
              f"{r['wrong_total_on_a_win_unflagged']} of those with no 'check:' warning, {r['wrong_total_on_a_win_silent']} with no "
              f"repair either; {r['right_total_flagged']} right ones with one); "
              f"{_steps(args, r)} "
              f"p50 {r['latency_ms']['p50']} ms, p90 {r['latency_ms']['p90']} ms")
        print(f"  95 % intervals: without repair {format_span(r['exact_without_repair_ci95'])}, with repair "
              f"{format_span(r['exact_with_repair_ci95'])}")
        print("  stages, median: " + format_stages(r["stages_ms_p50"]))
        print("  with repair, by layout: " + ", ".join(f"{k} {v * 100:.1f} %" for k, v in r["with_repair_by_layout"].items()))
        c = r["cards"]
        print(f"  cards {c['cards']}: precision {c['precision'] * 100:.2f} %, recall {c['recall'] * 100:.2f} %, "
              f"classification {c['classification_accuracy'] * 100:.2f} %, photos with every card right "
              f"{c['whole_photo_exact'] * 100:.1f} %")
        print("  wrong cards: " + format_errors(c["errors"]))
    else:
        print(format_report(r))
        if args.sheet:
            from vision.eval.sheet import write_sheet, wrong_cards

            try:
                n = write_sheet(r, args.dir, args.sheet)
            except OSError as e:
                raise UserError(str(e)) from None
            print(f"wrong cards drawn: {n} of {len(wrong_cards(r))} → {args.sheet}")
    print(f"report: {out}")
    return 0


def _steps(args: argparse.Namespace, r: dict) -> str:
    """What a --hands report's latency covers."""
    return "from the true cards" if args.truth else "after recognition (reused)" if r["recognitions"] != "made" else "photo-to-total"


def _model(path: str | None, settings: list[str]):
    """The model folder, or its ModelInfo with the --set thresholds changed."""
    if not settings:
        return path
    from vision.infer.model import model_info, with_settings

    try:
        return with_settings(model_info(path), parse_settings(settings))
    except ValueError as e:
        raise UserError(f"--set: {e}") from None


def parse_settings(items: list[str]) -> dict[str, float]:
    """--set NAME=VALUE items as {name: value}."""
    values = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            values[name.strip()] = float(value)
        except ValueError:
            raise UserError(f"--set {item!r}: give NAME=NUMBER, e.g. recover=0.9.") from None
    return values
