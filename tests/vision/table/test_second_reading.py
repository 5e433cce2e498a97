"""Photo → hu's second reading (vision.table.second_reading): when it is made, which reading is kept, and what the
table is told when the two readings give other totals."""

import pytest

from tests.conftest import SAMPLES, requires_model
from tests.vision.table.photo_helpers import _ctx, _recognition_from_gt, _sure
from vision.table.context import PhotoError
from vision.table.second_reading import clean, score_read_twice
from vision.types import Card, Recognition


def _never():
    raise AssertionError("a clean first reading is not read again")


def _misread_without_repair(gt):
    """The recognition of ``gt`` with one hand card read as a kind that breaks the win and no alternative that mends it."""
    rec, hand = _sure(gt)
    i = hand[0]
    wrong = "qz" if rec.cards[i].code != "qz" else "hh"
    rec.cards[i] = Card(wrong, 0.95, [(wrong, 0.95)], rec.cards[i].quad, 0.9)
    return rec


def test_a_clean_first_reading_is_not_read_again(hand_scenes):
    gt = hand_scenes[0]
    rec, _ = _sure(gt)
    ps = score_read_twice(rec, _ctx(gt), _never)
    assert clean(ps) and ps.result.total == gt["expected_total"] and "second_reading" not in ps.timings_ms


def test_a_second_reading_that_makes_the_win_is_kept_and_the_first_total_is_said(hand_scenes):
    gt = hand_scenes[0]
    first = _misread_without_repair(gt)
    second, _ = _sure(gt)
    ps = score_read_twice(first, _ctx(gt), lambda: second)
    assert ps.recognition is second and ps.result.total == gt["expected_total"] and "second_reading" in ps.timings_ms
    said = [w for w in ps.warnings if getattr(w, "key", "") == "check_as_first_read"]
    wrong = first.cards[_sure(gt)[1][0]].code
    assert len(said) == 1 and said[0].startswith("check:") and wrong in said[0].values["there"]


def test_a_first_reading_that_wins_is_kept_over_a_second_that_does_not(hand_scenes):
    gt = hand_scenes[0]
    rec, hand = _sure(gt)
    i = hand[0]  # misread, its true code the second alternative: a repair makes the win, so the reading is not clean
    true, wrong = rec.cards[i].code, "qz" if rec.cards[i].code != "qz" else "hh"
    rec.cards[i] = Card(wrong, 0.6, [(wrong, 0.6), (true, 0.35)], rec.cards[i].quad, 0.9)
    ps = score_read_twice(rec, _ctx(gt), lambda: _misread_without_repair(gt))
    assert ps.recognition is rec and ps.repair.changes and ps.result.total == gt["expected_total"]
    assert any(getattr(w, "key", "") == "check_read_again" for w in ps.warnings)


def test_when_the_first_reading_fails_the_second_is_taken_and_when_both_fail_the_first_error_is_said(hand_scenes):
    gt = hand_scenes[0]
    few = Recognition(gt["width"], gt["height"], _recognition_from_gt(gt).cards[:3])
    second, _ = _sure(gt)
    assert score_read_twice(few, _ctx(gt), lambda: second).result.total == gt["expected_total"]
    with pytest.raises(PhotoError) as first_error:
        score_read_twice(few, _ctx(gt), None)
    with pytest.raises(PhotoError) as both:
        score_read_twice(few, _ctx(gt), lambda: Recognition(gt["width"], gt["height"], []))
    assert str(both.value) == str(first_error.value)


def test_no_second_reading_without_repairs_or_for_a_hand_not_claimed_a_win(hand_scenes):
    gt = hand_scenes[0]
    first = _misread_without_repair(gt)
    assert score_read_twice(first, _ctx(gt), _never, repair_on=False).recognition is first
    ctx = _ctx(gt)
    ctx.is_win = False
    assert score_read_twice(first, ctx, _never).recognition is first


@requires_model
def test_score_photo_reads_a_sample_hand_to_its_total():
    """The one-call form (photo file → PhotoScore) the CLI's and page's steps make, on a sample photo."""
    import json

    from vision.table.second_reading import score_photo

    gt = json.loads((SAMPLES / "hand_1.json").read_text())
    ps = score_photo(SAMPLES / "hand_1.jpg", _ctx(gt))
    assert ps.result is not None and ps.result.is_win and ps.result.total == gt["expected_total"]
