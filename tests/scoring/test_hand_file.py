"""The hand file at the boundary: any JSON value in any field is scored only when it has the field's type, and is
one sentence naming the field otherwise; files in any encoding an editor saves; nesting without end."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import HandError, hand_from_dict, score_hand
from scoring.api import load_hand_file
from scoring.hand_file import FIELDS

BASE = {"jiang": ["2t", "3w"], "concealed": "123t 456t 789w hh hh hh 222b 123b 9b 9b", "declared": [{"cards": "555b", "how": "pong"}],
        "win": {"card": "9b", "self_drawn": False}, "dealer": False, "events": [], "options": {}, "ruleset": "nantong-double"}
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)
# what each field may hold when a hand is scored
ALLOWED = {"dealer": (bool,), "events": (list, type(None)), "win": (dict, type(None)), "options": (dict, type(None)),
           "ruleset": (str,), "name": (str,), "note": (str,), "expected_total": (int,), "declared": (list, type(None)),
           "jiang": (str, list, type(None)), "concealed": (str, list, type(None)), "from_deal": (str, list, type(None))}


@settings(max_examples=400, deadline=None)
@given(field=st.sampled_from(FIELDS), value=JSON)
def test_any_value_in_any_field_is_a_sentence_or_a_rightly_typed_hand(field, value):
    d = dict(BASE, **{field: value})
    try:
        res = score_hand(hand_from_dict(d))
    except HandError as e:
        assert str(e) and "\n" not in str(e)
        return
    assert isinstance(value, ALLOWED[field]) and not (field == "expected_total" and isinstance(value, bool))
    assert isinstance(res.total, int)


@settings(max_examples=200, deadline=None)
@given(win=JSON)
def test_any_value_in_win_is_a_sentence_or_a_rightly_typed_win(win):
    try:
        hand_from_dict(dict(BASE, win=win))
    except HandError:
        return
    assert win is None or (isinstance(win, dict) and isinstance(win.get("self_drawn", False), bool))


@pytest.mark.parametrize("field, value, says", [
    ("dealer", "false", "The hand's 'dealer' must be true or false, not a string (\"false\")"),
    ("win", {"card": "9b", "self_drawn": "false"}, "'win.self_drawn' must be true or false"),
    ("concealed", 5, "'concealed' must be cards"),
    ("cards", None, "Unknown field"),
    ("win", {"card": 7}, "'win.card' must be a card string"),
    ("options", [1, 2], "'options' must be an object"),
    ("events", "tian_cheng", "'events' must be a list of event names"),
    ("declared", [{"cards": None, "how": "pong"}], "'declared[1].cards' must be cards"),
])
def test_a_wrongly_typed_field_is_named(field, value, says):
    with pytest.raises(HandError, match=re.escape(says)):
        hand_from_dict(dict(BASE, **{field: value}))


def test_a_string_false_never_scores_as_true():
    right = score_hand(hand_from_dict(BASE)).total
    assert right == 70
    for bad in (dict(BASE, dealer="false"), dict(BASE, win={"card": "9b", "self_drawn": "false"})):
        with pytest.raises(HandError):
            hand_from_dict(bad)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16"])
def test_a_hand_file_in_any_editors_encoding(encoding):
    (hand,) = load_hand_file(json.dumps(BASE, ensure_ascii=False).encode(encoding))
    assert score_hand(hand_from_dict(hand)).total == 70


def test_bytes_that_are_not_text_and_nesting_without_end_are_sentences():
    with pytest.raises(HandError, match="not text"):
        load_hand_file(b"\x80\x81{}")
    with pytest.raises(HandError, match="nests too deeply"):
        load_hand_file("[" * 100_000 + "]" * 100_000)
