"""`changpai bench-synth`: scenes per second of `changpai synth` (median of runs), and peak memory."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=60, help="scenes per run")
    p.add_argument("--repeats", type=int, default=3, help="timed runs; the median is reported (default 3)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: one per core)")
    p.add_argument("--size", default="1280x960", help="image size WxH (default 1280x960)")
    p.add_argument("--json", metavar="OUT", help="also write the figures to this JSON file")


def run(args: argparse.Namespace) -> int:
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run

    w, h = (int(v) for v in args.size.split("x"))
    rates = []
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory() as d:
            job = Job(os.path.join(d, "b"), "detect", 1000 + r, args.n, ("classic", "bold", "fine", "folk"), None, 0.1, w, h)
            t = time.perf_counter()
            synth_run(job, workers=args.workers, progress=False)
            rates.append(args.n / (time.perf_counter() - t))
    peak_mb = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    res = {"scenes_per_s_median": round(statistics.median(rates), 2), "runs": [round(x, 2) for x in rates], "n": args.n,
           "workers": args.workers, "size": args.size, "peak_rss_mb": round(peak_mb, 1)}
    print(f"synth: {res['scenes_per_s_median']} scenes/s median at {args.size} with {args.workers} workers "
          f"(runs {res['runs']}; peak memory per process {res['peak_rss_mb']} MB)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0
