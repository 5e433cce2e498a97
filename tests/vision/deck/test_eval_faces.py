"""`changpai eval-faces`: rendered calibration photos split into their faces and judged against the truth."""

from __future__ import annotations

import json

import numpy as np


def test_eval_faces_counts_a_photo_named_right_and_says_a_bad_family(tmp_path, capsys):
    from app.cli import main

    out = tmp_path / "r.json"
    assert main(["eval-faces", "--families", "boxed", "--seeds", "1", "--finder-only", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["photos"] == 1 and r["finder"]["right"] == 1 and "calibrate" not in r
    assert "the finder alone: 1 of 1 photos named right" in capsys.readouterr().out
    assert main(["eval-faces", "--families", "plaid", "--finder-only"]) == 2
    assert "Unknown family 'plaid'" in capsys.readouterr().err


def test_a_face_named_wrong_or_outlined_off_its_card_is_not_right():
    from vision.deck.evaluate import verdict
    from vision.deck.name import Face

    q = np.array([[0, 0], [40, 0], [40, 200], [0, 200]], np.float32)
    gt = {"cards": [{"code": "1t", "quad": q.tolist()}, {"code": "2t", "quad": (q + [100, 0]).tolist()}]}
    assert verdict([Face("1t", q, 0, 0), Face("2t", q + [100, 0], 0, 0)], gt) == "right"
    assert verdict([Face("2t", q, 0, 0), Face("1t", q + [100, 0], 0, 0)], gt) == "wrong"  # swapped names
    assert verdict([Face("1t", q, 0, 0), Face("2t", q + [100, 60], 0, 0)], gt) == "loose"  # a face cut short
    assert verdict([Face("1t", q, 0, 0)], gt) == "wrong"  # a card not found
