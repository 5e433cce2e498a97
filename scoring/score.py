"""The hu breakdown of a hand (RULES.md R4–R7, R11): group points, 底胡, bonuses, type, doublings.

Every breakdown is a list of items whose points add up to the total exactly: group points, the
rounding of 底胡, 成胡 and the bonuses, then each doubling as the points it adds, then the final
rounding. Each item cites its RULES.md section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cards import CODES, INDEX, N_PLAIN, NAMES_ZH, format_cards, rank_of
from .hand import Hand
from .items import BONUSES, DOUBLINGS, GROUP_POINTS, GROUP_SIZE, Item, Tally, ceil10, concealed_counts, group_cards
from .readings import Group, readings
from .rulesets import LAO_JIANG_DOUBLE

K_1B = INDEX["1b"]
THREE_OLD = (INDEX["qz"], INDEX["hh"], INDEX["bh"])
TYPE_ORDER = {"qing": 0, "piao": 1, "ta": 2}
TYPE_ZH = {"qing": "清胡", "piao": "飘胡", "ta": "塌胡"}
TYPE_EN = {"qing": "qing hu (all sequences)", "piao": "piao hu (all triplets)", "ta": "ta hu (mixed)"}
UNITS_ZH = {1: "碰", 2: "暗克", 4: "明杠", 6: "后摸", 8: "起手"}


@dataclass
class Meld:
    cards: list[str]
    shape: str  # seq | pair | trip | quad | two
    how: str  # declared how, or "concealed"
    points: int = 0
    wilds: int = 0

    @property
    def label(self) -> str:
        return format_cards(self.cards)


@dataclass
class Reading:
    hand_type: str | None
    melds_of: list[Meld] | Callable[[], list[Meld]]  # the melds, or how to make them (most readings are never shown)
    items: list[Item]
    total: int
    group_points: int
    di_hu: int
    win_in: str | None = None  # how the winning card was placed: 吊头 / 丫子 / 拖尾 / …

    @property
    def melds(self) -> list[Meld]:
        if callable(self.melds_of):
            self.melds_of = self.melds_of()
        return self.melds_of


@dataclass
class ScoreResult:
    ruleset: str
    jiang: list[str]
    jiang_name: str
    is_win: bool
    hand_type: str | None
    total: int
    items: list[Item]
    readings: int
    best: Reading
    group_points: int
    di_hu: int
    notes: list[str] = field(default_factory=list)
    all_readings: list[Reading] = field(default_factory=list)

    @property
    def hand_type_zh(self) -> str | None:
        return TYPE_ZH.get(self.hand_type) if self.hand_type else None

    def to_dict(self, with_readings: bool = False) -> dict[str, Any]:
        d = {
            "ruleset": self.ruleset,
            "jiang": self.jiang,
            "jiang_name": self.jiang_name,
            "is_win": self.is_win,
            "hand_type": self.hand_type,
            "hand_type_zh": self.hand_type_zh,
            "total": self.total,
            "group_points": self.group_points,
            "di_hu": self.di_hu,
            "items": [dict(vars(i)) for i in self.items],  # Item's fields, as asdict gives them, at a fraction of its cost
            "melds": [dict(vars(m), cards=list(m.cards)) for m in self.best.melds],
            "readings": self.readings,
            "notes": self.notes,
        }
        if with_readings:
            d["all_readings"] = [
                {"hand_type": r.hand_type, "total": r.total,
                 "melds": [m.label + f" ({m.shape})" for m in r.melds]}
                for r in self.all_readings
            ]
        return d


def jiang_name(hand: Hand) -> str:
    """R4's names of the flip configurations."""
    codes = [CODES[j] for j in hand.jiang]
    if hand.ruleset.n_jiang == 1:
        return f"单将 {' '.join(NAMES_ZH[c] for c in codes)}"
    a, b = hand.jiang
    lao = [j in LAO_JIANG_DOUBLE for j in hand.jiang]
    if all(lao):
        return "双龙会"
    if any(lao):
        return "半边将"
    if rank_of(a) is not None and rank_of(a) == rank_of(b):
        return "双将"
    return "普通将"


class _Scorer:
    """Scores one hand; holds the per-hand tables so each reading costs little."""

    def __init__(self, hand: Hand):
        self.hand = hand
        self.rs = hand.ruleset
        self.u = self.rs.unit_values(hand.jiang)
        self.flips = hand.flips
        self.fd = hand.from_deal
        # a trip completed by a discard may count as a pong (option discard_triplet): then where the winning card
        # sits changes more than its shape bonus
        self._decl: list[Item] | None = None
        self.win_as_pong_possible = not hand.self_drawn and self.rs.option("discard_triplet") == "pong"

    # --- R4 units -------------------------------------------------------------------------------
    def conc_units(self, k: int, n: int) -> int:
        """Units of n equal concealed cards held as a group (trip, quad, flipped-kind group)."""
        f = self.flips[k]
        if f == 0 and n == 3:
            return 2
        # a quad, or the remaining copies of a flipped kind: 后摸 6, 起手 8
        return 8 if k in self.fd else 6

    def decl_units(self, k: int, how: str) -> int:
        if how == "pong":
            return 2 if self.flips[k] == 1 else 1
        if how == "exposed_kong":
            return 4
        if how == "dealt_kong" or k in self.fd:
            return 8
        return 6

    def group_item(self, k: int, units: int, what: str, rule: str = "R4", key: str = "group") -> Item:
        code = CODES[k]
        pts = units * self.u[k]
        kind = "将 group" if self.flips[k] else what
        return Item(key, f"{what} {NAMES_ZH[code]}", f"{kind} {code}", pts, rule,
                    f"u={self.u[k]} × {units} units")

    # --- non-winning hands -------------------------------------------------------------------
    def counted_groups(self, conc: list[int]) -> list[tuple[int, int, str]]:
        """(kind, units, label) for concealed kinds that form groups by count (R6 note, R11)."""
        out = []
        for k in range(N_PLAIN):
            n = conc[k]
            f = self.flips[k]
            if (f == 0 and n in (3, 4)) or (f == 1 and n == 3) or (f == 2 and n == 2):
                units = self.conc_units(k, n)
                label = "暗克" if units == 2 else ("起手" if units == 8 else "后摸")
                out.append((k, units, label))
        return out

    def declared_items(self) -> list[Item]:
        items = []
        for d in self.hand.declared:
            units = self.decl_units(d.kind, d.how)
            zh = {1: "碰", 2: "碰(将)", 4: "明杠", 6: "暗杠", 8: "起手龙"}[units]
            items.append(self.group_item(d.kind, units, zh))
        return items

    def three_old(self, groups: list[tuple[int, int, Item]]) -> Item | None:
        """R6.1 三老会齐: groups of 3–4 physical cards of each of qz hh bh double (R11)."""
        by_kind = {}
        for k, ncards, item in groups:
            if k in THREE_OLD and ncards >= 3:
                by_kind.setdefault(k, []).append(item)
        if len(by_kind) < 3:
            return None
        extra = sum(i.points for k in THREE_OLD for i in by_kind[k])
        return Item("san_lao", "三老会齐 ×2", "three old generals doubled", extra, "R6.1")

    def not_a_win(self) -> Reading:
        h = self.hand
        items = self.declared_items()
        groups = [(d.kind, d.n, it) for d, it in zip(h.declared, items, strict=False)]
        for k, units, label in self.counted_groups(list(h.concealed)):
            it = self.group_item(k, units, label)
            items.append(it)
            groups.append((k, h.concealed[k], it))
        so = self.three_old(groups)
        if so:
            items.append(so)
        raw = sum(i.points for i in items)
        di = ceil10(raw)
        if di != raw:
            items.append(Item("round", "底胡进整", "group points rounded up", di - raw, "R6.2"))
        melds = [Meld([d.code] * d.n, "quad" if d.n == 4 else "trip", d.how) for d in h.declared]
        return Reading(None, melds, items, di, raw, di)

    # --- winning hands -----------------------------------------------------------------------
    def score_reading(self, groups: tuple[Group, ...], place: int | None, win_kind: int | None = None) -> Reading:
        """Score one reading; ``place`` is the index of the concealed group holding the win card, ``win_kind`` the
        card it is (the card a wild winning card stands for). The items come from scoring.items, one function per
        rule item, in the rule book's order."""
        h, rs = self.hand, self.rs
        nseq = sum(1 for g in groups if g[0] == "seq")
        n_wq = sum(1 for g in groups if g[0] == "seq" and g[1] == K_1B)
        htype = "qing" if nseq == 7 else ("piao" if nseq == n_wq else "ta")
        no_pts_wild = rs.wilds and rs.option("wild_groups") == "no_points"
        win_as_pong = (place is not None and not h.self_drawn and rs.option("discard_triplet") == "pong"
                       and groups[place][0] == "trip")
        if self._decl is None:  # the declared groups score the same in every reading: their lines are made once
            self._decl = self.declared_items()
        decl_items = self._decl
        conc_pts: list[int] = []
        conc_items: list[tuple[int, int, Item]] = []
        for gi, (shape, k, wl, _) in enumerate(groups):
            pts = 0
            if shape in ("trip", "quad", "two"):
                n = GROUP_SIZE[shape]
                if gi == place and win_as_pong:
                    it = self.group_item(k, 2 if self.flips[k] == 1 else 1, "碰(点炮)")
                else:
                    units = self.conc_units(k, n)
                    it = self.group_item(k, units, {2: "暗克", 6: "后摸", 8: "起手"}[units])
                if no_pts_wild and wl:
                    it.points = 0
                    it.detail += " (wild: no points, option wild_groups)"
                pts = it.points
                conc_items.append((k, n, it))
            conc_pts.append(pts)
        t = Tally(self, groups, place, htype, n_wq, win_as_pong, decl_items, conc_items, concealed_counts(groups),
                  win_kind=win_kind)
        for rule in GROUP_POINTS + BONUSES:
            rule(t)
        t.total = sum(i.points for i in t.items)
        for rule in DOUBLINGS:
            rule(t)
        return Reading(htype, lambda: self._melds(groups, conc_pts), t.items, t.total, t.raw, t.di_hu, t.win_in)

    def _melds(self, groups: tuple[Group, ...], conc_pts: list[int]) -> list[Meld]:
        """A reading's melds as the breakdown shows them: the declared groups, then the concealed ones."""
        melds = [Meld([d.code] * d.n, "quad" if d.n == 4 else ("two" if d.n == 2 else "trip"), d.how, it.points)
                 for d, it in zip(self.hand.declared, self._decl, strict=False)]
        melds += [Meld(group_cards(shape, k), shape, "concealed", pts, wl)
                  for (shape, k, wl, _), pts in zip(groups, conc_pts, strict=True)]
        return melds

    @staticmethod
    def _shape_points(group: Group, w: int) -> int:
        """R6.3: what placing the winning card ``w`` in ``group`` adds (吊头, 丫子, 拖尾: 10; else 0), as win_shape."""
        shape, k = group[0], group[1]
        if shape == "pair":
            return 10
        if shape == "seq":
            pos = w - k
            return 10 if pos == 1 or (pos == 2 and k % 9 == 0) or (pos == 0 and k % 9 == 6) else 0
        return 0

    def _win_kinds(self, shape: str, k: int, stood_for: set[int]) -> list[int]:
        """The cards the winning card may be in this group: itself, when the group holds its kind (R11). A wild winning
        card (rugao) is a card it stands for, as if natural (R8): any group holding a kind the reading's wilds stand for
        may hold the wild as that card (swapping it with a natural one leaves the same cards), so its placement earns
        that shape bonus. Option wild_win_shape 'none': a wild winning card earns no shape bonus."""
        w = self.hand.win_card
        if w is None:
            return []
        if w < N_PLAIN:
            candidates = [w]
        elif self.rs.wilds and self.rs.option("wild_win_shape") == "natural":
            candidates = sorted(stood_for)
        else:
            return []
        return [c for c in candidates if (shape == "seq" and k <= c <= k + 2) or (shape != "seq" and k == c)]

    def best(self, want_all: bool = False) -> tuple[Reading | None, int, list[Reading]]:
        h = self.hand
        conc = list(h.concealed)
        wild_n = sum(conc[N_PLAIN:]) if self.rs.wilds else 0
        conc_nat = conc  # extras: wild in rugao, 喜儿 standing aside otherwise (R7, R8)
        held = [0] * N_PLAIN
        for k in range(N_PLAIN):
            held[k] = conc_nat[k]
        for d in h.declared:
            held[d.kind] += d.n
        room = [4 - self.flips[k] - held[k] for k in range(N_PLAIN)]
        n_groups = 7 - len(h.declared)

        def wild_value(k: int, size: int) -> int:
            return self.conc_units(k, size) * self.u[k] if size >= 3 or self.flips[k] == 2 else 0

        rds = readings(conc_nat[:N_PLAIN], wild_n, n_groups, self.flips, room, wild_value)
        best: Reading | None = None
        best_key = None
        scored: list[Reading] = []
        for groups in rds:
            places: list[tuple[int | None, int | None]] = []  # (group, the card the winning card is there)
            seen = set()
            stood_for = {x for g in groups for x in g[3]}  # the cards the reading's wilds stand for
            for gi, (shape, k, _, _) in enumerate(groups):
                for w in self._win_kinds(shape, k, stood_for):
                    if (shape, k, w) not in seen:
                        seen.add((shape, k, w))
                        places.append((gi, w))
            if not places:
                places = [(None, None)]
            elif not self.win_as_pong_possible:  # only the shape bonus differs between placements: take the first best
                places = [max(places, key=lambda pw: self._shape_points(groups[pw[0]], pw[1]))]
            reading_best = None
            for p, w in places:
                r = self.score_reading(groups, p, w)
                if reading_best is None or r.total > reading_best.total:
                    reading_best = r
            assert reading_best is not None
            scored.append(reading_best)
            key = (reading_best.total, -TYPE_ORDER[reading_best.hand_type])
            if best_key is None or key > best_key:
                best, best_key = reading_best, key
        if want_all:
            scored.sort(key=lambda r: (-r.total, TYPE_ORDER[r.hand_type]))
        return best, len(rds), scored if want_all else []


def score_hand(hand: Hand, all_readings: bool = False) -> ScoreResult:
    """Score a validated hand: the best reading of a win, or the group points of a hand that is not."""
    sc = _Scorer(hand)
    notes: list[str] = []
    jn = jiang_name(hand)
    codes = [CODES[j] for j in hand.jiang]
    if hand.is_win:
        best, n, scored = sc.best(all_readings)
        if best is not None:
            if hand.win_card is None and "tian_cheng" not in hand.events:
                notes.append("Winning card not given: no 丫子/拖尾/吊头 bonus counted.")
            return ScoreResult(hand.ruleset.name, codes, jn, True, best.hand_type, best.total,
                               best.items, n, best, best.group_points, best.di_hu, notes, scored)
        notes.append("These cards do not form a winning hand (one pair and seven groups, R5); "
                     "scored as a hand that did not win.")
    nw = sc.not_a_win()
    return ScoreResult(hand.ruleset.name, codes, jn, False, None, nw.total, nw.items, 0, nw,
                       nw.group_points, nw.di_hu, notes, [])

