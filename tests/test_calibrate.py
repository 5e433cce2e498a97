"""Deck calibration: a calibration photo is split into its named faces; a missing card is a clear error."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.conftest import requires_model
from vision.calibrate import CALIBRATION_ORDER, CalibrationError, faces_from_photo, render_calibration_photo
from vision.faces import random_style

pytestmark = requires_model


def test_calibration_photo_gives_the_faces_in_order():
    style = random_style(random.Random(5), "classic")
    img, gt = render_calibration_photo(style, seed=5)
    faces = faces_from_photo(img)
    assert [c for c, _ in faces] == list(CALIBRATION_ORDER[:30])
    assert [c["code"] for c in gt["cards"]] == list(CALIBRATION_ORDER[:30])
    assert all(f.shape == (448, 96, 3) for _, f in faces)


def test_missing_card_is_a_clear_message():
    style = random_style(random.Random(6), "classic")
    img, gt = render_calibration_photo(style, seed=6, n=29)
    with pytest.raises(CalibrationError, match="Found 29 cards"):
        faces_from_photo(img)


def test_check_sheet_shape():
    from vision.calibrate import check_sheet

    faces = [(c, np.zeros((448, 96, 3), np.uint8)) for c in CALIBRATION_ORDER[:30]]
    sheet = check_sheet(faces)
    assert sheet.shape[0] > 448 * 3 and sheet.shape[1] >= 9 * 96
