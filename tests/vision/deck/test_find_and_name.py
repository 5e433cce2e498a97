"""A calibration photo split into its faces without knowing the deck, named by place; what keeps the naming from
being sure (a card missing, something that is not a card, cards touching) is one sentence naming where, with a
picture."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest

from tests.conftest import requires_model
from vision.deck.calibrate import name_faces
from vision.deck.find import find_cards
from vision.deck.name import CALIBRATION_ORDER, CalibrationError, check_layout
from vision.infer.geometry import quad_iou
from vision.synth.decks import deck_style
from vision.train.calibrate import render_calibration_photo


@requires_model
@pytest.mark.parametrize(("family", "seed"), [("boxed", 1), ("sideways", 2), ("dotted", 5), ("sideways", 9005), ("sideways", 7706)])
def test_a_deck_the_detector_never_saw_is_split_into_its_30_faces_named_by_place(family, seed):
    """sideways 7706: a cloudy table as light as the paper, which neither the finder's fills nor the detector split;
    the cards' outlines do."""
    img, gt = render_calibration_photo(deck_style(random.Random(seed), family), seed)
    faces, picture, _ = name_faces(img)
    assert len(faces) == 30 and picture.ndim == 3
    for f in faces:  # each face is the card of its name, outlined closely
        best = max(gt["cards"], key=lambda c: quad_iou(f.quad, np.array(c["quad"], np.float32)))
        assert best["code"] == f.code and quad_iou(f.quad, np.array(best["quad"], np.float32)) > 0.8
    assert [f.code for f in faces] == list(CALIBRATION_ORDER[:30])


@pytest.mark.parametrize(("family", "seed"), [("classic", 7707), ("heroes", 7700), ("formal", 7701), ("assorted", 7)])
def test_the_finder_alone_splits_photos_whose_cards_lie_a_hair_apart_or_blend_at_one_end(family, seed):
    """Photos the finder used to refuse without the detector (cards nearly touching, split only above Otsu's level; a
    reading whose card lost a dark head to the table chosen over one whose cards are all whole): named right now; and
    a deck with a frame printed inside each card is outlined on the card, not on the frame."""
    from vision.deck.calibrate import _named

    img, gt = render_calibration_photo(deck_style(random.Random(seed), family), seed)
    faces, _, _ = _named(img, find_cards(img), False)
    assert [f.code for f in faces] == list(CALIBRATION_ORDER[:30])
    for f in faces:
        best = max(gt["cards"], key=lambda c: quad_iou(f.quad, np.array(c["quad"], np.float32)))
        assert best["code"] == f.code and quad_iou(f.quad, np.array(best["quad"], np.float32)) > 0.8


def _table(rows: list[int], gap: float = 0.5, size=(1200, 1600), touch: tuple[int, int] | None = None,
           skip: tuple[int, int] | None = None) -> np.ndarray:
    """A plain dark table with white cards (ink marks on them) in rows: ``rows`` cards a row; ``touch`` (row, k):
    the k-th card of that row moved against the one before; ``skip``: that card left out."""
    img = np.full((*size, 3), (40, 70, 110), np.uint8)
    w, h = 44, 200
    for r, n in enumerate(rows):
        for k in range(n):
            if skip == (r, k):
                continue
            x = 80 + k * w * (1 + gap) - (w * gap if touch == (r, k) else 0)
            y = 60 + r * h * 1.3
            cv2.rectangle(img, (int(x), int(y)), (int(x + w - 1), int(y + h - 1)), (235, 240, 245), -1)
            cv2.putText(img, str(k + 1), (int(x + 8), int(y + 40)), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (20, 20, 20), 2)
            cv2.circle(img, (int(x + w / 2), int(y + h / 2)), 8, (30, 30, 200), -1)
    return img


def test_cards_on_a_plain_table_are_found_in_their_rows():
    found = find_cards(_table([9, 9, 9, 3]))
    rows, said, marked = check_layout(found)
    assert len(found.cards) == 30 and said == [] and marked == []
    assert [len(r) for r in rows] == [9, 9, 9, 3]


def test_a_card_a_dark_line_cuts_in_two_is_one_card():
    """A table's seam or a thin shadow across the cards cuts their blobs in two: each pair of pieces is one card."""
    img = _table([9, 9, 9, 3])
    cv2.line(img, (0, 150), (1600, 420), (25, 45, 70), 8)  # across the first two rows, cutting cards at every height
    found = find_cards(img)
    rows, said, marked = check_layout(found)
    assert said == [] and marked == [] and [len(r) for r in rows] == [9, 9, 9, 3]
    assert all(180 <= max(np.linalg.norm(c.quad[1] - c.quad[0]), np.linalg.norm(c.quad[2] - c.quad[1])) <= 215
               for c in found.cards)


def test_a_card_whose_end_blends_into_the_table_is_named_with_its_place():
    """A card found shorter than those beside it would give a face without one head: refused, naming where."""
    img = _table([9, 9, 9, 3])
    x, y = int(80 + 3 * 44 * 1.5), int(60 + 1 * 200 * 1.3)  # the 4th card of row 2: its far end lost in the table
    img[y + 160:y + 200, x:x + 44] = (40, 70, 110)
    _, said, marked = check_layout(find_cards(img))
    assert said == ["Card 4 of row 2 looks shorter than the cards beside it: lay it whole in view, on a part of the "
                    "table that differs from its paper."]
    assert len(marked) == 1 and marked[0].kind == "card"


def test_a_card_missing_from_a_row_is_named_with_its_place():
    found = find_cards(_table([9, 9, 9, 3], skip=(1, 4)))
    _, said, _ = check_layout(found)
    assert said == ["Row 2 holds 8 cards, not 9: lay the cards in rows of nine in the documented order."]


def test_two_cards_touching_are_named_with_their_place_and_marked():
    found = find_cards(_table([9, 9, 9, 3], touch=(2, 5)))
    _, said, marked = check_layout(found)
    assert said[0] == "2 cards touch in row 3, after 4 card(s): lay them a little apart.", said
    assert [b.kind for b in marked] == ["touching"]


def test_something_that_is_not_a_card_is_named_with_its_place():
    img = _table([9, 9, 9, 3])
    cv2.circle(img, (420, 900), 60, (200, 210, 220), -1)  # a round, bright thing in row 4, past its cards
    found = find_cards(img)
    _, said, marked = check_layout(found)
    assert said == ["Something that is not a card lies in row 4, after 3 card(s): take it away, or lay the card "
                    "flat and whole in view."]
    from app.i18n import say

    assert say(said[0], "zh") == "第 4 排第 3 张之后有一样不是牌的东西：请拿开；若是牌，请平放、整张露出。"
    assert [b.kind for b in marked] == ["object"]


def test_an_empty_table_says_how_to_take_the_photo():
    with pytest.raises(CalibrationError, match="Found 0 cards in the photo: lay one card of each kind") as e:
        name_faces(np.full((900, 1200, 3), (40, 70, 110), np.uint8))
    assert e.value.picture is not None


def test_cards_in_any_order_take_each_kind_once_by_their_heads():
    from scoring.cards import CODES
    from vision.deck.name import Face, name_by_heads

    rng = np.random.default_rng(3)
    truth = list(rng.permutation(CODES[:30]))
    faces = []
    for k, code in enumerate(truth):
        lp = np.full(len(CODES), np.log(0.001))
        lp[CODES.index(code)] = np.log(0.97)
        if k == 4:  # a head that reads its kind and another alike: the other is taken by its surer card
            lp[CODES.index(truth[5])] = np.log(0.96)
        faces.append(Face("1t", np.zeros((4, 2), np.float32), k // 9, k % 9, None, 0.0, lp))
    named, said = name_by_heads(faces)
    assert [f.code for f in named] == truth and said == []
    faces[7] = Face("1t", faces[7].quad, 0, 7)  # an illegible head: said, not guessed
    _, said = name_by_heads(faces)
    assert [m.key for m in said] == ["calib_unsure"] and said[0].values["n"] == 1
