"""A second classifier asked about the unsure crops (vision.infer.model.SecondOpinion), and its release
(`changpai release BASE --name NAME --second MODEL`)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import vision.infer.model as M


class _Net:
    """An onnxruntime-like session that answers fixed probabilities and counts the crops it was shown."""

    def __init__(self, probs: np.ndarray):
        self.probs, self.seen = probs, []

    def get_inputs(self):
        class _In:
            name = "images"
        return [_In()]

    def run(self, names, feeds):
        x = feeds["images"]
        self.seen.append(x[:, 0, 0, 0].astype(int).tolist())  # each fake crop carries its index
        return [self.probs[x[:, 0, 0, 0].astype(int)]]


def test_only_the_unsure_crops_are_asked_and_get_the_geometric_mean():
    first = _Net(np.array([[0.995, 0.005, 0.0], [0.6, 0.3, 0.1], [0.2, 0.5, 0.3]], np.float32))
    second = _Net(np.array([[0.1, 0.9, 0.0], [0.1, 0.8, 0.1], [0.2, 0.5, 0.3]], np.float32))
    x = np.zeros((3, 3, 4, 4), np.float32)
    x[:, 0, 0, 0] = [0, 1, 2]
    p = M.SecondOpinion(first, second, 0.99).run(None, {"images": x})[0]
    assert second.seen == [[1, 2]]  # the sure crop is never shown to the second network
    assert np.array_equal(p[0], first.probs[0])
    mean = np.sqrt(first.probs[1] * second.probs[1])
    assert np.allclose(p[1], mean / mean.sum()) and p[1].argmax() == 1  # the surer second opinion wins
    assert np.allclose(p[2], first.probs[2], atol=1e-6)  # two networks that agree: their reading stays
    assert np.allclose(p.sum(1), 1.0, atol=1e-6)
    M.SecondOpinion(first, second, 0.1).run(None, {"images": x})
    assert len(second.seen) == 1  # below 0.1: no crop is that unsure, the second network is not run


def _model_copy(tmp_path, name):
    out = tmp_path / name
    shutil.copytree(M.DEFAULT_MODEL, out, ignore=shutil.ignore_patterns("*.pt"))
    return out


def test_release_with_a_second_classifier_loads_and_reads_as_its_networks_say(tmp_path, monkeypatch, capsys):
    """The release holds the other model's classifier and says so in model.json and its card; a second opinion that is
    the first network itself changes no reading; a malformed 'second', a missing file, mismatched classes or a
    threshold that is no probability are one sentence each."""
    import vision.train.release as release
    from app.cli import main
    from tests.conftest import SAMPLES
    from vision.infer.recognize import recognize

    if not (M.DEFAULT_MODEL / "model.json").exists():
        pytest.skip("no released model")
    monkeypatch.setattr(release, "MODELS_DIR", tmp_path / "models")
    base, other = _model_copy(tmp_path, "base"), _model_copy(tmp_path, "other")
    assert main(["release", str(base), "--name", "two", "--second", str(other), "--below", "0.9", "--note", "chosen on val"]) == 0
    dest = tmp_path / "models" / "two"
    meta = json.loads((dest / "model.json").read_text())
    assert meta["second"]["below"] == 0.9 and meta["second"]["note"] == "chosen on val" and "evaluation" not in meta
    assert (dest / M.SECOND_CLASSIFIER).read_bytes() == (other / "classifier.onnx").read_bytes()
    assert "## second classifier" in (dest / "MODEL_CARD.md").read_text()
    assert isinstance(M._sessions(str(dest))[1], M.SecondOpinion)
    one = [(c.code, round(c.confidence, 4)) for c in recognize(SAMPLES / "hand_1.jpg", base).cards]
    two = [(c.code, round(c.confidence, 4)) for c in recognize(SAMPLES / "hand_1.jpg", dest).cards]
    assert one == two and len(one) > 10

    capsys.readouterr()
    assert main(["release", str(base), "--name", "x", "--second", str(other), "--below", "1.5"]) == 2
    assert "1.5 is none" in capsys.readouterr().err
    assert main(["release", str(base), "--name", "x", "--second", str(other), "--set", "conf=0.4"]) == 2
    odd = json.loads((other / "model.json").read_text())
    odd["names"] = odd["names"][1:] + odd["names"][:1]
    (other / "model.json").write_text(json.dumps(odd))
    assert main(["release", str(base), "--name", "x", "--second", str(other)]) == 2
    assert "do not read the same classes" in capsys.readouterr().err and not (tmp_path / "models" / "x").exists()

    (dest / M.SECOND_CLASSIFIER).unlink()
    with pytest.raises(M.ModelError, match="has no classifier_b.onnx"):
        M.model_info(dest)
    meta["second"] = {"below": 2}
    (dest / "model.json").write_text(json.dumps(meta))
    with pytest.raises(M.ModelError, match="'second' needs a 'below'"):
        M.model_info(dest)
