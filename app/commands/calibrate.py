"""`changpai calibrate PHOTOS... --out models/NAME`: fit the recognizer to your own deck."""

from __future__ import annotations

import argparse
import sys

from vision import CALIBRATION_MINUTES, CALIBRATION_SCENES, DEFAULT_MODEL_NAME, FAST_SCENES

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("photos", nargs="*", help="photo(s) of one card of each kind laid in rows: 条 1–9, 丙 1–9, 万 1–9, 千字 红花 白花")
    p.add_argument("--out", required=True, help="model folder to write, e.g. models/my-deck")
    p.add_argument("--faces", help="instead of photos: a folder of face images per code (FACES/<code>/*.jpg)")
    p.add_argument("--base", help=f"model to start from (default models/{DEFAULT_MODEL_NAME})")
    p.add_argument("--fit", choices=("fast", "full"), default="fast",
                   help="fast: the classifier's last layer fitted to your faces, under a minute, no PyTorch (default); "
                        "full: the whole classifier fine-tuned, minutes (needs the train extra)")
    p.add_argument("--any-order", action="store_true",
                   help="the cards lie in any order: name each by reading its heads instead of by its place")
    p.add_argument("--scenes", type=int, help=f"synthetic scenes rendered with your faces (default: {FAST_SCENES} for the fast fit, "
                   f"{CALIBRATION_SCENES} for the full one)")
    p.add_argument("--epochs", type=int, default=4, help="--fit full: classifier epochs on the deck's crops (default 4)")
    p.add_argument("--minutes", type=float, default=CALIBRATION_MINUTES,
                   help="--fit full: time budget; the fine-tuning is cut to the epochs that fit in it (at least one)")
    p.add_argument("--detector-minutes", type=float, default=0.0,
                   help="--fit full: also fine-tune the detector on scenes laid out with your faces for this long "
                        "(default 0: the released detector)")
    p.add_argument("--no-extras", action="store_true",
                   help="your deck has no 福禄寿禧财: the model never reads a card as one (default: extras left out of the "
                        "photo are read as the released model reads them)")
    p.add_argument("--yes", action="store_true", help="do not ask to confirm the named faces")


def run(args: argparse.Namespace) -> int:
    from vision.deck.calibrate import calibrate_fast, check_detector_minutes
    from vision.deck.name import CalibrationError
    from vision.infer.imageio import ImageError
    from vision.infer.model import ModelError

    def confirm(sheet) -> bool:
        if args.yes:
            return True
        print(f"Check the names under each face in {sheet}.")
        if not sys.stdin.isatty():
            raise UserError(f"Look at {sheet}; if every name is right, run again with --yes.")
        return input("Are all names right? [y/N] ").strip().lower() in ("y", "yes", "是", "对")

    if not args.photos and not args.faces:
        raise UserError("Give a calibration photo, or --faces DIR.")
    try:
        check_detector_minutes(args.fit, args.detector_minutes)
        if args.fit == "fast":  # no PyTorch: works in the player's install
            r = calibrate_fast(args.photos, args.out, args.base, args.faces, args.any_order, confirm=confirm,
                               scenes=args.scenes or FAST_SCENES, no_extras=args.no_extras)
        else:
            from vision.train.calibrate import calibrate

            r = calibrate(args.photos, args.out, args.base, args.faces, args.scenes, args.epochs, confirm=confirm,
                          minutes=args.minutes, fit="full", any_order=args.any_order,
                          detector_minutes=args.detector_minutes, no_extras=args.no_extras)
    except (CalibrationError, ImageError, ModelError, ValueError) as e:
        raise UserError(str(e)) from None
    short = (f", {r['epochs']} of {r['epochs_asked']} epochs within --minutes {args.minutes:g}"
             if r.get("epochs", 0) < r.get("epochs_asked", 0) else "")
    print(f"calibrated model: {r['out']} ({r['faces']} faces{short}, {r['minutes']} min). Use it with --model {r['out']}.")
    if "deck_check" in r:
        c = r["deck_check"]
        print(f"On {c['scenes']} hands laid out with your faces it finds {c['recall'] * 100:.1f} % of the cards and reads "
              f"{c['codes_right'] * 100:.1f} % of those right"
              + (": the released classifier reads your deck better than a fitted one, and is kept." if c.get("kept") else "."))
    return 0
