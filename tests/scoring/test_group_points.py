"""Every figure quoted under RULES.md R4 (and the R4 single table), through the public API."""

import pytest

from scoring import build_hand, score_hand

HOWS = ["pong", "concealed", "exposed_kong", "concealed_kong", "dealt_kong"]


def points(ruleset, jiang, code, how, n=None):
    """Group points of a hand holding just one group of ``code`` made ``how``."""
    flips = jiang.split().count(code)
    if how == "concealed":
        cards = " ".join([code] * (n or 3))
        hand = build_hand(concealed=cards, jiang=jiang, ruleset=ruleset)
    elif how == "from_deal":
        cards = " ".join([code] * (n or 4 - flips))
        hand = build_hand(concealed=cards, jiang=jiang, ruleset=ruleset, from_deal=code)
    else:
        size = {"pong": 3, "exposed_kong": 4}.get(how, 4 - flips)
        hand = build_hand(concealed="", declared=[([code] * size, how)], jiang=jiang, ruleset=ruleset)
    return score_hand(hand).group_points


FIVE = [
    ("nantong-double", "2t 3w", "hh", [4, 8, 16, 24, 32]),
    ("nantong-double", "2t 3w", "5b", [2, 4, 8, 12, 16]),
    ("nantong-double", "2t 3w", "2b", [4, 8, 16, 24, 32]),
    ("nantong-double", "4b 4b", "4w", [8, 16, 32, 48, 64]),
    ("nantong-double", "4b 4t", "4w", [8, 16, 32, 48, 64]),
    ("nantong-double", "hh hh", "qz", [16, 32, 64, 96, 128]),
    ("nantong-double", "hh bh", "qz", [16, 32, 64, 96, 128]),
    ("nantong-double", "hh bh", "9t", [16, 32, 64, 96, 128]),
    ("nantong-double", "hh 5w", "qz", [8, 16, 32, 48, 64]),
    ("nantong-double", "hh 5w", "bh", [8, 16, 32, 48, 64]),
    ("nantong-double", "hh 5w", "9t", [8, 16, 32, 48, 64]),
    ("nantong-double", "hh 5w", "5b", [4, 8, 16, 24, 32]),
    # 9w and 9b are not 老将 (R4)
    ("nantong-double", "2t 3w", "9w", [2, 4, 8, 12, 16]),
    # single table: 1 2 4 6 8 / 4 8 16 24 32 / 4 8 16 24 32 / 8 16 32 48 64
    ("nantong-single", "4t", "5b", [1, 2, 4, 6, 8]),
    ("nantong-single", "4t", "9w", [4, 8, 16, 24, 32]),
    ("nantong-single", "4t", "1b", [4, 8, 16, 24, 32]),
    ("nantong-single", "4t", "7w", [4, 8, 16, 24, 32]),
    ("nantong-single", "4t", "qz", [4, 8, 16, 24, 32]),
    ("nantong-single", "hh", "qz", [8, 16, 32, 48, 64]),
    ("nantong-single", "hh", "4b", [1, 2, 4, 6, 8]),
    ("nantong-single", "5w", "8t", [4, 8, 16, 24, 32]),
]


@pytest.mark.parametrize("ruleset,jiang,code,expected", FIVE)
def test_five_ways(ruleset, jiang, code, expected):
    got = [
        points(ruleset, jiang, code, "pong"),
        points(ruleset, jiang, code, "concealed"),
        points(ruleset, jiang, code, "exposed_kong"),
        points(ruleset, jiang, code, "concealed", n=4),  # a quad collected after the deal: 后摸
        points(ruleset, jiang, code, "dealt_kong"),
    ]
    assert got == expected


FLIPPED = [
    # remaining copies of a flipped kind: (ruleset, jiang, code, how, expected)
    ("nantong-double", "2t 3w", "2t", "pong", 8),
    ("nantong-double", "2t 3w", "2t", "concealed", 24),
    ("nantong-double", "2t 3w", "2t", "from_deal", 32),
    ("nantong-double", "4b 4b", "4b", "from_deal", 64),
    ("nantong-double", "4b 4b", "4b", "concealed_kong", 48),
    ("nantong-double", "4b 4t", "4b", "pong", 16),
    ("nantong-double", "4b 4t", "4b", "concealed", 48),
    ("nantong-double", "4b 4t", "4t", "from_deal", 64),
    ("nantong-double", "hh hh", "hh", "from_deal", 128),
    ("nantong-double", "hh hh", "hh", "dealt_kong", 128),
    ("nantong-double", "hh bh", "hh", "from_deal", 128),
    ("nantong-double", "hh bh", "hh", "pong", 32),
    ("nantong-double", "hh bh", "bh", "concealed", 96),
    ("nantong-double", "hh 5w", "hh", "from_deal", 64),
    ("nantong-double", "hh 5w", "hh", "pong", 16),
    ("nantong-double", "hh 5w", "hh", "concealed", 48),
    ("nantong-double", "hh 5w", "5w", "pong", 8),
    ("nantong-double", "hh 5w", "5w", "concealed", 24),
    ("nantong-double", "hh 5w", "5w", "from_deal", 32),
    ("nantong-single", "4t", "4t", "from_deal", 32),  # "三张翻将都可以算作龙"
]


@pytest.mark.parametrize("ruleset,jiang,code,how,expected", FLIPPED)
def test_flipped_kinds(ruleset, jiang, code, how, expected):
    n = 2 if jiang.split().count(code) == 2 and how == "concealed" else None
    assert points(ruleset, jiang, code, how, n) == expected


def test_two_remaining_concealed_without_deal_is_hou_mo():
    assert points("nantong-double", "4b 4b", "4b", "concealed", n=2) == 48


def test_three_old_applies_to_non_winning_hand():
    hand = build_hand(concealed="qz qz qz hh hh hh 5t", jiang="2t 3w",
                      declared=[("bh bh bh", "pong")])
    res = score_hand(hand)
    assert not res.is_win
    assert res.group_points == (8 + 8 + 4) * 2
    assert res.total == 40


def test_non_win_reports_rounded_group_points():
    hand = build_hand(concealed="hh hh hh 1t 5b", jiang="2t 3w", declared=[("555b", "pong")])
    res = score_hand(hand)
    assert (res.is_win, res.hand_type, res.group_points, res.total) == (False, None, 10, 10)


def test_the_ways_a_declared_group_can_be_made_follow_the_flips_and_come_cheapest_first():
    """R4 and build_hand's sizes: a pong is 3 cards of a kind flipped at most once, an exposed quad 4 of a kind never
    flipped, a concealed or dealt group 4 minus the flips; the first is the one worth least (what a photo reads by
    default, R9), and every way given is one build_hand takes."""
    from scoring.hand import declared_hows

    assert declared_hows(4, 0) == ["exposed_kong", "concealed_kong", "dealt_kong"]
    assert declared_hows(3, 0) == ["pong"]
    assert declared_hows(3, 1) == ["pong", "concealed_kong", "dealt_kong"]
    assert declared_hows(2, 2) == ["concealed_kong", "dealt_kong"]
    assert declared_hows(3, 2) == declared_hows(4, 1) == declared_hows(2, 1) == declared_hows(2, 0) == []
    for n, jiang in ((4, "2t 3w"), (3, "4b 3w"), (2, "4b 4b")):
        code = "4b" if "4b" in jiang else "7b"
        worth = [score_hand(build_hand(concealed="", jiang=jiang, declared=[([code] * n, how)], ruleset="nantong-double"))
                 .group_points for how in declared_hows(n, jiang.split().count(code))]
        assert worth == sorted(set(worth))  # each way worth more than the one before
