"""RULES.md R10: the worked examples are golden tests, items checked as well as totals."""

import pytest

from scoring import build_hand, score_hand

EXAMPLES = [
    # id, ruleset, jiang, declared, concealed, win, tsumo, extra kwargs, type, total
    ("E1", "nantong-double", "2t 3w", [("555b", "pong")],
     "123t 456t 789w hh hh hh 222b 123b 9b 9b", "9b", False, {}, "ta", 70),
    ("E2", "nantong-double", "6t 8w", [],
     "hh hh hh qz qz qz 666b 888t 555w 123b 777t bh bh", "7t", True, {}, "piao", 480),
    ("E3", "nantong-double", "2t 3w", [],
     "123t 123t 123t 456w 789w 456b 123b 5t 5t", "5t", False, {}, "qing", 170),
    ("E4", "nantong-double", "hh hh", [("qz qz qz", "pong")],
     "hh hh 999t 234w 567w 345b 666t 8b 8b", "5w", False, {"from_deal": "hh"}, "ta", 200),
    ("E5", "nantong-single", "4t", [("2w 2w 2w", "pong")],
     "777b 999w 456t 123w 678b 456w 5b 5b", "5b", True, {}, "ta", 60),
    ("E6", "nantong-single", "hh", [("3b 3b 3b", "pong")],
     "123t 456t 789t 234w 567w 678b 2b 2b", "2b", False, {}, "ta", 80),
    ("E7", "nantong-double", "5t 7w", [("qz qz qz", "pong"), ("bh bh bh bh", "dealt_kong")],
     "hh hh hh 345t 678w 123b 789b 1w 1w", "7b", False, {}, "ta", 140),
    ("E8", "nantong-double", "8t 8w", [("8b 8b 8b", "pong")],
     "123b 123b 123b 555t 666w qz qz qz 7t 7t", "7t", True, {}, "piao", 420),
    ("E9", "nantong-double", "3b 3t", [],
     "333w 333b 123t 456t 789t 456w 789w 9w 9w", None, False,
     {"from_deal": "3b", "dealer": True, "events": ["tian_cheng"]}, "ta", 200),
    ("E10", "nantong-double", "2t 3w", [("5w 5w 5w 5w", "exposed_kong"),
                                         ("6w 6w 6w 6w", "concealed_kong"),
                                         ("9t 9t 9t 9t", "dealt_kong")],
     "123t 456t 789b 456b 7w 7w", "4b", True, {"events": ["gang_kai"]}, "ta", 100),
    ("E11", "nantong-double", "1w 2b", [("111t", "pong"), ("222t", "pong")],
     "777b 888w 222w bh bh bh 999b 5t 5t", "5t", True, {"events": ["hai_di"]}, "piao", 440),
]


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_worked_example(ex):
    _, rs, jiang, declared, concealed, win, tsumo, kw, htype, total = ex
    hand = build_hand(concealed=concealed, jiang=jiang, declared=declared, ruleset=rs, win=win,
                      self_drawn=tsumo, **kw)
    res = score_hand(hand)
    assert res.is_win
    assert res.hand_type == htype
    assert res.total == total
    assert sum(i.points for i in res.items) == total


def _points(res, key):
    return [i.points for i in res.items if i.key == key]


def test_e1_items():
    res = score_hand(build_hand(concealed="123t 456t 789w hh hh hh 222b 123b 9b 9b", jiang="2t 3w",
                                declared=[("555b", "pong")], win="9b"))
    assert sorted(_points(res, "group")) == [2, 8, 8]
    assert _points(res, "round") == [2]
    assert _points(res, "cheng") == [20]
    assert _points(res, "wen_qian") == [20]
    assert [i.label for i in res.items if i.key == "shape"] == ["吊头"]
    assert all(i.rule.startswith("R") for i in res.items)


def test_e3_ba_zi_items():
    res = score_hand(build_hand(concealed="123t 123t 123t 456w 789w 456b 123b 5t 5t", jiang="2t 3w",
                                win="5t"))
    assert sorted(_points(res, "ba_zi")) == [4, 8, 24]
    assert _points(res, "qing") == [100]


def test_e7_three_old_items():
    res = score_hand(build_hand(concealed="hh hh hh 345t 678w 123b 789b 1w 1w", jiang="5t 7w",
                                declared=[("qz qz qz", "pong"), ("bh bh bh bh", "dealt_kong")],
                                win="7b"))
    assert _points(res, "san_lao") == [44]
    assert [i.label for i in res.items if i.key == "shape"] == ["拖尾"]


def test_e7_dealt_quad_read_from_concealed_cards():
    """The dealt quad may be given as concealed cards plus from_deal instead of declared."""
    res = score_hand(build_hand(concealed="hh hh hh bh bh bh bh 345t 678w 123b 789b 1w 1w",
                                jiang="5t 7w", declared=[("qz qz qz", "pong")], win="7b",
                                from_deal="bh"))
    assert res.total == 140


def test_e8_three_wen_qian_items():
    res = score_hand(build_hand(concealed="123b 123b 123b 555t 666w qz qz qz 7t 7t", jiang="8t 8w",
                                declared=[("8b 8b 8b", "pong")], win="7t", self_drawn=True))
    assert _points(res, "san_wen_qian") == [4, 4, 4]
    assert _points(res, "wen_qian") == [100]
    assert "men_piao" not in [i.key for i in res.items]


def test_e2_men_piao_and_readings():
    res = score_hand(build_hand(concealed="hh hh hh qz qz qz 666b 888t 555w 123b 777t bh bh",
                                jiang="6t 8w", win="7t", self_drawn=True))
    keys = [i.key for i in res.items]
    assert "men_piao" in keys and "piao_x2" in keys and "zimo" in keys
