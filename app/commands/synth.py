"""`changpai synth`: render synthetic long-card photos and labels."""

from __future__ import annotations

import argparse
import os
import time

from ..cli import UserError, comma_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--n", type=int, required=True, help="number of images (scenes)")
    p.add_argument("--seed", type=int, default=0, help="seed of the decks and scenes (default 0)")
    p.add_argument("--kind", default="detect", choices=["detect", "classify", "hands"],
                   help="detect: scenes + OBB labels; classify: card crops per class; hands: winning-hand scenes + totals")
    p.add_argument("--styles", default="classic,bold,fine,folk",
                   help="deck style families, comma-separated (classic, bold, fine, folk; scrambled: one of those with other "
                        "characters for its numerals; holdout is kept out of training; the deck families woodblock, dotted, boxed, "
                        "sideways, formal, assorted, heroes, medley: docs/training.md)")
    p.add_argument("--faces", help="folder of your own deck's faces: FACES/<code>/*.jpg")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: one per core)")
    p.add_argument("--val-frac", type=float, default=0.1,
                   help="share of images in the val split: every round(1/F)-th photo, at most every second (default 0.1)")
    p.add_argument("--size", default="1280x960", help="image size WxH (landscape; portrait scenes swap it)")
    p.add_argument("--rulesets", help="--kind hands: draw the hands among these rulesets, comma-separated (rugao: with 0–2 "
                   "wild cards 福禄寿禧财 in the hand; nantong-single+xi_er: with the 喜儿 option, 0–2 extras held as bonus cards); "
                   "default nantong-double and nantong-single, 3 to 1")
    p.add_argument("--tables", help="tables drawn among, comma-separated, or 'all' (wood, cloth, felt, pattern, stone; printed "
                   "cloths: dots, stripes, tiles, plaid); default the first five")
    p.add_argument("--least-show", type=float, help="stairs and fans: the least share of a card's width left showing "
                   "(default 0.45 in stairs, 0.5 in fans; players holding cards tight show a quarter)")
    p.add_argument("--turn", choices=["upright", "any"], default="upright", help="how the hand lies to the camera: upright "
                   "(long sides within 20° of the photo's, a quarter turn in one scene of ten; default) or any: at any angle, and "
                   "each declared group turned on its own too")
    p.add_argument("--named-ways", action="store_true", help="every deck family draws its named cards (千字 红花 白花 and "
                   "the extras) the printer's way, as the medley family does: one flower or three, 千 in a seal, an extra "
                   "once, in a ring or twice …; without it a family other than medley draws them as it always did")
    p.add_argument("--extras-weight", type=int, default=1, help="detect and classify: draw each of the five extras as "
                   "if the deck held this many (default 1, as a deck does): the rare extras seen more often in training")
    p.add_argument("--force", action="store_true", help="write into a non-empty folder made otherwise")


def run(args: argparse.Namespace) -> int:
    from vision.synth.write import Job, SynthError
    from vision.synth.write import run as synth_run

    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        raise UserError(f"--size is WIDTHxHEIGHT, e.g. 1280x960, not {args.size!r}.") from None
    if not (64 <= w <= 8000 and 64 <= h <= 8000):
        raise UserError("--size must be between 64 and 8000 pixels a side.")
    if args.workers < 1:
        raise UserError("--workers must be at least 1.")
    if not 0 <= args.val_frac < 1:
        raise UserError("--val-frac must be at least 0 and below 1 (every n-th photo goes to val, at most every second).")
    styles = comma_list(args.styles)
    rulesets = comma_list(args.rulesets)
    from vision.synth.tables import ALL_TABLES

    tables = ALL_TABLES if (args.tables or "").strip() == "all" else comma_list(args.tables)
    job = Job(args.out, args.kind, args.seed, args.n, styles, args.faces, args.val_frac, w, h, rulesets=rulesets,
              tables=tables, least_show=args.least_show, turn=args.turn, named_ways=args.named_ways,
              extras_weight=args.extras_weight)
    t = time.perf_counter()
    try:
        r = synth_run(job, workers=args.workers, force=args.force)
    except SynthError as e:
        raise UserError(str(e)) from None
    dt = time.perf_counter() - t
    rate = r["rendered"] / dt if dt > 0 and r["rendered"] else 0.0
    print(f"{r['rendered']} images rendered, {r['skipped']} already there, {r['files']} files → {r['out']}"
          + (f" ({rate:.1f} images/s)" if rate else ""))
    return 0
