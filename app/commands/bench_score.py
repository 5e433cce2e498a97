"""`changpai bench-score`: hands/second of best-reading scoring, and the slowest hand found."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hands", type=int, default=2000, help="random winning hands per run")
    p.add_argument("--repeats", type=int, default=5, help="runs; the median is reported")
    p.add_argument("--seed", type=int, default=1, help="seed of the random hands (default 1)")
    p.add_argument("--json", metavar="OUT", help="also write the figures to this JSON file")


def run(args: argparse.Namespace) -> int:
    from scoring.bench import main_json

    r = main_json(args.json, n_hands=args.hands, repeats=args.repeats, seed=args.seed)
    print(f"best-reading scoring: {r['hands_per_s_median']} hands/s median "
          f"({r['hands']} hands × {r['repeats']} runs: {r['hands_per_s_all']})")
    print(f"worst case: {r['worst_case_ms']} ms, {r['worst_case_readings']} readings "
          f"({r['worst_case_ruleset']}: {r['worst_case_hand']})")
    return 0
