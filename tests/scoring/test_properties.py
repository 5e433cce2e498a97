"""Property tests over random legal winning hands (hypothesis drives the seed)."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import hand_from_dict, score_dict, score_hand
from scoring.random_hands import random_winning_hand

seeds = st.integers(min_value=0, max_value=2**32 - 1)
rulesets = st.sampled_from(["nantong-double", "nantong-single"])


def draw(seed, ruleset, p_seq=0.5):
    return random_winning_hand(random.Random(seed), ruleset, p_seq=p_seq)


@settings(max_examples=300, deadline=None)
@given(seeds, rulesets, st.sampled_from([0.0, 0.5, 1.0]))
def test_random_hands_are_wins_and_items_add_up(seed, ruleset, p_seq):
    d = draw(seed, ruleset, p_seq)
    res = score_dict(d, all_readings=True)
    assert res.is_win
    assert res.total % 10 == 0 and res.total > 0
    assert sum(i.points for i in res.items) == res.total
    assert all(r.total <= res.total for r in res.all_readings)
    assert len(res.all_readings) == res.readings


@settings(max_examples=150, deadline=None)
@given(seeds, rulesets)
def test_order_of_concealed_cards_changes_nothing(seed, ruleset):
    d = draw(seed, ruleset)
    a = score_dict(d)
    random.Random(seed + 1).shuffle(d["concealed"])
    b = score_dict(d)
    assert (a.total, a.hand_type, [i.points for i in a.items]) == (b.total, b.hand_type, [i.points for i in b.items])


@settings(max_examples=150, deadline=None)
@given(seeds, rulesets)
def test_zimo_never_lowers_the_total(seed, ruleset):
    d = draw(seed, ruleset)
    d["win"]["self_drawn"] = False
    off = score_dict(d).total
    d["win"]["self_drawn"] = True
    assert score_dict(d).total >= off


@settings(max_examples=100, deadline=None)
@given(seeds)
def test_hand_file_round_trip(seed):
    d = draw(seed, "nantong-double")
    h = hand_from_dict(d)
    again = hand_from_dict(h.to_dict())
    assert score_hand(again).total == score_hand(h).total
