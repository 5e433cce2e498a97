"""`changpai bench-score`: hands/second of best-reading scoring (the engine alone, and through `changpai score-hand
--file --json`, start-up excluded), and the slowest hand found."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hands", type=int, default=2000, help="random winning hands per run of the engine")
    p.add_argument("--cli-hands", type=int, default=10000, help="random winning hands in the file the CLI scores")
    p.add_argument("--repeats", type=int, default=5, help="runs; the median is reported")
    p.add_argument("--seed", type=int, default=1, help="seed of the random hands (default 1)")
    p.add_argument("--json", metavar="OUT", help="also write the figures to this JSON file")


def cli_rate(n_hands: int, repeats: int, seed: int) -> dict:
    """``changpai score-hand --file HANDS --json`` and ``--jsonl`` run in this process on a file of ``n_hands`` random
    winning hands, output to the null device: hands/second, the interpreter's and the command's start-up excluded."""
    from scoring.bench import hands

    from ..cli import main

    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "hands.json"
        f.write_text(json.dumps(hands(n_hands, seed), ensure_ascii=False), encoding="utf-8")
        out: dict[str, list[float]] = {"json": [], "jsonl": []}
        for _ in range(repeats):
            for flag in out:
                with open(os.devnull, "w", encoding="utf-8") as null, contextlib.redirect_stdout(null):
                    t = time.perf_counter()
                    code = main(["score-hand", "--file", str(f), f"--{flag}"])
                    out[flag].append(n_hands / (time.perf_counter() - t))
                if code != 0:
                    raise RuntimeError(f"score-hand exited {code} on random winning hands")
    return {f"cli_{k}_hands_per_s_median": round(statistics.median(v)) for k, v in out.items()} | \
        {f"cli_{k}_hands_per_s_all": [round(x) for x in v] for k, v in out.items()} | {"cli_hands": n_hands}


def run(args: argparse.Namespace) -> int:
    from scoring.bench import run as engine

    r = engine(n_hands=args.hands, repeats=args.repeats, seed=args.seed)
    print(f"engine, best-reading scoring: {r['hands_per_s_median']} hands/s median "
          f"({r['hands']} hands × {r['repeats']} runs: {r['hands_per_s_all']})")
    print(f"worst case: {r['worst_case_ms']} ms, {r['worst_case_readings']} readings "
          f"({r['worst_case_ruleset']}: {r['worst_case_hand']})")
    r |= cli_rate(args.cli_hands, args.repeats, args.seed)
    print(f"through the CLI (score-hand --file, {r['cli_hands']} hands, start-up excluded): "
          f"--json {r['cli_json_hands_per_s_median']} hands/s median, --jsonl {r['cli_jsonl_hands_per_s_median']}")
    if args.json:
        Path(args.json).write_text(json.dumps(r, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0
