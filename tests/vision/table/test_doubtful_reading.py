"""A legal win read from many cards the classifier was unsure of is named (check:), with the cards to look at."""

from dataclasses import replace

import vision.table.changes as changes
from app.i18n import say
from tests.vision.table.photo_helpers import _ctx, _sure
from vision.table.knobs import TABLE
from vision.table.pipeline import score_recognition
from vision.types import Card


def _unsure(card: Card, p: float) -> Card:
    """``card`` read as it is, but with only ``p`` (its runner-up a card of another suit)."""
    other = "9w" if not card.code.endswith("w") else "9t"
    return replace(card, confidence=p, alternatives=[(card.code, p), (other, round(1 - p - 0.01, 2))])


def _doubtful_said(ps) -> list:
    return [w for w in ps.warnings if getattr(w, "key", None) == "check_doubtful"]


def test_enough_unsure_cards_get_the_check_and_fewer_do_not(hand_scenes, monkeypatch):
    assert TABLE.doubtful_cards > 0  # said by default (docs/photo-to-hu.md: how it was chosen)
    monkeypatch.setattr(changes, "TABLE", replace(TABLE, doubtful_cards=3, doubt_p=0.5))
    done = 0
    for gt in hand_scenes:
        rec, hand = _sure(gt)
        ps = score_recognition(rec, _ctx(gt))
        if ps.result.total != gt["expected_total"]:
            continue  # the layout merged a group lying close (test_layout_and_score_match_the_expected_totals allows it)
        assert not _doubtful_said(ps)  # every card sure: nothing to say
        for i in hand[:2]:
            rec.cards[i] = _unsure(rec.cards[i], 0.45)
        ps = score_recognition(rec, _ctx(gt))
        assert ps.result.total == gt["expected_total"] and not _doubtful_said(ps)  # two: fewer than the check names
        rec.cards[hand[2]] = _unsure(rec.cards[hand[2]], 0.45)
        rec.cards[hand[3]] = _unsure(rec.cards[hand[3]], 0.55)  # not below doubt_p: not named
        ps = score_recognition(rec, _ctx(gt))
        said = _doubtful_said(ps)
        assert ps.result.total == gt["expected_total"] and len(said) == 1
        named = [int(n) - 1 for n in said[0].values["nums"].split(", ")]
        assert said[0].values["n"] == 3 and sorted(named) == sorted(hand[:3])
        assert str(said[0]).startswith("check: 3 cards of the hand were read with little certainty")
        zh = say(said[0], "zh")
        assert zh.startswith("请核对") and said[0].values["nums"] in zh and say(said[0], "en") == str(said[0])
        monkeypatch.setattr(changes, "TABLE", replace(TABLE, doubtful_cards=0, doubt_p=0.5))
        assert not _doubtful_said(score_recognition(rec, _ctx(gt)))  # 0: never said
        monkeypatch.setattr(changes, "TABLE", replace(TABLE, doubtful_cards=3, doubt_p=0.5))
        assert not _doubtful_said(score_recognition(rec, _ctx(gt), repair_on=False))  # checks come with the repairs
        done += 1
    assert done >= 3
