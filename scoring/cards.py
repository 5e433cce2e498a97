"""Card kinds, Chinese names and hand notation (RULES.md R1).

Kinds are indexed 0..34 in the class order every model uses:
``1t…9t 1b…9b 1w…9w qz hh bh fu lu shou xi cai``.
"""

from __future__ import annotations

import re
from collections import Counter

from .errors import HandError
from .messages import Msg

SUITS = ("t", "b", "w")
SUIT_ZH = {"t": "条", "b": "丙", "w": "万"}
RANK_ZH = "一二三四五六七八九"
HONOURS = ("qz", "hh", "bh")
EXTRAS = ("fu", "lu", "shou", "xi", "cai")

CODES: tuple[str, ...] = tuple(f"{r}{s}" for s in SUITS for r in range(1, 10)) + HONOURS + EXTRAS
INDEX: dict[str, int] = {c: i for i, c in enumerate(CODES)}
N_KINDS = len(CODES)  # 35
N_PLAIN = 30  # kinds of the 120-card deck; the five extras follow
COPIES = 4  # copies of each plain kind in a deck (RULES.md, the cards' table); one of each extra

NAMES_ZH: dict[str, str] = {f"{r + 1}{s}": f"{RANK_ZH[r]}{SUIT_ZH[s]}" for s in SUITS for r in range(9)}
NAMES_ZH.update({"qz": "千字", "hh": "红花", "bh": "白花",
                 "fu": "福", "lu": "禄", "shou": "寿", "xi": "禧", "cai": "财"})
NAMES_EN: dict[str, str] = {f"{r}{s}": f"{r} {name}" for s, name in (("t", "tiao"), ("b", "bing"),
                                                                    ("w", "wan")) for r in range(1, 10)}
NAMES_EN.update({"qz": "qian zi", "hh": "red flower", "bh": "white flower", "fu": "fu", "lu": "lu",
                 "shou": "shou", "xi": "xi", "cai": "cai"})

# Other spellings players type: traditional characters, 饼/筒 for 丙, 喜 for 禧, 財 福 祿 壽.
_ALIASES_ZH: dict[str, str] = {}
for _code, _zh in list(NAMES_ZH.items()):
    _ALIASES_ZH[_zh] = _code
for _r in range(9):
    for _alt, _s in (("饼", "b"), ("筒", "b"), ("餅", "b"), ("條", "t"), ("萬", "w")):
        _ALIASES_ZH[f"{RANK_ZH[_r]}{_alt}"] = f"{_r + 1}{_s}"
_ALIASES_ZH.update({"千": "qz", "红": "hh", "紅花": "hh", "白": "bh", "喜": "xi", "祿": "lu",
                    "壽": "shou", "財": "cai"})


def suit_of(k: int) -> str | None:
    return SUITS[k // 9] if k < 27 else None


def rank_of(k: int) -> int | None:
    return k % 9 + 1 if k < 27 else None


def is_extra(k: int) -> bool:
    return k >= N_PLAIN


_SEP = re.compile(r"[\s,，、;；]+")
_SHORTHAND = re.compile(r"^([1-9]+)([tbw])$")
_ZH_TOKEN = re.compile("|".join(sorted(map(re.escape, _ALIASES_ZH), key=len, reverse=True)))


def parse_cards(text: str | list[str] | tuple[str, ...]) -> list[str]:
    """Parse hand notation into a list of codes.

    Accepts ``123t 555b qz hh``, single codes, Chinese names (``一条 九丙 千字``, also run together
    as in ``一条二条三条``), commas, and lists of such tokens. Raises HandError naming the bad token.
    """
    tokens: list[str] = []
    if isinstance(text, str):
        tokens = [t for t in _SEP.split(text.strip()) if t]
    else:
        for part in text:
            if not isinstance(part, str):
                raise HandError(f"A card must be written as text, not {part!r}.")
            if part in INDEX:  # the common case: one code per list item
                tokens.append(part)
            else:
                tokens.extend(t for t in _SEP.split(part.strip()) if t)
    out: list[str] = []
    for tok in tokens:
        if tok in INDEX:
            out.append(tok)
            continue
        low = tok.lower()
        if low in INDEX:
            out.append(low)
            continue
        m = _SHORTHAND.match(low)
        if m:
            out.extend(f"{d}{m.group(2)}" for d in m.group(1))
            continue
        if tok in _ALIASES_ZH:
            out.append(_ALIASES_ZH[tok])
            continue
        # Chinese names run together: 一条二条三条 or 红花红花红花
        pieces = _ZH_TOKEN.findall(tok)
        if pieces and "".join(pieces) == tok:
            out.extend(_ALIASES_ZH[p] for p in pieces)
            continue
        shown = tok if len(tok) <= 30 else tok[:30] + "…"  # a pasted page is not echoed back whole
        shown = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in shown)  # control characters as escapes
        raise HandError(Msg("unknown_card", f"Unknown card '{shown}': use codes like 1t…9t, 1b…9b, 1w…9w, qz, hh, bh "
                            "(shorthand 123t, 555b) or Chinese names like 一条, 九丙, 千字.", token=shown))
    return out


def counts_of(cards: list[str]) -> list[int]:
    c = [0] * N_KINDS
    for code in cards:
        c[INDEX[code]] += 1
    return c


def format_cards(cards: list[str]) -> str:
    """Compact notation, suited runs grouped: ``123t 555b qz``."""
    cnt = Counter(cards)
    parts: list[str] = []
    for s in SUITS:
        digits = "".join(str(r) * cnt[f"{r}{s}"] for r in range(1, 10))
        if digits:
            parts.append(digits + s)
    for code in HONOURS + EXTRAS:
        parts.extend([code] * cnt[code])
    return " ".join(parts)


def zh(code: str) -> str:
    return NAMES_ZH[code]
