"""Photo → hu with a second reading: a winning hand whose first reading is no clean win is read again with the photo's
own BatchNorm statistics (vision.infer.adapt), and the better reading is scored.

A deck the classifier never saw is misread the same way card after card (its ink, paper and drawing shift what the
classifier sees); normalizing with the statistics of the photo's own crops moves many of those cards back. A hand
read cleanly (a legal win, no card repaired, no ``check:``) is not read again: on the decks the classifier knows that
is most photos, and their time and totals stay the first reading's. Otherwise the reading kept is the one that is a
legal win, then the one with fewer cards repaired (a finished hand is a win; each repair overrules the classifier),
the second on a tie; where the two readings give other totals, a ``check:`` says the other one, and a ``check:`` of
the first reading is not lost when the second gives its total (docs/recognizer.md).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from scoring.messages import Msg
from vision.infer.recognize import recognize_and_again
from vision.table.changes import OTHER_READING
from vision.table.context import PhotoContext, PhotoError, PhotoScore
from vision.table.pipeline import score_recognition
from vision.types import Recognition


def clean(ps: PhotoScore | None) -> bool:
    """A legal win read with no card repaired and no ``check:`` warning."""
    return (ps is not None and ps.result is not None and ps.result.is_win and not ps.repair.changes
            and not any(str(w).startswith(OTHER_READING) for w in ps.warnings))


def _rank(ps: PhotoScore | None) -> tuple[int, int]:
    if ps is None or ps.result is None:
        return 2, 0
    return int(not ps.result.is_win), len(ps.repair.changes)


def _scored(rec: Recognition, ctx: PhotoContext) -> tuple[PhotoScore | None, PhotoError | None]:
    try:
        return score_recognition(rec, ctx, repair_on=True), None
    except PhotoError as e:
        return None, e


def _codes(ps: PhotoScore) -> Counter:
    h = ps.hand
    return Counter(list(h.get("concealed", [])) + [c for d in h.get("declared", []) for c in d["cards"]] + list(h.get("jiang", [])))


def score_read_twice(rec: Recognition, ctx: PhotoContext, again: Callable[[], Recognition] | None,
                     repair_on: bool = True) -> PhotoScore:
    """score_recognition of ``rec``; for a claimed win that is no clean win, with repairs on and ``again`` given (the
    photo read with its own statistics, vision.infer.recognize.recognize_and_again), the better of the two readings."""
    if again is None or not repair_on or not ctx.is_win:
        return score_recognition(rec, ctx, repair_on)
    first, error = _scored(rec, ctx)
    if clean(first):
        return first  # type: ignore[return-value]
    t = time.perf_counter()
    second, _ = _scored(again(), ctx)
    ms = round((time.perf_counter() - t) * 1000, 1)
    if first is None and second is None:
        raise error  # type: ignore[misc]
    chosen, other = (second, first) if _rank(second) <= _rank(first) else (first, second)
    assert chosen is not None
    chosen.timings_ms["second_reading"] = ms
    if other is None or other.result is None:
        return chosen
    mine, theirs = chosen.result.total, other.result.total  # type: ignore[union-attr]
    if mine != theirs or chosen.result.is_win != other.result.is_win:  # type: ignore[union-attr]
        here, there = sorted((_codes(chosen) - _codes(other)).elements()), sorted((_codes(other) - _codes(chosen)).elements())
        a, b = " ".join(here) or "-", " ".join(there) or "-"
        if chosen is second:
            key, said = "check_as_first_read", "as first read"
        else:
            key, said = "check_read_again", "read again with this photo's own ink and paper"
        chosen.warnings.append(Msg(key, f"{OTHER_READING} {said}, the cards give {theirs} 胡, with {b} where this "
                                   f"reading has {a}: look at those cards", total=theirs, here=here, there=there))
    elif chosen is second and not any(str(w).startswith(OTHER_READING) for w in chosen.warnings) and \
            any(str(w).startswith(OTHER_READING) for w in other.warnings):
        chosen.warnings.append(Msg("check_first_doubted", f"{OTHER_READING} as first read, this photo's cards left "
                                   "another legal win one change away; read again they give this total: look at the cards "
                                   "read with little certainty"))
    return chosen


def score_photo(image: str | Path | bytes | np.ndarray, ctx: PhotoContext, model: str | Path | None = None,
                repair_on: bool = True) -> PhotoScore:
    """Photo → hu in one call: the photo recognized and scored, read again with its own statistics when the model
    says so and the first reading is no clean win."""
    rec, again = recognize_and_again(image, model)
    return score_read_twice(rec, ctx, again, repair_on)
