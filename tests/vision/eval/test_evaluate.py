"""`changpai eval`: recognizer figures and the end-to-end photo → total figures on rendered test sets."""

from __future__ import annotations

import json

from app.cli import main
from tests.conftest import requires_model
from vision.synth.write import Job, prepare, render_one


def _render(root, kind, n, size=(960, 720)):
    job = Job(str(root), kind, 5, n, ("classic",), None, 0.0, *size)
    prepare(job)
    for i in range(n):
        render_one(job, i)
    return root


@requires_model
def test_eval_reports_detection_and_reading_figures(tmp_path, capsys):
    d = _render(tmp_path / "det", "detect", 3)
    assert main(["eval", str(d), "--json", str(tmp_path / "r.json")]) == 0
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["images"] == 3 and len(r["per_image"]) == 3
    found = sum(x["found"] for x in r["per_image"])
    assert r["cards"] == sum(x["cards"] for x in r["per_image"]) > 0
    assert abs(r["recall"] - found / r["cards"]) < 1e-3
    assert abs(r["classification_accuracy"] - sum(x["right"] for x in r["per_image"]) / max(1, found)) < 1e-3
    assert r["whole_photo_exact"] == round(sum(x["exact"] for x in r["per_image"]) / 3, 4)
    lo, hi = r["whole_photo_exact_ci95"]
    assert lo <= r["whole_photo_exact"] <= hi and hi - lo > 0.3  # 3 photos say little
    out = capsys.readouterr().out
    assert "95 % interval" in out
    assert "card recall" in out
    # where the time goes: each stage's median, none longer than the whole reads' median
    stages = r["stages_ms_p50"]
    assert {"load", "detect", "classify"} <= set(stages) and "stages, median" in out
    assert all(0 < v <= r["latency_ms"]["p50"] for v in stages.values())
    # --repeat: each photo read N times, the same cards, its latency the median of the reads
    assert main(["eval", str(d), "--repeat", "3", "--json", str(tmp_path / "r3.json")]) == 0
    r3 = json.loads((tmp_path / "r3.json").read_text())
    assert r3["repeat"] == 3 and r3["per_image"] == r["per_image"]
    assert "median of 3 reads" in capsys.readouterr().out
    assert main(["eval", str(d), "--repeat", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err
    # --true-corners: the cards found read again at their true corners, counted apart; the figures as they were
    assert main(["eval", str(d), "--true-corners", "--json", str(tmp_path / "rt.json")]) == 0
    rt = json.loads((tmp_path / "rt.json").read_text())
    assert rt["per_image"] == r["per_image"] and 0 < rt["true_corners"]["classification_accuracy"] <= 1
    assert "read at true corners" in capsys.readouterr().out
    assert main(["eval", str(d), "--hands", "--true-corners"]) == 2
    assert "not --hands" in capsys.readouterr().err


@requires_model
def test_eval_hands_counts_right_wrong_and_unscored_photos(tmp_path, capsys):
    d = _render(tmp_path / "hands", "hands", 3, (1280, 960))
    assert main(["eval", str(d), "--hands", "--json", str(tmp_path / "h.json")]) == 0
    r = json.loads((tmp_path / "h.json").read_text())
    rows = [x for x in r["per_photo"] if "expected" in x]
    assert r["photos"] == len(rows) == 3
    right = sum(x["with_repair"] == x["expected"] for x in rows)
    unscored = sum(x["with_repair"] is None for x in rows)
    assert r["exact_with_repair"] == round(right / 3, 4) and r["errors"] == unscored
    assert r["wrong_total_with_repair"] == 3 - right - unscored
    assert r["wrong_total_on_a_win"] == sum(x["won"] and x["with_repair"] != x["expected"] for x in rows) <= 3 - right - unscored
    assert r["wrong_total_on_a_win_silent"] == sum(x["won"] and x["with_repair"] != x["expected"] and not x["other_reading"]
                                                   and not x["repairs"] for x in rows) <= r["wrong_total_on_a_win_unflagged"]
    assert r["exact_without_repair"] == round(sum(x["without_repair"] == x["expected"] for x in rows) / 3, 4)
    for k in ("exact_without_repair", "exact_with_repair"):
        assert r[f"{k}_ci95"][0] <= r[k] <= r[f"{k}_ci95"][1]
    out = capsys.readouterr().out
    assert "95 % intervals: without repair" in out
    assert "total exactly right" in out and "photos with every card right" in out and "with no repair either" in out
    # photo → total: the recognition's stages and the scoring after it, each no longer than the whole's median
    stages = r["stages_ms_p50"]
    assert {"load", "detect", "classify", "score"} <= set(stages) and "stages, median" in out
    assert all(0 < v <= r["latency_ms"]["p50"] for v in stages.values())
    # the card figures of the same recognitions are those `changpai eval` gives the photos
    assert r["cards"]["whole_photo_exact"] == round(sum(x["cards_exact"] for x in rows) / 3, 4)
    assert main(["eval", str(d), "--json", str(tmp_path / "c.json")]) == 0
    c = json.loads((tmp_path / "c.json").read_text())
    for k in ("cards", "precision", "recall", "classification_accuracy", "whole_photo_exact", "confusions"):
        assert r["cards"][k] == c[k], k


def test_photo_shares_come_with_their_wilson_interval():
    from vision.eval.evaluate import format_span
    from vision.eval.tally import interval

    # 160 of 200: worked by hand, centre (0.8 + z²/2n) / (1 + z²/n) = 0.7943, half-width 0.0552
    assert interval(160, 200) == [0.7391, 0.8495]
    assert format_span(interval(160, 200)) == "73.9–85.0 %"
    # at none and at all the interval stays within [0, 1] and still has a width
    lo, hi = interval(0, 40)
    assert lo == 0.0 and 0.08 < hi < 0.1
    lo, hi = interval(40, 40)
    assert hi == 1.0 and 0.9 < lo < 0.92
    # more photos, a narrower interval around the same share
    assert interval(800, 1000)[1] - interval(800, 1000)[0] < interval(80, 100)[1] - interval(80, 100)[0]
    assert interval(0, 0) == [0.0, 1.0]


def test_eval_without_ground_truth_is_one_sentence(tmp_path, capsys):
    assert main(["eval", str(tmp_path), "--hands"]) == 2
    assert "ground truth" in capsys.readouterr().err


@requires_model
def test_eval_hands_keeps_and_reuses_the_recognitions(tmp_path, capsys, monkeypatch):
    import shutil

    import vision.infer.recognize
    from vision.infer.model import DEFAULT_MODEL

    d = _render(tmp_path / "hands", "hands", 2, (1280, 960))
    keep = tmp_path / "recs.json"
    assert main(["eval", str(d), "--hands", "--recognitions", str(keep), "--json", str(tmp_path / "a.json")]) == 0
    first = json.loads((tmp_path / "a.json").read_text())
    assert keep.is_file() and first["recognitions"] == "made"

    def no_recognizer(*a, **k):
        raise AssertionError("recognized again")

    monkeypatch.setattr(vision.infer.recognize, "recognize_array", no_recognizer)
    assert main(["eval", str(d), "--hands", "--recognitions", str(keep), "--json", str(tmp_path / "b.json")]) == 0
    again = json.loads((tmp_path / "b.json").read_text())
    assert again["recognitions"].startswith("reused") and "after recognition (reused)" in capsys.readouterr().out
    assert [(r["without_repair"], r["with_repair"]) for r in again["per_photo"]] == \
        [(r["without_repair"], r["with_repair"]) for r in first["per_photo"]]
    other = tmp_path / "other-model"
    shutil.copytree(DEFAULT_MODEL, other, ignore=shutil.ignore_patterns("*.pt"))
    assert main(["eval", str(d), "--hands", "--model", str(other), "--recognitions", str(keep)]) == 2
    assert "were made with the model" in capsys.readouterr().err


@requires_model
def test_kept_recognitions_keep_the_second_reading_too(tmp_path, monkeypatch):
    """A photo read uncleanly is read again; with --recognitions that second reading is kept beside the first, so a
    run reusing the file reads neither again."""
    import vision.eval.evaluate as E
    from vision.eval.recognitions import truth_recognition
    from vision.types import Card

    d = _render(tmp_path / "hands", "hands", 1, (1280, 960))
    gt = json.loads(next((d / "gt").glob("*.json")).read_text())
    first = truth_recognition(gt)
    i = next(k for k, c in enumerate(gt["cards"]) if c["group"] == "hand")
    wrong = "qz" if first.cards[i].code != "qz" else "hh"
    first.cards[i] = Card(wrong, 0.95, [(wrong, 0.95)], first.cards[i].quad, det_score=1.0)
    asked = []

    def again():
        asked.append(1)
        return truth_recognition(gt)

    monkeypatch.setattr(E, "recognize_and_again", lambda path, info: (first, again))
    keep = tmp_path / "recs.json"
    made = E.evaluate_hands(d, recognitions=keep, progress=False)
    assert asked == [1] and made["exact_with_repair"] == 1.0
    assert set(json.loads(keep.read_text())["recognitions"]) == {gt["image"], gt["image"] + E.AGAIN}

    def never(*a, **k):
        raise AssertionError("read again from the photo")

    monkeypatch.setattr(E, "recognize_and_again", never)
    monkeypatch.setattr(E, "recognize_adapted", never)
    reused = E.evaluate_hands(d, recognitions=keep, progress=False)
    assert reused["per_photo"][0]["with_repair"] == made["per_photo"][0]["with_repair"] == gt["expected_total"]


@requires_model
def test_kept_recognitions_follow_the_thresholds_values_not_how_they_were_set(tmp_path, capsys, monkeypatch):
    """Recognitions made with `--set recover=0.5` are reused once model.json itself says 0.5 (same folder, same
    thresholds), and refused under any other value, as is a file from before the values were kept."""
    import shutil

    import vision.infer.recognize
    from vision.infer.model import DEFAULT_MODEL

    h = _render(tmp_path / "hands", "hands", 1, (1280, 960))
    model = tmp_path / "model"
    shutil.copytree(DEFAULT_MODEL, model, ignore=shutil.ignore_patterns("*.pt"))
    keep = tmp_path / "recs.json"
    args = ["eval", str(h), "--hands", "--model", str(model), "--recognitions", str(keep)]
    assert main([*args, "--set", "recover=0.5"]) == 0
    meta = json.loads((model / "model.json").read_text())
    (model / "model.json").write_text(json.dumps(meta | {"recover": 0.5}))

    def no_recognizer(*a, **k):
        raise AssertionError("recognized again")

    monkeypatch.setattr(vision.infer.recognize, "recognize_array", no_recognizer)
    assert main([*args, "--json", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["recognitions"].startswith("reused")
    assert main([*args, "--set", "recover=0.9"]) == 2
    assert "were made with recover 0.5, not recover 0.9" in capsys.readouterr().err
    # the older form named only what --set changed from model.json, whose values then are not known now
    d = json.loads(keep.read_text())
    del d["settings"]
    keep.write_text(json.dumps(d))
    assert main(args) == 2
    assert "do not say the thresholds they were made with" in capsys.readouterr().err


@requires_model
def test_eval_split_takes_only_that_splits_photos(tmp_path, capsys):
    """--split val: a training set's val photos alone (`changpai synth` marks each photo's split)."""
    job = Job(str(tmp_path / "h"), "hands", 5, 4, ("classic",), None, 0.5, 960, 720)
    prepare(job)
    for i in range(4):
        render_one(job, i)
    splits = [json.loads(p.read_text())["split"] for p in sorted((tmp_path / "h" / "gt").glob("*.json"))]
    assert main(["eval", str(tmp_path / "h"), "--hands", "--split", "val", "--json", str(tmp_path / "v.json")]) == 0
    r = json.loads((tmp_path / "v.json").read_text())
    assert r["photos"] == splits.count("val") and all("/val/" in x["image"] for x in r["per_photo"])
    assert 0 < splits.count("val") < 4
    test = _render(tmp_path / "t", "hands", 1)  # a test set: every photo in train
    assert main(["eval", str(test), "--split", "val"]) == 2  # nothing of that split: one sentence
    assert "val split" in capsys.readouterr().err


@requires_model
def test_eval_set_measures_changed_thresholds_without_a_model_folder(tmp_path, capsys):
    """--set NAME=VALUE: the model's thresholds changed for this measurement only; the report says which, kept
    recognitions are not reused across settings, and a bad --set is one sentence."""
    from vision.infer.model import DEFAULT_MODEL

    d = _render(tmp_path / "det", "detect", 2)
    meta = (DEFAULT_MODEL / "model.json").read_text()
    assert main(["eval", str(d), "--json", str(tmp_path / "a.json")]) == 0
    assert main(["eval", str(d), "--set", "conf=0.99", "--set", "rescue_conf=0.99", "--json", str(tmp_path / "b.json")]) == 0
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert "settings" not in a and b["settings"] == {"conf": 0.99, "rescue_conf": 0.99}
    assert "settings changed from model.json: conf 0.99" in capsys.readouterr().out
    assert sum(x["found"] for x in b["per_image"]) < sum(x["found"] for x in a["per_image"])  # stricter: fewer found
    assert (DEFAULT_MODEL / "model.json").read_text() == meta  # the folder untouched
    h = _render(tmp_path / "hands", "hands", 1, (1280, 960))
    keep = tmp_path / "recs.json"
    assert main(["eval", str(h), "--hands", "--recognitions", str(keep)]) == 0
    assert main(["eval", str(h), "--hands", "--recognitions", str(keep), "--set", "recover=0.5"]) == 2
    assert "were made with recover 0.9, not recover 0.5" in capsys.readouterr().err
    for bad, says in ((["--set", "colour=1"], "cannot be set"), (["--set", "recover"], "NAME=NUMBER"),
                      (["--set", "prune=x"], "NAME=NUMBER")):
        assert main(["eval", str(d), *bad]) == 2
        assert says in capsys.readouterr().err


def test_the_wrong_cards_are_told_apart_misread_missed_and_extra():
    """CardTally: a misread card with the rank of its true code among the readings, a missed card with the spare
    offered on it, a box on no card; each photo's row names them."""
    from vision.eval.evaluate import format_errors
    from vision.eval.tally import CardTally
    from vision.types import Card

    def quad(x):
        return [[x, 0], [x + 30, 0], [x + 30, 90], [x, 90]]

    gt = {"image": "a.jpg", "cards": [{"code": c, "quad": quad(40 * k), "visible": 1.0} for k, c in enumerate(["1t", "2t", "3t", "4t"])]}
    cards = [Card("1t", 0.99, [("1t", 0.99)], quad(0)),
             Card("5t", 0.6, [("5t", 0.6), ("2t", 0.3), ("9b", 0.1)], quad(40)),  # 2t misread, truth 2nd
             Card("8w", 0.9, [("8w", 0.9), ("7w", 0.1)], quad(80)),  # 3t misread, truth not among the readings
             Card("qz", 0.9, [("qz", 0.9)], quad(400))]  # on no card
    spares = [Card("4t", 0.8, [("4t", 0.8)], quad(120))]  # on the missed 4t
    tally = CardTally()
    assert not tally.add(gt, cards, spares)
    e = tally.errors()
    assert e == {"misread": 2, "misread_true_2nd": 1, "misread_true_in_top5": 1, "missed": 1, "missed_spare_offered": 1,
                 "missed_spare_right": 1, "extra": 1}
    row = tally.rows[0]
    assert sorted((m["true"], m["read"], m["rank_true"] or 0) for m in row["misread"]) == [("2t", "5t", 2), ("3t", "8w", 0)]
    assert row["missed"] == [{"true": "4t", "visible": 1.0, "spare": "4t", "quad": quad(120)}]
    assert {tuple(map(tuple, m["quad"])) for m in row["misread"]} == {tuple(map(tuple, quad(40))), tuple(map(tuple, quad(80)))}
    assert tally.report()["errors"] == e and "2 misread" in format_errors(e)
    tally.add(gt, cards)  # no spares given: the missed card was offered none
    assert tally.rows[1]["missed"][0]["spare"] is None
    assert "true_corners" not in tally.report()
    # read again at the true corners (a reader that mends the two misread cards and breaks the right one)
    again = {0: "9w", 40: "2t", 80: "3t"}
    tally.add(gt, cards, spares, read_true=lambda quads: [again[int(q[0][0])] for q in quads])
    assert tally.report()["true_corners"] == {"classification_accuracy": round(2 / 3, 4), "mended": 2, "broken": 1}


def test_cards_are_also_counted_by_the_share_of_them_showing():
    """CardTally.report's by_showing: recall and codes right per band of the true card's visible share, so half-covered
    cards (tight stairs and fans) are seen apart from whole ones; the text report prints the bands."""
    from vision.eval.evaluate import format_report
    from vision.eval.tally import CardTally
    from vision.types import Card

    def quad(x):
        return [[x, 0], [x + 30, 0], [x + 30, 90], [x, 90]]

    shown = [0.25, 0.28, 0.45, 1.0, 1.0]  # two in 0.2-0.3, one in 0.4-0.5, two whole
    gt = {"image": "a.jpg", "cards": [{"code": "1t", "quad": quad(40 * k), "visible": v} for k, v in enumerate(shown)]}
    cards = [Card("1t", 0.9, [("1t", 0.9)], quad(0)),  # the 0.25 card read right; the 0.28 one missed
             Card("2t", 0.6, [("2t", 0.6)], quad(80)),  # the 0.45 one misread
             Card("1t", 0.9, [("1t", 0.9)], quad(120)), Card("1t", 0.9, [("1t", 0.9)], quad(160))]
    tally = CardTally()
    tally.add(gt, cards)
    rows = tally.report()["by_showing"]
    assert [(r["showing"], r["cards"], r["recall"], r["classification_accuracy"]) for r in rows] == [
        ([0.2, 0.3], 2, 0.5, 1.0), ([0.4, 0.5], 1, 1.0, 0.0), ([0.7, 1.0], 2, 1.0, 1.0)]
    text = format_report(tally.report() | {"images": 1, "latency_ms": {"p50": 1, "p90": 1, "p99": 1}})
    assert "0.2–0.3: recall 50.0 %, codes 100.0 % (2)" in text


def test_eval_hands_truth_scores_the_true_cards_with_no_model(tmp_path, capsys, monkeypatch):
    """--truth: each photo scored from its own ground-truth cards, no network at all (the arrangement and the scoring
    alone); it takes no model, thresholds or kept recognitions, and is for --hands only."""
    import vision.eval.evaluate as ev

    d = _render(tmp_path / "hands", "hands", 4, (1280, 960))
    monkeypatch.setattr(ev, "recognize", lambda *a, **k: (_ for _ in ()).throw(AssertionError("a network ran")))
    assert main(["eval", str(d), "--hands", "--truth", "--json", str(tmp_path / "t.json")]) == 0
    r = json.loads((tmp_path / "t.json").read_text())
    assert r["recognitions"].startswith("ground truth") and "from the true cards" in capsys.readouterr().out
    assert r["cards"]["precision"] == r["cards"]["recall"] == r["cards"]["classification_accuracy"] == 1.0
    assert r["exact_with_repair"] == r["exact_without_repair"] == 1.0  # these four hands' layouts are read right
    for bad in (["--model", "models/x"], ["--set", "conf=0.5"], ["--recognitions", str(tmp_path / "r.json")]):
        assert main(["eval", str(d), "--hands", "--truth", *bad]) == 2
        assert "--truth" in capsys.readouterr().err
    assert main(["eval", str(d), "--truth"]) == 2


def test_cards_are_also_counted_by_their_tilt_to_the_photo():
    """CardTally.report's by_tilt: recall per band of the true card's angle to the photo's nearer axis (0-45 degrees),
    so a detector that misses diagonal cards is seen; the text report prints the bands."""
    import numpy as np

    from vision.eval.evaluate import format_report
    from vision.eval.tally import CardTally, tilt
    from vision.types import Card

    def quad(x, deg):
        a = np.radians(deg)
        u, v = np.array([np.sin(a), np.cos(a)]) * 90, np.array([np.cos(a), -np.sin(a)]) * 20
        c = np.array([x, 200.0])
        return (np.array([c - u / 2 - v / 2, c - u / 2 + v / 2, c + u / 2 + v / 2, c + u / 2 - v / 2])).tolist()

    assert abs(tilt(np.array(quad(0, 40))) - 40) < 1e-3 and abs(tilt(np.array(quad(0, 130))) - 40) < 1e-3
    assert abs(tilt(np.array(quad(0, 90)))) < 1e-3  # lying across the photo: along its other side
    gt = {"image": "a.jpg", "cards": [{"code": "1t", "quad": quad(150 * k, d), "visible": 1.0}
                                      for k, d in enumerate([5, 92, 40, 50])]}
    cards = [Card("1t", 0.9, [("1t", 0.9)], quad(0, 5)), Card("1t", 0.9, [("1t", 0.9)], quad(150, 92)),
             Card("2t", 0.9, [("2t", 0.9)], quad(300, 40))]  # the 50-degree card missed, the 40-degree one misread
    tally = CardTally()
    tally.add(gt, cards)
    r = tally.report()
    assert r["by_tilt"] == [{"degrees": [0, 15], "cards": 2, "recall": 1.0, "classification_accuracy": 1.0},
                            {"degrees": [30, 45], "cards": 2, "recall": 0.5, "classification_accuracy": 0.0}]
    assert "by tilt to the photo" in format_report(r | {"images": 1, "latency_ms": {"p50": 1, "p90": 1, "p99": 1},
                                                         "stages_ms_p50": {}, "box_errors": {}})


def test_whole_cards_boxes_are_measured_apart_from_covered_ones():
    """CardTally.report's box_errors_whole: the width and length of the boxes of cards showing whole (≥ WHOLE), as
    ratios to the true card's, so a box that stops inside a whole card (at a printed rim or frame) is seen apart from a
    covered card's box; the text report prints it."""
    from vision.eval.evaluate import format_report
    from vision.eval.tally import CardTally
    from vision.types import Card

    def quad(x, w=30.0, length=140.0):
        return [[x, 0], [x + w, 0], [x + w, length], [x, length]]

    gt = {"image": "a.jpg", "cards": [{"code": "1t", "quad": quad(0), "visible": 1.0},
                                      {"code": "2t", "quad": quad(60), "visible": 0.95},
                                      {"code": "3t", "quad": quad(120), "visible": 0.4}]}
    cards = [Card("1t", 0.9, [("1t", 0.9)], quad(3, 24)),  # a whole card boxed inside its rim: 0.8 of its width
             Card("2t", 0.9, [("2t", 0.9)], quad(61.5, 27, 140)),  # 0.9
             Card("3t", 0.9, [("3t", 0.9)], quad(120, 15))]  # a covered card boxed at half its width: not counted
    tally = CardTally()
    tally.add(gt, cards)
    r = tally.report(box_errors=True)
    w = r["box_errors_whole"]
    assert w["cards"] == 2 and abs(w["width"]["median"] - 0.85) < 1e-3 and abs(w["length"]["median"] - 1.0) < 1e-3
    assert abs(r["box_errors"]["width"]["mean"] - (0.8 + 0.9 + 0.5) / 3) < 1e-3  # every matched card, covered too
    text = format_report(r | {"images": 1, "latency_ms": {"p50": 1, "p90": 1, "p99": 1}})
    assert "whole cards' boxes    width ×0.850" in text and "of 2 cards showing ≥ 90%" in text
    assert "box_errors_whole" not in CardTally().report(box_errors=True)
