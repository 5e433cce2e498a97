"""Chinese first, English available: locale files and a small t() helper."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

LANGS = {"zh": "中文", "en": "English"}


@lru_cache(maxsize=4)
def _table(lang: str) -> dict[str, str]:
    return json.loads((Path(__file__).parent / "locales" / f"{lang}.json").read_text(encoding="utf-8"))


def t(key: str, lang: str = "zh", **kw: object) -> str:
    s = _table(lang).get(key) or _table("zh").get(key) or key
    return s.format(**kw) if kw else s
