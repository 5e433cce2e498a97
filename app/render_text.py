"""Plain-text breakdown of a ScoreResult for the terminal (Chinese first)."""

from __future__ import annotations

import unicodedata

from scoring.hand import MELD_TAG
from scoring.score import TYPE_EN, TYPE_ZH, ScoreResult


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _pad(s: str, n: int) -> str:
    return s + " " * max(0, n - _width(s))


def render_result(res: ScoreResult, english: bool = False, all_readings: bool = False) -> str:
    lines = [f"{res.ruleset} · 将 {' '.join(res.jiang)} ({res.jiang_name})"]
    melds = []
    for m in res.best.melds:
        tag = MELD_TAG.get(m.how, m.how) if m.how != "concealed" else ""
        melds.append(f"{tag}{m.label}" if tag else m.label)
    if melds:
        lines.append("melds: " + " | ".join(melds))
    if res.is_win:
        t = TYPE_EN[res.hand_type] if english else f"{TYPE_ZH[res.hand_type]} {res.hand_type} hu"
        lines.append(f"{t}: {res.total} 胡" + (f"  (readings: {res.readings})" if res.readings > 1 else ""))
    else:
        lines.append(f"not a win · 未胡: group points {res.group_points} → {res.total} 胡")
    for it in res.items:
        label = it.label_en if english else it.label
        sign = f"{it.points:+d}"
        detail = f"  {it.detail}" if it.detail else ""
        lines.append(f"  {_pad(label, 18)} {sign:>6}  [{it.rule}]{detail}")
    lines.append(f"  {_pad('合计 total', 18)} {res.total:>6}")
    for note in res.notes:
        lines.append(f"note: {note}")
    if all_readings and res.all_readings:
        lines.append("readings:")
        for r in res.all_readings:
            lines.append(f"  {r.total:>5}  {TYPE_ZH[r.hand_type]}  " + " ".join(m.label for m in r.melds))
    return "\n".join(lines)
