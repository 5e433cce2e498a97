"""The messages' texts live in app/locales beside each other: every message the code makes has an English and a
Chinese template, neither locale keeps a template no code makes, and a template asks only for values its message
carries. (That the English template renders the very text the code wrote is checked on every message the whole
test suite makes: tests/conftest.py.)"""

from __future__ import annotations

import ast
import json
import string
from pathlib import Path

import pytest

from app.i18n import say
from scoring.messages import Msg
from vision.table.hand_score import READ_AS

ROOT = Path(__file__).resolve().parents[2]
LOCALES = {lang: json.loads((ROOT / "app" / "locales" / f"{lang}.json").read_text(encoding="utf-8")) for lang in ("en", "zh")}


def _templates(lang: str) -> dict[str, str]:
    return {k[4:]: v for k, v in LOCALES[lang].items() if k.startswith("msg.")}


def _calls() -> dict[str, set[str]]:
    """Each message key the code makes (a constant key, a key chosen among constants, or meld_<how>) and the names
    of the values its calls pass."""
    made: dict[str, set[str]] = {}
    for d in ("scoring", "vision", "app"):
        for p in (ROOT / d).rglob("*.py"):
            tree = ast.parse(p.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Msg" and node.args:
                    names = {kw.arg or "**" for kw in node.keywords}  # "**": values passed as a dict
                    first = node.args[0]
                    if isinstance(first, ast.Constant):
                        made.setdefault(first.value, set()).update(names)
                    elif isinstance(first, ast.JoinedStr):  # Msg(f"meld_{how}", ...)
                        for how in READ_AS:
                            made.setdefault(f"meld_{how}", set()).update(names)
                    else:  # a key chosen among constants a few lines up: every msg key named in this module
                        for c in ast.walk(tree):
                            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in _templates("en"):
                                made.setdefault(c.value, set()).update(names)
    return made


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_every_message_has_an_english_and_a_chinese_template_and_no_template_is_dead():
    made = _calls()
    assert len(made) >= 60
    for lang in ("en", "zh"):
        have = set(_templates(lang))
        assert set(made) - have == set(), f"{lang}.json lacks templates"
        assert have - set(made) == set(), f"{lang}.json keeps templates no code makes"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_template_asks_only_for_values_its_message_carries(lang):
    made = _calls()
    for key, tpl in _templates(lang).items():
        if "**" not in made[key]:
            assert _fields(tpl) <= made[key], (lang, key, _fields(tpl) - made[key])


def test_the_page_says_a_message_in_english_from_the_locale_file(monkeypatch):
    msg = Msg("too_many", "Too many 5b: 5 in the hand, but the deck has only 4.", code="5b", n=5, limit=4)
    assert say(msg, "en") == str(msg)
    assert say(msg, "zh") == LOCALES["zh"]["msg.too_many"].format(code="五丙", n=5, limit=4)
    from app import i18n

    monkeypatch.setitem(i18n._table("en"), "msg.too_many", "{code}: {n} of {limit}")
    assert say(msg, "en") == "5b: 5 of 4"  # the page reads the locale, not the code's text
