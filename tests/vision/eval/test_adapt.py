"""The AdaBN probe: it reads through the recognizer's adaptive classifier; alpha 0 is the classifier as released, and
a scene folder is read at each alpha."""

import json

import cv2
import numpy as np
import pytest

from tests.conftest import MODEL, requires_model
from vision.eval.adapt import adaptive_session, main, probe
from vision.infer.adapt import PhotoStatistics
from vision.infer.detect import _rgb_planes


def _crops(n=4, seed=3):
    rng = np.random.default_rng(seed)
    return _rgb_planes(np.stack([rng.integers(0, 255, (128, 128, 3), dtype=np.uint8) for _ in range(n)]))


@requires_model
def test_alpha_zero_reads_as_the_released_classifier_and_alpha_one_does_not(tmp_path):
    import onnxruntime as ort

    session, names, _ = adaptive_session(None)
    released = ort.InferenceSession(str(MODEL / "classifier.onnx"), providers=["CPUExecutionProvider"])
    x = _crops()
    plain = released.run(None, {released.get_inputs()[0].name: x})[0]
    assert np.abs(PhotoStatistics(session, 0.0).run(None, {"images": x})[0] - plain).max() < 2e-3
    assert np.abs(PhotoStatistics(session, 1.0).run(None, {"images": x})[0] - plain).max() > 1e-2
    assert len(names) == plain.shape[1]


def _folder(tmp_path):
    """One rendered-like scene: two upright cards on a dark table, labelled 1t and 2t."""
    img = np.full((400, 300, 3), 40, np.uint8)
    img[60:340, 60:120] = 220
    img[60:340, 170:230] = 200
    (tmp_path / "gt").mkdir()
    (tmp_path / "images").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "000000.jpg"), img)
    quad = lambda x0: [[x0, 60], [x0 + 60, 60], [x0 + 60, 340], [x0, 340]]  # noqa: E731
    gt = {"image": "images/000000.jpg", "cards": [{"code": "1t", "quad": quad(60), "visible": 1.0},
                                                  {"code": "2t", "quad": quad(170), "visible": 1.0}]}
    (tmp_path / "gt" / "000000.json").write_text(json.dumps(gt))
    return tmp_path


@requires_model
def test_a_scene_folder_is_read_at_each_alpha(tmp_path):
    r = probe(_folder(tmp_path), None, (0.0, 0.5), progress=False)
    assert r["cards"] == 2
    assert set(r["right"]) == {"0.0", "0.5"}
    (scene,) = r["per_scene"]
    assert scene["cards"] == 2 and 0 < scene["plain_top"] <= 1
    assert all(0 <= v <= 2 for v in scene["right"].values())


def test_bad_input_gets_one_sentence(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path)])
    assert e.value.code == 2 and "has no gt/" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([str(_folder(tmp_path)), "--alpha", "0,two"])
    assert e.value.code == 2 and "--alpha takes numbers" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path), "--model", str(tmp_path / "nowhere")])
    assert e.value.code == 2 and "does not exist" in capsys.readouterr().err
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(SystemExit) as e:  # a model folder without the adaptive graph: how to make one
        main([str(tmp_path), "--model", str(plain)])
    assert e.value.code == 2 and "--set adapt=0.2" in capsys.readouterr().err
