"""Repair a recognized hand with the classifier's alternatives (DESIGN.md data flow).

When the top-1 codes make an impossible hand (too many of a kind) or no legal win, the least
confident cards' alternatives are searched for hands that are legal wins. A repair is applied only
when it is clearly the best explanation: its likelihood beats every other repaired reading by a
margin, and it is always reported.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import HandError
from .hand import build_hand
from .messages import message
from .score import ScoreResult, score_hand


@dataclass
class Candidate:
    """One recognized card: its alternatives as (code, probability), best first."""

    alternatives: list[tuple[str, float]]
    index: int = 0  # position in the recognition, for reporting

    @property
    def code(self) -> str:
        return self.alternatives[0][0]


@dataclass
class Change:
    index: int
    old: str
    new: str
    p_old: float
    p_new: float

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "from": self.old, "to": self.new, "p_from": round(self.p_old, 4), "p_to": round(self.p_new, 4)}


@dataclass
class RepairResult:
    codes: list[str]  # the concealed codes used
    result: ScoreResult | None
    changes: list[Change] = field(default_factory=list)
    reason: str = ""
    ambiguous: list[list[Change]] = field(default_factory=list)
    error: str | None = None


def _try(codes: list[str], kw: dict[str, Any]) -> ScoreResult | None:
    try:
        res = score_hand(build_hand(concealed=codes, **kw))
    except HandError:
        return None
    return res


def repair(cands: list[Candidate], hand_kwargs: dict[str, Any] | Callable[[list[str]], dict[str, Any]], want_win: bool = True,
           max_cards: int = 6, max_changes: int = 2, min_p: float = 0.01, margin: float = 3.0) -> RepairResult:
    """Score the top-1 hand; if it is impossible or (when ``want_win``) no win, search alternatives.

    ``hand_kwargs`` go to ``build_hand`` (jiang, declared, ruleset, win, …) except ``concealed``; or a function
    giving them for each set of concealed codes tried (context that holds only when its cards are there, such as
    the winning card).
    """
    top = [c.code for c in cands]

    def kwargs(codes: list[str]) -> dict[str, Any]:
        return dict(hand_kwargs(codes) if callable(hand_kwargs) else hand_kwargs)

    kw = kwargs(top)
    first_error = None
    try:
        base = score_hand(build_hand(concealed=top, **kw))
    except HandError as e:
        base, first_error = None, message(e)
    if base is not None and (base.is_win or not want_win):
        return RepairResult(top, base)
    why = first_error or "the recognized cards do not form a winning hand"
    # least confident first; only cards with real alternatives
    order = sorted(range(len(cands)), key=lambda i: cands[i].alternatives[0][1])
    pool = [i for i in order if len(cands[i].alternatives) > 1 and cands[i].alternatives[1][1] >= min_p][:max_cards]
    found: list[tuple[float, list[Change], ScoreResult]] = []
    seen_codes: set[tuple[str, ...]] = set()
    for k in range(1, max_changes + 1):
        for idxs in itertools.combinations(pool, k):
            options = [[a for a in cands[i].alternatives[1:] if a[1] >= min_p] for i in idxs]
            for choice in itertools.product(*options):
                codes = list(top)
                changes = []
                cost = 0.0
                for i, (code, p) in zip(idxs, choice, strict=True):
                    p0 = cands[i].alternatives[0][1]
                    codes[i] = code
                    changes.append(Change(cands[i].index, cands[i].code, code, p0, p))
                    cost += math.log(max(p0, 1e-9)) - math.log(max(p, 1e-9))
                key = tuple(sorted(codes))
                if key in seen_codes:
                    continue
                seen_codes.add(key)
                res = _try(codes, kwargs(codes))
                if res is not None and (res.is_win or not want_win):
                    found.append((cost, changes, res))
        if found:
            break  # prefer the fewest changes
    if not found:
        return RepairResult(top, base, reason=why, error=None if base is not None else first_error)
    found.sort(key=lambda f: f[0])
    best = found[0]
    if len(found) > 1 and found[1][0] - best[0] < math.log(margin) and found[1][2].total != best[2].total:
        # two explanations, not clearly one: keep the top-1 reading, report the choices
        return RepairResult(top, base, reason=f"{why}; several repairs fit equally well", ambiguous=[f[1] for f in found[:3]],
                            error=None if base is not None else first_error)
    codes = list(top)
    for ch, i in zip(best[1], [c.index for c in best[1]], strict=True):
        pos = next(j for j, c in enumerate(cands) if c.index == i)
        codes[pos] = ch.new
    return RepairResult(codes, best[2], best[1], reason=why)
