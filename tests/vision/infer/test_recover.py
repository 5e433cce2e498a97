"""The recover net's view of a box NMS dropped, and the choice among the boxes it judges cards."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import model_variant, requires_model
from vision.infer.geometry import obb_to_quad, quad_iou, quad_ious
from vision.infer.recover import ACROSS, ALONG, CHANNELS, VIEW_H, VIEW_W, choose, view


def _card(cx, cy, angle=0.0):
    return obb_to_quad(cx, cy, 30, 140, angle)  # a long card standing upright (w 30, h 140)


def _every_card_right(name: str):
    """The released model's recognition of docs/samples/NAME.jpg, checked against NAME.json: every card found
    once, nothing extra, every code right."""
    import json

    from tests.conftest import SAMPLES
    from vision.eval.tally import match
    from vision.infer.recognize import recognize

    gt = json.loads((SAMPLES / f"{name}.json").read_text())
    truth = [np.array(c["quad"], np.float32) for c in gt["cards"]]
    rec = recognize(SAMPLES / f"{name}.jpg")
    pairs = match([np.array(c.quad, np.float32) for c in rec.cards], truth)
    assert len(pairs) == len(truth) == len(rec.cards)
    assert all(rec.cards[i].code == gt["cards"][j]["code"] for i, j in pairs)
    return rec


def _scenes_to_train_on(tmp_path, monkeypatch, n: int, seed: int):
    """``n`` winning-hand scenes rendered under tmp_path/hands, with runs/ and models/ under tmp_path too."""
    import vision.train.release as release
    import vision.train.yolo as train
    from vision.synth.write import Job, prepare, render_one

    job = Job(str(tmp_path / "hands"), "hands", n, seed, ("classic",), None, 0.0, 960, 720)
    prepare(job)
    for i in range(job.n):
        render_one(job, i)
    monkeypatch.setattr(train, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(release, "MODELS_DIR", tmp_path / "models")
    return job


def test_view_centres_the_box_and_draws_the_kept_boxes():
    img = np.full((400, 400, 3), 200, np.uint8)
    img[130:270, 185:215] = (0, 0, 255)  # the card at the box is red; the rest grey
    q = _card(200, 200)
    v = view(img, q, [q, _card(200 + 30, 200)])  # a kept box on the card itself, and its right neighbour
    assert v.shape == (VIEW_H, VIEW_W, CHANNELS) and v.dtype == np.uint8
    mid = v[VIEW_H // 2, :, :]
    card_px = VIEW_W / ACROSS  # the card spans the middle third across
    assert (mid[int(VIEW_W / 2), :3] == (0, 0, 255)).all()
    assert (mid[2, :3] == 200).all()
    # coverage: one box over the card, one over its neighbour to the right, none at the left
    assert mid[int(VIEW_W / 2) - 3, 3] == 100 and mid[2, 3] == 0 and mid[int(VIEW_W / 2 + card_px) + 2, 3] == 100
    # outlines where the boxes' long sides are, none in the empty left third
    assert mid[:, 4][: int(VIEW_W / 2 - card_px / 2) - 2].max() == 0
    assert mid[:, 4].max() == 255
    # along the card: the view is ALONG card lengths tall, so the card's ends lie inside it
    col = v[:, int(VIEW_W / 2) - 3, 3]
    inside = np.where(col > 0)[0]
    assert abs((inside[-1] - inside[0] + 1) - VIEW_H / ALONG) <= 2


def test_view_is_the_same_whichever_corner_comes_first():
    rng = np.random.default_rng(1)
    img = rng.integers(0, 255, (300, 300, 3), np.uint8)
    q = _card(150, 150, 0.35)
    assert np.array_equal(view(img, q, []), view(img, q[[2, 3, 0, 1]], []))


def test_quad_ious_are_quad_iou_for_every_pair_apart_touching_or_crossing():
    rng = np.random.default_rng(3)
    q = _card(200, 200, 0.3)
    others = [_card(x, y, a) for x, y, a in rng.uniform((0, 0, -1.6), (400, 400, 1.6), (60, 3))]
    others += [q, _card(230, 200, 0.3), _card(200, 340, 0.3)]
    box = _card(100, 100)
    others.append(box + np.array([q[:, 0].min() - box[:, 0].max(), 0], np.float32))  # ends where q's box begins
    got = quad_ious(q, others)
    assert got == [quad_iou(q, o) for o in others]
    assert any(v == 0.0 for v in got) and any(v > 0.5 for v in got)
    assert quad_ious(q, []) == []


def test_kept_boxes_beyond_the_view_leave_it_as_without_them():
    rng = np.random.default_rng(2)
    img = rng.integers(0, 255, (400, 900, 3), np.uint8)
    q, near = _card(200, 200), _card(225, 200)
    far = [_card(x, 200) for x in (600, 700, 800)]
    assert np.array_equal(view(img, q, [near, *far]), view(img, q, [near]))
    assert not np.array_equal(view(img, q, [near]), view(img, q, []))


def test_choose_keeps_one_box_per_card_above_the_threshold():
    cands = [(_card(100, 200), 0.5), (_card(102, 200), 0.6), (_card(160, 200), 0.4), (_card(220, 200), 0.3)]
    probs = np.array([0.9, 0.8, 0.7, 0.2], np.float32)
    assert choose(cands, probs, 0.5) == [0, 2]  # 1 is 0 again, 3 is below the threshold
    assert choose(cands, probs, 0.95) == []


@requires_model
def test_train_recover_collects_trains_and_releases(tmp_path, monkeypatch, capsys):
    import json

    from app.cli import main
    from vision.infer.model import model_info
    from vision.infer.recognize import recognize
    from vision.train.recover_train import load

    job = _scenes_to_train_on(tmp_path, monkeypatch, n=5, seed=4)
    args = ["train", "recover", "--data", job.out, "--val", job.out, "--epochs", "1", "--batch", "4", "--workers", "1",
            "--name", "r", "--release", "m", "--threshold", "0.5", "--prune", "0.01"]
    assert main(args) == 0
    views = load([tmp_path / "runs" / "r" / "views_train.npz"])
    assert len(views["labels"]) >= 4 and views["views"].shape[1:] == (VIEW_H, VIEW_W, CHANNELS)
    dest = tmp_path / "models" / "m"
    meta = json.loads((dest / "model.json").read_text())
    assert meta["recover"] == 0.5 and meta["recover_net"]["epochs"] == 1 and "recover net" in (dest / "MODEL_CARD.md").read_text()
    assert model_info(dest).recover == 0.5 and model_info(dest).prune == meta["prune"] == 0.01
    assert "pruning" in (dest / "MODEL_CARD.md").read_text()
    rec = recognize(next((tmp_path / "hands" / "images").rglob("*.jpg")), dest)  # the released model loads and runs
    assert rec.cards
    assert not (dest / "prune.onnx").exists()  # the one net recovers and prunes
    # released again from m, keeping m's net for pruning and the spares: it becomes prune.onnx
    assert main(args[:-6] + ["--model", str(dest), "--release", "m2", "--threshold", "0.6", "--prune", "0.02",
                             "--keep-prune-net"]) == 0
    two = tmp_path / "models" / "m2"
    assert (two / "prune.onnx").read_bytes() == (dest / "recover.onnx").read_bytes()
    assert (two / "recover.onnx").read_bytes() == (tmp_path / "runs" / "r" / "recover.onnx").read_bytes()
    meta2 = json.loads((two / "model.json").read_text())
    assert meta2["prune_net"]["from"] == str(dest) and meta2["recover"] == 0.6 and meta2["prune"] == 0.02
    assert "prune net (`prune.onnx`)" in (two / "MODEL_CARD.md").read_text()
    assert recognize(next((tmp_path / "hands" / "images").rglob("*.jpg")), two).cards
    bare = tmp_path / "bare"  # a model with no box net (nor refine net) has none to keep: one sentence, nothing written
    bare.mkdir()
    for f in ("detector.onnx", "classifier.onnx"):
        (bare / f).symlink_to(dest / f)
    no_nets = ("recover", "prune", "refine", "settle", "adapt")
    (bare / "model.json").write_text(json.dumps({k: v for k, v in meta.items() if k not in no_nets}))
    capsys.readouterr()
    assert main(args[:-6] + ["--model", str(bare), "--release", "m3", "--keep-prune-net"]) != 0
    assert "no recover net to keep" in capsys.readouterr().err and not (tmp_path / "models" / "m3").exists()
    # the views made before are reused, and a finished run resumes to the same end
    assert main(args[:-6] + ["--resume"]) == 0


@requires_model
def test_a_prune_net_prunes_and_judges_the_spares(tmp_path):
    """A model folder with prune.onnx prunes and judges the spares with it: a prune.onnx that cannot be loaded is
    reported when the model prunes, and not when it uses no box net."""
    import json

    import pytest

    from tests.conftest import SAMPLES
    from vision.infer.model import ModelError, model_info
    from vision.infer.recognize import recognize

    info = model_info(None)
    for f in ("detector.onnx", "classifier.onnx", "recover.onnx", "classifier_adapt.onnx"):
        (tmp_path / f).symlink_to(info.path / f)
    (tmp_path / "prune.onnx").write_bytes(b"not a network")
    meta = json.loads((info.path / "model.json").read_text())
    (tmp_path / "model.json").write_text(json.dumps(meta | {"prune": 0.01}))
    with pytest.raises(ModelError, match="prune.onnx"):
        model_info(tmp_path)
    with pytest.raises(ModelError, match="prune.onnx"):
        recognize(SAMPLES / "hand_7.jpg", tmp_path)
    (tmp_path / "model.json").write_text(json.dumps(meta | {"recover": 2.0, "prune": 0.0, "refine": 0.0, "settle": 0.0}))
    assert recognize(SAMPLES / "hand_1.jpg", tmp_path).cards


@requires_model
def test_released_model_recovers_cards_its_nms_dropped(tmp_path):
    """A tight fan (docs/samples/hand_6.jpg) under a stricter NMS (IoU 0.2; boxes not settled): NMS now drops about ten of the
    24 cards' boxes for overlapping their neighbours (at its own IoU changpai-v11 keeps all 24; v12's NMS drops one,
    which the net puts back; v9 and v10 dropped an 8w and a 6t). The recover net puts most of them back, each on a
    card of its own and read right, and adds nothing that is no card."""
    import json

    from tests.conftest import SAMPLES
    from vision.eval.tally import match
    from vision.infer.recognize import recognize

    truth = json.loads((SAMPLES / "hand_6.json").read_text())["cards"]

    def with_settings(name: str, **settings) -> list:
        return recognize(SAMPLES / "hand_6.jpg", model_variant(tmp_path / name, **({"iou": 0.2, "settle": 0.0} | settings))).cards

    off = with_settings("no-net", recover=2.0, prune=0.0)
    on = with_settings("net")
    assert len(off) <= len(truth) - 8  # the premise: the strict NMS drops many cards
    pairs = match([np.array(c.quad, np.float32) for c in on], [np.array(c["quad"], np.float32) for c in truth])
    recovered = [(i, j) for i, j in pairs if on[i].recovered]
    # every recovered card but one lies on a card of its own (a box the strict NMS itself kept may lie across two:
    # changpai-v12 keeps one such 5w here). The networks of changpai-v27 and v28 put a second box on the 2t (IoU 0.6
    # with it) on one 2-core machine (an Intel Xeon) and none on another that ran the same test.
    assert len(recovered) >= sum(1 for c in on if c.recovered) - 1
    assert len(recovered) >= 8 and len(on) >= len(off) + 8
    assert all(on[i].code == truth[j]["code"] for i, j in recovered)


@requires_model
def test_a_model_naming_a_recover_threshold_needs_the_net(tmp_path):
    import json

    import pytest

    from vision.infer.model import ModelError, model_info

    info = model_info(None)
    for f in ("detector.onnx", "classifier.onnx"):
        (tmp_path / f).symlink_to(info.path / f)
    (tmp_path / "model.json").write_text(json.dumps({"recover": 0.9}))
    with pytest.raises(ModelError, match="recover.onnx"):
        model_info(tmp_path)
    (tmp_path / "model.json").write_text(json.dumps({"prune": 0.01}))
    with pytest.raises(ModelError, match="recover.onnx"):
        model_info(tmp_path)
    (tmp_path / "model.json").write_text(json.dumps({}))
    info = model_info(tmp_path)
    assert not info.recovers and not info.uses_net  # no threshold: no net needed, none used


@requires_model
def test_prune_leaves_out_a_second_box_on_a_card_and_nothing_else():
    """Each box judged as if NMS had dropped it, at the model's own threshold: of a card's box and a box added a
    quarter of a card's width beside it, each covered by the other, one goes (the one the net thinks less of); the
    true cards of the samples all stay. (changpai-v28's net, taught on settled boxes, keeps such a box at 0.01 where
    the distilled net of v14–v27 left it out: it is asked at the threshold it was chosen for.)"""
    from tests.conftest import SAMPLES
    from vision.infer.geometry import axes, order_long_axis_vertical
    from vision.infer.imageio import load_image
    from vision.infer.model import _prune_session, model_info
    from vision.infer.recognize import recognize
    from vision.infer.recover import prune

    info = model_info(None)
    net, below = _prune_session(str(info.path)), info.prune  # the net the model prunes with, and below what
    assert below > 0
    for name in ("hand_1", "hand_3", "hand_6"):
        img = load_image(SAMPLES / f"{name}.jpg")
        boxes = [(np.array(c.quad, np.float32), c.det_score) for c in recognize(img).cards]
        assert prune(net, img, boxes, below) == []
        q = order_long_axis_vertical(boxes[5][0])
        twice = boxes + [(q + axes(q)[1] * 0.25, 0.5)]
        gone = [i for i, _ in prune(net, img, twice, below)]
        assert len(gone) == 1 and gone[0] in (5, len(boxes)), name


@requires_model
def test_released_model_prunes_the_extra_boxes_of_a_tight_stair(tmp_path):
    """A tight stair (docs/samples/hand_7.jpg) with its settled boxes under a looser NMS (IoU 0.99 instead of the
    model's): NMS keeps some 33 boxes for the 24 cards (second boxes on a card; at the model's own IoU, 24);
    pruning leaves the extra ones out, and the 24 cards are found and read right. (Until changpai-v27 the stair was
    asked with the detector's own boxes under NMS at IoU 0.6; v28's prune net was taught on settled boxes only, and
    the unsettled boxes across two cards are no longer its to prune: it leaves 31 of 33 there.)"""
    import json

    from tests.conftest import SAMPLES
    from vision.eval.tally import match
    from vision.infer.recognize import recognize

    _every_card_right("hand_7")
    truth = json.loads((SAMPLES / "hand_7.json").read_text())["cards"]

    def with_settings(name: str, **settings):
        return recognize(SAMPLES / "hand_7.jpg", model_variant(tmp_path / name, **({"settle": 0.99} | settings)))

    off = with_settings("no-prune", prune=0.0)
    assert len(off.cards) >= len(truth) + 4 and "prune" not in off.timings_ms  # the premise: extra boxes kept
    rec = with_settings("prune")
    pairs = match([np.array(c.quad, np.float32) for c in rec.cards], [np.array(c["quad"], np.float32) for c in truth])
    assert len(pairs) == len(truth) == len(rec.cards)
    assert all(rec.cards[i].code == truth[j]["code"] for i, j in pairs)
    assert len(rec.spares) >= 2  # what was pruned is offered to the repairs
    assert rec.timings_ms["prune"] > 0  # its cost is measured with the rest


@requires_model
def test_a_card_lying_free_is_never_pruned(monkeypatch):
    """docs/samples/hand_8.jpg: a row where the net, asked of fully visible cards as if NMS had dropped them,
    gave some less than the model prunes below (it learned on dropped boxes, always well covered; 四丙 三丙 二万 at
    changpai-v9's boxes, 三丙 四丙 and more at v10's; v15's slim net 四丙 0.01 and 二万 0.09 against its 0.1; at v17's
    settled boxes 五丙; at v23's boxes none). The others cover them not at all, so they are not judged: every card is
    found and read right, and even a net that calls every box no card prunes none of those lying free."""
    from tests.conftest import SAMPLES
    from vision.infer import recover
    from vision.infer.imageio import load_image
    from vision.infer.model import _prune_session, model_info
    from vision.infer.recover import PRUNE_COVER, covered, inputs

    rec = _every_card_right("hand_8")
    assert len(rec.cards) == 24
    img = load_image(SAMPLES / "hand_8.jpg")
    boxes = [(np.array(c.quad, np.float32), c.det_score) for c in rec.cards]
    info = model_info(None)
    net = _prune_session(str(info.path))  # the net the model prunes with
    views = [inputs(img, [boxes[i]], [q for k, (q, _) in enumerate(boxes) if k != i]) for i in range(len(boxes))]
    cover = [covered(v[0]) for _, v, _ in views]
    # what the released net alone would say of each card: those it would prune lie free
    assert all(cover[i] < PRUNE_COVER for i, (_, v, e) in enumerate(views) if recover._run(net, v, e)[0] < info.prune)
    free = {i for i, c in enumerate(cover) if c < PRUNE_COVER}
    assert free
    monkeypatch.setattr(recover, "_run", lambda session, v, e: np.zeros(len(v), np.float32))
    gone = {i for i, _ in recover.prune(net, img, boxes, info.prune)}
    assert not gone & free


def test_covered_is_the_share_of_the_box_the_others_cover():
    from vision.infer.recover import covered, view

    img = np.full((400, 400, 3), 200, np.uint8)
    q = np.array([[180, 100], [220, 100], [220, 300], [180, 300]], np.float32)
    assert covered(view(img, q, [])) == 0.0
    assert covered(view(img, q, [q + [0, 5]])) > 0.9  # a second box on the card
    half = np.array([[200, 100], [240, 100], [240, 300], [200, 300]], np.float32)
    assert 0.4 < covered(view(img, q, [half])) < 0.6  # a neighbour over half its width


def test_readings_say_how_sure_and_whether_a_box_repeats_a_kept_code():
    from vision.infer.recover import READS, readings

    kept = [_card(200, 200), _card(230, 200)]
    cands = [_card(204, 200), _card(215, 200), _card(600, 600)]
    probs = np.zeros((3, 35), np.float32)
    probs[0, 3], probs[0, 4] = 0.9, 0.1  # reads as the kept box it repeats (code 3)
    probs[1, 7] = 1.0  # reads as a code no kept box has, between the two
    probs[2, 5] = 1.0  # reads as the second kept box's code, far from both
    r = readings(cands, probs, np.array([0.0, 0.2, 0.0]), kept, [3, 5])
    assert r.shape == (3, READS)
    assert r[0].tolist() == pytest.approx([0.9, 0.0, 1.0, 1.0])
    assert r[1].tolist() == pytest.approx([1.0, 0.2, 0.0, 0.0])
    assert r[2, 2:].tolist() == [0.0, 0.0]  # overlaps no kept box, and the nearest has another code
    assert readings(cands, probs, np.zeros(3), [], []).shape == (3, READS)


@requires_model
def test_a_net_that_reads_the_readings_only_recovers(tmp_path, monkeypatch, capsys):
    """train recover --readings: views collected with the readings, a net that takes them, released only with
    --keep-prune-net (it cannot prune); a model folder pruning with it is one sentence."""
    import json

    import onnxruntime as ort

    from app.cli import main
    from tests.conftest import SAMPLES
    from vision.infer.model import ModelError, model_info
    from vision.infer.recognize import recognize
    from vision.infer.recover import EXTRA, READS, reads_readings
    from vision.train.recover_train import load

    job = _scenes_to_train_on(tmp_path, monkeypatch, n=4, seed=6)
    args = ["train", "recover", "--data", job.out, "--val", job.out, "--epochs", "1", "--batch", "4", "--workers", "1",
            "--name", "r", "--readings", "--threshold", "0.5", "--prune", "0.01"]
    capsys.readouterr()
    assert main(args + ["--release", "m"]) != 0  # trained, but it cannot prune: not released
    assert "--keep-prune-net" in capsys.readouterr().err and not (tmp_path / "models" / "m").exists()
    net = tmp_path / "runs" / "r" / "recover.onnx"
    assert reads_readings(ort.InferenceSession(str(net)))
    views = load([tmp_path / "runs" / "r" / "views_train.npz"], with_readings=True)
    assert views["extra"].shape[1] == EXTRA + READS
    assert main(args + ["--release", "m", "--keep-prune-net"]) == 0
    dest = tmp_path / "models" / "m"
    meta = json.loads((dest / "model.json").read_text())
    assert meta["recover_net"]["readings"] is True and "reads the classifier's readings" in (dest / "MODEL_CARD.md").read_text()
    assert (dest / "prune.onnx").read_bytes() == (model_info(None).path / "prune.onnx").read_bytes()
    assert recognize(SAMPLES / "hand_1.jpg", dest).cards
    (dest / "prune.onnx").unlink()  # the readings net left to prune and judge the spares: one sentence
    from vision.infer.model import _prune_session

    _prune_session.cache_clear()
    with pytest.raises(ModelError, match="needs a prune.onnx"):
        model_info(dest)  # said when the model is taken, before any photo
    with pytest.raises(ModelError, match="needs a prune.onnx"):
        recognize(SAMPLES / "hand_1.jpg", dest)
    capsys.readouterr()
    assert main([a for a in args if a != "--readings"] + ["--resume"]) != 0  # trained with the readings: resumes only with them
    assert "with --readings" in capsys.readouterr().err


def test_views_collected_without_readings_are_refused_for_a_net_that_reads_them(tmp_path):
    from vision.train.recover_train import load

    old = tmp_path / "views.npz"
    np.savez_compressed(old, views=np.zeros((1, VIEW_H, VIEW_W, CHANNELS), np.uint8), labels=np.zeros(1, np.float32),
                        extra=np.zeros((1, 2), np.float32), photo=np.array(["a"]))
    assert load([old])["extra"].shape == (1, 2)
    with pytest.raises(ValueError, match="holds no readings"):
        load([old], with_readings=True)


@requires_model
def test_train_prune_teaches_a_slimmer_net_the_models_own_and_releases_it(tmp_path, monkeypatch, capsys):
    """`changpai train prune`: every view the model's prune net judges on the photos is kept with its answer (and the
    views mirrored, with the net's answers for those); a slim net learns them; the release is the model with that
    net as prune.onnx, its thresholds and other files as they were."""
    import json

    from app.cli import main
    from vision.infer.model import PRUNE_NET, _session, model_info
    from vision.infer.recognize import recognize
    from vision.infer.recover import EXTRA
    from vision.train.prune_distil import agreement, network

    base = model_info(None)
    job = _scenes_to_train_on(tmp_path, monkeypatch, n=3, seed=5)
    args = ["train", "prune", "--data", job.out, "--val", job.out, "--epochs", "1", "--batch", "8", "--name", "p",
            "--release", "slim"]
    assert main(args) == 0
    d = np.load(tmp_path / "runs" / "p" / "prune_train.npz")
    n = len(d["logits"]) // 3
    assert n >= 8 and d["views"].shape[1:] == (CHANNELS, VIEW_H, VIEW_W) and d["extra"].shape == (3 * n, EXTRA)
    teacher = _session(base.path / PRUNE_NET)
    x = d["views"][:n].astype(np.float32) / 255
    assert np.allclose(teacher.run(None, {"view": x, "extra": d["extra"][:n]})[0].reshape(-1), d["logits"][:n], atol=1e-3)
    assert np.array_equal(d["views"][n:2 * n], d["views"][:n, :, :, ::-1])  # mirrored across, then along
    dest = tmp_path / "models" / "slim"
    meta, own = json.loads((dest / "model.json").read_text()), json.loads((base.path / "model.json").read_text())
    kept = ("conf", "iou", "recover", "prune", "one_way")
    assert {k: meta[k] for k in kept} == {k: own[k] for k in kept}
    assert meta["prune_net"]["distilled"] and meta["prune_net"]["teacher"] == own["prune_net"] and "evaluation" not in meta
    assert (dest / "recover.onnx").read_bytes() == (base.path / "recover.onnx").read_bytes()
    assert (dest / PRUNE_NET).read_bytes() == (tmp_path / "runs" / "p" / PRUNE_NET).read_bytes()
    assert "taught the logits of the prune net" in (dest / "MODEL_CARD.md").read_text()
    assert meta["version_note"].startswith(f"slim = {base.path.name} with a slimmer prune net")
    assert sum(p.numel() for p in network().parameters()) < 0.7 * 222_000  # slimmer than the recover net it learns from
    assert recognize(next((tmp_path / "hands" / "images").rglob("*.jpg")), dest).cards  # the release loads and runs
    same = agreement(np.array([-5.0, 3.0, -1.0]), np.array([-6.0, 2.0, 1.0]))
    assert same["same_side_at_0.5"] == round(2 / 3, 5) and same["mean_abs_logit_gap"] == round(4 / 3, 4)
    capsys.readouterr()
    assert main(args[:-2] + ["--model", str(dest), "--release", "slim"]) != 0  # its own name: one sentence, kept as it was
    assert "new name" in capsys.readouterr().err and (dest / "model.json").read_text() == json.dumps(meta, indent=1, ensure_ascii=False)
    assert main(args[:-2] + ["--resume"]) == 0  # the views made before are reused, a finished run resumes to its end
    assert len(json.loads((tmp_path / "runs" / "p" / "figures.json").read_text())) == 1


def test_a_box_net_training_stopped_after_an_epoch_resumes_as_if_never_stopped(tmp_path, monkeypatch):
    """The checkpoint keeps the random draws (batch orders, flips, brightness): a run stopped after its first epoch
    and resumed ends with the very weights of a run that was never stopped."""
    import torch

    import vision.train.recover_train as rt

    rng = np.random.default_rng(3)
    n = 64
    np.savez(tmp_path / "views.npz", views=rng.integers(0, 255, (n, VIEW_H, VIEW_W, CHANNELS), dtype=np.uint8),
             labels=(rng.random(n) < 0.3).astype(np.float32), extra=rng.random((n, 2)).astype(np.float32),
             photo=np.arange(n))
    views = [tmp_path / "views.npz"]

    def fit(out, resume=False):
        return rt.fit(views, views, tmp_path / out, epochs=2, batch=16, progress=False, resume=resume)

    fit("whole")
    done = rt.epoch_done

    def stop_after_first(*a, **k):
        done(*a, **k)
        raise KeyboardInterrupt  # stopped once the first epoch's checkpoint is written

    monkeypatch.setattr(rt, "epoch_done", stop_after_first)
    with pytest.raises(KeyboardInterrupt):
        fit("stopped")
    monkeypatch.setattr(rt, "epoch_done", done)
    torch.manual_seed(99)  # whatever the process drew meanwhile
    fit("stopped", resume=True)
    whole = torch.load(tmp_path / "whole" / "last.pt", weights_only=False)["net"]
    resumed = torch.load(tmp_path / "stopped" / "last.pt", weights_only=False)["net"]
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)
