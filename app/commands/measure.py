"""`changpai measure --model M --tag T`: every eval behind the README's table (vision.eval.suite), its reports
written as OUT/<entry>_<tag>.json and .txt, then their headline figures in one table (and OUT/measure_<tag>.json)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="model folder (default: the released one)")
    p.add_argument("--tag", required=True, help="the reports' suffix, e.g. v22")
    p.add_argument("--out", help="folder of the reports (default docs/eval/avx2; with --val, runs/val)")
    p.add_argument("--val", action="store_true", help="the val photos candidates are chosen on instead (the tight val "
                   "sets, the loose val scenes, the val hands: plain, holding extras, of the taught families and of the "
                   "family never taught, laid tight); never the test sets or the foreign deck")
    p.add_argument("--only", action="append", metavar="NAME", help="only this entry or group (foreign, families, tight, "
                   "transfer, own; with --val: val_tight, val_loose, val_hands; repeatable)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="evals run at once, each held to its own core where there are enough (default 2); "
                   "the latency figures (12 MP, photo → total) run alone after them")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="as `changpai eval --set`")
    p.add_argument("--skip-missing", action="store_true", help="measure what is here; without it, photos not on this "
                   "machine stop the run with the commands that render them")
    p.add_argument("--summary", action="store_true", help="only print the table of the reports already written for --tag")


def run(args: argparse.Namespace) -> int:
    from vision.eval.suite import format_summary, missing, read_summaries, select

    try:
        entries = select(args.only, args.val)
    except ValueError as e:
        raise UserError(str(e)) from None
    out = Path(args.out or ("runs/val" if args.val else "docs/eval/avx2"))
    if not args.summary:
        if args.jobs < 1:
            raise UserError("--jobs must be at least 1.")
        gone = missing(entries)
        if gone and not args.skip_missing:
            raise UserError(f"{len(gone)} photo folder(s) are not here ({', '.join(e.photos for e in gone)}); render the "
                            f"project's own with: " + "; ".join(e.make for e in gone if e.make) + " (or pass --skip-missing).")
        entries = [e for e in entries if e not in gone]
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"Cannot write the reports to {out} ({e.strerror}).") from None
        failed = _run_all(entries, args, out)
        if failed:
            print("changpai: these evals failed (their .txt says why): " + ", ".join(failed), file=sys.stderr)
    rows = read_summaries(entries, out, args.tag)
    if not rows:
        raise UserError(f"No reports for --tag {args.tag} in {out}.")
    print(format_summary(rows))
    if any(not e.alone for e, _ in rows) and (args.summary or args.jobs > 1):
        print(f"(p50: {', '.join(e.name for e, _ in rows if e.alone) or 'no row'} measured alone on the whole machine; "
              "the other rows run side by side, a core each, with --jobs 2 or more: one core's latency, not the targets')")
    rows = read_summaries(select(val=args.val), out, args.tag)  # the summary file: every report of the tag, not only these
    summary_file = out / f"measure_{'val_' if args.val else ''}{args.tag}.json"
    summary_file.write_text(json.dumps({"model": args.model, "settings": args.set, "reports": {e.name: s for e, s in rows}},
                                       indent=1, ensure_ascii=False))
    print(f"summary: {summary_file}")
    return 0 if args.summary or not failed else 1


def _run_all(entries, args: argparse.Namespace, out: Path) -> list[str]:
    """Each entry's eval as a subprocess, ``args.jobs`` at once, each held to a core of its own when there are enough;
    then the latency entries (Entry.alone) one at a time on the whole machine. The names of those that failed."""
    import queue

    from tqdm import tqdm

    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    free: queue.Queue = queue.Queue()  # the cores no eval holds (None: not pinned)
    for k in range(args.jobs):
        free.put(cores[k] if len(cores) >= args.jobs > 1 else None)
    failed: list[str] = []

    def one(e, core: int | None) -> None:
        cmd = [sys.executable, "-m", "app.cli", "eval", e.photos, *e.args, "--quiet", "--json", str(out / f"{e.name}_{args.tag}.json")]
        cmd += ["--model", args.model] if args.model else []
        cmd += [a for s in args.set for a in ("--set", s)]
        text = out / f"{e.name}_{args.tag}.txt"
        with open(text, "w") as log:
            pre = None if core is None else (lambda: os.sched_setaffinity(0, {core}))
            done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pre)
        if done.returncode:
            failed.append(e.name)

    def pooled(e) -> None:
        core = free.get()
        try:
            one(e, core)
        finally:
            free.put(core)

    bar = tqdm(total=len(entries), desc="measure", unit="eval")
    with ThreadPoolExecutor(args.jobs) as pool:
        for _ in pool.map(pooled, [e for e in entries if not e.alone]):
            bar.update()
    for e in [e for e in entries if e.alone]:
        one(e, None)
        bar.update()
    bar.close()
    return failed
