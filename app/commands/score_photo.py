"""`changpai score PHOTO`: the hu of a photographed hand, with its breakdown."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scoring.errors import HandError
from scoring.hand_file import check_hand, decode, parse
from scoring.rulesets import EVENTS, OPTIONS, RULESETS, get_ruleset, parse_options
from vision import DEFAULT_MODEL_NAME

from ..cli import UserError
from ..render_text import render_result
from ..rules import explain

ANNOTATE_EXTS = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff")  # what OpenCV writes by extension


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("photo", help="the photo of the finished hand (JPEG, PNG, HEIC, WebP, BMP or TIFF)")
    p.add_argument("--jiang", help="flipped 将 card(s), e.g. 2t,3w (default: the cards lying apart in the photo)")
    p.add_argument("--win", help="the winning card")
    p.add_argument("--tsumo", action="store_true", help="self-drawn win (自摸)")
    p.add_argument("--dealer", action="store_true", help="the winner is the dealer (庄)")
    p.add_argument("--event", action="append", default=[], choices=EVENTS, help="天成 地胡 天听 折庄 海底 杠开 穷狠 (repeatable)")
    p.add_argument("--ruleset", choices=list(RULESETS), help="rule book variant (default: the context's, else nantong-double)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="ruleset option (over the context's): " + ", ".join(OPTIONS))
    p.add_argument("--not-win", action="store_true", help="score the hand as one that did not win (group points)")
    p.add_argument("--context", metavar="HAND.json", help="a hand file whose context applies (its card lists are ignored)")
    p.add_argument("--no-repair", action="store_true", help="never change a card with the classifier's alternatives")
    p.add_argument("--model", help=f"model folder (default models/{DEFAULT_MODEL_NAME})")
    p.add_argument("--json", action="store_true", help="print JSON: the score-hand result with the cards seen and the repairs")
    p.add_argument("--annotate", metavar="OUT.png", help="write the photo with each card's name and meld")
    p.add_argument("--en", action="store_true", help="English labels")
    p.add_argument("--explain", action="store_true", help="after the breakdown, the rule book's sections its lines cite (docs/rules.md)")


def build_context(args: argparse.Namespace):
    from scoring import parse_cards
    from vision.table.context import PhotoContext

    ctx = PhotoContext()
    if args.context:
        path = Path(args.context)
        if not path.is_file():
            raise UserError(f"No hand file at {path}.")
        try:
            d = parse(decode(path.read_bytes()))
        except HandError as e:
            raise UserError(f"{path}: {e}") from None
        if isinstance(d, list):
            if len(d) != 1:
                raise UserError(f"{path} holds {len(d)} hands; --context takes one.")
            d = d[0]
        if isinstance(d, dict) and isinstance(d.get("hand"), dict):  # a synth ground-truth file: its hand
            d = d["hand"]
        if not isinstance(d, dict):
            raise UserError(f"{path} must hold one hand (a JSON object).")
        try:
            ctx = PhotoContext.from_hand_file(check_hand(d))
        except HandError as e:
            raise UserError(f"{path}: {e}") from None
    if args.ruleset:
        ctx.ruleset = args.ruleset
    if args.option:
        ctx.options = {**ctx.options, **parse_options(args.option)}
    if args.jiang:
        ctx.jiang = parse_cards(args.jiang)
    if args.win:
        w = parse_cards(args.win)
        if len(w) != 1:
            raise UserError(f"--win takes one card, not {args.win!r}.")
        ctx.win = w[0]
        ctx.is_win = True
    if args.tsumo:
        ctx.self_drawn = True
    if args.dealer:
        ctx.dealer = True
    if args.event:
        ctx.events = sorted(set(ctx.events) | set(args.event))
    if args.not_win:
        ctx.is_win = False
    # what the context names is checked before the photo is read: a ruleset, an option or an event it does not
    # know is one sentence at once, not after the recognition
    get_ruleset(ctx.ruleset, ctx.options)
    unknown = sorted(set(ctx.events) - set(EVENTS))
    if unknown:
        raise UserError(f"Unknown event(s) {', '.join(repr(e[:30]) for e in unknown[:3])}; the events are {', '.join(EVENTS)}.")
    return ctx


def run(args: argparse.Namespace) -> int:
    from vision.infer.imageio import ImageError, load_image
    from vision.infer.model import ModelError
    from vision.infer.recognize import recognize_and_again
    from vision.table.context import PhotoError
    from vision.table.second_reading import score_read_twice

    ctx = build_context(args)
    if args.annotate and Path(args.annotate).suffix.lower() not in ANNOTATE_EXTS:
        raise UserError(f"--annotate {args.annotate}: name a .png or .jpg file (the extension decides the format).")
    try:
        rec, again = recognize_and_again(args.photo, args.model)  # a large photo is read from a smaller decode
        img = load_image(args.photo) if args.annotate else None  # drawn on at full size
    except (ImageError, ModelError) as e:
        raise UserError(str(e)) from None
    try:
        ps = score_read_twice(rec, ctx, again, repair_on=not args.no_repair)
    except PhotoError as e:
        if args.annotate:  # what was seen, so the table can tell what is missing
            _write_annotation(args.annotate, img, rec, None, None)
            raise UserError(f"{e} (the cards seen are drawn in {args.annotate})") from None
        raise UserError(str(e)) from None
    rec = ps.recognition  # a repair may have added a card the detector half-saw, or marked a box ×
    if args.annotate:
        _write_annotation(args.annotate, img, rec, *ps.card_tags())
    if args.json:
        json.dump(ps.to_dict(), sys.stdout, ensure_ascii=False, indent=1)
        print()
        return 0
    print(f"seen: {len(rec.cards)} cards — hand {' '.join(rec.cards[i].code for i in ps.layout.hand)}"
          + "".join(f" | meld {' '.join(rec.cards[i].code for i in g)}" for g in ps.layout.melds)
          + (f" | 将 {' '.join(rec.cards[i].code for i in ps.layout.jiang)}" if ps.layout.jiang else ""))
    print(render_result(ps.result, english=args.en))
    if args.explain:
        print("\n" + explain([it.rule for it in ps.result.items]))
    for w in ps.warnings:
        print(f"warning: {w}")
    said = {n.lower().rstrip(".") for n in ps.result.notes}  # the breakdown's notes are printed above
    for d in ps.defaults:
        if d.lower().rstrip(".") not in said:
            print(f"to confirm: {d}")
    return 0


def _write_annotation(path: str, img, rec, labels: list[str] | None, groups: list[int] | None) -> None:
    import cv2

    from vision.table.annotate import annotate

    if not cv2.imwrite(path, annotate(img, rec, labels, groups)):
        raise UserError(f"Cannot write {path}.")
