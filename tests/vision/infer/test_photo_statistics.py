"""The classifier that takes the photo's own BatchNorm statistics: written by `changpai release BASE --set adapt=A`
(vision.train.adapt_export), run per photo by vision.infer.adapt.PhotoStatistics, read by recognize_and_again."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import numpy as np
import pytest

import vision.infer.model as M
from tests.conftest import SAMPLES


@pytest.fixture(scope="module")
def adaptive(tmp_path_factory):
    """The default model reading every photo once, and its release with 'adapt' 0.2 (the adaptive classifier written
    from classifier.pt)."""
    import vision.train.release as release
    from app.cli import main

    if not (M.DEFAULT_MODEL / "classifier.pt").exists():
        pytest.skip("no released model with its PyTorch classifier")
    tmp = tmp_path_factory.mktemp("adapt")
    base = tmp / "base"
    shutil.copytree(M.DEFAULT_MODEL, base, ignore=shutil.ignore_patterns("detector.pt", M.ADAPT_CLASSIFIER))
    meta = json.loads((base / "model.json").read_text())
    (base / "model.json").write_text(json.dumps(meta | {"adapt": 0.0}))  # a base that reads every photo once
    mp = pytest.MonkeyPatch()
    mp.setattr(release, "MODELS_DIR", tmp / "models")
    try:
        assert main(["release", str(base), "--name", "ad", "--set", "adapt=0.2"]) == 0
    finally:
        mp.undo()
    return base, tmp / "models" / "ad"


def _crops():
    from vision.infer.geometry import fold, order_long_axis_vertical, rectify
    from vision.infer.imageio import READ_SIDE, read_photo
    from vision.infer.recognize import recognize_array

    img, _ = read_photo(SAMPLES / "hand_1.jpg", min_side=READ_SIDE)
    rec = recognize_array(img)
    return [fold(rectify(img, order_long_axis_vertical(np.array(c.quad, np.float32)), ordered=True)) for c in rec.cards]


def _log(p):
    return np.log(np.clip(p, 1e-12, 1.0))


def test_the_adaptive_classifier_reads_as_the_released_one_without_the_photos_statistics(adaptive):
    from vision.infer.adapt import PhotoStatistics
    from vision.infer.detect import _rgb_planes

    _, dest = adaptive
    assert M.model_info(dest).adapt == 0.2 and (dest / M.ADAPT_CLASSIFIER).is_file()
    x = _rgb_planes(np.stack(_crops()))
    plain = M._sessions(str(dest))[1].run(None, {"images": x})[0]
    at_zero = PhotoStatistics(M._adapt_session(str(dest)), 0.0).run(None, {"images": x})[0]
    assert np.abs(at_zero - plain).max() < 1e-4
    adapted = PhotoStatistics(M._adapt_session(str(dest)), 0.2)
    first = adapted.run(None, {"images": x})[0]
    assert np.abs(_log(first) - _log(plain)).max() > 0.1  # the photo's statistics change the reading
    # the photo's later reads, three crops at a time, are normalized with the first batch's statistics
    assert np.abs(adapted.run(None, {"images": x[:3]})[0] - first[:3]).max() < 1e-4
    alone = PhotoStatistics(M._adapt_session(str(dest)), 0.2).run(None, {"images": x[:3]})[0]
    assert np.abs(_log(alone) - _log(first[:3])).max() > 0.1  # ... not with three crops' own


def test_recognize_and_again_reads_the_photo_a_second_time_only_for_a_model_that_adapts(adaptive):
    from vision.infer.recognize import recognize_adapted, recognize_and_again

    base, dest = adaptive
    rec, again = recognize_and_again(SAMPLES / "hand_1.jpg", base)
    assert again is None and len(rec.cards) > 10
    rec, again = recognize_and_again(SAMPLES / "hand_1.jpg", dest)
    second = again()
    assert abs(len(second.cards) - len(rec.cards)) <= 1 and second.timings_ms["detect"] < rec.timings_ms["detect"]
    same = Counter(c.code for c in rec.cards) & Counter(c.code for c in second.cards)
    assert sum(same.values()) >= len(rec.cards) - 2  # an own-style photo: the same cards, read the same
    assert len(recognize_adapted(SAMPLES / "hand_1.jpg", dest).cards) == len(second.cards)


def test_a_model_that_adapts_without_its_classifier_or_with_a_share_that_is_none_is_one_sentence(adaptive, tmp_path,
                                                                                                   capsys, monkeypatch):
    import vision.train.release as release
    from app.cli import main

    base, dest = adaptive
    broken = tmp_path / "broken"
    shutil.copytree(dest, broken)
    (broken / M.ADAPT_CLASSIFIER).unlink()
    with pytest.raises(M.ModelError, match="has no classifier_adapt.onnx"):
        M.model_info(broken)
    monkeypatch.setattr(release, "MODELS_DIR", tmp_path / "models")
    capsys.readouterr()
    assert main(["release", str(base), "--name", "x", "--set", "adapt=1.5"]) == 2
    assert "between 0 and 1" in capsys.readouterr().err and not (tmp_path / "models" / "x").exists()
    meta = json.loads((dest / "model.json").read_text())
    assert meta["adapt"] == 0.2 and "adapt 0.2" in meta["version_note"]


def test_a_second_reading_reads_only_the_heads_of_boxes_not_read_yet(monkeypatch):
    import vision.infer.heads as H

    asked = []

    def read_heads(img, quads):
        asked.append(len(quads))
        return np.stack([np.full(35, q[0, 0], np.float32) for q in quads]), np.array([q[0, 1] for q in quads], np.float32)

    monkeypatch.setattr(H, "read_heads", read_heads)
    quads = [np.full((4, 2), k, np.float32) for k in range(4)]
    memo: dict = {}
    first = H.read_heads_kept(None, quads[:3], memo)
    again = H.read_heads_kept(None, [quads[3], quads[1]], memo)
    assert asked == [3, 1]  # one batch each time, the box read before not read again
    assert np.array_equal(again[0][:, 0], [3.0, 1.0]) and np.array_equal(again[1], [3.0, 1.0])
    assert np.array_equal(first[0][:, 0], [0.0, 1.0, 2.0])
    H.read_heads_kept(None, quads[:2], None)
    assert asked == [3, 1, 2]  # no memo: read as before
