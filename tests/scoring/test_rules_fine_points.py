"""R6–R8 and R11 fine points, rulesets and the open-question options."""

import pytest

from scoring import HandError, build_hand, score_hand
from scoring.rulesets import get_ruleset


def score(**kw):
    kw.setdefault("jiang", "2t 3w")
    return score_hand(build_hand(**kw), all_readings=True)


def keys(res):
    return [i.key for i in res.items]


def test_di_hu_rounding_examples():
    from scoring.score import ceil10

    assert [ceil10(x) for x in (0, 10, 11, 19, 20, 21)] == [0, 10, 20, 20, 20, 30]


def test_reading_choice_three_wen_qian_vs_triplets():
    # 111b 222b 333b vs three 文钱: the best total wins and both readings are listed
    res = score(concealed="123b 123b 123b 456t 789t 456w 789w 5t 5t", win="5t")
    assert res.readings == 2
    assert res.hand_type == "qing"
    totals = [r.total for r in res.all_readings]
    assert totals == sorted(totals, reverse=True) and res.total == totals[0]


def test_four_wen_qian_score_as_three():
    res = score(concealed="123b 123b 123b 123b 456t 789t 456w 5t 5t", jiang="2t 3w", win="5t")
    assert [i.points for i in res.items if i.key == "wen_qian"] == [100]


def test_shape_bonus_best_placement():
    # 5b can be the middle of 456b (丫子) or the end of 345b: the best placement is taken
    res = score(concealed="123t 456t 789t 345w 678w 456b 345b 9w 9w", jiang="2t 3w", win="5b")
    assert [i.label for i in res.items if i.key == "shape"] == ["丫子"]


def test_tuo_wei_789_and_123():
    r7 = score(concealed="123t 456t 111w 345w 678w 456b 789b 9w 9w", win="7b")
    assert [i.label for i in r7.items if i.key == "shape"] == ["拖尾"]
    r3 = score(concealed="123t 456t 111w 345w 678w 456b 123b 9w 9w", win="3b")
    assert [i.label for i in r3.items if i.key == "shape"] == ["拖尾"]


def test_discard_triplet_option_spoils_men_piao():
    base = dict(concealed="hh hh hh qz qz qz 666b 888t 555w 123b 777t bh bh", jiang="6t 8w", win="7t")
    default = score(**base)
    as_pong = score(**base, options={"discard_triplet": "pong"})
    assert "men_piao" in keys(default)
    assert "men_piao" not in keys(as_pong)
    assert as_pong.total < default.total


def test_bazi_outside_qing_option():
    base = dict(concealed="123t 123t 234t 456w 789w 456b hh hh hh 5t 5t", jiang="2t 3w", win="5t")
    off = score(**base)
    on = score(**base, options={"bazi_outside_qing": True})
    assert off.hand_type == "ta"
    assert on.total > off.total
    assert "ba_zi" in keys(on) and "ba_zi" not in keys(off)


def test_single_qing_base_80_and_piao_without_30():
    q = score(concealed="123t 456t 789t 234w 567w 678b 456b 5w 5w", jiang="4t", ruleset="nantong-single", win="5w")
    assert q.hand_type == "qing" and [i.points for i in q.items if i.key == "qing"] == [80]
    p = score(concealed="555b 666w 888t 222b qz qz qz 777w 9t 9t", jiang="4t", ruleset="nantong-single",
              declared=[("3b 3b 3b", "pong")], win="9t")
    assert p.hand_type == "piao" and "piao" not in keys(p)


def test_yi_hu_tou_not_when_concealed_triplet():
    res = score(concealed="777b 999w 456t 123w 678b 456w 5b 5b", jiang="4t", ruleset="nantong-single",
                declared=[("2w 2w 2w", "pong")], win="5b")
    assert "yi_hu_tou" not in keys(res)


def test_xi_er_option_single():
    base = dict(concealed="123t 456t 789t 234w 567w 678b 2b 2b", jiang="hh", ruleset="nantong-single",
                declared=[("3b 3b 3b", "pong")], win="2b")
    none_held = score(**base, options={"xi_er": True})
    assert "qiong_hen_x2" in keys(none_held)
    one = score(**{**base, "concealed": base["concealed"] + " fu"}, options={"xi_er": True})
    assert [i.points for i in one.items if i.key == "xi_er"] == [10]


def test_qiong_hen_event_scores_300():
    res = score(concealed="123t 456t 789t 234w 567w 678b 2b 2b", jiang="4t", ruleset="nantong-single",
                declared=[("3b 3b 3b", "pong")], win="2b", options={"qiong_hen": True}, events=["qiong_hen"])
    assert res.total == 300


def test_rugao_wild_completes_sequence_and_triplet():
    # fu stands for 2t (sequence) ; xi for the third hh
    res = score(concealed="1t fu 3t 456t 789w hh hh xi 222b 123b 9b 9b", ruleset="rugao",
                declared=[("555b", "pong")], win="9b")
    assert res.is_win and res.total == 70


def test_rugao_all_wild_group_takes_best_kind():
    res = score(concealed="fu lu shou 123t 456t 789w 456w 345b 678b 9b 9b", ruleset="rugao", win="9b")
    assert res.is_win
    # a reading with the three wilds as one group takes the 2t flipped-kind group (6 units × u 4)
    assert max(m.points for r in res.all_readings for m in r.melds) == 24


def test_rugao_wild_groups_no_points_option():
    base = dict(concealed="1t 2t 3t 456t 789w hh hh xi 222b 123b 9b 9b", ruleset="rugao",
                declared=[("555b", "pong")], win="9b")
    nat = score(**base)
    nop = score(**base, options={"wild_groups": "no_points"})
    assert nop.total < nat.total


def test_rugao_non_winning_wilds_add_nothing():
    res = score(concealed="hh hh fu 1t", ruleset="rugao")
    assert not res.is_win and res.group_points == 0


def test_win_unknown_card_no_shape_bonus():
    res = score(concealed="123t 456t 789w hh hh hh 222b 123b 9b 9b", declared=[("555b", "pong")], is_win=True)
    assert res.total == 60 and "shape" not in keys(res)


def test_two_card_flipped_group_or_pair():
    # 4b flipped twice: the two remaining 4b as their group (8 × 8 from the deal) beats using them as eyes
    res = score(concealed="4b 4b 123t 456t 789t 456w 789w 678b 5t 5t", jiang="4b 4b", win="5t", from_deal="4b")
    assert res.is_win and res.group_points == 64
    assert res.readings == 1  # as eyes, the two 5t would be left over
    eyes = score(concealed="4b 4b 123t 456t 789t 456w 789w 678b 555t", jiang="4b 4b", win="5t")
    assert eyes.is_win and eyes.readings == 1 and eyes.group_points == 4


def test_tian_cheng_without_win_card():
    res = score(concealed="333w 333b 123t 456t 789t 456w 789w 9w 9w", jiang="3b 3t", from_deal="3b",
                events=["tian_cheng"])
    assert res.total == 200


def test_an_option_set_on_a_ruleset_it_does_not_belong_to_is_refused_in_one_sentence():
    from scoring.rulesets import options_of

    assert options_of("nantong-double") == ["bazi_outside_qing", "discard_triplet"]
    assert "xi_er" in options_of("nantong-single") and "wild_groups" in options_of("rugao")
    for ruleset, opts in (("rugao", {"xi_er": True}), ("nantong-double", {"qiong_hen": True}),
                          ("nantong-single", {"wild_groups": "no_points"})):
        with pytest.raises(HandError, match="option .* belongs to the"):
            get_ruleset(ruleset, opts)
    assert get_ruleset("nantong-double", {"wild_groups": "natural"}).option("wild_groups") == "natural"  # its default


def test_a_wild_winning_card_earns_the_shape_of_the_card_it_stands_for_in_rugao():
    """R8 with R11: won on a 百搭 completing the pair it earns 吊头, completing a 1b_3b 丫子 (it stands for 2b, which a
    natural 2b of the hand's triplet could have been too); option wild_win_shape=none gives neither."""
    from scoring import build_hand, score_hand

    def shapes(concealed: str, **options) -> tuple[int, list[str]]:
        res = score_hand(build_hand(concealed=concealed, jiang="2t 3w", declared=[("555b", "pong")], ruleset="rugao",
                                    options=options, win="fu"))
        return res.total, [i.label for i in res.items if i.key == "shape"]

    assert shapes("123t 456t 789w hh hh hh 222b 123b 9b fu") == (70, ["吊头"])
    assert shapes("123t 456t 789w hh hh hh 222b 1b fu 3b 9b 9b") == (70, ["丫子"])
    assert shapes("123t 456t 789w hh hh hh 222b 123b 9b fu", wild_win_shape="none") == (60, [])
