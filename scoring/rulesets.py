"""Rulesets as data (RULES.md R3, R4, R6, R7, R8) and the open questions as named options.

A Ruleset is immutable; ``with_options`` returns a new one, so no call can leak state into another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from .cards import INDEX, rank_of
from .errors import HandError

LAO_JIANG_DOUBLE = frozenset(INDEX[c] for c in ("qz", "hh", "bh", "9t"))  # 四老将, R4
LAO_JIANG_SINGLE = frozenset(INDEX[c] for c in ("qz", "hh", "bh"))  # 常将 honours, R4 single

# Every option, its allowed values, default and meaning. Open questions of RULES.md are options,
# never decided silently.
OPTIONS: dict[str, tuple[tuple[Any, ...], Any, str]] = {
    "bazi_outside_qing": (
        (False, True), False,
        "把子 also in 塌胡/飘胡: a kind held 3+ times in the concealed hand but read partly in "
        "sequences scores as a concealed triplet/quad too (RULES.md open question; seed 002).",
    ),
    "discard_triplet": (
        ("concealed", "pong"), "concealed",
        "A concealed triplet completed by another player's discard counts as concealed "
        "(default) or as a pong, which also spoils 闷飘 (RULES.md open question, R11).",
    ),
    "wild_groups": (
        ("natural", "no_points"), "natural",
        "rugao: a group completed by a wild (百搭) scores as if natural (default, R8) or scores "
        "nothing (RULES.md open question).",
    ),
    "wild_win_shape": (
        ("natural", "none"), "natural",
        "rugao: a wild (百搭) that is the winning card stands for the card it completes and earns that placement's "
        "shape bonus (吊头, 丫子, 拖尾) as if natural (default, R8 with R11), or earns none.",
    ),
    "qiong_hen": (
        (False, True), False,
        "nantong-single: 穷狠, dealt cards with no pair and no triplet score 300 (R7, event "
        "'qiong_hen').",
    ),
    "xi_er": (
        (False, True), False,
        "nantong-single: the five extras are 喜儿 bonus cards (R7).",
    ),
}

# the options that belong to some rulesets only (the others apply to every ruleset), and their Chinese names
OPTION_RULESETS = {"wild_groups": ("rugao",), "wild_win_shape": ("rugao",), "qiong_hen": ("nantong-single",),
                   "xi_er": ("nantong-single",)}
OPTION_ZH = {"bazi_outside_qing": "把子", "discard_triplet": "点炮成坎", "wild_groups": "百搭成组", "wild_win_shape": "百搭胡张",
             "qiong_hen": "穷狠",
             "xi_er": "喜儿"}


def options_of(ruleset: str) -> list[str]:
    """The options a ruleset takes (OPTIONS' order)."""
    return [k for k in OPTIONS if ruleset in OPTION_RULESETS.get(k, (ruleset,))]


def _option_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "yes", "on", "1"):
        return True
    if low in ("false", "no", "off", "0"):
        return False
    return text


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """Options written KEY=VALUE (the command line's --option), yes/no words as booleans; which keys and values a
    ruleset takes is get_ruleset's to check."""
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise HandError(f"An option is KEY=VALUE, e.g. discard_triplet=pong, not {pair!r}.")
        k, v = pair.split("=", 1)
        out[k.strip()] = _option_value(v.strip())
    return out


EVENTS = ("tian_cheng", "di_hu", "tian_ting", "zhe_zhuang", "hai_di", "gang_kai", "qiong_hen")


@dataclass(frozen=True)
class Ruleset:
    name: str
    n_jiang: int  # R3
    qing_base: int  # R6.4 / R7: 100 double, 80 single
    piao_extra: int  # R6.4: +30 in double, none in single
    wilds: bool  # R8: extras are 百搭
    single_u: bool  # R4 single table
    yi_hu_tou: bool  # R7 一胡头儿
    options: Mapping[str, Any] = field(default_factory=dict)

    def option(self, key: str) -> Any:
        return self.options.get(key, OPTIONS[key][1])

    def with_options(self, opts: Mapping[str, Any] | None) -> Ruleset:
        merged = dict(self.options)
        for key, value in (opts or {}).items():
            if key not in OPTIONS:
                raise HandError(f"Unknown ruleset option {key!r}; known options: {', '.join(OPTIONS)}.")
            allowed = OPTIONS[key][0]
            if value not in allowed:
                raise HandError(f"Option {key!r} must be one of {list(allowed)}, not {value!r}.")
            merged[key] = value
        for key, value in merged.items():  # one that is not its default, on a ruleset it does not belong to
            if value != OPTIONS[key][1] and key not in options_of(self.name):
                raise HandError(f"The {OPTION_ZH[key]} option ({key}) belongs to the {' or '.join(OPTION_RULESETS[key])} ruleset.")
        return replace(self, options=MappingProxyType(merged))

    @property
    def uses_extras(self) -> bool:
        return self.wilds or bool(self.option("xi_er"))

    def unit_values(self, jiang: tuple[int, ...]) -> list[int]:
        """u(card) for all 35 kinds given the flipped kinds (R4)."""
        return list(_u_single(tuple(jiang)) if self.single_u else _u_double(tuple(jiang)))


@lru_cache(maxsize=1024)
def _u_double(jiang: tuple[int, ...]) -> tuple[int, ...]:
    """R4 double: u = 2·2^hits (ordinary) or 4·2^hits (老将); hits = flips in the card's 将 group."""

    def group(k: int) -> str:
        if k in LAO_JIANG_DOUBLE:
            return "lao"
        r = rank_of(k)
        return f"r{r}" if r is not None else f"x{k}"

    groups = [group(j) for j in jiang]
    u = []
    for k in range(len(INDEX)):
        g = group(k)
        hits = groups.count(g)
        base = 4 if g == "lao" else 2
        u.append(base << hits)
    return tuple(u)


@lru_cache(maxsize=1024)
def _u_single(jiang: tuple[int, ...]) -> tuple[int, ...]:
    """R4 single: ordinary 1; ranks 1/9 and the flipped family 4; qz hh bh 4, or 8 on a 老将 flip."""
    flip_lao = any(j in LAO_JIANG_SINGLE for j in jiang)
    families = {rank_of(j) % 3 for j in jiang if rank_of(j) is not None}
    u = []
    for k in range(len(INDEX)):
        r = rank_of(k)
        if k in LAO_JIANG_SINGLE:
            u.append(8 if flip_lao else 4)
        elif r is None:
            u.append(1)
        elif r in (1, 9) or r % 3 in families:
            u.append(4)
        else:
            u.append(1)
    return tuple(u)


RULESETS: dict[str, Ruleset] = {
    "nantong-double": Ruleset("nantong-double", 2, 100, 30, False, False, False),
    "nantong-single": Ruleset("nantong-single", 1, 80, 0, False, True, True),
    "rugao": Ruleset("rugao", 2, 100, 30, True, False, False),
}


_MADE: dict[tuple, Ruleset] = {}  # rulesets are frozen: one per name and options, made once


def get_ruleset(name: str, options: Mapping[str, Any] | None = None) -> Ruleset:
    try:
        key = (name, tuple(sorted((options or {}).items())))
        hash(key)
    except TypeError:  # an unhashable option value: with_options says what is wrong with it
        key = None
    if key is not None and key in _MADE:
        return _MADE[key]
    try:
        rs = RULESETS[name]
    except (KeyError, TypeError):
        raise HandError(f"Unknown ruleset {str(name)[:30]!r}; choose one of {', '.join(RULESETS)}.") from None
    made = rs.with_options(options)
    if key is not None and len(_MADE) < 256:
        _MADE[key] = made
    return made
