"""Crops for the classifier cut from rendered scenes: the not-a-card class (boxes that show no card face)."""

from __future__ import annotations

import json

import numpy as np

from scoring.cards import CODES
from tests.conftest import requires_model
from vision.infer.geometry import quad_iou
from vision.synth.write import Job, prepare, render_one


def _scenes(root, n=6):
    job = Job(str(root), "detect", 11, n, ("classic",), None, 0.0, 640, 480)
    prepare(job)
    for i in range(n):
        render_one(job, i)
    return [json.loads(p.read_text()) for p in sorted((root / "gt").glob("*.json"))]


def test_negative_boxes_touch_no_card_and_cover_every_object(tmp_path):
    from vision.eval.mine import negative_quads

    gts = _scenes(tmp_path)
    rng = np.random.default_rng(0)
    seen_objects = 0
    for gt in gts:
        cards = [np.array(c["quad"], np.float32) for c in gt["cards"]]
        a_card = [cards[0]] if cards else []  # a detector box right on a card is never a negative
        stray = np.array([[1, 1], [11, 1], [11, 48], [1, 48]], np.float32)
        quads = negative_quads(gt, a_card + [stray], rng)
        for q in quads:
            assert all(quad_iou(q, c) < 0.1 for c in cards)
        if all(quad_iou(stray, c) < 0.1 for c in cards):
            assert any(np.array_equal(q, stray) for q in quads)
        face_down = [d for d in gt["distractors"] if "quad" in d]
        assert all(any(np.allclose(q, d["quad"]) for q in quads) for d in face_down)
        seen_objects += len(gt["distractors"])
    assert seen_objects > 0, "the rendered scenes have objects on the table"


def test_more_bare_table_boxes_when_asked_and_none_touch_a_card(tmp_path):
    from vision.eval.mine import negative_quads

    gts = _scenes(tmp_path, 3)
    for gt in gts:
        cards = [np.array(c["quad"], np.float32) for c in gt["cards"]]
        objects = len(gt["distractors"])
        one = negative_quads(gt, [], np.random.default_rng(1), bare=1)
        four = negative_quads(gt, [], np.random.default_rng(1), bare=4)
        none = negative_quads(gt, [], np.random.default_rng(1), bare=0)
        assert len(none) <= objects < len(four) and len(one) <= objects + 1
        assert len(four) > len(one), "more boxes over bare table when asked"
        assert all(quad_iou(q, c) < 0.1 for q in four for c in cards)


@requires_model
def test_mine_cli_files_crops_under_none_and_by_code(tmp_path, capsys):
    import cv2

    from app.cli import main
    from vision.infer.model import NOT_A_CARD

    _scenes(tmp_path / "scenes", 4)
    assert main(["mine", str(tmp_path / "scenes"), "--out", str(tmp_path / "crops"), "--negatives"]) == 0
    files = list((tmp_path / "crops").glob(f"*/{NOT_A_CARD}/*.jpg"))
    assert len(files) >= 4  # at least the bare-table box of every scene
    assert cv2.imread(str(files[0])).shape == (128, 128, 3)
    assert f"{len(files)} crops" in capsys.readouterr().out
    # and the cards themselves, filed by their true code
    assert main(["mine", str(tmp_path / "scenes"), "--out", str(tmp_path / "cards"), "--limit", "2"]) == 0
    assert {p.parent.name for p in (tmp_path / "cards").glob("*/*/*.jpg")} <= set(CODES) and any((tmp_path / "cards").rglob("*.jpg"))
    assert main(["mine", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 2


@requires_model
def test_hard_mining_keeps_only_the_crops_the_classifier_errs_on(tmp_path):
    from app.cli import main
    from vision.eval.mine import _cut, _misread
    from vision.infer.imageio import load_image
    from vision.infer.model import _sessions, model_info

    gts = _scenes(tmp_path / "scenes", 3)
    info = model_info(None)
    _, cls = _sessions(str(info.path))
    gt = next(g for g in gts if len(g["cards"]) >= 5)
    img = load_image(tmp_path / "scenes" / gt["image"])
    cards = [c for c in gt["cards"] if c["visible"] >= 0.9]
    crops = [_cut(img, np.array(c["quad"], np.float32)) for c in cards]
    codes = [c["code"] for c in cards]
    # read at their true corners, fully visible cards are read right and sure: none is hard
    assert _misread(crops, codes, cls, info, 0.5) == []
    # told the wrong codes, every box is a misread; nothing can be read with more than certainty
    wrong = [CODES[(CODES.index(c) + 1) % 27] for c in codes]
    assert _misread(crops, wrong, cls, info, 0.5) == list(range(len(cards)))
    assert _misread(crops, codes, cls, info, 1.01) == list(range(len(cards)))
    # the command: hard crops are a subset of all crops, filed the same way
    assert main(["mine", str(tmp_path / "scenes"), "--out", str(tmp_path / "all")]) == 0
    assert main(["mine", str(tmp_path / "scenes"), "--out", str(tmp_path / "hard"), "--hard", "0.999"]) == 0
    every = {p.relative_to(tmp_path / "all") for p in (tmp_path / "all").rglob("*.jpg")}
    hard = {p.relative_to(tmp_path / "hard") for p in (tmp_path / "hard").rglob("*.jpg")}
    assert hard < every
    assert main(["mine", str(tmp_path / "scenes"), "--out", str(tmp_path / "x"), "--hard", "0"]) == 2
    assert main(["mine", str(tmp_path / "scenes"), "--out", str(tmp_path / "x"), "--hard", "0.9", "--negatives"]) == 2
