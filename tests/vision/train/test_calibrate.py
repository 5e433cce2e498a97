"""Deck calibration: a calibration photo is split into its named faces; a missing card is a clear error."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.conftest import SAMPLES, requires_model
from vision.deck.calibrate import faces_from_photo
from vision.synth.faces import random_style
from vision.train.calibrate import CALIBRATION_ORDER, CalibrationError, render_calibration_photo

pytestmark = requires_model


def test_calibration_photo_gives_the_faces_in_order():
    style = random_style(random.Random(5), "classic")
    img, gt = render_calibration_photo(style, seed=5)
    faces, picture, _ = faces_from_photo(img)
    assert [c for c, _ in faces] == list(CALIBRATION_ORDER[:30]) and picture.ndim == 3
    assert [c["code"] for c in gt["cards"]] == list(CALIBRATION_ORDER[:30])
    assert all(f.shape == (448, 96, 3) for _, f in faces)


@pytest.mark.parametrize("seed", [5, 31337, 7])
def test_each_face_is_named_after_the_card_it_was_cut_from(seed):
    # tilted photos: a row that slants across pixel rows must still be read as one row
    from vision.eval.tally import match
    from vision.infer.recognize import reading_order, recognize_array

    img, gt = render_calibration_photo(random_style(random.Random(seed), "holdout"), seed=seed)
    cards = reading_order(recognize_array(img).cards)
    assert len(cards) == 30
    gq = [np.array(c["quad"], np.float32) for c in gt["cards"]]
    pairs = dict(match([np.array(c.quad, np.float32) for c in cards], gq))
    assert [gt["cards"][pairs[k]]["code"] for k in range(30)] == list(CALIBRATION_ORDER[:30])


def test_missing_card_is_a_clear_message():
    style = random_style(random.Random(6), "classic")
    img, gt = render_calibration_photo(style, seed=6, n=29)
    with pytest.raises(CalibrationError, match="Found 29 cards") as e:
        faces_from_photo(img)
    assert e.value.picture is not None  # the photo with what was found, for the player


def test_check_sheet_shape():
    from vision.deck.calibrate import check_sheet

    faces = [(c, np.zeros((448, 96, 3), np.uint8)) for c in CALIBRATION_ORDER[:30]]
    sheet = check_sheet(faces)
    assert sheet.shape[0] > 448 * 3 and sheet.shape[1] >= 9 * 96


def test_faces_are_cut_inside_the_card_and_cleaned_of_the_photos_light():
    from vision.deck.calibrate import INSET_ACROSS, INSET_ALONG, clean_face, inset
    from vision.infer.geometry import box_error

    q = np.array([[10, 10], [60, 10], [60, 243], [10, 243]], np.float32)
    e = box_error(inset(q), q)
    assert abs(e["width"] - (1 - 2 * INSET_ACROSS)) < 1e-3 and abs(e["length"] - (1 - 2 * INSET_ALONG)) < 1e-3
    assert abs(e["across"]) < 1e-6 and abs(e["along"]) < 1e-6
    # a face photographed in dim, bluish light: paper comes out paper-coloured, the ink stays dark
    face = np.zeros((448, 96, 3), np.uint8)
    face[:] = (150, 110, 100)  # BGR: dim and blue
    face[100:300, 30:60] = (30, 20, 20)  # ink
    out = clean_face(face, paper=(222, 236, 244)).astype(int)
    assert np.abs(out[20, 10] - np.array([222, 236, 244])).max() <= 6
    assert out[200, 45].max() < 60


def test_eval_calibration_passes_scenes_epochs_and_minutes_on(tmp_path, monkeypatch, capsys):
    import json

    import vision.train.calibrate
    from app.cli import main

    seen = {}

    def fake_measure(work, base, n, seed, scenes, epochs, minutes, family, fit, least_show, detector_minutes, rulesets):
        seen.update(work=work, n=n, seed=seed, scenes=scenes, epochs=epochs, minutes=minutes, family=family, fit=fit,
                    least_show=least_show, detector_minutes=detector_minutes, rulesets=rulesets)
        fig = {"precision": 1.0, "recall": 0.99, "classification_accuracy": 0.98, "whole_photo_exact": 0.5,
               "hands": {"photos": 5, "exact_with_repair": 0.8, "exact_without_repair": 0.6, "wrong_total_on_a_win": 1,
                         "wrong_total_on_a_win_unflagged": 0}}
        return {"before": fig, "after": fig, "calibration_minutes": 1.0, "calibration": {"epochs": 1, "epochs_asked": 1}}

    monkeypatch.setattr(vision.train.calibrate, "measure", fake_measure)
    out = tmp_path / "r.json"
    assert main(["eval-calibration", "--work", str(tmp_path), "--n", "5", "--scenes", "40", "--epochs", "1",
                 "--minutes", "7.5", "--family", "boxed", "--fit", "full", "--least-show", "0.3", "--detector-minutes", "2",
                 "--rulesets", "rugao, nantong-single+xi_er", "--json", str(out)]) == 0
    assert seen == {"work": str(tmp_path), "n": 5, "seed": 9005, "scenes": 40, "epochs": 1, "minutes": 7.5,
                    "family": "boxed", "fit": "full", "least_show": 0.3, "detector_minutes": 2.0,
                    "rulesets": ("rugao", "nantong-single+xi_er")}
    said = capsys.readouterr().out
    assert "card accuracy 98.00 %" in said and "1.0 min (1 of 1 epochs)" in said and "(full fit)" in said
    assert "photo → total right 80.0 % with repair, 60.0 % without, of 5 winning hands; 1 wrong totals" in said
    assert json.loads(out.read_text())["calibration_minutes"] == 1.0


@pytest.mark.parametrize("command", ["calibrate", "eval-calibration"])
def test_detector_minutes_with_the_fast_fit_is_one_sentence(tmp_path, capsys, command):
    """The fast fit fine-tunes no detector: --detector-minutes with it is refused before anything is made, not ignored."""
    from app.cli import main

    args = [str(SAMPLES / "hand_1.jpg"), "--out", str(tmp_path / "m")] if command == "calibrate" else ["--work", str(tmp_path)]
    assert main([command, *args, "--detector-minutes", "2", "--yes" if command == "calibrate" else "--n=1"]) == 2
    err = capsys.readouterr().err
    assert "--fit full" in err and "Traceback" not in err and not (tmp_path / "m").exists() and not (tmp_path / "test").exists()


def test_eval_calibration_refuses_an_unknown_ruleset_in_one_sentence(tmp_path, capsys):
    from app.cli import main

    assert main(["eval-calibration", "--work", str(tmp_path), "--n", "1", "--rulesets", "rugao,nowhere"]) == 2
    err = capsys.readouterr().err
    assert "Unknown ruleset 'nowhere'" in err and "Traceback" not in err and not (tmp_path / "model").exists()


def test_eval_calibration_refuses_a_least_show_no_stair_can_have(tmp_path, capsys):
    """A share of the card showing outside what the renderer lays out is one sentence and exit 2, before any fitting."""
    from app.cli import main

    assert main(["eval-calibration", "--work", str(tmp_path), "--n", "1", "--least-show", "0.9"]) == 2
    err = capsys.readouterr().err
    assert "least" in err and "Traceback" not in err and not (tmp_path / "model").exists()


def test_fine_tuning_is_cut_to_the_epochs_that_fit_the_budget():
    """vision.train.stop_before, the callback `changpai calibrate --minutes` trains with: the epochs left are judged by
    the mean of those so far; a run cut short has its rate schedule planned again over the epochs that fit."""
    import time

    from vision.train.yolo import stop_before

    class Trainer:
        def __init__(self, epoch, started_s_ago, epochs=4, start_epoch=0):
            self.epoch, self.start_epoch, self.epochs, self.stop = epoch, start_epoch, epochs, False
            self.args = type("Args", (), {"epochs": epochs})()
            self.train_time_start = time.time() - started_s_ago
            self.planned = None

        def _setup_scheduler(self):
            self.planned = self.epochs
            self.scheduler = type("Scheduler", (), {"last_epoch": -1})()

    on_time = Trainer(epoch=1, started_s_ago=100)  # two of four epochs done, 50 s each: two more need 100 s
    stop_before(time.time() + 110)(on_time)
    assert (on_time.epochs, on_time.stop, on_time.planned) == (4, False, None)
    cut = Trainer(epoch=1, started_s_ago=100)
    stop_before(time.time() + 60)(cut)  # one more fits
    assert (cut.epochs, cut.args.epochs, cut.stop, cut.planned) == (3, 3, False, 3) and cut.scheduler.last_epoch == 1
    late = Trainer(epoch=1, started_s_ago=100)
    stop_before(time.time() + 40)(late)  # none fits
    assert (late.epochs, late.stop, late.planned) == (2, True, None)
    past = Trainer(epoch=0, started_s_ago=50)
    stop_before(time.time() - 30)(past)  # already past the deadline: this epoch is the last
    assert (past.epochs, past.stop) == (1, True)
    resumed = Trainer(epoch=5, started_s_ago=50, epochs=8, start_epoch=5)  # resumed at 5: one epoch of 50 s done
    stop_before(time.time() + 120)(resumed)  # two more fit (6 + 2): the 8 asked stay
    assert (resumed.epochs, resumed.stop, resumed.planned) == (8, False, None)
    stop_before(time.time() + 60)(resumed)  # one more fits: 7
    assert (resumed.epochs, resumed.stop, resumed.planned) == (7, False, 7)

    class Elder:  # a trainer without ultralytics' private re-planning step: the run is still cut to what fits
        epoch, start_epoch, epochs, stop = 1, 0, 4, False
        args = type("Args", (), {"epochs": 4})()
        train_time_start = time.time() - 100

    elder = Elder()
    stop_before(time.time() + 60)(elder)
    assert (elder.epochs, elder.args.epochs, elder.stop) == (3, 3, False)

    # a trainer that says how long its last epoch took is judged by that epoch, not the mean: a first epoch slowed by
    # work beside it (80 s, then 20 s) no longer cuts the run short, and a run cut early is lengthened again, up to
    # the epochs asked, once its epochs run faster
    slow_start = Trainer(epoch=1, started_s_ago=100, epochs=40)
    slow_start.epoch_time = 20.0
    stop_before(time.time() + 110)(slow_start)  # five more of 20 s fit (the mean, 50 s, would give two)
    assert (slow_start.epochs, slow_start.stop, slow_start.planned) == (7, False, 7)
    check = stop_before(time.time() + 90)
    run = Trainer(epoch=0, started_s_ago=60, epochs=10)
    run.epoch_time = 60.0
    check(run)  # one more of 60 s fits: cut to 2
    assert (run.epochs, run.stop, run.planned) == (2, False, 2)
    run.epoch, run.epoch_time, run.train_time_start = 1, 10.0, time.time() - 70  # the planned last one, faster
    check(run)  # it was planned as the last (the trainer ends after it): left as it is
    assert (run.epochs, run.stop) == (2, False)
    check = stop_before(time.time() + 45)
    run = Trainer(epoch=0, started_s_ago=60, epochs=10)
    run.epoch_time = 30.0
    check(run)  # one more of 30 s fits: cut to 2
    assert run.epochs == 2
    run.epochs = run.args.epochs = 3  # as if planned for three
    run.epoch, run.epoch_time = 1, 5.0
    check(run)  # 5 s epochs: up to 1 + 1 + 9 = 11, held to the 10 asked
    assert (run.epochs, run.stop, run.planned) == (10, False, 10)


def test_calibrated_model_is_complete_loads_everywhere_and_never_reads_cards_the_deck_lacks(tmp_path, capsys):
    """`changpai calibrate --faces --fit full --no-extras` (a deck without 福禄寿禧财, shown in a folder), briefly: the
    model folder it writes names those as absent, loads in recognize and score, and reads no card as one of them."""
    import json

    import cv2

    from app.cli import main
    from scoring.cards import CODES, EXTRAS
    from vision.infer.model import BOX_NETS, model_info
    from vision.infer.recognize import faces_only, recognize
    from vision.synth.faces import FaceSource

    src = FaceSource(random_style(random.Random(3), "holdout"), seed=3)
    for c in CODES:
        if c not in EXTRAS:
            (tmp_path / "faces" / c).mkdir(parents=True)
            cv2.imwrite(str(tmp_path / "faces" / c / "face.png"), src.face(c)[0])
    out = tmp_path / "deck"
    # a budget already spent: one epoch of the two asked is trained, and the user is told
    assert main(["calibrate", "--faces", str(tmp_path / "faces"), "--out", str(out), "--fit", "full", "--scenes", "8", "--epochs", "2",
                 "--minutes", "0.01", "--detector-minutes", "0.01", "--no-extras", "--yes"]) == 0
    assert "1 of 2 epochs within --minutes 0.01" in capsys.readouterr().out
    meta = json.loads((out / "model.json").read_text())
    assert meta["absent"] == list(EXTRAS) and (meta["calibration"]["epochs"], meta["calibration"]["epochs_asked"]) == (1, 2)
    assert meta["calibration"]["tight_crops"] > 20  # cut from the deck's hands laid tight, besides the loose ones
    # the detector fine-tuned on the deck's scenes (one epoch within its spent budget) replaced the base's
    assert meta["calibration"]["detector"]["epochs"] == 1 and meta["calibration"]["detector"]["scenes"] == 8
    assert (out / "detector.onnx").read_bytes() != (model_info(None).path / "detector.onnx").read_bytes()
    assert not (out / "detector.fitted.onnx").exists()
    info = model_info(out)
    assert info.absent == EXTRAS
    for net in BOX_NETS:  # the nets that judge boxes, not faces, carry over as they are
        base = model_info(None).path / net
        assert (out / net).is_file() == base.is_file()
        assert not base.is_file() or (out / net).read_bytes() == base.read_bytes()
    probs = np.random.default_rng(0).dirichlet(np.ones(len(info.names)), 5).astype(np.float32)
    faces, _ = faces_only(probs, info)
    assert np.allclose(faces.sum(1), 1) and not faces[:, [info.codes.index(c) for c in EXTRAS]].any()
    rec = recognize(SAMPLES / "hand_1.jpg", out)
    assert rec.cards and not any(a in EXTRAS for c in rec.cards for a, p in c.alternatives if p > 0)
    assert main(["score", str(SAMPLES / "hand_1.jpg"), "--model", str(out)]) == 0
    assert "胡" in capsys.readouterr().out


def test_calibration_figures_say_what_keeps_photos_from_being_exact():
    from vision.train.calibrate import _figures

    report = {"precision": 0.99, "recall": 0.98, "classification_accuracy": 0.97, "whole_photo_exact": 0.5,
              "confusions": [{"true": "6t", "pred": "5t", "count": 1}],
              "per_image": [{"cards": 10, "found": 9, "extra": 1, "right": 8, "exact": False},
                            {"cards": 5, "found": 5, "extra": 0, "right": 5, "exact": True}]}
    f = _figures(report)
    assert (f["cards"], f["missed"], f["extra"], f["misread"]) == (15, 1, 1, 1)
    assert f["whole_photo_exact"] == 0.5 and f["confusions"] == report["confusions"]



def test_calibrate_fast_fit_takes_the_scenes_asked_else_its_own_default(monkeypatch):
    """`eval-calibration --scenes N --fit fast` reaches the fast fit (it once kept its 100); unset, the fast fit's
    default, not the full fine-tune's."""
    import vision.train.calibrate as tc
    from vision import CALIBRATION_SCENES, FAST_SCENES

    asked = []
    monkeypatch.setattr(tc, "calibrate_fast", lambda *a, scenes, **kw: asked.append(scenes) or {"scenes": scenes})
    tc.calibrate(["photo.jpg"], "out", scenes=40, fit="fast")
    tc.calibrate(["photo.jpg"], "out", fit="fast")
    assert asked == [40, FAST_SCENES] and FAST_SCENES != CALIBRATION_SCENES
