"""Cards more or less, and the checks: a box the detector left out tried in the hand, a doubtful box tried left
out, groups lying close to the hand read as part of it or not; a change is taken only when it makes a clean legal
win that every equally small change agrees on, and another legal win one change away is named as a check."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from scoring.messages import Msg
from scoring.repair import Change
from vision.infer.geometry import quad_iou
from vision.infer.model import KNOBS, NOT_A_CARD
from vision.table.context import PhotoContext, PhotoError, PhotoScore
from vision.table.hand_score import score_as_seen, score_layout
from vision.table.knobs import TABLE
from vision.table.layout import apart_from_spacing, clusters, evenly_laid, groups_laid
from vision.types import Card, Recognition, boxes_en


def _row_in_hand(ps: PhotoScore, ctx: PhotoContext) -> PhotoScore | None:
    """A win whose cards as laid make no legal win, scored with a row of groups laid close together (layout.split_table:
    runs of 3–4 equal cards, laid as evenly as a row) as a row of the hand instead (_rows_of_groups), when that is a
    legal win (the lowest total of several), with a check: warning; None when there is none. A hand of more than 16
    cards is often laid in two rows, one of them sorted by kind (test hands_xier 000102: hh×3 5b×3 3b×3 beside a row
    with the fourth hh, read as three pongs on the table and "not a win", 30 instead of 90 from its true cards)."""
    rows = _rows_of_groups(ps, ctx)
    if not rows:
        return None
    row, other = min(rows, key=lambda t: t[1].result.total)
    codes = [ps.recognition.cards[i].code for i in row]
    other.warnings.insert(0, Msg("check_row_in_hand", f"{OTHER_READING} the {len(row)} cards lying in one row as groups "
                                 f"({' '.join(codes)}) are read as a row of the hand: as groups declared on the table the "
                                 "hand is no legal win: look at them", n=len(row), codes=codes))
    return other


def _group_apart(ps: PhotoScore, groups: list[tuple[list[list[int]], PhotoScore]]) -> PhotoScore | None:
    """The photo scored with 3–4 equal cards lying a little apart in the hand (``groups``: _groups_in_hand) as a group declared on
    the table, when that is a legal win with a lower total (the lowest of them), with a check: warning giving the total
    of the cards as part of the hand; None when there is none. Whether a group was declared is what a photo cannot
    show for sure, and its defaults never over-score (R9): on the 1,000 val photos (val_hands3, val_hands4) the two
    such photos with a wrong total (val_hands3 000515, val_hands4 000076) are read right so, and no right total
    changes."""
    lower = [(g, other) for g, other in groups if other.result.total < ps.result.total]
    if not lower:
        return None
    runs, other = min(lower, key=lambda t: t[1].result.total)
    total = ps.result.total
    if len(runs) == 1:
        code, n = ps.recognition.cards[runs[0][0]].code, len(runs[0])
        said = Msg("check_group_in_hand", f"{OTHER_READING} the {n} {code} lying a little apart from the hand are read as a "
                   f"group declared on the table; as part of the hand, the hand is a legal win of {total} 胡: look at them",
                   code=code, n=n, total=total)
    else:
        codes = [ps.recognition.cards[i].code for r in runs for i in r]
        said = Msg("check_groups_in_hand", f"{OTHER_READING} the {len(codes)} cards lying as groups beside the hand "
                   f"({' '.join(codes)}) are read as groups declared on the table; as part of the hand, the hand is a legal "
                   f"win of {total} 胡: look at them", n=len(codes), codes=codes, total=total)
    other.warnings.insert(0, said)
    return other


OTHER_READING = "check:"  # how another legal win one change away is reported


def _other_readings(ps: PhotoScore, rec: Recognition, ctx: PhotoContext,
                    groups: list[tuple[list[int], PhotoScore]] | None = None) -> list[str]:
    """One change to the cards as scored — a spare added, a doubtful card left out, equal cards lying a little
    apart in the hand taken as a declared group (_groups_in_hand) — that also makes a clean legal win, with another
    total: the table should look at that card (on the 270 val photos of changpai-v5 the first two name 6 of the 7
    wrong totals given on a legal win, and 46 of the 233 right ones). ``groups``: _groups_in_hand of ``ps`` when the
    caller has them already. A total another check: warning of ``ps`` names already (_group_apart's) is not named
    again."""
    named = {ps.result.total} | {w.values.get("total") for w in ps.warnings
                                 if isinstance(w, Msg) and w.startswith(OTHER_READING)}
    cards = [c for i, c in enumerate(ps.recognition.cards) if i not in ps.layout.ignored]
    taken = {tuple(map(tuple, c.quad)) for c in cards}
    base = replace(ps.recognition, cards=cards, spares=[c for c in rec.spares if tuple(map(tuple, c.quad)) not in taken])
    found: dict[int, Msg] = {}
    for m in _moves(base):
        other = _clean_win(_applied(base, (m,)), ctx)
        total = other.result.total if other is not None else None
        if total is None or total in named or total in found:
            continue
        c = m.card if m.card is not None else cards[m.index]
        v = dict(code=c.code, p=f"{c.confidence:.2f}", det=f"{c.det_score:.2f}", total=total)
        found[total] = (Msg("check_with", f"{OTHER_READING} with the box read as {c.code} ({v['p']}, detector {v['det']}) as a "
                            f"card the hand is also a legal win, {total} 胡: look at that card", **v) if m.card is not None else
                        Msg("check_without", f"{OTHER_READING} without the card read as {c.code} ({v['p']}, detector {v['det']}) "
                            f"the hand is also a legal win, {total} 胡: look at that card", **v))
    for total, msg in _read_otherwise(ps, ctx):
        if total not in named and total not in found:
            found[total] = msg
    for runs, other in _groups_in_hand(ps, ctx) if groups is None else groups:
        total = other.result.total
        if total not in named and total not in found:
            codes = [ps.recognition.cards[i].code for r in runs for i in r]
            found[total] = (Msg("check_group", f"{OTHER_READING} if the {len(codes)} {codes[0]} lying close to the hand are a "
                                f"group declared on the table, the hand is also a legal win, {total} 胡: look at them",
                                code=codes[0], n=len(codes), total=total) if len(runs) == 1 else
                            Msg("check_groups", f"{OTHER_READING} if the {len(codes)} cards lying as groups beside the hand "
                                f"({' '.join(codes)}) are groups declared on the table, the hand is also a legal win, {total} 胡: "
                                "look at them", n=len(codes), codes=codes, total=total))
    for row, other in _rows_of_groups(ps, ctx):
        total = other.result.total
        if total not in named and total not in found:
            codes = [ps.recognition.cards[i].code for i in row]
            found[total] = Msg("check_row", f"{OTHER_READING} if the {len(row)} cards lying in one row as groups "
                               f"({' '.join(codes)}) are a row of the hand, not groups declared on the table, the hand is also "
                               f"a legal win, {total} 胡: look at them", n=len(row), codes=codes, total=total)
    return list(found.values())




def _read_otherwise(ps: PhotoScore, ctx: PhotoContext) -> list[tuple[int, Msg]]:
    """One card of the hand as scored (after its code repairs) read as one of its alternatives that the classifier gives
    TABLE.check_code_p or more, each that also makes a legal win as the cards lie, with its total and a check: naming
    the card, likeliest reading first. A card read a rank off can make another legal win with another total, and then
    no move of the boxes (_moves) names it: val_hands3 000145, 3w read as 2w (0.87), 90 instead of 80 with no word."""
    changed = _code_repairs(ps)
    cards = [c.read_as(changed[i]) if i in changed else c for i, c in enumerate(ps.recognition.cards)]
    tries = sorted(((p, i, a) for i in ps.layout.hand for a, p in cards[i].alternatives
                    if p >= TABLE.check_code_p and a not in (cards[i].code, NOT_A_CARD)), reverse=True)
    out = []
    for p, i, a in tries:
        rec = replace(ps.recognition, cards=[c.read_as(a) if k == i else c for k, c in enumerate(cards)], spares=[])
        lay = replace(ps.layout, hand=list(ps.layout.hand), melds=[list(m) for m in ps.layout.melds],
                      jiang=list(ps.layout.jiang), ignored=list(ps.layout.ignored))
        try:
            other = score_layout(rec, lay, ctx, code_changes=0)
        except PhotoError:
            continue
        if other.result is None or not other.result.is_win or other.result.total == ps.result.total:
            continue
        c = cards[i]
        v = dict(i=i + 1, code=c.code, p=f"{c.confidence:.2f}", new=a,
                 p_new=f"{p:.2f}", total=other.result.total)
        out.append((other.result.total, Msg("check_read_as", f"{OTHER_READING} with card {v['i']}, read as {c.code} ({v['p']}), "
                                            f"taken as {a} ({v['p_new']}) the hand is also a legal win, {v['total']} 胡: look "
                                            "at that card", **v)))
    return out


def doubtful_reading(ps: PhotoScore) -> list[Msg]:
    """A check: for a legal win read from many cards the classifier was unsure of: TABLE.doubtful_cards or more of
    the cards scored (hand, groups, 将) each read with less than TABLE.doubt_p (a repaired card at the probability of
    the code it was taken as). One change away there may be no other legal win to name (_other_readings), yet with
    that many doubtful cards two or three of them may be misread together and still make a legal win with another
    total: the table should look at those cards before taking it (0 doubtful_cards: never said)."""
    if TABLE.doubtful_cards <= 0 or ps.result is None or not ps.result.is_win:
        return []
    changed = _code_repairs(ps)
    scored = sorted({*ps.layout.hand, *ps.layout.jiang, *(i for m in ps.layout.melds for i in m)})
    cards = ps.recognition.cards
    unsure = [i for i in scored if (cards[i].p_of(changed[i]) if i in changed else cards[i].confidence) < TABLE.doubt_p]
    if len(unsure) < TABLE.doubtful_cards:
        return []
    nums = ", ".join(str(i + 1) for i in unsure)
    return [Msg("check_doubtful", f"{OTHER_READING} {len(unsure)} cards of the hand were read with little certainty "
                f"(cards {nums}): look at them before taking this total", n=len(unsure), nums=nums)]


def _code_repairs(ps: PhotoScore) -> dict[int, str]:
    """The code repairs of ``ps``: each repaired card's index and the code it was taken as (no card added or left out)."""
    return {ch.index: ch.new for ch in ps.repair.changes if NOT_A_CARD not in (ch.old, ch.new)}


def _groups_in_hand(ps: PhotoScore, ctx: PhotoContext) -> list[tuple[list[list[int]], PhotoScore]]:
    """Clusters of 3–4 equal cards in the hand as scored lying TABLE.group_gap card widths or more from its other cards,
    and further than those lie from each other (layout.apart_from_spacing: not the end of a row laid with spaces),
    each with the photo scored with it as a group declared on the table, when that is a legal win (layout.clusters
    joins cards closer than 0.45 widths: a group laid that close to the hand is read as part of it). On the 1,000
    val photos (val_hands3, val_hands4) this warns of the one wrong total on a legal win it explains (val_hands3
    000515) and of no right one. A reading of lower total is scored instead (_group_apart): 000515 and val_hands4
    000076 (a declared quad 5b×4 laid close to the hand) are then right. TABLE.group_gap was 0.35 until the hand's own
    spacing was asked too (apart_from_spacing): at 0.3 distil_hands 000897 (a quad 0.33 widths from a hand whose
    cards lie 0.09 apart, scored in it as 后摸: 60 instead of 50) is right from its true cards, and no other total or
    warning changes on val_hands3 and val_hands4 (recognitions kept) or on 5,200 hands from their true cards; at 0.25
    the same, and on val_hands5 (600, a third rugao) train 000227, a pong whose boxes lie 0.27 widths from the hand's,
    is right instead of silently wrong, no total worse.

    Also a cluster of the layout all runs of 3–4 equal cards that was scored in the hand for being as large as the
    hand's own cluster (layout.split_table), each run a group (val_hands3 000531: the quads 8t×4 and 8b×4 laid touching,
    8 cards like the hand, scored as concealed quads: 60 instead of 50 from the true cards), unless laid as evenly as
    a row of the hand (layout.evenly_laid): a hand laid in two rows can have one of runs. Each: its runs and the reading."""
    hand = ps.layout.hand
    cards = [ps.recognition.cards[i] for i in hand]
    out = []
    for g in clusters(cards, TABLE.group_gap):
        if len(g) in (3, 4) and len(g) < len(cards) and len({cards[k].code for k in g}) == 1 and apart_from_spacing(cards, g):
            group = [hand[k] for k in g]
            other = _win_laid(ps, ctx, [i for i in hand if i not in group], [*ps.layout.melds, group])
            if other is not None:
                out.append(([group], other))
    # clusters of the hand as large as its largest (a smaller one split_table reads as groups already): mostly just one
    inside, every = set(hand), ps.recognition.cards
    top = [g for g in ps.layout.clusters if len(g) == len(ps.layout.clusters[0]) and set(g) <= inside]
    laid = [groups_laid(every, g) for g in top] if len(top) > 1 else []
    for g, runs in zip(top, laid, strict=False):  # nothing to look at when the hand is one cluster
        # several groups beside a cluster that is not, and not laid as evenly as a row of the hand (val_hands4 000290:
        # a hand in two rows of 9, one of them 2w×3 4w×3 2t×3)
        if runs and len(runs) > 1 and None in laid and not evenly_laid(every, g):
            other = _win_laid(ps, ctx, [i for i in hand if i not in set(g)], [*ps.layout.melds, *runs])
            if other is not None:
                out.append((runs, other))
    return out


def _win_laid(ps: PhotoScore, ctx: PhotoContext, hand: list[int], melds: list[list[int]]) -> PhotoScore | None:
    """The photo's cards as scored, with ``hand`` and ``melds`` laid so (its 将 and objects left out as they are),
    scored without code repairs; None unless that is a legal win."""
    lay = replace(ps.layout, hand=hand, melds=melds, jiang=list(ps.layout.jiang), ignored=list(ps.layout.ignored))
    try:
        other = score_layout(ps.recognition, lay, ctx, code_changes=0)
    except PhotoError:
        return None
    return other if other.result is not None and other.result.is_win else None


def _rows_of_groups(ps: PhotoScore, ctx: PhotoContext) -> list[tuple[list[int], PhotoScore]]:
    """Clusters of cards read as several declared groups laid close together (layout.split_table: runs of 3–4 equal
    cards), each with the photo scored with them as part of the hand, when that is a legal win. A hand of more than
    16 cards is often laid in two rows, and a row of it sorted by kind can be such runs (test hands 000189: 2w×4,
    qz×3, 7t×3 in a stair beside the first row, read as a quad and two pongs). As groups on the table they score
    less, so that reading stays (R9: a photo's defaults never over-score), and the other is named."""
    out = []
    for g in ps.layout.clusters:
        melds = [m for m in ps.layout.melds if set(m) <= set(g)]
        if len(melds) < 2 or sum(map(len, melds)) != len(g) or not evenly_laid(ps.recognition.cards, g):
            continue
        row = sorted(g)
        other = _win_laid(ps, ctx, sorted([*ps.layout.hand, *row]), [m for m in ps.layout.melds if m not in melds])
        if other is not None:
            out.append((row, other))
    return out


def _doubtful(rec: Recognition, conf: float) -> list[int]:
    """Cards that may be no card of their own: kept only on the classifier's word (detector score below
    ``conf``) or the recover net's (a box NMS had dropped), the less sure of two boxes read the same that
    overlap (one card boxed twice), or read with little confidence (a box across two cards reads as neither)."""
    cards = rec.cards
    out = {i for i, c in enumerate(cards) if c.det_score < conf or c.confidence < KNOBS.unsure or c.recovered}
    quads = [np.array(c.quad, np.float32) for c in cards]
    for i in range(len(cards)):
        for j in range(i + 1, len(cards)):
            if cards[i].code == cards[j].code and quad_iou(quads[i], quads[j]) >= TABLE.twice:
                if cards[i].recovered or cards[j].recovered:  # which box of the two is the card, the nets disagree
                    out.update((i, j))
                else:
                    out.add(i if cards[i].det_score < cards[j].det_score else j)
    # the least likely to be a card read as it is first: a box across two cards or an object read as a card is
    # read unsurely even where the detector scores it as a card (val_hands3: 94.8 -> 95.0 % right with repair)
    return sorted(out, key=lambda i: cards[i].det_score * cards[i].confidence)[:KNOBS.spares]


RECOUNT = "repaired (cards more or less):"  # how those repairs are reported

# the keys of the messages about cards added or left out and other readings (the page shows them once scored)
RECOUNT_KEYS = ("recount_added", "recount_left_out", "check_doubtful", "check_with", "check_without", "check_read_as",
                "check_group", "check_row",
                "check_row_in_hand", "check_group_in_hand", "check_groups", "check_groups_in_hand",
                "check_as_first_read", "check_read_again", "check_first_doubted")  # the last: vision.table.second_reading


@dataclass(frozen=True)
class _Move:
    """One change to the cards seen: a spare added (``card``) or a doubtful card left out (``index``)."""

    p: float  # how likely the change is right: the spare's reading times the recover net's word on it (_p_spare),
    # or 1 - the left-out box's detector score (1 - the recover net's probability for a box it recovered)
    card: Card | None = None
    index: int = -1


def _moves(rec: Recognition) -> list[_Move]:
    """Every single change worth a try: each spare added, the likeliest first, then each doubtful card left out."""
    spares = sorted(((_p_spare(c), c) for c in rec.spares), key=lambda t: -t[0])
    return [_Move(p, card=c) for p, c in spares] + \
        [_Move(1 - (rec.cards[i].recovered or rec.cards[i].det_score), index=i) for i in _doubtful(rec, rec.det_conf)]


def _fewer_spares(moves: list[_Move], most: int) -> list[_Move]:
    """``moves`` (as _moves gives them) with only the ``most`` likeliest spares."""
    return [m for m in moves if m.card is not None][:most] + [m for m in moves if m.card is None]


def _p_spare(c: Card) -> float:
    """How likely adding spare ``c`` is right: its reading, times the recover net's word that it is a card."""
    return c.confidence * (1.0 if c.judged is None else max(c.judged, TABLE.judged_floor))


def _applied(rec: Recognition, moves: tuple[_Move, ...]) -> Recognition:
    """``rec`` with ``moves`` made: the cards left out gone, the spares added last, no spares left."""
    out = {m.index for m in moves}
    cards = [c for i, c in enumerate(rec.cards) if i not in out] + [m.card for m in moves if m.card is not None]
    return replace(rec, cards=cards, spares=[])


def _compatible(moves: tuple[_Move, ...]) -> bool:
    """Never two spares on one card (their quads overlap by KNOBS.spare_apart or more)."""
    added = [np.array(m.card.quad, np.float32) for m in moves if m.card is not None]
    return all(quad_iou(a, b) < KNOBS.spare_apart for a, b in itertools.combinations(added, 2))


def _recount(rec: Recognition, ctx: PhotoContext, mixed: bool = False) -> PhotoScore | None:
    """The fewest changes to the cards seen (one, else two: spares added, doubtful cards left out) that make a
    clean legal win, taken only when the likeliest is TABLE.recount_margin times as likely as any set of changes with
    another total (a spare the recover net judges a second box on a card is unlikely); it is reported.

    ``mixed`` (the cards as seen make no legal win, code repairs included): when neither finds one, one such
    change together with one card read as its alternative, else three cards read as their alternatives (a
    card missed and another misread; three covered cards misread), else one card read as an alternative the
    classifier gives as little as TABLE.last_min_p."""
    single = _moves(rec)
    for size, tried in ((1, single), (2, _fewer_spares(single, TABLE.spare_pairs))):
        wins = []
        for moves in itertools.combinations(tried, size):
            if not _compatible(moves):
                continue
            ps = _clean_win(_applied(rec, moves), ctx)
            if ps is not None:
                wins.append((float(np.prod([m.p for m in moves])), moves, ps))
        if wins:
            return _likeliest(wins, rec)
    if not mixed:
        return None
    wins = []
    for m in single:
        ps = _clean_win(_applied(rec, (m,)), ctx, code_changes=1)
        if ps is not None and ps.repair.changes:
            wins.append((m.p * _p_codes(ps), (m,), ps))
    for changes, min_p in ((TABLE.mixed_code_changes, None), (1, TABLE.last_min_p)):
        if wins:
            break
        ps = _clean_win(rec, ctx, code_changes=changes, min_p=min_p)
        if ps is not None and ps.repair.changes:
            wins.append((_p_codes(ps), (), ps))
    return _likeliest(wins, rec) if wins else None


def _p_codes(ps: PhotoScore) -> float:
    """How likely the code repairs of ``ps`` are right: the product of the readings taken."""
    return float(np.prod([ch.p_new for ch in ps.repair.changes]))


def _likeliest(wins: list[tuple[float, tuple[_Move, ...], PhotoScore]], rec: Recognition) -> PhotoScore | None:
    """The likeliest of ``wins`` (probability, moves, score), reported; none when another total is within
    TABLE.recount_margin of it (several explanations, not clearly one)."""
    p, moves, ps = max(wins, key=lambda w: w[0])
    other = max((w[0] for w in wins if w[2].result.total != ps.result.total), default=None)
    if other is not None and p < TABLE.recount_margin * other:
        return None
    return _report(ps, rec, moves)


def _report(ps: PhotoScore, rec: Recognition, moves: tuple[_Move, ...]) -> PhotoScore:
    """Record the changes as repairs (from/to ``none``) with one warning each for cards added and left out; a
    card left out stays on the photo, marked as not a card."""
    cards = ps.recognition.cards
    n_added = sum(m.card is not None for m in moves)
    first_added = len(cards) - n_added
    added = [Change(first_added + k, NOT_A_CARD, c.code, 1 - c.det_score, c.confidence)
             for k, c in enumerate(cards[first_added:])]
    dropped = []
    for m in moves:
        if m.card is None:
            c = rec.cards[m.index]
            cards.append(c)
            ps.layout.ignored.append(len(cards) - 1)
            dropped.append(Change(len(cards) - 1, c.code, NOT_A_CARD, c.confidence, 1 - c.det_score))
    if dropped:
        boxes = [[cards[ch.index].code, None, f"{cards[ch.index].det_score:.2f}"] for ch in dropped]
        ps.warnings.insert(0, Msg("recount_left_out", f"{RECOUNT} left out the box(es) read as {boxes_en(boxes)}: only without "
                                  "them is the hand a legal win (a second box on a card, a box across two cards, or no card)",
                                  boxes=boxes))
    if added:
        got = [cards[ch.index] for ch in added]
        boxes = [[c.code, f"{c.confidence:.2f}", f"{c.det_score:.2f}"] for c in got]
        ps.warnings.insert(0, Msg("recount_added", f"{RECOUNT} added the box(es) read as {boxes_en(boxes)}, which the detector had "
                                  "left out (unsure, or overlapping another card): only with them is the hand a legal win",
                                  boxes=boxes))
    ps.repair.changes[:0] = added + dropped
    return ps


def _clean_win(rec: Recognition, ctx: PhotoContext, code_changes: int = 0, min_p: float | None = None) -> PhotoScore | None:
    """The cards of ``rec`` scored as they lie, when that is a legal win with nothing left out (with at most
    ``code_changes`` cards read as one of their alternatives)."""
    try:
        ps = score_as_seen(rec, ctx, code_changes, min_p)
    except PhotoError:
        return None
    return ps if ps.result is not None and ps.result.is_win and not ps.layout.ignored else None



