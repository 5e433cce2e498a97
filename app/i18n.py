"""Chinese first, English available: locale files and a small t() helper."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from scoring.cards import NAMES_ZH
from scoring.hand import HOW_ZH
from scoring.messages import Msg, message
from vision.types import boxes_en

LANGS = {"zh": "中文", "en": "English"}


@lru_cache(maxsize=4)
def _table(lang: str) -> dict[str, str]:
    return json.loads((Path(__file__).parent / "locales" / f"{lang}.json").read_text(encoding="utf-8"))


def t(key: str, lang: str = "zh", **kw: object) -> str:
    s = _table(lang).get(key) or _table("zh").get(key) or key
    return s.format(**kw) if kw else s


CODE_KEYS = ("code", "old", "new", "head", "face")  # message values that are one card code
CODES_KEYS = ("codes", "apart", "given", "here", "there")  # ... a list of codes ("-" when empty)


def _value(key: str, v: Any, lang: str) -> Any:
    name = (lambda c: NAMES_ZH.get(c, c)) if lang == "zh" else str
    sep = "、" if lang == "zh" else " "  # English lists codes as a hand is written: 1t 1t hh
    if isinstance(v, Msg):  # a message inside another (the hand error behind "cannot be a hand")
        return say(v, lang)
    if key == "how" and lang == "zh":
        return HOW_ZH.get(v, v)
    if key == "hows":  # the ways a group can have been made
        return "或".join(HOW_ZH.get(h, h) for h in v) if lang == "zh" else " or ".join(v)
    if key in CODE_KEYS:
        return name(v)
    if key in CODES_KEYS:
        return sep.join(name(c) for c in v) or "-"
    if key == "boxes" and lang != "zh":
        return boxes_en(v)
    if key == "boxes":  # [code, reading's probability or None, detector score]
        return sep.join(f"{name(c)}（{p + ' / ' if p else ''}{t('det_score', lang)} {d}）" for c, p, d in v)
    return v


def say(msg: object, lang: str = "zh") -> str:
    """A message (scoring.messages.Msg, or an error raised with one) in ``lang``: the locale's ``msg.KEY``
    template with its values, card codes by their names (English: en.json's template, the same text the code
    wrote, tests/conftest.py checks every message the tests make); the text itself for a plain string or a key
    with no template."""
    if isinstance(msg, BaseException):
        msg = message(msg)
    tpl = _table(lang).get(f"msg.{msg.key}") if isinstance(msg, Msg) else None
    if tpl is None:
        return str(msg)
    return tpl.format(**{k: _value(k, v, lang) for k, v in msg.values.items()})
