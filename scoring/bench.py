"""Benchmark of best-reading scoring: hands/second over random winning hands, and the worst case.

Run: ``changpai bench-score [--hands N] [--repeats R] [--json OUT]``.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from typing import Any

from .api import score_dict
from .random_hands import random_winning_hand

EXTRAS = ["fu", "lu", "shou", "xi", "cai"]

# Hands known to have many readings: 111222333 of two suits plus 文钱, and variants.
HARD_HANDS: list[dict[str, Any]] = [
    {"jiang": ["5t", "5w"], "concealed": "111222333t 111222333w 123b 5b 5b".split(), "win": {"card": "3t"}},
    {"jiang": ["9t", "9w"], "concealed": "111222333b 111222333w 123t 4b 4b".split(), "win": {"card": "2b"}},
    {"jiang": ["7t", "8w"], "concealed": "111122223333b 444w 456w 666t 6t".split(), "win": {"card": "3b"}},
    {"jiang": ["7t", "8w"], "concealed": "123456789t 123456789w 123b 9b 9b".split(), "win": {"card": "5t"}},
]


def _rugao_hand(rng: random.Random, n_wild: int) -> dict[str, Any]:
    d = random_winning_hand(rng, "nantong-double")
    d["ruleset"] = "rugao"
    conc = d["concealed"]
    idx = rng.sample(range(len(conc)), n_wild)
    for i, extra in zip(idx, rng.sample(EXTRAS, n_wild), strict=True):
        conc[i] = extra
    win = d["win"]["card"]
    if win not in conc:
        d["win"]["card"] = next(c for c in conc if c not in EXTRAS)
    d["from_deal"] = [k for k in d["from_deal"] if k in conc or any(g["cards"][0] == k for g in d["declared"])]
    return d


def hands(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = i % 10
        if r < 6:
            out.append(random_winning_hand(rng, "nantong-double", p_seq=rng.choice([0.0, 0.3, 0.6, 1.0])))
        elif r < 9:
            out.append(random_winning_hand(rng, "nantong-single", p_seq=rng.random()))
        else:
            out.append(_rugao_hand(rng, rng.randint(1, 2)))
    return out


def _time_one(d: dict[str, Any]) -> tuple[float, int]:
    t = time.perf_counter()
    res = score_dict(d)
    return time.perf_counter() - t, res.readings


def run(n_hands: int = 2000, repeats: int = 5, seed: int = 1) -> dict[str, Any]:
    hs = hands(n_hands, seed)
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for d in hs:
            score_dict(d)
        rates.append(len(hs) / (time.perf_counter() - t0))
    # worst case: slowest random hand, the hard hands, and rugao hands with 3–5 wilds
    rng = random.Random(seed + 7)
    probes = list(hs) + HARD_HANDS + [_rugao_hand(rng, k) for k in (3, 3, 4, 4, 5, 5) for _ in range(20)]
    worst_ms, worst_hand, worst_readings = 0.0, None, 0
    for d in probes:
        ms = min(_time_one(d)[0] for _ in range(3)) * 1000
        if ms > worst_ms:
            worst_ms, worst_hand = ms, d
            worst_readings = _time_one(d)[1]
    return {
        "hands": len(hs),
        "repeats": repeats,
        "hands_per_s_median": round(statistics.median(rates)),
        "hands_per_s_all": [round(r) for r in rates],
        "worst_case_ms": round(worst_ms, 2),
        "worst_case_readings": worst_readings,
        "worst_case_hand": " ".join(worst_hand["concealed"]) if worst_hand else None,
        "worst_case_ruleset": worst_hand.get("ruleset", "nantong-double") if worst_hand else None,
    }


def main_json(out: str | None, **kw: Any) -> dict[str, Any]:
    r = run(**kw)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(r, f, ensure_ascii=False, indent=2)
    return r
