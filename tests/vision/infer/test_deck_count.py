"""Reading a photo's cards within a deck's copies (vision.infer.deck_count, Knobs.deck_copies / extra_copies)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scoring.cards import CODES
from tests.conftest import requires_model
from vision.infer.deck_count import copies_of, within_deck
from vision.types import Card


def _probs(*rows: dict[str, float]) -> np.ndarray:
    p = np.full((len(rows), len(CODES)), 1e-4)
    for i, r in enumerate(rows):
        for c, q in r.items():
            p[i, CODES.index(c)] = q
    return p / p.sum(1, keepdims=True)


def _codes(idx: np.ndarray) -> list[str]:
    return [CODES[j] for j in idx]


def test_a_fifth_card_read_as_a_kind_goes_to_its_next_reading_the_least_sure_first():
    """Five cards read 千字 (a deck holds 4): the one whose 千字 costs least to give up (its 一万 nearly as likely)
    is read as 一万; the four surest keep 千字."""
    sure = {"qz": 0.7, "1w": 0.2}
    p = _probs(sure, sure, {"qz": 0.5, "1w": 0.45}, sure, sure, {"3t": 0.9})
    assert _codes(within_deck(p, CODES)) == ["qz", "qz", "1w", "qz", "qz", "3t"]
    assert _codes(within_deck(p, CODES, plain=0)) == ["qz"] * 5 + ["3t"]  # off: each card on its own


def test_readings_within_the_copies_are_left_alone_however_unsure():
    p = _probs({"qz": 0.3, "1w": 0.29}, {"qz": 0.4, "1w": 0.35}, {"5b": 0.2, "6b": 0.19})
    assert list(within_deck(p, CODES)) == list(p.argmax(1))


def test_extras_are_bounded_only_when_asked_and_a_second_then_goes_to_its_next_reading():
    """By default the ruleset's deck says what an extra read twice is (vision.table); bounded to one copy, the second
    is read as its next most likely code."""
    p = _probs({"fu": 0.9, "xi": 0.05}, {"fu": 0.6, "xi": 0.35}, *[{"fu": 0.8}] * 4)
    assert _codes(within_deck(p, CODES)) == ["fu"] * 6
    assert _codes(within_deck(p[:2], CODES, extra=1)) == ["fu", "xi"]
    assert _codes(within_deck(p[:2], CODES, extra=2)) == ["fu", "fu"]
    assert copies_of("fu", 4, 1) == 1 and copies_of("hh", 4, 1) == 4 and copies_of("fu", 4, 0) > 100


def test_the_assignment_is_the_least_costly_over_the_photo():
    """Not greedy: the card least sure of 千字 may have nowhere better to go; the one that loses least moves."""
    a = {"qz": 0.55, "1w": 0.44}
    b = {"qz": 0.50, "7t": 0.01}  # nothing else near: moving it costs far more
    p = _probs(a, b, {"qz": 0.9}, {"qz": 0.9}, {"qz": 0.9})
    assert _codes(within_deck(p, CODES)) == ["1w", "qz", "qz", "qz", "qz"]


def test_more_cards_than_a_deck_holds_keep_their_own_readings():
    p = _probs(*[{"qz": 0.9}] * 126)
    assert _codes(within_deck(p, CODES, extra=1)) == ["qz"] * 126
    assert _codes(within_deck(p, CODES)).count("qz") == 4  # extras without bound: room for every card
    assert within_deck(np.zeros((0, len(CODES))), CODES).shape == (0,)


def test_a_card_read_as_another_code_puts_it_first_among_its_alternatives():
    c = Card("qz", 0.5, [("qz", 0.5), ("1w", 0.45), ("2w", 0.03)], [[0, 0], [1, 0], [1, 4], [0, 4]], 0.9)
    d = c.read_as("1w")
    assert (d.code, d.confidence) == ("1w", 0.45) and d.alternatives == [("1w", 0.45), ("qz", 0.5), ("2w", 0.03)]
    e = c.read_as("9t", 0.001)  # a code outside its few alternatives, with the probability the classifier gave it
    assert e.alternatives[0] == ("9t", 0.001) and len(e.alternatives) == 4 and c.code == "qz"


@requires_model
@pytest.mark.parametrize("copies", [4, 0])
def test_the_recognizer_reads_a_photos_cards_within_the_model_knobs(copies):
    import vision.infer.recognize as R
    from vision.infer.model import Knobs

    info = R.model_info(None)
    info = replace(info, knobs=Knobs(deck_copies=copies))
    cards = [Card("qz", 0.6, [("qz", 0.6)], [[0, 0], [1, 0], [1, 4], [0, 4]]) for _ in range(5)]
    p = np.zeros((5, len(info.codes)), np.float32)
    p[:, info.codes.index("qz")] = 0.6
    p[:, info.codes.index("1w")] = [0.3, 0.3, 0.3, 0.39, 0.3]
    p[:, info.codes.index("2w")] = 1 - p.sum(1)
    out = R._within_deck(cards, p, info)
    assert [c.code for c in out] == (["qz", "qz", "qz", "1w", "qz"] if copies else ["qz"] * 5)
    if copies:
        assert out[3].confidence == pytest.approx(0.39) and out[3].alternatives[:2] == [("1w", pytest.approx(0.39)),
                                                                                         ("qz", 0.6)]
