"""The refine net (vision.infer.refine): how a card lies in its box, the view it is judged from, reading a card again at
the refined corners, and training and releasing the net (`changpai train refine`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.cli import main
from tests.conftest import model_variant, requires_model
from tests.vision.infer.test_recover import _scenes_to_train_on
from vision.infer.geometry import jitter_quad, order_long_axis_vertical, quad_iou
from vision.infer.refine import SPAN_W, VIEW_H, VIEW_W, moved, refined, target, view


def _card(cx, cy, angle=0.0, w=30.0, length=120.0):
    a = np.radians(angle)
    u, v = np.array([-np.sin(a), np.cos(a)]) * length, np.array([np.cos(a), np.sin(a)]) * w
    c = np.array([cx, cy])
    return np.float32([c - u / 2 - v / 2, c - u / 2 + v / 2, c + u / 2 + v / 2, c + u / 2 - v / 2])


def test_a_card_is_refined_back_from_how_it_lies_in_any_box():
    rng = np.random.default_rng(3)
    for _ in range(50):
        card = _card(*rng.uniform(100, 300, 2), angle=rng.uniform(-180, 180))
        box = jitter_quad(card, rng, scale=2.0)
        back = refined(box, target(box, card))
        assert quad_iou(back, card) > 0.995
        assert np.allclose(order_long_axis_vertical(back), order_long_axis_vertical(card), atol=0.05) or \
            np.allclose(order_long_axis_vertical(back), np.roll(order_long_axis_vertical(card), 2, axis=0), atol=0.05)
    assert np.allclose(target(card, card), 0, atol=1e-6)  # a box on its card: nothing to move


def test_the_view_is_upright_with_the_box_across_its_middle():
    img = np.full((400, 400, 3), 200, np.uint8)
    card = _card(200, 200, angle=90)  # lying across the photo
    cv2 = pytest.importorskip("cv2")
    cv2.fillPoly(img, [card.astype(np.int32)], (0, 0, 255))
    v = view(img, card)
    assert v.shape == (VIEW_H, VIEW_W, 3)
    inner = VIEW_W / SPAN_W  # the box is this many view pixels wide, in the middle
    red = v[VIEW_H // 2, :, 2] > 200
    assert red[int(VIEW_W / 2 - inner / 2 + 3):int(VIEW_W / 2 + inner / 2 - 3)].all()
    assert not red[:int(VIEW_W / 2 - inner / 2 - 3)].any() and not red[int(VIEW_W / 2 + inner / 2 + 3):].any()


def test_only_boxes_moved_enough_are_read_again():
    t = np.float32([[0.0, 0.1, 0.0, 0.1, 0.1], [0.06, 0, 0, 0, 0], [0, 0, np.radians(2), 0, 0], [-0.03, 0, 0.01, 0, 0]])
    assert moved(t).tolist() == [False, True, True, False]


class _Lies:
    """A refine net that moves the first box it is given a third of a width to the right and leaves the others."""

    def __init__(self) -> None:
        self.given = 0

    def get_inputs(self):
        return [type("I", (), {"name": "view"})()]

    def run(self, _, feed):
        self.given += len(feed["view"])
        out = np.zeros((len(feed["view"]), 5), np.float32)
        out[0, 0] = 1 / 3
        return [out]


def test_an_unsure_card_moved_is_read_again_at_its_refined_corners(monkeypatch):
    """Cards read with less than ModelInfo.refine are shown to the net; one it moves is read again at the corners it
    gives, the two readings averaged; the boxes and the sure cards stay as they were."""
    from dataclasses import replace

    import vision.infer.recognize as R

    info = replace(R.model_info(None), refine=0.99)
    net, read = _Lies(), []

    def read_boxes(img, quads, cls_s, info):
        read.extend(quads)
        return np.eye(len(info.codes), dtype=np.float32)[[5] * len(quads)], np.zeros(len(quads), np.float32)

    monkeypatch.setattr(R, "_refine_session", lambda path: net)
    monkeypatch.setattr(R, "read_boxes", read_boxes)
    img = np.zeros((300, 300, 3), np.uint8)
    quads = [order_long_axis_vertical(_card(x, 150)) for x in (60, 140, 220)]
    probs = np.zeros((3, len(info.codes)), np.float32)
    probs[0, [0, 9]] = probs[2, [2, 9]] = 0.6, 0.4  # unsure
    probs[1, 1] = 1.0  # sure: not shown to the net
    out = R._read_refined(img, quads, probs, None, info)
    assert net.given == 2  # the two unsure cards
    assert np.allclose(out[0, [0, 5, 9]], [0.3, 0.5, 0.2]) and out[0].argmax() == 5  # the moved one, averaged
    assert np.array_equal(out[1:], probs[1:]) and probs[0, 5] == 0  # the others as they were; nothing changed in place
    assert len(read) == 1 and np.allclose(read[0].mean(0), [70, 150], atol=0.01)  # a third of 30 px to the right
    assert R._read_refined(img, quads, probs, None, replace(info, refine=0.5)) is probs  # none below: nothing to do


@requires_model
@pytest.mark.parametrize("setting", [{"refine": 0.99}, {"refine": 0.0, "settle": 0.5}])
def test_a_model_naming_refine_needs_the_net(tmp_path, capsys, setting):
    folder = model_variant(tmp_path / "m", **setting)
    (folder / "refine.onnx").unlink(missing_ok=True)  # the released model's, linked in
    assert main(["recognize", "docs/samples/hand_1.jpg", "--model", str(folder)]) == 2
    assert "has no refine.onnx" in capsys.readouterr().err


@requires_model
def test_train_refine_collects_trains_and_releases(tmp_path, monkeypatch, capsys):
    from vision.infer.model import REFINE_NET, model_info
    from vision.infer.recognize import recognize

    base = model_info(None)
    job = _scenes_to_train_on(tmp_path, monkeypatch, n=2, seed=7)
    args = ["train", "refine", "--data", job.out, "--val", job.out, "--epochs", "1", "--batch", "16", "--name", "r",
            "--release", "ref"]
    import vision.infer.recognize as R

    settles, plain = [], R.recognize_found
    monkeypatch.setattr(R, "recognize_found",
                        lambda img, info, *a, **k: settles.append(getattr(info, "settle", None)) or plain(img, info, *a, **k))
    assert main(args + ["--settling-views"]) == 0
    assert settles and set(settles) == {0.0}  # views of the boxes the detector's NMS keeps, even from a settling model
    assert "boxes before NMS" in capsys.readouterr().out
    d = np.load(tmp_path / "runs" / "r" / "refine_train.npz")
    assert d["views"].shape[1:] == (3, VIEW_H, VIEW_W) and d["targets"].shape == (len(d["views"]), 5)
    assert 0 < d["jittered"].sum() < len(d["views"])  # kept boxes and jittered ones
    dest = tmp_path / "models" / "ref"
    meta = json.loads((dest / "model.json").read_text())
    assert meta["refine"] == 0.99 and meta["refine_net"]["epochs"] == 1 and "evaluation" not in meta
    assert (dest / REFINE_NET).read_bytes() == (tmp_path / "runs" / "r" / REFINE_NET).read_bytes()
    assert (dest / "classifier.onnx").read_bytes() == (base.path / "classifier.onnx").read_bytes()
    assert "refine net (`refine.onnx`" in (dest / "MODEL_CARD.md").read_text()
    assert recognize(next((tmp_path / "hands" / "images").rglob("*.jpg")), dest).cards  # the release loads and runs
    capsys.readouterr()
    assert main(args[:-2] + ["--model", str(dest), "--release", "ref"]) == 2  # its own name: one sentence
    assert "new name" in capsys.readouterr().err


@requires_model
def test_settling_views_add_boxes_before_nms_each_seen_with_the_card_it_overlaps(tmp_path, monkeypatch):
    import vision.train.refine_train as T

    job = _scenes_to_train_on(tmp_path, monkeypatch, n=2, seed=11)
    plain = T.collect([job.out], None, tmp_path / "plain.npz", progress=False)
    more = T.collect([job.out], None, tmp_path / "more.npz", progress=False, settling=True)
    assert plain["before_nms"] == 0 and 0 < more["before_nms"] <= more["photos"] * T.SETTLING
    assert more["views"] == plain["views"] + more["before_nms"] and more["jittered"] == plain["jittered"]
    a, b = np.load(tmp_path / "plain.npz"), np.load(tmp_path / "more.npz")
    assert int((~b["jittered"]).sum()) == int((~a["jittered"]).sum())  # the val figures' kept boxes: the same views
    # every box before NMS is a view of a card it overlaps at least MATCH_IOU: never off by a card's width or more
    extra = b["targets"][b["jittered"]]
    assert len(extra) == more["before_nms"] + more["jittered"] and np.abs(extra[:, :2]).max() < 1.0


@requires_model
def test_the_released_net_moves_boxes_onto_their_cards(tmp_path):
    """On a rendered winning hand, boxes jittered as a detector misses cards come out closer to the cards."""
    from vision.infer.imageio import load_image
    from vision.infer.model import _refine_session, model_info
    from vision.infer.refine import lies
    from vision.synth.write import Job, prepare, render_one

    info = model_info(None)
    if not info.refine:
        pytest.skip("the released model has no refine net")
    job = Job(str(tmp_path / "h"), "hands", 11, 1, ("classic",), None, 0.0, 960, 720)
    prepare(job)
    render_one(job, 0)
    gt = json.loads(next((tmp_path / "h" / "gt").glob("*.json")).read_text())
    img = load_image(tmp_path / "h" / gt["image"])
    rng = np.random.default_rng(0)
    cards = [np.array(c["quad"], np.float32) for c in gt["cards"] if c["visible"] >= 0.5]
    boxes = [jitter_quad(c, rng, scale=2.0) for c in cards]
    t = lies(_refine_session(str(info.path)), img, boxes)
    before = [quad_iou(b, c) for b, c in zip(boxes, cards, strict=True)]
    after = [quad_iou(refined(b, tt), c) for b, tt, c in zip(boxes, t, cards, strict=True)]
    assert len(cards) >= 10 and np.mean(after) > max(0.9, np.mean(before) + 0.15)  # measured: 0.68 -> 0.95
    assert np.mean(np.array(after) > np.array(before)) > 0.9


def test_settled_boxes_keep_one_box_a_card_in_a_tight_stair(monkeypatch):
    """ModelInfo.settle: every box scored ≥ SETTLE_CONF is moved onto its card, then NMS runs over the moved boxes.
    Two boxes on one card become one card; a half-covered neighbour (IoU 0.43 with it, which NMS at the detector's 0.4
    drops) is kept at its own corners; a box that, moved, reads as a doubtful face is read at the detector's cut too and
    dropped when that shows no card face; a box scored below SETTLE_CONF is offered as a spare."""
    from dataclasses import replace

    import vision.infer.recognize as R

    info = replace(R.model_info(None), settle=0.5, conf=0.45, rescue_conf=0.1, rescue_cls=0.99)
    cards = [_card(100, 150), _card(112, 150), _card(300, 150)]  # a stair of two (12 of 30 px showing), one apart
    pad = _card(200, 150)  # not a card: a ruled notepad
    assert 0.42 < quad_iou(cards[0], cards[1]) < 0.44

    def lies(session, img, quads):
        return np.float32([target(q, min(cards + [pad], key=lambda c: np.linalg.norm(c.mean(0) - q.mean(0))))
                           for q in quads]).reshape(-1, 5)

    def read_boxes(img, quads, cls_s, info):
        probs = np.eye(len(info.codes), dtype=np.float32)[[int(q.mean(0)[0]) // 10 for q in quads]]
        # the pad: its own box no card face; settled, a doubtful one (NONE_CHECK: so its own box is read too)
        none = [(1.0 if q[1, 0] - q[0, 0] > 40 else 0.3) if abs(q.mean(0)[0] - 200) < 5 else 0.0 for q in quads]
        return probs, np.float32(none)

    monkeypatch.setattr(R, "_refine_session", lambda path: None)
    monkeypatch.setattr(R, "lies", lies)
    monkeypatch.setattr(R, "read_boxes", read_boxes)
    monkeypatch.setattr(R, "_second_look", lambda img, quads, probs, cls_s, info: probs)
    shifted = cards[0] + np.float32([5, 0])  # across, toward the covering card: IoU 0.46 with the other box
    found = R.Found(boxes=[(cards[0] + np.float32([-6, 3]), 0.9), (cards[2] + np.float32([4, 0]), 0.8),
                           (_card(200, 150, w=60), 0.6), (_card(300, 400), 0.2)],
                    candidates=[(shifted, 0.7), (cards[1] + np.float32([3, 0]), 0.35)])
    dets, quads, probs, judged, spares = R._settled(np.zeros((500, 500, 3), np.uint8), found, None, info, 5)
    got = sorted((q.mean(0)[0], s) for q, s in dets)
    assert [round(x) for x, _ in got] == [100, 112, 300] and [s for _, s in got] == [0.9, 0.35, 0.8]
    for q in quads:
        assert max(quad_iou(q, c) for c in cards) > 0.99  # at the cards' own corners
    assert len(probs) == len(quads) == len(judged) == 3
    assert [round(np.array(c.quad).mean(0)[1]) for c in spares] == [400]  # the low box, apart from every card
    assert R._settled(np.zeros((9, 9, 3), np.uint8), R.Found([]), None, info, 5)[0] == []  # no boxes: no cards


@requires_model
def test_release_changes_only_the_settings_named(tmp_path, monkeypatch, capsys):
    """`changpai release BASE --name NAME --set settle=0.5`: the base's networks and model.json, with the setting and
    why; the release loads with it; a name that is no setting, or the base's own name, is one sentence."""
    import vision.train.release as release
    from vision.infer.model import model_info

    monkeypatch.setattr(release, "MODELS_DIR", tmp_path / "models")
    base = model_variant(tmp_path / "base", copy=True, settle=0.0)
    assert main(["release", str(base), "--name", "s", "--set", "settle=0.5", "--note", "chosen on val"]) == 0
    dest = tmp_path / "models" / "s"
    meta, was = json.loads((dest / "model.json").read_text()), json.loads((base / "model.json").read_text())
    assert meta["settle"] == 0.5 and meta["settings_note"] == "chosen on val" and "settle 0.5 (was 0.0)" in meta["version_note"]
    assert {k: v for k, v in meta.items() if k not in ("settle", "settings_note", "version_note", "evaluation")} == \
        {k: v for k, v in was.items() if k not in ("settle", "settings_note", "version_note", "evaluation")}
    assert all((dest / f.name).read_bytes() == f.read_bytes() for f in base.glob("*.onnx"))
    assert model_info(dest).settle == 0.5 and "settled boxes" in (dest / "MODEL_CARD.md").read_text()
    capsys.readouterr()
    assert main(["release", str(base), "--name", "t", "--set", "nms=0.5"]) == 2
    assert "nms cannot be set" in capsys.readouterr().err
    assert main(["release", str(dest), "--name", "s", "--set", "settle=0.4"]) == 2
    assert "new name" in capsys.readouterr().err and not (tmp_path / "models" / "t").exists()


def test_an_unsure_settled_card_is_read_at_the_detectors_box_too(monkeypatch):
    """With settle, a card read with less than ModelInfo.refine has its reading averaged with the one at its detector's
    box, unless that box shows no card face; sure cards are not read again."""
    from dataclasses import replace

    import vision.infer.recognize as R

    info = replace(R.model_info(None), settle=0.5, refine=0.99)
    read = []

    def read_boxes(img, quads, cls_s, info):
        read.extend(quads)
        return np.eye(len(info.codes), dtype=np.float32)[[5] * len(quads)], np.float32([0.0, 0.9][:len(quads)])

    monkeypatch.setattr(R, "read_boxes", read_boxes)
    probs = np.zeros((3, len(info.codes)), np.float32)
    probs[0, 1] = 1.0  # sure
    probs[1, [0, 9]] = probs[2, [2, 9]] = 0.6, 0.4  # unsure; the last one's detector box shows no face
    boxes = [_card(x, 150) for x in (60, 140, 220)]
    out = R._with_detectors_reading(np.zeros((300, 300, 3), np.uint8), boxes, probs, None, info)
    assert len(read) == 2 and np.allclose(read[0].mean(0), [140, 150])
    assert np.allclose(out[1, [0, 5, 9]], [0.3, 0.5, 0.2]) and np.array_equal(out[[0, 2]], probs[[0, 2]])
    assert probs[1, 5] == 0  # nothing changed in place


@requires_model
def test_a_card_settled_onto_the_table_goes_back_to_the_detectors_box(monkeypatch):
    """Knobs.face_at_box: a settled box the classifier sees no card face in is kept at the detector's box, with that
    box's reading, when there it is clearly a face and overlaps no other card kept; with the knob at 0 (or a box that is
    no face at the detector's box either, or one on a card already kept) it is dropped as before."""
    from dataclasses import replace

    import vision.infer.recognize as R
    from vision.infer.model import Knobs

    grown = {(60, 44): 0.8, (220, 44): 0.9}  # settled boxes 44 px wide: grown onto the table, no face there
    own = {60: 0.01, 140: 0.0, 220: 0.4, 150: 0.02}  # at the detector's box (30 px): a face, but 220 none either

    def read_boxes(img, quads, cls_s, info):
        cx = [round(q.mean(0)[0]) for q in quads]
        wide = [round(q[1, 0] - q[0, 0]) for q in quads]
        none = [grown.get((x, w), own.get(x, 0.0)) if w > 40 else own.get(x, 0.0) for x, w in zip(cx, wide, strict=True)]
        return np.eye(len(info.codes), dtype=np.float32)[[x // 10 for x in cx]], np.float32(none)

    monkeypatch.setattr(R, "read_boxes", read_boxes)
    info = replace(R.model_info(None), iou=0.5, knobs=Knobs(face_at_box=0.05))
    boxes = [(_card(x, 150), 0.9) for x in (60, 140, 220, 150)]
    quads = [_card(60, 150, w=44), _card(140, 150), _card(220, 150, w=44), _card(150, 150, w=44)]
    order = [0, 1, 2, 3]
    p0, n0 = read_boxes(None, quads, None, info)
    n0[3] = 0.7  # settled on 140's card, no face there; its own box overlaps the card kept at 140
    q, p, pn = R._unsettled(np.zeros((9, 9, 3), np.uint8), boxes, quads, p0, n0, order, [], None, info)
    assert [bool(x < 0.5) for x in pn] == [True, True, False, False]
    assert np.allclose(q[0], boxes[0][0]) and p[0].argmax() == 6 and pn[0] == np.float32(0.01)
    assert np.allclose(q[2], quads[2]) and n0[0] == np.float32(0.8)  # the others as they were, nothing changed in place
    assert quad_iou(boxes[3][0], boxes[1][0]) >= 0.5


@requires_model
def test_a_box_the_detector_is_sure_of_is_kept_though_read_as_no_card_face():
    """Knobs.sure_box / sure_face: a box read as no card face is kept when the detector scored it at least sure_box and
    it reads one code surely among the faces; a less sure box, a doubtful face, or the knob at 0 keep the old way."""
    from dataclasses import replace

    import vision.infer.recognize as R
    from vision.infer.model import Knobs

    p = np.zeros(35, np.float32)
    p[[4, 5]] = 0.94, 0.06
    doubtful = np.full(35, 1 / 35, np.float32)
    info = replace(R.model_info(None), knobs=Knobs(sure_box=0.9, sure_face=0.9))
    assert R._surely_a_card(0.93, p, info)
    assert not R._surely_a_card(0.85, p, info) and not R._surely_a_card(0.99, doubtful, info)
    assert not R._surely_a_card(0.99, p, replace(info, knobs=Knobs(sure_box=0.0)))


@requires_model
def test_a_sure_box_the_prune_net_leaves_out_is_kept_when_it_overlaps_no_card_kept(monkeypatch):
    """Knobs.free_box / free_apart: of the boxes the prune net leaves out, one the detector scored at least free_box that
    overlaps no card kept by free_apart or more stays (a whole card over the end of a neighbour whose box reaches under
    it); a second box on a card, a less sure box, and every box with the knob at 0 go as the net says."""
    from dataclasses import replace

    import vision.infer.recognize as R
    from vision.infer.model import Knobs

    whole = (_card(100, 150), 0.93)  # its neighbour's box below reaches 20 px under its end
    neighbour = (_card(112, 260, length=140), 0.9)
    twice = (_card(202, 150), 0.95)  # a second box on the card at 200
    card = (_card(200, 150), 0.9)
    unsure = (_card(300, 150), 0.85)
    lone_twin = (_card(103, 150), 0.92)  # a second box on the whole card: goes once the whole card is back
    dets = [whole, neighbour, twice, card, unsure, lone_twin]
    monkeypatch.setattr(R, "prune", lambda net, img, d, thr: [(0, 0.1), (2, 0.0), (4, 0.2), (5, 0.05)])
    monkeypatch.setattr(R, "_prune_net", lambda info: None)
    info = replace(R.model_info(None), knobs=Knobs(free_box=0.9, free_apart=0.3))
    assert 0 < quad_iou(whole[0], neighbour[0]) < 0.3 and quad_iou(twice[0], card[0]) > 0.3
    assert R._pruned(None, dets, info) == {2, 4, 5}
    assert R._pruned(None, dets, replace(info, knobs=Knobs(free_box=0.0))) == {0, 2, 4, 5}
