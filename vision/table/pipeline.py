"""Photo → hu: recognition, table layout, hand, repair with alternatives, score (issue: photo to hu).

What a photograph cannot show comes from the context (R9); every default taken is listed in
``PhotoScore.defaults`` so the table can confirm it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from scoring.cards import CODES, COPIES, EXTRAS, N_PLAIN
from scoring.messages import Msg
from scoring.rulesets import Ruleset, get_ruleset
from vision.infer.deck_count import within_deck
from vision.table.changes import (
    OTHER_READING,
    RECOUNT,
    _group_apart,
    _groups_in_hand,
    _other_readings,
    _recount,
    _row_in_hand,
    doubtful_reading,
)
from vision.table.context import PhotoContext, PhotoError, PhotoScore
from vision.table.hand_score import _rank, score_as_seen
from vision.table.knobs import TABLE
from vision.types import Card, Recognition

DECK_KEYS = ("deck_no_extras", "deck_copies", "deck_no_extras_copies")  # the lines deck_readings says of the cards


def score_recognition(rec: Recognition, ctx: PhotoContext, repair_on: bool = True) -> PhotoScore:
    """Score the photo's cards as they lie (score_as_seen). When that is not a clean win and repairs are on,
    the fewest changes that make one are tried (_recount: boxes the detector left out added, doubtful boxes
    left out); reported as repairs (from/to ``none``), and a card left out stays on the photo marked ×. In a legal
    win, equal cards lying a little apart from the hand may be a declared group (_group_apart), repairs on or off;
    with repairs on, it then gets a ``check:`` warning for each other total one change away (_other_readings)."""
    rec, deck_said = deck_readings(rec, get_ruleset(ctx.ruleset, ctx.options))
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
        ps.warnings[0:0] = deck_said
        return ps
    # how the cards lie is read the same with repairs off: a group laid a little apart is no card read otherwise
    groups = _groups_in_hand(ps, ctx)
    apart = _group_apart(ps, groups)
    if apart is not None:
        ps, groups = apart, None  # other groups of the new reading are looked for again
    if repair_on:
        after_repairs = sum(w.startswith(RECOUNT) for w in ps.warnings)
        ps.warnings[after_repairs:after_repairs] = _other_readings(ps, rec, ctx, groups) + doubtful_reading(ps)
    ps.warnings[0:0] = deck_said  # first: the cards as this deck reads them, before anything else said of them
    return ps




def deck_readings(rec: Recognition, rs: Ruleset) -> tuple[Recognition, list[Msg]]:
    """The cards read as the deck the table plays with: where the ruleset's deck has no extras (nantong-double, and
    nantong-single without 喜儿: 30 faces, not the classifier's 35), a card read as 福禄寿禧财 is read as its likeliest
    other face, its readings' probabilities conditioned on that deck (divided by what the extras did not take). Said
    for each card as a ``check:``, since a card that looked most like an extra was read with little certainty and an
    extra may be left in the deck by mistake; a card with no other face among its readings stays as read (and the hand
    is refused for it, as before)."""
    if rs.uses_extras:
        return rec, []
    said: list[Msg] = []

    def in_deck(c, i: int | None):
        rest = [(a, p) for a, p in c.alternatives if a not in EXTRAS and a != "none"]
        if c.code not in EXTRAS or not rest:
            return c
        left = max(1e-6, 1 - sum(p for a, p in c.alternatives if a in EXTRAS))
        alts = [(a, round(min(1.0, p / left), 4)) for a, p in rest]
        if i is not None:
            new, p_new = alts[0]
            said.append(Msg("deck_no_extras", f"{OTHER_READING} card {i + 1} read as {c.code} ({c.confidence:.2f}) is "
                            f"counted as {new} ({p_new:.2f}): the {rs.name} deck has no 福禄寿禧财; look at that card",
                            i=i + 1, old=c.code, new=new, p_old=f"{c.confidence:.2f}", p_new=f"{p_new:.2f}", ruleset=rs.name))
        return replace(c, code=alts[0][0], confidence=alts[0][1], alternatives=alts)

    cards = _within_copies([in_deck(c, i) for i, c in enumerate(rec.cards)], said)
    spares = [in_deck(c, None) for c in rec.spares]  # a repair may add one: it is read by the same deck
    if not said and all(a is b for a, b in zip(spares, rec.spares, strict=True)):
        return rec, []
    return replace(rec, cards=cards, spares=spares), said


def _within_copies(cards: list[Card], said: list[Msg]) -> list[Card]:
    """Cards read as extras and counted as their likeliest other face can make a fifth copy of a kind, which the
    recognizer's reading within the deck (vision.infer.deck_count) could not see, not knowing the deck has no extras.
    The cards are read together again within the 30 faces' copies, over the readings each card has; a card counted
    otherwise is said as a ``check:``. A card whose readings hold no face with room stays as read (and the hand is
    refused for it, as before)."""
    plain = CODES[:N_PLAIN]
    if all(n <= COPIES for n in Counter(c.code for c in cards if c.code in plain).values()):
        return cards
    p = np.zeros((len(cards), N_PLAIN))
    for i, c in enumerate(cards):
        for a, q in c.alternatives:
            if a in plain:
                p[i, plain.index(a)] = q
    out = list(cards)
    for i, j in enumerate(within_deck(p, plain, COPIES)):
        c, new = cards[i], plain[j]
        if new != c.code and p[i, j] > 0:
            out[i] = c.read_as(new)
            p_new = f"{out[i].confidence:.2f}"
            extra = next((k for k, m in enumerate(said) if m.key == "deck_no_extras" and m.values["i"] == i + 1), None)
            if extra is None:
                said.append(Msg("deck_copies", f"{OTHER_READING} card {i + 1} read as {c.code} ({c.confidence:.2f}) is "
                                f"counted as {new} ({p_new}): a deck has {COPIES} {c.code}; look at that card",
                                i=i + 1, old=c.code, new=new, p_old=f"{c.confidence:.2f}", p_new=p_new, copies=COPIES))
                continue
            v = said[extra].values  # read as an extra first: one line says both why
            said[extra] = Msg("deck_no_extras_copies", f"{OTHER_READING} card {i + 1} read as {v['old']} ({v['p_old']}) is "
                              f"counted as {new} ({p_new}): the {v['ruleset']} deck has no 福禄寿禧财, and {COPIES} other "
                              f"cards are read as {c.code}; look at that card", i=i + 1, old=v["old"], new=new,
                              p_old=v["p_old"], p_new=p_new, ruleset=v["ruleset"], copies=COPIES, face=c.code)
    return out

