"""`changpai label DIR`: auto-label card photos for review and training."""

from __future__ import annotations

import argparse
import json
import os

from vision import DEFAULT_MODEL_NAME

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="folder of photos (searched recursively)")
    p.add_argument("--out", help="output folder (default DIR/labels-changpai)")
    p.add_argument("--format", default="yolo-obb", choices=["yolo-obb", "coco", "label-studio"], help="label format (default yolo-obb)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: one per core)")
    p.add_argument("--min-conf", type=float, default=0.8, help="cards below this confidence are flagged for review")
    p.add_argument("--model", help=f"model folder (default models/{DEFAULT_MODEL_NAME})")
    p.add_argument("--overwrite", action="store_true", help="replace label files a person edited, and redo done images")
    p.add_argument("--dask", metavar="SCHEDULER", nargs="?", const="local",
                   help="run recognitions on a Dask cluster (address tcp://host:8786), or 'local'")


def run(args: argparse.Namespace) -> int:
    from vision.label.labelling import dask_mapper, label

    if not 0 <= args.min_conf <= 1:
        raise UserError("--min-conf must be between 0 and 1.")
    mapper = None
    if args.dask:
        try:
            mapper = dask_mapper(None if args.dask == "local" else args.dask)
        except ImportError:
            raise UserError("--dask needs the distributed package: pip install 'dask[distributed]'.") from None
    try:
        s = label(args.dir, args.out, args.format, args.workers, args.min_conf, args.model, args.overwrite, mapper=mapper)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    print(f"images {s.images}: labelled {s.labelled}, already done {s.resumed}, skipped {len(s.skipped)}; "
          f"cards {s.cards}, flagged for review {s.flagged}")
    for f, why in s.skipped:
        print(f"  skipped {f}: {why}")
    for f in s.kept_edited:
        print(f"  kept {f}: edited since changpai wrote it (use --overwrite to replace)")
    out = args.out or os.path.join(args.dir, "labels-changpai")
    print(f"review page: {os.path.join(out, 'review.html')}")
    if s.images == 0:
        print(json.dumps({"note": "no images found (jpg, jpeg, heic, png, webp, bmp, tif; any letter case)"}))
    return 0
