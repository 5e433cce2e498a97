"""`changpai bench-label DIR`: labelling throughput and label accuracy against synthetic ground truth."""

from __future__ import annotations

import argparse
import json
import os


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="a `changpai synth` folder (images + gt/)")
    p.add_argument("--n", type=int, default=60, help="synthetic photos to label (default 60)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: one per core)")
    p.add_argument("--model", help="model folder (default: the released one)")
    p.add_argument("--json", metavar="OUT", help="also write the figures to this JSON file")


def run(args: argparse.Namespace) -> int:
    from vision.label.labelling import bench

    r = bench(args.dir, args.n, args.workers, args.model)
    print(f"label: {r['images_per_s']} images/s with {r['workers']} workers ({r['images']} images in {r['seconds']} s); "
          f"cards found {r['recall'] * 100:.1f} %, extra {100 - r['precision'] * 100:.1f} %, "
          f"codes right {r['code_accuracy_of_found'] * 100:.1f} %")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    return 0
