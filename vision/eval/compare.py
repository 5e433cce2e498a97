"""`changpai compare A.json B.json`: two `changpai eval` reports of the same photos, photo by photo.

A share measured on 200 photos moves by a few points between seeds (evaluate.interval), so whether a candidate
model or setting is better is told by the photos on which the two differ: how many each gets right that the other
gets wrong, and how likely a split that uneven is when neither is better (McNemar's exact test: the photos that
differ fall to A or B as a fair coin would)."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path
from typing import Any


class CompareError(ValueError):
    """Reports that cannot be compared, said in one sentence."""


# what a photo being right means in each kind of report
OUTCOMES = {
    "recognizer": {"whole photo exact": lambda r: bool(r["exact"])},
    "hands": {"without repair": lambda r: r["without_repair"] == r["expected"],
              "with repair": lambda r: r["with_repair"] == r["expected"],
              "no wrong total on a legal win": lambda r: not (r["won"] and r["with_repair"] != r["expected"])},
}


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: the chance of a split of the differing photos at least this uneven when
    each would fall to A or B with probability one half."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2 ** n)


def _rows(path: str | Path) -> tuple[str, dict[str, dict[str, Any]]]:
    try:
        d = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise CompareError(f"No report at {path}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError, IsADirectoryError):
        raise CompareError(f"{path} is not a JSON report of `changpai eval`.") from None
    if isinstance(d, dict) and isinstance(d.get("per_photo"), list):
        kind, rows = "hands", d["per_photo"]
    elif isinstance(d, dict) and isinstance(d.get("per_image"), list):
        kind, rows = "recognizer", d["per_image"]
    else:
        raise CompareError(f"{path} is not a report of `changpai eval` (it has no per-photo rows).")
    try:
        return kind, {r["image"]: r for r in rows}
    except (KeyError, TypeError):
        raise CompareError(f"{path} has per-photo rows without the photo's name.") from None


def compare(a: str | Path, b: str | Path) -> dict[str, Any]:
    """Per outcome of the reports' kind: photos right in each, right in one only (named), McNemar's p."""
    kind_a, rows_a = _rows(a)
    kind_b, rows_b = _rows(b)
    if kind_a != kind_b:
        raise CompareError(f"{a} is a {kind_a} report and {b} a {kind_b} one: compare two of one kind "
                           "(`changpai eval DIR`, or `changpai eval DIR --hands`).")
    both = sorted(set(rows_a) & set(rows_b))
    if not both:
        raise CompareError(f"{a} and {b} have no photo in common: compare reports of the same photos.")
    out: dict[str, Any] = {"kind": kind_a, "photos": len(both), "only_in_a": len(set(rows_a) - set(rows_b)),
                           "only_in_b": len(set(rows_b) - set(rows_a)), "outcomes": {}}
    for name, right in OUTCOMES[kind_a].items():
        try:
            ra = {p: right(rows_a[p]) for p in both}
            rb = {p: right(rows_b[p]) for p in both}
        except KeyError as e:
            raise CompareError(f"The reports' rows lack {e} for '{name}'.") from None
        a_only = [p for p in both if ra[p] and not rb[p]]
        b_only = [p for p in both if rb[p] and not ra[p]]
        out["outcomes"][name] = {"a": sum(ra.values()), "b": sum(rb.values()), "right_in_a_only": a_only,
                                 "right_in_b_only": b_only, "p": round(mcnemar_p(len(a_only), len(b_only)), 4)}
    return out


def _name(image: str) -> str:
    """A photo as the reports name it, without the images/ folder and the extension (val/000041)."""
    p = Path(image)
    parts = p.with_suffix("").parts
    return "/".join(parts[1:] if parts[0] == "images" and len(parts) > 1 else parts)


def format_comparison(c: dict[str, Any], a: str, b: str) -> str:
    lines = [f"{c['photos']} photos in both reports (A {a}, B {b})"
             + (f"; {c['only_in_a']} only in A and {c['only_in_b']} only in B, left out" if c["only_in_a"] or c["only_in_b"] else "")]
    for name, o in c["outcomes"].items():
        n_a, n_b = len(o["right_in_a_only"]), len(o["right_in_b_only"])
        verdict = ("the same photos" if n_a == n_b == 0 else
                   f"{'A' if n_a > n_b else 'B'} better at the 5 % level" if o["p"] < 0.05 else "no difference shown at the 5 % level")
        lines.append(f"  {name}: A {o['a']}, B {o['b']}; right in A only {n_a}, in B only {n_b}; McNemar p = {o['p']:.3f} "
                     f"({verdict})")
        for who, photos in (("A", o["right_in_a_only"]), ("B", o["right_in_b_only"])):
            if photos:
                lines.append(f"    right in {who} only: " + ", ".join(_name(p) for p in photos[:12])
                             + (f" and {len(photos) - 12} more" if len(photos) > 12 else ""))
    return "\n".join(lines)
