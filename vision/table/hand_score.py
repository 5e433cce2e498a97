"""The cards as laid, scored: a table layout (hand, groups on the table, 将 apart) made into a hand and scored,
with repairs of misread cards from their alternatives (scoring.repair)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np

from scoring import HandError
from scoring.cards import CODES, EXTRAS
from scoring.hand import declared_hows
from scoring.messages import Msg, message
from scoring.repair import Candidate, repair
from scoring.rulesets import Ruleset, get_ruleset
from scoring.score import ScoreResult
from vision.table.context import NO_CARDS, PhotoContext, PhotoError, PhotoScore
from vision.table.knobs import TABLE
from vision.table.layout import TableLayout, apart_readings, equal_runs, split_table
from vision.types import Card, Recognition, parse_role


def _rank(ps: PhotoScore, ctx: PhotoContext) -> tuple[int, int, int, float]:
    """Order of preference among readings: a legal win, fewest repairs, fewest left out, surest 将."""
    cards = ps.recognition.cards
    conf = float(np.mean([cards[i].confidence for i in ps.layout.jiang])) if ps.layout.jiang else 0.0
    return int(ctx.is_win and not ps.result.is_win), len(ps.repair.changes), len(ps.layout.ignored), -conf


def score_as_seen(rec: Recognition, ctx: PhotoContext, code_changes: int = TABLE.code_changes,
                  min_p: float | None = None) -> PhotoScore:
    """Score the photo's cards as they lie, up to ``code_changes`` of them read as one of their alternatives when
    that makes the win (scoring.repair; 0: none). When that is not a clean win (an error, no win, or a repair
    needed) and small clusters lie apart from the hand, the other readings of those clusters are scored
    too (layout.apart_readings): a legal win first, then the fewest repairs, then the fewest objects left
    out, then the most confident 将."""
    if not rec.cards:
        raise PhotoError(NO_CARDS)
    rs = get_ruleset(ctx.ruleset, ctx.options)
    lay = split_table(rec.cards, rs.n_jiang)
    error: PhotoError | None = None
    try:
        first: PhotoScore | None = score_layout(rec, replace(lay, hand=list(lay.hand), jiang=list(lay.jiang)), ctx,
                                                  code_changes, min_p)
    except PhotoError as e:
        first, error = None, e
    if first is not None and _rank(first, ctx)[:2] == (0, 0):
        return first  # a clean win (or a clean non-win when none was claimed): nothing else to try
    # another reading is taken only when it is a legal win; otherwise the cards as they lie are reported
    best = first
    for alt in apart_readings(lay, rs.n_jiang):
        if ctx.jiang and alt.jiang and sorted(rec.cards[i].code for i in alt.jiang) != sorted(ctx.jiang):
            continue  # cards set apart as the 将 are the 将 given (otherwise the reading of them as part of the hand)
        try:
            ps = score_layout(rec, alt, ctx, code_changes, min_p)
        except PhotoError:
            continue
        rank = _rank(ps, ctx)
        if rank[0] == 0 and (best is None or rank < _rank(best, ctx)):
            best = ps
    if best is None:
        raise error  # the first reading failed and no other reading is a legal win
    ps = best
    if ps.layout.ignored:
        codes = [rec.cards[i].code for i in ps.layout.ignored]
        ps.warnings.insert(0, Msg("apart_left_out", f"left out {len(codes)} object(s) lying apart ({' '.join(codes)}): only without "
                                  "them is the hand a legal win; mark them as cards on the page if they are", n=len(codes), codes=codes))
    return ps


def layout_from_roles(roles: list[str]) -> TableLayout:
    """A layout from per-card roles: ``hand``, ``jiang``, ``meld:N`` or ``ignored`` (not a card), as corrected
    by a person."""
    lay = TableLayout()
    melds: dict[int, list[int]] = {}
    for i, r in enumerate(roles):
        kind, group = parse_role(r)
        if kind == "jiang":
            lay.jiang.append(i)
        elif kind == "ignored":
            lay.ignored.append(i)
        elif group is not None:
            melds.setdefault(group, []).append(i)
        else:
            lay.hand.append(i)
    lay.melds = [melds[k] for k in sorted(melds)]  # by number: group 10 after group 9
    return lay


def score_layout(rec: Recognition, lay: TableLayout, ctx: PhotoContext, code_changes: int = TABLE.code_changes,
                 min_p: float | None = None) -> PhotoScore:
    t = time.perf_counter()
    cards = rec.cards
    if not cards:
        raise PhotoError(NO_CARDS)
    rs = get_ruleset(ctx.ruleset, ctx.options)
    defaults: list[str] = []
    warnings: list[str] = []
    photo_jiang = [cards[i].code for i in lay.jiang]
    if ctx.jiang:
        jiang = list(ctx.jiang)
        if lay.jiang and sorted(photo_jiang) != sorted(jiang):
            warnings.append(Msg("jiang_differs", f"The cards set apart ({' '.join(photo_jiang)}) differ from the 将 given "
                                f"({' '.join(jiang)}); the given 将 are used and the apart cards are read as part of the hand.",
                                apart=photo_jiang, given=jiang))
            lay.hand = sorted(lay.hand + lay.jiang)
            lay.jiang = []
    elif len(photo_jiang) == rs.n_jiang:
        jiang = photo_jiang
        defaults.append(Msg("jiang_from_apart", f"将 read from the cards set apart: {' '.join(jiang)}", codes=jiang))
    else:
        apart = [cards[i].code for g in lay.apart for i in g]
        key, seen = (("jiang_missing_set_apart", f", {len(photo_jiang)} set apart") if photo_jiang else
                     ("jiang_missing_apart", f", {len(apart)} lying apart ({' '.join(apart)}), which do not fit as the 将") if apart else
                     ("jiang_missing", ", none set apart"))
        raise PhotoError(Msg(key, f"Saw {len(cards)} cards{seen}, but the {rs.n_jiang} flipped 将 card(s) "
                             "must lie apart from the hand or be named (--jiang, or 翻将 on the page).",
                             n=len(cards), k=len(photo_jiang) or len(apart), codes=apart, need=rs.n_jiang))
    lay = declared_twos(lay, cards, jiang)
    declared = []
    for g in lay.melds:
        code = cards[g[0]].code
        if any(cards[i].code != code for i in g):
            codes = [cards[i].code for i in g]
            raise PhotoError(Msg("group_not_equal", f"A group on the table must be equal cards, but holds {' '.join(codes)}.",
                                 codes=codes))
        hows = declared_hows(len(g), jiang.count(code))
        said = ctx.declared_how.get(code)
        if said and hows and said not in hows:
            raise PhotoError(Msg("meld_size_context", f"The context says {code} was declared as {said}, but {len(g)} {code} lie "
                                 f"together on the table, which can only be {' or '.join(hows)}: a card of the group may be "
                                 "hidden or missed.", code=code, how=said, n=len(g), hows=hows))
        # a size no way fits (too many copies with the flips) keeps a pong's or quad's, for build_hand to say what is wrong
        how = said or (hows or ["pong" if len(g) == 3 else "exposed_kong"])[0]
        if code not in ctx.declared_how:
            defaults.append(Msg(f"meld_{how}", f"{code}×{len(g)} on the table read as {READ_AS[how]}", code=code, n=len(g)))
        declared.append(([cards[i].code for i in g], how))
    hand_idx = lay.hand
    if len(hand_idx) + sum(len(g) for g in lay.melds) < TABLE.min_cards:
        codes = [c.code for c in cards]
        raise PhotoError(Msg("too_few", f"Only {len(cards)} cards were found ({' '.join(codes)}): too few for a hand; "
                             "photograph the whole hand.", n=len(cards), codes=codes))
    if ctx.win is None and ctx.is_win:
        defaults.append(Msg("no_win_card", "winning card not given: no 丫子/拖尾/吊头 bonus counted"))
    if not ctx.self_drawn and ctx.is_win:
        defaults.append(Msg("discard", "won on a discard (not 自摸)"))
    if not ctx.events and ctx.is_win:  # R9: what no photo shows (with them, whether the winner is the dealer)
        defaults.append(Msg("no_events", "no 天成, 地胡, 天听, 折庄, 海底捞月 or 杠开 counted"))
    cands, alike = _wilds_alike(cards, hand_idx, rs, jiang)
    warnings += alike

    def hand_kwargs(codes: list[str]) -> dict[str, Any]:  # the context's cards dealt and winning card as they apply
        return _hand_kwargs(Counter(codes), ctx, jiang, declared)

    try:
        rr = repair(cands, hand_kwargs, want_win=ctx.is_win, max_changes=code_changes,
                    min_p=TABLE.repair_min_p if min_p is None else min_p)
    except HandError as e:
        raise PhotoError(message(e)) from None
    if rr.result is None:
        raise PhotoError(Msg("cannot_be_hand", f"The cards seen cannot be a hand: {rr.error}", error=rr.error))
    conc = Counter(rr.codes)
    kwargs = hand_kwargs(rr.codes)
    later = _counted_later(rr.result, conc, jiang, kwargs["from_deal"])
    if later:
        defaults.append(Msg("quads_later", f"concealed quad(s) or flipped-kind group(s) {' '.join(later)} counted as 后摸 "
                            "(collected after the deal)", codes=later))
    if ctx.win and ctx.win not in conc:
        warnings.append(Msg("win_not_seen", f"The winning card {ctx.win} is not among the concealed cards seen; scored without it.",
                            code=ctx.win))
    if rr.changes:
        for ch in rr.changes:
            v = dict(i=ch.index + 1, old=ch.old, p_old=f"{ch.p_old:.2f}", new=ch.new, p_new=f"{ch.p_new:.2f}")
            warnings.append(Msg("repaired", f"repaired: card {v['i']} read as {ch.old} ({v['p_old']}) taken as {ch.new} ({v['p_new']}) "
                                "because only then is the hand a legal win", **v))
    if rr.ambiguous:
        warnings.append(Msg("ambiguous", "several cards could be misread in more than one way; check the low-confidence cards"))
    if ctx.is_win and not rr.result.is_win:
        warnings.append(Msg("not_win", f"not a win: the concealed cards seen ({' '.join(rr.codes)}) do not make one pair and seven "
                            "groups; scored as group points", codes=list(rr.codes)))
    hand = {
        "ruleset": ctx.ruleset, "jiang": jiang,
        "declared": [{"cards": cs, "how": how} for cs, how in declared],
        "concealed": rr.codes, "from_deal": kwargs["from_deal"],
        "win": ({"card": kwargs["win"], "self_drawn": ctx.self_drawn} if ctx.is_win else None),
        "dealer": ctx.dealer, "events": ctx.events, "options": ctx.options,
    }
    tm = dict(rec.timings_ms)
    tm["score"] = round((time.perf_counter() - t) * 1000, 1)
    return PhotoScore(rec, lay, rr, rr.result, hand, defaults, warnings, tm)


def _wilds_alike(cards: list[Card], hand: list[int], rs: Ruleset, jiang: list[str]) -> tuple[list[Candidate], list[Msg]]:
    """The hand's cards as the repairs take them. Where 福禄寿禧财 are wild (R8: each stands for any card) or bonus
    喜儿 (R7's option: counted by how many are held), which one a card is changes no total: a second card read as
    an extra the hand holds already or flipped as 将 (the deck has one of each) is counted as an extra neither has,
    its likeliest such reading first, with a note. Rugao val_hands5 and test photos misread 喜 as 福 and 寿 as 福, and
    the hand was refused for holding two 福."""
    cands = [Candidate(cards[i].alternatives, i) for i in hand]
    if not rs.uses_extras:
        return cands, []
    key, why = ("wild_alike", "its wild cards are alike (R8)") if rs.wilds else ("xier_alike", "its 喜儿 count alike (R7)")
    seen = {j for j in jiang if j in EXTRAS}
    held = seen | {cards[i].code for i in hand if cards[i].code in EXTRAS}
    said = []
    for k, i in enumerate(hand):
        c = cards[i]
        if c.code in EXTRAS and c.code in seen and held < set(EXTRAS):
            free = [a for a, _ in c.alternatives if a in EXTRAS and a not in held] or [w for w in EXTRAS if w not in held]
            new = free[0]
            held.add(new)
            cands[k] = Candidate([(new, c.confidence)] + [(a, p) for a, p in c.alternatives[1:] if a != new], i)
            said.append(Msg(key, f"card {i + 1} read as {c.code} ({c.confidence:.2f}) is counted as {new}: the deck "
                            f"has one {c.code} ({c.code} flipped as 将: {jiang.count(c.code)}), and {why}", i=i + 1, old=c.code, new=new,
                            flipped=jiang.count(c.code),
                            p_old=f"{c.confidence:.2f}"))
        seen.add(c.code)
    return cands, said


def _counted_later(res: ScoreResult, conc: Counter, jiang: list[str], from_deal: list[str]) -> list[str]:
    """The kinds whose concealed group the scoring counted as 后摸, collected after the deal (R4: a quad, or the copies
    left of a flipped kind, 3 or 2, held together; the default a photo cannot confirm, R9): in a win the groups of its
    reading (four 4t in 234t and 4t×3 are no quad), otherwise the kinds held so many times (R11's count)."""
    flips = Counter(jiang)
    if res.is_win:
        kinds = [m.cards[0] for m in res.best.melds if m.how == "concealed"
                 and (m.shape in ("quad", "two") or (m.shape == "trip" and flips[m.cards[0]] == 1))]
    else:
        kinds = [c for c, n in conc.items() if n >= 2 and n == 4 - flips[c]]
    return sorted({c for c in kinds if c not in from_deal}, key=CODES.index)


READ_AS = {"pong": "碰 pong", "exposed_kong": "明杠 exposed quad",
           "concealed_kong": "暗杠 concealed group (后摸, collected after the deal)"}


def declared_twos(lay: TableLayout, cards: list[Card], jiang: list[str]) -> TableLayout:
    """R4: the two remaining copies of a kind flipped twice as 将 are a group of their own, which may be laid on the
    table. Two such cards lying apart from the hand, scored as part of it — a cluster of their own (layout.split_table
    sets 1–2 cards apart aside for the 将 only), or a run of two in a cluster of groups laid close together, the others
    runs of 3–4 equal cards (split_table splits only runs of 3–4) — are taken as that group declared, and the runs
    beside them as the groups they are: then they cannot be the hand's eyes, and the context's ``how`` of each group
    applies (val_hands4 000214: 4b×2 起手龙 beside the 4b 4b flipped, scored as 后摸 in the hand before, 110 instead of
    130 with the photo's hand file)."""
    twice = {c for c in jiang if jiang.count(c) == 2}
    if not twice or len(lay.clusters) < 2:
        return lay
    hand = set(lay.hand)

    def two(run: list[int]) -> bool:
        code = cards[run[0]].code
        return len(run) == 2 and code in twice and sum(cards[i].code == code for i in hand) == 2

    laid = []
    for g in lay.clusters:
        if len(g) >= len(lay.clusters[0]) or not set(g) <= hand:
            continue  # the hand itself, or not scored in it
        runs = equal_runs(cards, g)
        if any(two(r) for r in runs) and all(two(r) or len(r) in (3, 4) for r in runs):
            laid += runs
    if not laid:
        return lay
    gone = {i for r in laid for i in r}
    return replace(lay, hand=[i for i in lay.hand if i not in gone], melds=[*lay.melds, *laid])


def _hand_kwargs(conc: Counter, ctx: PhotoContext, jiang: list[str], declared: list[tuple[list[str], str]]) -> dict[str, Any]:
    """``build_hand``'s arguments but the concealed cards, for concealed cards ``conc``: the context's cards dealt
    and winning card where they are among the cards (a card named but not seen is left out, not an error)."""
    return dict(jiang=jiang, declared=declared, ruleset=ctx.ruleset, options=ctx.options,
                from_deal=[c for c in ctx.from_deal if c in conc or any(c == d[0][0] for d in declared)],
                win=ctx.win if (ctx.win and ctx.win in conc) else None, is_win=ctx.is_win, self_drawn=ctx.self_drawn,
                dealer=ctx.dealer, events=ctx.events)
