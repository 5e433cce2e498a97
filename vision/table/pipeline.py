"""Photo → hu: recognition, table layout, hand, repair with alternatives, score (issue: photo to hu).

What a photograph cannot show comes from the context (R9); every default taken is listed in
``PhotoScore.defaults`` so the table can confirm it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vision.infer.recognize import recognize
from vision.table.changes import RECOUNT, _group_apart, _groups_in_hand, _other_readings, _recount, _row_in_hand
from vision.table.context import PhotoContext, PhotoError, PhotoScore
from vision.table.hand_score import _rank, score_as_seen
from vision.table.knobs import TABLE
from vision.types import Recognition


def score_recognition(rec: Recognition, ctx: PhotoContext, repair_on: bool = True) -> PhotoScore:
    """Score the photo's cards as they lie (score_as_seen). When that is not a clean win and repairs are on,
    the fewest changes that make one are tried (_recount: boxes the detector left out added, doubtful boxes
    left out); reported as repairs (from/to ``none``), and a card left out stays on the photo marked ×. In a legal
    win, equal cards lying a little apart from the hand may be a declared group (_group_apart), repairs on or off;
    with repairs on, it then gets a ``check:`` warning for each other total one change away (_other_readings)."""
    error: PhotoError | None = None
    try:
        ps: PhotoScore | None = score_as_seen(rec, ctx, TABLE.code_changes if repair_on else 0)
    except PhotoError as e:
        ps, error = None, e
    if ctx.is_win and ps is not None and ps.result is not None and not ps.result.is_win:
        ps = _row_in_hand(ps, ctx) or ps  # how the cards lie, before any card is changed
    rank = None if ps is None else _rank(ps, ctx)
    if repair_on and ctx.is_win and (rank is None or rank[:2] != (0, 0)):
        better = _recount(rec, ctx, mixed=rank is None or rank[0] > 0)
        if better is not None:
            ps = better
    if ps is None:
        raise error  # type: ignore[misc]
    if ps.result is None or not ps.result.is_win:
        return ps
    # how the cards lie is read the same with repairs off: a group laid a little apart is no card read otherwise
    groups = _groups_in_hand(ps, ctx)
    apart = _group_apart(ps, groups)
    if apart is not None:
        ps, groups = apart, None  # other groups of the new reading are looked for again
    if repair_on:
        after_repairs = sum(w.startswith(RECOUNT) for w in ps.warnings)
        ps.warnings[after_repairs:after_repairs] = _other_readings(ps, rec, ctx, groups)
    return ps




def score_photo(image: str | Path | bytes | np.ndarray, ctx: PhotoContext, model: str | Path | None = None,
                repair_on: bool = True) -> PhotoScore:
    rec = recognize(image, model)
    return score_recognition(rec, ctx, repair_on)
