"""The core types: a recognition and its cards round-trip through to_dict/from_dict, are validated, and slice."""

from __future__ import annotations

import json

import pytest

from vision.types import SCHEMA, Card, Recognition, RecordError


def _rec() -> Recognition:
    cards = [Card("1t", 0.93, [("1t", 0.93), ("2t", 0.05)], [[0, 0], [10, 0], [10, 50], [0, 50]], 0.8),
             Card("hh", 0.51, [("hh", 0.51), ("bh", 0.4)], [[20, 0], [30, 0], [30, 50], [20, 50]], 0.4, recovered=0.7)]
    spare = Card("5w", 0.9, [("5w", 0.9)], [[40, 0], [50, 0], [50, 50], [40, 50]], 0.2, judged=0.66)
    return Recognition(640, 480, cards, {"detect": 12.5}, "changpai-v17", [spare], 0.45)


def test_round_trip_through_json():
    rec = _rec()
    d = json.loads(json.dumps(rec.to_dict()))
    assert d["schema"] == SCHEMA and d["spares"] and d["det_conf"] == 0.45
    back = Recognition.from_dict(d)
    assert back == rec


def test_reads_every_field_as_asdict_writes_them():
    from dataclasses import asdict

    rec = _rec()
    assert Recognition.from_dict(json.loads(json.dumps(asdict(rec)))) == rec


@pytest.mark.parametrize("bad, says", [
    ([], "must be an object"),
    ({"width": 10}, "has no 'height'"),
    ({"width": 10, "height": 10, "cards": {}}, "must be lists"),
    ({"width": 10, "height": 10, "cards": [{"code": "zz", "confidence": 1, "quad": [[0, 0]] * 4}]}, "not a card code"),
    ({"width": 10, "height": 10, "cards": [{"code": "1t", "confidence": 1, "quad": [[0, 0]] * 3}]}, "3 corners"),
    ({"width": 10, "height": 10, "cards": [{"code": "1t", "confidence": "x", "quad": [[0, 0]] * 4}]}, "wrong type"),
    ({"width": 0, "height": 10, "cards": []}, "positive size"),
    ({"schema": SCHEMA + 1, "width": 10, "height": 10, "cards": []}, "newer changpai"),
])
def test_a_bad_record_is_one_sentence(bad, says):
    with pytest.raises(RecordError, match=says):
        Recognition.from_dict(bad)


def test_slicing_keeps_the_photo_and_the_model():
    rec = _rec()
    assert len(rec) == 2 and rec[1].code == "hh"
    part = rec[[1]]
    assert isinstance(part, Recognition) and [c.code for c in part.cards] == ["hh"]
    assert (part.width, part.height, part.model, len(part.spares)) == (640, 480, "changpai-v17", 1)
    assert [c.code for c in rec[:1].cards] == ["1t"]


def test_a_cards_place_is_written_and_read_in_one_spelling():
    from vision.table.hand_score import layout_from_roles
    from vision.types import meld_role, parse_role

    assert parse_role(meld_role(10)) == ("meld", 10) and parse_role("jiang") == ("jiang", None)
    for bad in ("meld", "meld:x", "table", ""):
        with pytest.raises(RecordError, match="A card's place is one of"):
            parse_role(bad)
    roles = ["hand"] * 3 + [meld_role(10)] * 3 + [meld_role(9)] * 3 + ["jiang", "ignored"]
    lay = layout_from_roles(roles)
    assert lay.melds == [[6, 7, 8], [3, 4, 5]] and lay.jiang == [9] and lay.ignored == [10]  # group 9 before 10
    assert [lay.role(i) for i in range(len(roles))] == ["hand"] * 3 + [meld_role(1)] * 3 + [meld_role(0)] * 3 + \
        ["jiang", "ignored"]
