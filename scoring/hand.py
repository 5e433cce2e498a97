"""A hand and its scoring context (RULES.md R9), validated; the hand file format (JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import CODES, COPIES, INDEX, N_KINDS, N_PLAIN, counts_of, format_cards, parse_cards
from .errors import HandError
from .hand_file import check_hand
from .messages import Msg
from .rulesets import EVENTS, Ruleset, get_ruleset

HOWS = ("pong", "exposed_kong", "concealed_kong", "dealt_kong")
HOW_ZH = {"pong": "碰", "exposed_kong": "明杠", "concealed_kong": "暗杠(后摸)", "dealt_kong": "起手龙"}
MELD_TAG = {"pong": "碰", "exposed_kong": "明杠", "concealed_kong": "暗杠", "dealt_kong": "起手"}  # before a meld's cards


def group_size(how: str, flips: int) -> int:
    """R4: the cards in a group made ``how`` of a kind flipped ``flips`` times as 将. A pong is 3 cards and an exposed
    quad 4; a concealed or dealt group is 4 minus the flipped copies (the two remaining copies of a kind flipped twice
    are a group of their own). build_hand refuses the rest: a pong of a kind flipped twice, and an exposed quad of a
    flipped kind (the deck has 4)."""
    return {"pong": 3, "exposed_kong": 4}.get(how, 4 - flips)


def declared_hows(n: int, flips: int) -> list[str]:
    """How a group of ``n`` equal cards laid on the table can have been made when its kind was flipped ``flips``
    times as 将 (group_size, and what build_hand accepts), the one worth least first (HOWS' order): what a photo,
    which cannot tell them apart, reads by default (R9). Empty when no way fits."""
    return [how for how in HOWS if n >= 2 and group_size(how, flips) == n
            and not (how == "pong" and flips >= 2) and not (how == "exposed_kong" and flips)]


EVENT_ZH = {"tian_cheng": "天成", "di_hu": "地胡", "tian_ting": "天听", "zhe_zhuang": "折庄",
            "hai_di": "海底捞月", "gang_kai": "杠开", "qiong_hen": "穷狠"}


@dataclass(frozen=True)
class Declared:
    """A group laid on the table: ``n`` cards of one kind, made ``how`` (R4)."""

    kind: int
    n: int
    how: str

    @property
    def code(self) -> str:
        return CODES[self.kind]


@dataclass(frozen=True)
class Hand:
    ruleset: Ruleset
    jiang: tuple[int, ...]
    declared: tuple[Declared, ...]
    concealed: tuple[int, ...]  # counts per kind, winning card included
    from_deal: frozenset[int] = frozenset()
    win_card: int | None = None
    is_win: bool = False
    self_drawn: bool = False
    dealer: bool = False
    events: frozenset[str] = field(default_factory=frozenset)

    @property
    def flips(self) -> list[int]:
        f = [0] * N_KINDS
        for j in self.jiang:
            f[j] += 1
        return f

    def concealed_codes(self) -> list[str]:
        return [CODES[k] for k in range(N_KINDS) for _ in range(self.concealed[k])]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset.name,
            "jiang": [CODES[j] for j in self.jiang],
            "declared": [{"cards": [d.code] * d.n, "how": d.how} for d in self.declared],
            "concealed": self.concealed_codes(),
            "from_deal": sorted((CODES[k] for k in self.from_deal), key=INDEX.get),
            "win": ({"card": None if self.win_card is None else CODES[self.win_card],
                     "self_drawn": self.self_drawn} if self.win_card is not None or
                    (self.is_win and "tian_cheng" not in self.events) else None),
            "dealer": self.dealer,
            "events": sorted(self.events),
            "options": dict(self.ruleset.options),
        }

    def describe(self) -> str:
        parts = [f"{d.how} {format_cards([d.code] * d.n)}" for d in self.declared]
        parts.append(format_cards(self.concealed_codes()))
        return " | ".join(parts)


def _one_kind(cards: list[str], what: str) -> str:
    if not cards:
        raise HandError(f"The {what} has no cards.")
    if len(set(cards)) != 1:
        raise HandError(f"The {what} {' '.join(cards)} is not made of equal cards.")
    return cards[0]


def build_hand(
    *,
    concealed: str | list[str],
    jiang: str | list[str] = (),
    declared: list[tuple[str | list[str], str]] | None = None,
    ruleset: str | Ruleset = "nantong-double",
    options: dict[str, Any] | None = None,
    from_deal: str | list[str] = (),
    win: str | None = None,
    is_win: bool | None = None,
    self_drawn: bool = False,
    dealer: bool = False,
    events: list[str] | tuple[str, ...] = (),
) -> Hand:
    """Validate everything a user can get wrong and return a Hand (R1, R9, R10 bad input)."""
    rs = ruleset.with_options(options) if isinstance(ruleset, Ruleset) else get_ruleset(ruleset, options)
    conc = parse_cards(concealed)
    jiang_codes = parse_cards(jiang)
    if len(jiang_codes) != rs.n_jiang:
        raise HandError(Msg("jiang_count", f"The {rs.name} ruleset flips {rs.n_jiang} 将 card(s), but {len(jiang_codes)} given "
                            f"(e.g. --jiang {'2t,3w' if rs.n_jiang == 2 else '4t'}).", ruleset=rs.name, need=rs.n_jiang,
                            n=len(jiang_codes), example="2t,3w" if rs.n_jiang == 2 else "4t"))
    decl: list[Declared] = []
    flips = [0] * N_KINDS
    for j in jiang_codes:
        flips[INDEX[j]] += 1
    for cards, how in declared or []:
        cl = parse_cards(cards)
        if how not in HOWS:
            raise HandError(f"A declared group is made by one of {', '.join(HOWS)}, not {how!r}.")
        code = _one_kind(cl, f"declared {how}")
        k = INDEX[code]
        if k >= N_PLAIN:
            raise HandError(f"The extra card {code} cannot be declared in a group.")
        need = group_size(how, flips[k])
        if len(cl) != need:
            raise HandError(Msg("group_size", f"A group of {code} made as {how} has {need} cards ({code} flipped as 将: "
                                f"{flips[k]}), but {len(cl)} given.", how=how, code=code, need=need, n=len(cl), flipped=flips[k]))
        if how == "pong" and flips[k] >= 2:
            raise HandError(Msg("pong_flipped_twice", f"{code} was flipped twice, so only 2 remain: it cannot be a pong.", code=code))
        decl.append(Declared(k, len(cl), how))
    if not conc and not decl:
        raise HandError(Msg("hand_empty", "The hand is empty: give its cards, e.g. '123t 456t 555b …'."))
    counts = counts_of(conc)
    total = counts[:]
    for d in decl:
        total[d.kind] += d.n
    extras_ok = rs.uses_extras
    for k in range(N_KINDS):
        if not total[k] and not flips[k]:
            continue
        in_play = total[k] + flips[k]
        limit = 1 if k >= N_PLAIN else COPIES
        if k >= N_PLAIN and not extras_ok:
            raise HandError(Msg("extra_not_in_deck", f"The extra card {CODES[k]} is not in the {rs.name} deck "
                                "(extras are wild in rugao, or 喜儿 with the xi_er option of nantong-single).", code=CODES[k],
                                ruleset=rs.name))
        if in_play > limit:
            if flips[k]:
                raise HandError(Msg("too_many_flipped", f"Too many {CODES[k]}: {total[k]} in the hand and {flips[k]} flipped as 将, "
                                    f"but the deck has only {limit}.", code=CODES[k], n=total[k], flipped=flips[k], limit=limit))
            raise HandError(Msg("too_many", f"Too many {CODES[k]}: {total[k]} in the hand, but the deck has only {limit}.",
                                code=CODES[k], n=total[k], limit=limit))
    fd = parse_cards(from_deal)
    for code in fd:
        if total[INDEX[code]] == 0:
            raise HandError(f"{code} is marked as held from the deal, but the hand has no {code}.")
    ev = frozenset(events)
    for e in ev:
        if e not in EVENTS:
            raise HandError(f"Unknown event {e!r}; known events: {', '.join(EVENTS)}.")
    if "qiong_hen" in ev and not rs.option("qiong_hen"):
        raise HandError("The 穷狠 event needs the qiong_hen option of the nantong-single ruleset.")
    if "tian_cheng" in ev:
        dealer = True
    if dealer and ev & {"di_hu", "tian_ting", "zhe_zhuang"}:
        raise HandError(Msg("not_for_dealer", "地胡, 天听 and 折庄 are for a player who is not the dealer."))
    win_k = None
    if win is not None:
        win_codes = parse_cards(win)
        if len(win_codes) != 1:
            raise HandError(f"The winning card must be one card, not {win!r}.")
        win_k = INDEX[win_codes[0]]
        if counts[win_k] == 0:
            raise HandError(Msg("win_not_in_hand", f"The winning card {win_codes[0]} is not among the concealed cards.",
                                code=win_codes[0]))
    winning = bool(is_win) if is_win is not None else (win_k is not None or "tian_cheng" in ev)
    if "gang_kai" in ev and win_k is None:
        raise HandError(Msg("gang_kai_needs_win", "杠开 (gang_kai) needs the winning card (R11)."))
    return Hand(
        ruleset=rs,
        jiang=tuple(sorted(INDEX[j] for j in jiang_codes)),
        declared=tuple(decl),
        concealed=tuple(counts),
        from_deal=frozenset(INDEX[c] for c in fd),
        win_card=win_k,
        is_win=winning,
        self_drawn=bool(self_drawn) and winning,
        dealer=bool(dealer),
        events=ev,
    )


def hand_from_dict(d: Any) -> Hand:
    """Read one hand in the hand-file format (see README); errors are one sentence."""
    check_hand(d)  # every field's type, named in the sentence
    declared = []
    for g in d.get("declared") or []:
        if not isinstance(g, dict) or "cards" not in g:
            raise HandError("Each declared group needs 'cards' and 'how', e.g. "
                            '{"cards": ["5b","5b","5b"], "how": "pong"}.')
        declared.append((g["cards"], g.get("how", "pong")))
    win = d.get("win")
    win_card, self_drawn, is_win = None, False, None
    if win is not None:
        if not isinstance(win, dict):
            raise HandError('"win" must be null or an object like {"card": "9b", "self_drawn": false}.')
        win_card = win.get("card")
        self_drawn = bool(win.get("self_drawn", False))
        is_win = True
    events = d.get("events") or []
    if not isinstance(events, list):
        raise HandError('"events" must be a list, e.g. ["hai_di"].')
    if win is None and "tian_cheng" not in events:
        is_win = False
    return build_hand(
        concealed=d.get("concealed") or [],
        jiang=d.get("jiang") or [],
        declared=declared,
        ruleset=d.get("ruleset", "nantong-double"),
        options=d.get("options") or {},
        from_deal=d.get("from_deal") or [],
        win=win_card,
        is_win=is_win,
        self_drawn=self_drawn,
        dealer=bool(d.get("dealer", False)),
        events=events,
    )
