"""A photo holds one deck: no kind read more often than a deck has copies of it.

A deck holds 4 copies of each plain kind and 1 of each extra (RULES.md, the cards' table; scoring.cards), and a
photo at a table shows cards of one deck. When a photo's cards, each read on its own, name some kind more often than
that, the cards are read again together: each gets the code that makes the sum of −log p over the photo least with
no kind taken more often than its copies (an assignment problem, one slot per copy:
scipy.optimize.linear_sum_assignment). A card the classifier confuses with a near kind (一万 for 千字 on a deck it
never saw) then goes to the kind whose copies are not all taken, and the cards it is surest of keep theirs.

The extras are not bounded by default (``Knobs.extra_copies`` 0): whether a deck holds them at all is the ruleset's
word, which the photo → hu path knows and this reading does not; there a second card read as an extra the hand holds
is counted as one it lacks, or as its likeliest plain face in a deck without extras (vision.table).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scoring.cards import COPIES, EXTRAS

BIG = 1 << 16  # copies without bound


def copies_of(code: str, plain: int, extra: int) -> int:
    """How many copies of ``code`` a deck holds: ``plain`` for the 30 plain kinds, ``extra`` for the five extras (0:
    as many as there are cards, no bound)."""
    return (extra or BIG) if code in EXTRAS else plain


def within_deck(probs: np.ndarray, codes: Sequence[str], plain: int = COPIES, extra: int = 0) -> np.ndarray:
    """Each card's code index (into ``codes``) read together: the most likely code of each card when no kind is read
    more often than its copies; otherwise the assignment of least −log p in which none is. ``plain`` 0: every card's
    most likely code, always. Cards more than a deck's copies in all keep their own readings."""
    best = probs.argmax(1) if len(probs) else np.zeros(0, np.int64)
    if plain <= 0 or not len(probs):
        return best
    caps = np.minimum([copies_of(c, plain, extra) for c in codes], len(probs))
    if (np.bincount(best, minlength=len(codes)) <= caps).all() or len(probs) > caps.sum():
        return best
    from scipy.optimize import linear_sum_assignment  # here: most photos never need it, and its import takes a while

    slot_code = np.repeat(np.arange(len(codes)), caps)
    cost = -np.log(np.clip(probs[:, slot_code], 1e-12, 1.0))
    rows, slots = linear_sum_assignment(cost)
    out = best.copy()
    out[rows] = slot_code[slots]
    return out


__all__ = ["copies_of", "within_deck"]
