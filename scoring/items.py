"""The breakdown of one reading of a winning hand, one small function per rule item (RULES.md R4–R7, R11).

A reading (the concealed cards split into groups, and where the winning card sits) is scored by running the
item functions in ``BONUSES`` and then ``DOUBLINGS`` over one ``Tally``: each adds the lines of its own rule,
citing its section, and nothing else. The order is the rule book's: group points and their rounding (底胡),
the type's base and the bonuses (R6.3–R6.4, R7 喜儿), then each doubling in turn (R6.4–R6.5, R7), then the
final rounding (R6.6). A table that plays a variant changes one function, not a 150-line chain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .cards import CODES, INDEX, N_PLAIN
from .readings import Group

if TYPE_CHECKING:
    from .score import _Scorer

K_1B, K_2B, K_3B = INDEX["1b"], INDEX["2b"], INDEX["3b"]
WENQIAN_BONUS = {0: 0, 1: 20, 2: 50, 3: 100, 4: 100}  # R6.3: four count as three
XI_ER_POINTS = {0: 0, 1: 10, 2: 30, 3: 50, 4: 70, 5: 100}  # R7
GROUP_SIZE = {"seq": 3, "pair": 2, "trip": 3, "quad": 4, "two": 2}
EVENTS_DOUBLED = (("tian_cheng", "天成", "dealer won on the deal"),
                  ("di_hu", "地胡", "won on the dealer's first discard"),
                  ("tian_ting", "天听", "declared ready before the first discard"),
                  ("zhe_zhuang", "折庄", "zhe zhuang"),
                  ("hai_di", "海底捞月", "won on the last card"))


@dataclass
class Item:
    """One line of the breakdown: what it adds to the total, and the rule book's section it comes from."""

    key: str
    label: str  # Chinese first
    label_en: str
    points: int  # what this line adds to the total; all items add up to the total
    rule: str  # RULES.md section
    detail: str = ""


def ceil10(x: int) -> int:
    """R6.2/R6.6: round up to a multiple of 10 (0 stays 0)."""
    return -(-x // 10) * 10


@dataclass
class Tally:
    """One reading being scored: what every item function reads, and the lines they add."""

    sc: _Scorer
    groups: tuple[Group, ...]  # the concealed groups of this reading
    place: int | None  # index of the concealed group holding the winning card
    hand_type: str  # qing | piao | ta (R5)
    n_wq: int  # sequences 1b2b3b (文钱)
    win_as_pong: bool  # a trip completed by a discard counts as a pong (option discard_triplet)
    decl_items: list[Item]
    conc_items: list[tuple[int, int, Item]]  # (kind, cards, item) of concealed trips and quads
    conc_counts: list[int]
    items: list[Item] = field(default_factory=list)
    total: int = 0  # running total once the bonuses are in (the doublings double it)
    raw: int = 0  # group points before 底胡's rounding
    di_hu: int = 0
    win_in: str | None = None
    n_extra: int = 0  # 喜儿 extras held (R7)
    win_kind: int | None = None  # the card the winning card is (a wild's: the card it stands for, R8)

    def add(self, key: str, zh: str, en: str, points: int, rule: str, detail: str = "") -> None:
        self.items.append(Item(key, zh, en, points, rule, detail))

    def double(self, key: str, zh: str, en: str, rule: str, factor: int = 2) -> None:
        """A doubling, written as the points it adds to the total so far."""
        self.add(key, f"{zh} ×{factor}", en, self.total * (factor - 1), rule)
        self.total *= factor


# --- 底胡: group points (R4, R6.1, R6.2) ---------------------------------------------------------------

def group_points(t: Tally) -> None:
    """R4 group points; R6.1 三老会齐 and 三文钱; a 清胡's 底胡 from its 把子 alone (R6.1, R11)."""
    sc = t.sc
    if t.hand_type == "qing":
        for k, units, _ in sc.counted_groups(t.conc_counts):
            t.items.append(sc.group_item(k, units, "把子", "R6.1", "ba_zi"))
        return
    t.items.extend(t.decl_items)
    t.items.extend(it for _, _, it in t.conc_items)
    three = [(d.kind, d.n, it) for d, it in zip(sc.hand.declared, t.decl_items, strict=False)] + t.conc_items
    so = sc.three_old(three)
    if so:
        t.items.append(so)
    if t.n_wq >= 3:  # R6.1 三文钱, R11
        for k in (K_1B, K_2B, K_3B):
            if sc.flips[k] < 2:
                t.items.append(sc.group_item(k, sc.conc_units(k, 3), "三文钱", "R6.1", "san_wen_qian"))
    if sc.rs.option("bazi_outside_qing"):
        held = {k for k, _, _ in t.conc_items}
        for k, units, _ in sc.counted_groups(t.conc_counts):
            if k not in held:
                t.items.append(sc.group_item(k, units, "把子", "R6.1 (option)", "ba_zi"))


def di_hu_rounding(t: Tally) -> None:
    """R6.2: group points rounded up to ten."""
    t.raw = sum(i.points for i in t.items)
    t.di_hu = ceil10(t.raw)
    if t.di_hu != t.raw:
        t.add("round", "底胡进整", "group points rounded up", t.di_hu - t.raw, "R6.2")


# --- bonuses (R6.3, R6.4, R7) -----------------------------------------------------------------------

def type_base(t: Tally) -> None:
    """R6.4: 成胡 20, a 清胡's base, a 飘胡's extra where the ruleset has one."""
    rs = t.sc.rs
    if t.hand_type == "qing":
        q = rs.qing_base
        t.add("qing", f"清胡 +{q}", f"qing hu base {q} (成胡 20 + {q - 20})", q, "R6.4")
        return
    t.add("cheng", "成胡", "won hand", 20, "R6.4")
    if t.hand_type == "piao" and rs.piao_extra:
        t.add("piao", "飘胡", "piao hu", rs.piao_extra, "R6.4")


def self_drawn(t: Tally) -> None:
    """R6.3 自摸."""
    if t.sc.hand.self_drawn:
        t.add("zimo", "自摸", "self-drawn", 10, "R6.3")


def win_shape(t: Tally) -> None:
    """R6.3: where the winning card sits — 吊头 (the pair), 丫子 (the middle), 拖尾 (3 of 123, 7 of 789)."""
    if t.place is None:
        return
    shape, k, _, _ = t.groups[t.place]
    if shape == "pair":
        t.win_in = "吊头"
        t.add("shape", "吊头", "winning card completes the pair", 10, "R6.3")
    elif shape == "seq":
        pos = t.win_kind - k
        if pos == 1:
            t.win_in = "丫子"
            t.add("shape", "丫子", "winning card in the middle", 10, "R6.3")
        elif (pos == 2 and k % 9 == 0) or (pos == 0 and k % 9 == 6):
            t.win_in = "拖尾"
            t.add("shape", "拖尾", "winning 3 of 123 / 7 of 789", 10, "R6.3")
        else:
            t.win_in = "两头"
    else:
        t.win_in = {"trip": "坎", "quad": "杠", "two": "将"}[shape]


def gang_kai(t: Tally) -> None:
    """R6.3 杠开: won on a quad's replacement card."""
    if "gang_kai" in t.sc.hand.events:
        t.add("gang_kai", "杠开", "won on a quad's replacement", 10, "R6.3")


def wen_qian(t: Tally) -> None:
    """R6.3 文钱: each sequence 1b2b3b (four count as three)."""
    if t.n_wq:
        name = {1: "单文钱", 2: "双文钱", 3: "三文钱", 4: "四文钱(算三)"}[t.n_wq]
        t.add("wen_qian", name, f"{t.n_wq} × 1b2b3b", WENQIAN_BONUS[t.n_wq], "R6.3")


def xi_er(t: Tally) -> None:
    """R7 喜儿 (option): points for the extras held, 200 for all five from the deal, doubled when one is 将."""
    sc = t.sc
    if not sc.rs.option("xi_er"):
        return
    t.n_extra = sum(sc.hand.concealed[N_PLAIN:])
    pts = XI_ER_POINTS[t.n_extra]
    if t.n_extra == 5 and all(k in sc.fd for k in range(N_PLAIN, N_PLAIN + 5)):
        pts = 200
    if any(j >= N_PLAIN for j in sc.hand.jiang):
        pts *= 2
    if pts:
        t.add("xi_er", f"喜儿 ×{t.n_extra}", f"{t.n_extra} bonus extras", pts, "R7")


# --- doublings (R6.4, R6.5, R7) and the final rounding (R6.6) -------------------------------------------

def piao_doubles(t: Tally) -> None:
    """R6.4/R7 飘胡 doubles; R6.5 闷飘 (nothing claimed from a discard) doubles again."""
    if t.hand_type != "piao":
        return
    t.double("piao_x2", "飘胡", "piao hu doubled", "R6.4" if t.sc.rs.piao_extra else "R7")
    claimed = any(d.how in ("pong", "exposed_kong") for d in t.sc.hand.declared) or t.win_as_pong
    if not claimed:
        t.double("men_piao", "闷飘", "all-concealed piao", "R6.5")


def events_double(t: Tally) -> None:
    """R6.5: 天成, 地胡, 天听, 折庄, 海底捞月 each double."""
    for ev, zh, en in EVENTS_DOUBLED:
        if ev in t.sc.hand.events:
            t.double(ev, zh, en, "R6.5")


def yi_hu_tou(t: Tally) -> None:
    """R7/R11 一胡头儿 (rulesets that have it): the only triplet-or-quad is one declared pong worth 1."""
    sc = t.sc
    if not sc.rs.yi_hu_tou or t.conc_items or len(t.decl_items) != 1:
        return
    d = sc.hand.declared[0]
    if d.how == "pong" and t.decl_items[0].points == 1 and all(n < 3 for n in t.conc_counts):
        t.double("yi_hu_tou", "一胡头儿", "only one 1-point pong", "R7")


def qiong_hen(t: Tally) -> None:
    """R7 穷狠 (with 喜儿): no extras held doubles, ×4 when an extra was flipped as 将 (穷穷狠)."""
    if not t.sc.rs.option("xi_er") or t.n_extra:
        return
    if any(j >= N_PLAIN for j in t.sc.hand.jiang):
        t.double("qiong_qiong_hen", "穷穷狠", "no extras held, extra flipped", "R7", 4)
    else:
        t.double("qiong_hen_x2", "穷狠", "no extras held", "R7")


def qiong_hen_event(t: Tally) -> None:
    """R7 option: a hand dealt with no pair and no triplet (the event 穷狠) scores 300."""
    if "qiong_hen" in t.sc.hand.events:
        t.add("qiong_hen", "穷狠 = 300", "no pair and no triplet dealt: 300", 300 - t.total, "R7")
        t.total = 300


def final_rounding(t: Tally) -> None:
    """R6.6: the total rounded up to ten."""
    final = ceil10(t.total)
    if final != t.total:
        t.add("round_final", "进整", "total rounded up", final - t.total, "R6.6")
        t.total = final


ItemRule = Callable[[Tally], None]
GROUP_POINTS: tuple[ItemRule, ...] = (group_points, di_hu_rounding)
BONUSES: tuple[ItemRule, ...] = (type_base, self_drawn, win_shape, gang_kai, wen_qian, xi_er)
DOUBLINGS: tuple[ItemRule, ...] = (piao_doubles, events_double, yi_hu_tou, qiong_hen, qiong_hen_event, final_rounding)


def concealed_counts(groups: tuple[Group, ...]) -> list[int]:
    """How many cards of each plain kind the concealed groups hold."""
    counts = [0] * N_PLAIN
    for shape, k, _, _ in groups:
        if shape == "seq":
            for j in range(3):
                counts[k + j] += 1
        else:
            counts[k] += GROUP_SIZE[shape]
    return counts


def group_cards(shape: str, k: int) -> list[str]:
    return [CODES[k + j] for j in range(3)] if shape == "seq" else [CODES[k]] * GROUP_SIZE[shape]
