"""The occlusion oracle's cuts: the part of a card that later-pasted cards cover is painted grey, nothing else."""

import numpy as np
import pytest

from vision.eval.occlusion import FILL, cuts, main, scene_cuts


def _quad(x0, y0, w, h):
    return np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], np.float32)


def _scene():
    """Two upright cards 60 × 280 px: the first dark, the second bright and pasted over its right half."""
    img = np.full((400, 300, 3), 40, np.uint8)
    img[60:340, 130:190] = 230
    gt = {"cards": [{"code": "1t", "quad": _quad(100, 60, 60, 280).tolist(), "visible": 0.5},
                    {"code": "2t", "quad": _quad(130, 60, 60, 280).tolist(), "visible": 1.0}]}
    img[60:340, 100:130] = 90  # the strip of the first card that shows
    return gt, img


def test_the_covered_part_is_grey_and_the_rest_as_cut():
    gt, img = _scene()
    cover = np.zeros(img.shape[:2], np.uint8)
    cover[60:340, 130:190] = 255
    plain, masked = cuts(img, np.array(gt["cards"][0]["quad"], np.float32), cover)
    assert plain.shape == masked.shape == (128, 128, 3)
    grey = (masked == FILL).all(2)
    assert 0.35 < grey.mean() < 0.65  # about the half of the card the second one covers
    assert not (plain == FILL).all(2).any()
    assert np.array_equal(masked[~grey], plain[~grey])


def test_only_cards_pasted_later_cover():
    gt, img = _scene()
    out = scene_cuts(gt, img, np.random.default_rng(0))
    assert [c[0] for c in out] == ["1t", "2t"]
    (_, _, plain0, masked0), (_, _, plain1, masked1) = out
    assert (masked0 == FILL).all(2).mean() > 0.3
    assert np.array_equal(plain1, masked1)  # the top card has nothing over it


def test_a_folder_without_labels_gets_one_sentence(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["eval", str(tmp_path)])
    assert e.value.code == 2
    assert "has no gt/" in capsys.readouterr().err
