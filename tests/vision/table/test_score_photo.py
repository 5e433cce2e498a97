"""Photo → hu from recognitions built from synthetic ground truth: layout, scoring, repairs of misread
cards, the context and the errors a photo can give."""

import random

import pytest

from scoring.repair import Candidate, repair
from tests.vision.table.photo_helpers import _ctx, _recognition_from_gt, _twice_flipped_hand
from vision.table.context import PhotoContext, PhotoError
from vision.table.pipeline import score_recognition
from vision.types import Card, Recognition


def test_layout_and_score_match_the_expected_totals(hand_scenes):
    right = 0
    for gt in hand_scenes:
        ps = score_recognition(_recognition_from_gt(gt), _ctx(gt))
        right += ps.result.total == gt["expected_total"]
    assert right >= len(hand_scenes) - 1  # layout may merge a cluster that lies very close


def test_repair_fixes_one_misread_card_and_reports_it(hand_scenes):
    gt = hand_scenes[0]
    hand_codes = gt["hand"]["concealed"]

    def misread(cards):
        # the first concealed card is read as a kind that makes the hand impossible or no win
        i = next(i for i, c in enumerate(gt["cards"]) if c["group"] == "hand")
        true = cards[i].code
        wrong = "qz" if true != "qz" else "hh"
        cards[i] = Card(wrong, 0.55, [(wrong, 0.55), (true, 0.40), ("5b", 0.05)], cards[i].quad)

    ps = score_recognition(_recognition_from_gt(gt, misread), _ctx(gt))
    if ps.repair.changes:
        assert ps.result.total == gt["expected_total"]
        assert any("repaired" in w for w in ps.warnings)
    else:  # the misread happened to leave a legal win: no repair, nothing silent
        assert ps.result.is_win
    assert sorted(ps.repair.codes) == sorted(hand_codes) or not ps.repair.changes


@pytest.mark.parametrize("p_true,repaired", [(0.005, False), (0.03, True), (0.1, True)])
def test_a_repair_takes_only_readings_the_classifier_gives_some_weight(hand_scenes, p_true, repaired):
    """Readings of TABLE.repair_min_p or more are searched first; one down to TABLE.last_min_p only when nothing else makes
    a legal win; less, never."""
    from vision.table.knobs import TABLE

    assert TABLE.last_min_p < 0.03 < TABLE.repair_min_p <= 0.1 and 0.005 < TABLE.last_min_p
    gt = hand_scenes[0]

    def misread(cards):
        i = next(i for i, c in enumerate(gt["cards"]) if c["group"] == "hand")
        true = cards[i].code
        wrong = "qz" if true != "qz" else "hh"
        cards[i] = Card(wrong, 0.9, [(wrong, 0.9), (true, p_true)], cards[i].quad)

    try:
        ps = score_recognition(_recognition_from_gt(gt, misread), _ctx(gt))
    except PhotoError:
        ps = None
    if repaired:
        assert ps.repair.changes and ps.result.total == gt["expected_total"]
    else:  # a 0.5 % reading is no explanation: the hand is reported as seen, never silently changed
        assert ps is None or not ps.repair.changes


def test_no_repair_when_off(hand_scenes):
    gt = hand_scenes[1]

    def misread(cards):
        i = next(i for i, c in enumerate(gt["cards"]) if c["group"] == "hand")
        cards[i] = Card("qz", 0.5, [("qz", 0.5), (cards[i].code, 0.45)], cards[i].quad)

    ps = score_recognition(_recognition_from_gt(gt, misread), _ctx(gt), repair_on=False)
    assert not ps.repair.changes


def test_repair_ambiguity_is_not_applied():
    # two equally likely fixes leading to different hands: keep the reading, report it
    codes = "1t 2t 3t 4t 5t 6t 7t 8t 9t 1w 2w 3w 4w 5w 6w 7w 8w 9w 2b 3b 9b 9b".split()
    cands = [Candidate([(c, 0.99)], i) for i, c in enumerate(codes)]
    cands.append(Candidate([("qz", 0.4), ("1b", 0.3), ("4b", 0.3)], 22))  # 123b (文钱) or 234b
    rr = repair(cands, dict(jiang="2t 3w", is_win=True))
    assert rr.changes == [] and rr.ambiguous


def test_repair_takes_the_hands_context_for_each_set_of_codes_it_tries():
    """scoring.repair with a function for the hand's arguments: asked for every set of codes tried, and the
    winning card it names for the repaired codes is the one scored."""
    codes = "1t 2t 3t 4t 5t 6t 7t 8t 9t 1w 2w 3w 4w 5w 6w 7w 8w 9w 2b 3b 9b 9b".split()
    cands = [Candidate([(c, 0.99)], i) for i, c in enumerate(codes)]
    cands.append(Candidate([("qz", 0.6), ("4b", 0.4)], 22))  # 234b
    asked = []

    def kwargs(tried):
        asked.append(list(tried))
        return dict(jiang="2t 3w", is_win=True, win="4b" if "4b" in tried else None)

    rr = repair(cands, kwargs)
    assert [(ch.old, ch.new) for ch in rr.changes] == [("qz", "4b")] and rr.result.is_win
    assert asked[0][-1] == "qz" and rr.codes in asked
    assert not any("Winning card not given" in n for n in rr.result.notes)  # scored with 4b as the winning card
    static = repair(cands, dict(jiang="2t 3w", is_win=True))  # no winning card: the note says so
    assert any("Winning card not given" in n for n in static.result.notes)


def test_no_cards_and_too_few_cards():
    with pytest.raises(PhotoError, match="No cards"):
        score_recognition(Recognition(100, 100, []), PhotoContext(jiang=["2t", "3w"]))
    few = [Card("1t", 0.9, [("1t", 0.9)], [[10 + 30 * i, 10], [30 + 30 * i, 10], [30 + 30 * i, 100], [10 + 30 * i, 100]])
           for i in range(3)]
    with pytest.raises(PhotoError, match="too few"):
        score_recognition(Recognition(200, 200, few), PhotoContext(jiang=["2t", "3w"]))


def test_missing_jiang_is_a_clear_error(hand_scenes):
    gt = hand_scenes[2]
    rec = _recognition_from_gt(gt)
    rec.cards = [c for c, g in zip(rec.cards, gt["cards"], strict=True) if g["group"] != "jiang"]
    with pytest.raises(PhotoError, match="must lie apart"):
        score_recognition(rec, _ctx(gt))


def test_not_a_win_is_reported_with_group_points(hand_scenes):
    gt = hand_scenes[3]
    rec = _recognition_from_gt(gt)
    # drop two concealed cards: no longer a win
    idx = [i for i, g in enumerate(gt["cards"]) if g["group"] == "hand"][:2]
    rec.cards = [c for i, c in enumerate(rec.cards) if i not in idx]
    ps = score_recognition(rec, _ctx(gt), repair_on=False)
    assert not ps.result.is_win
    assert any("not a win" in w for w in ps.warnings)


def test_random_context_round_trip():
    rng = random.Random(0)
    from scoring.random_hands import random_winning_hand

    d = random_winning_hand(rng)
    ctx = PhotoContext.from_hand_file(d)
    assert ctx.win == d["win"]["card"] and ctx.jiang == d["jiang"]


def test_no_event_counted_is_a_default_to_confirm():
    """R9: 天成, 地胡, 天听, 折庄, 海底捞月 and 杠开 are what no photo shows; none counted is said, unless some are given."""
    plain = score_recognition(_twice_flipped_hand(), PhotoContext(win="8w", self_drawn=True))
    assert "no_events" in [d.key for d in plain.defaults]
    given = score_recognition(_twice_flipped_hand(), PhotoContext(win="8w", self_drawn=True, events=["hai_di"]))
    assert "no_events" not in [d.key for d in given.defaults] and given.result.total > plain.result.total
