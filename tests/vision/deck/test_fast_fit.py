"""The fast fit: the last layer refitted on features, written into the ONNX file, and the model folder it makes
loads in every command."""

from __future__ import annotations

import json
import random

import numpy as np

from tests.conftest import MODEL, SAMPLES, requires_model
from vision.deck import fit as F


def test_refit_learns_what_the_start_does_not_and_keeps_the_rows_it_is_not_given():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 16)) * 3
    y = rng.integers(0, 3, 600)  # classes 0–2 seen; class 3 (as `none`) never
    x = centres[y] + rng.normal(size=(600, 16))
    w0, b0 = rng.normal(size=(4, 16)) * 0.01, np.zeros(4)
    rows = np.array([True, True, True, False])
    w, b, fig = F.refit(x, y, w0, b0, rows, F.FitSettings(steps=200, lr=0.05, pull=0.001))
    assert fig["val_accuracy_after"] > 0.95 > fig["val_accuracy_before"]
    assert np.array_equal(w[3], w0[3]) and b[3] == b0[3]


@requires_model
def test_the_written_classifier_computes_the_refitted_layer(tmp_path):
    import onnxruntime as ort

    session, w0, b0 = F.embedder(MODEL / "classifier.onnx")
    crops = [np.random.default_rng(k).integers(0, 255, (128, 128, 3), dtype=np.uint8) for k in range(3)]
    x = F.features(session, crops)
    assert x.shape == (3, w0.shape[1])
    w = w0 + np.random.default_rng(1).normal(size=w0.shape) * 0.01
    b = b0 + 0.5
    F.write_classifier(MODEL / "classifier.onnx", tmp_path / "c.onnx", w, b)
    new = ort.InferenceSession(str(tmp_path / "c.onnx"), providers=["CPUExecutionProvider"])
    from vision.infer.detect import _rgb_planes

    p = new.run(None, {new.get_inputs()[0].name: _rgb_planes(np.stack(crops))})[0]
    z = x @ w.T + b
    want = np.exp(z - z.max(1, keepdims=True))
    assert np.allclose(p, want / want.sum(1, keepdims=True), atol=1e-4)


@requires_model
def test_changpai_calibrate_from_a_photo_of_a_new_deck_writes_a_model_every_command_loads(tmp_path, capsys):
    """A deck family the detector never trained on, one calibration photo, the default (fast) fit, briefly."""
    import cv2

    from app.cli import main
    from vision.deck.calibrate import FAST_TIGHT_SHARE
    from vision.infer.model import model_info
    from vision.synth.decks import deck_style
    from vision.train.calibrate import render_calibration_photo

    img, _ = render_calibration_photo(deck_style(random.Random(2), "sideways"), 2)
    photo = tmp_path / "faces.jpg"
    cv2.imwrite(str(photo), img)
    out = tmp_path / "my-deck"
    assert main(["calibrate", str(photo), "--out", str(out), "--scenes", "6", "--yes"]) == 0
    said = capsys.readouterr().out
    assert f"calibrated model: {out} (30 faces" in said and "hands laid out with your faces it finds" in said
    meta = json.loads((out / "model.json").read_text())
    assert meta["calibration"]["fit"] == "fast" and meta["calibration"]["faces"] == 30
    # its crops: whole faces, and cards of the deck half covered in tight stairs and fans, cut where the base boxes them
    assert meta["calibration"]["tight_scenes"] == round(6 * FAST_TIGHT_SHARE) and meta["calibration"]["tight_crops"] > 20
    # the photo shows no 福禄寿禧财, but without --no-extras the deck may have them: they stay readable
    assert meta["absent"] == [] and model_info(out).absent == ()
    assert 0 < meta["calibration"]["deck_check"]["recall"] <= 1
    assert (out / "check.png").is_file() and (out / "photo.png").is_file()
    assert model_info(out).names == model_info(None).names
    assert main(["score", str(SAMPLES / "hand_1.jpg"), "--model", str(out)]) == 0
    assert "胡" in capsys.readouterr().out
    assert main(["recognize", str(SAMPLES / "hand_1.jpg"), "--model", str(out)]) == 0


@requires_model
def test_a_fit_that_reads_the_decks_scenes_worse_than_the_released_classifier_is_not_kept(tmp_path, monkeypatch):
    from vision.deck import calibrate as C
    from vision.infer.model import model_info
    from vision.synth.decks import deck_style
    from vision.train.calibrate import render_calibration_photo

    img, _ = render_calibration_photo(deck_style(random.Random(2), "sideways"), 2)
    faces, _, _ = C.faces_from_photo(img)
    fig = {"scenes": 8, "recall": 0.99, "precision": 1.0}
    monkeypatch.setattr(C, "check_on_scenes", lambda models, *a, **k: [fig | {"codes_right": 0.90}, fig | {"codes_right": 0.95}])
    cal = C.fast_fit(faces, tmp_path / "deck", model_info(None), scenes=4, progress=False)
    assert cal["deck_check"]["kept"] == "released" and cal["deck_check"]["codes_right"] == 0.95
    assert (tmp_path / "deck" / "classifier.onnx").read_bytes() == (MODEL / "classifier.onnx").read_bytes()
    assert json.loads((tmp_path / "deck" / "model.json").read_text())["calibration"]["deck_check"]["kept"] == "released"
