"""`changpai recognize PHOTO`: the cards in a photo."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vision import DEFAULT_MODEL_NAME

from ..cli import UserError
from .score_photo import ANNOTATE_EXTS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("photo", help="the photo (JPEG, PNG, HEIC, WebP, BMP or TIFF)")
    p.add_argument("--json", action="store_true", help="print the cards as JSON")
    p.add_argument("--annotate", metavar="OUT.png", help="write the photo with every card drawn and named")
    p.add_argument("--model", help=f"model folder (default models/{DEFAULT_MODEL_NAME})")
    p.add_argument("--top-k", type=int, default=5, help="alternative readings per card (default 5)")


def run(args: argparse.Namespace) -> int:
    from vision.infer.imageio import ImageError, load_image
    from vision.infer.model import ModelError
    from vision.infer.recognize import recognize

    if args.annotate and Path(args.annotate).suffix.lower() not in ANNOTATE_EXTS:
        raise UserError(f"--annotate {args.annotate}: name a .png or .jpg file (the extension decides the format).")
    try:
        rec = recognize(args.photo, args.model, args.top_k)  # a large photo is read from a smaller decode
        img = load_image(args.photo) if args.annotate else None  # drawn on at full size
    except (ImageError, ModelError) as e:
        raise UserError(str(e)) from None
    if args.annotate:
        import cv2

        from vision.table.annotate import annotate

        if not cv2.imwrite(args.annotate, annotate(img, rec)):
            raise UserError(f"Cannot write {args.annotate} (use a .png or .jpg name in a folder that exists).")
    if args.json:
        json.dump([c.to_dict() for c in rec.cards], sys.stdout, ensure_ascii=False)
        print()
        return 0
    if not rec.cards:
        print("No cards found in the photo.")
        return 0
    print(f"{len(rec.cards)} cards ({rec.width}×{rec.height}):")
    for c in rec.cards:
        alt = ", ".join(f"{a} {p:.2f}" for a, p in c.alternatives[1:3])
        print(f"  {c.code:<4} {c.name_zh}  {c.confidence:.2f}" + (f"   (or {alt})" if c.confidence < 0.9 else ""))
    return 0
