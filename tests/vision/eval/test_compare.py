"""`changpai compare`: two eval reports of the same photos, photo by photo, with McNemar's exact test."""

from __future__ import annotations

import json

from app.cli import main
from vision.eval.compare import compare, mcnemar_p


def test_mcnemar_exact_p_values():
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(7, 0) == 2 / 2 ** 7  # every differing photo on one side
    assert mcnemar_p(0, 7) == mcnemar_p(7, 0)
    # 6 against 1: 2 × (1 + 7) / 128
    assert abs(mcnemar_p(6, 1) - 16 / 128) < 1e-12
    assert mcnemar_p(5, 5) == 1.0  # capped


def _recognizer_report(path, exact):
    path.write_text(json.dumps({"per_image": [{"image": f"images/train/{i:06d}.jpg", "exact": e} for i, e in enumerate(exact)]}))
    return path


def test_recognizer_reports_compare_photo_by_photo(tmp_path, capsys):
    a = _recognizer_report(tmp_path / "a.json", [True] * 8 + [False, True])
    b = _recognizer_report(tmp_path / "b.json", [False] * 7 + [True, True, True])
    c = compare(a, b)["outcomes"]["whole photo exact"]
    assert (c["a"], c["b"]) == (9, 3)
    assert c["right_in_a_only"] == [f"images/train/{i:06d}.jpg" for i in range(7)]
    assert c["right_in_b_only"] == ["images/train/000008.jpg"]
    assert c["p"] == round(mcnemar_p(7, 1), 4)
    assert main(["compare", str(a), str(b), "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "right in A only 7, in B only 1" in out and "A better at the 5 % level" not in out  # p = 0.07
    assert "right in B only: train/000008" in out
    assert json.loads((tmp_path / "c.json").read_text())["photos"] == 10
    # the same report twice: the same photos
    assert main(["compare", str(a), str(a)]) == 0
    assert "(the same photos)" in capsys.readouterr().out


def test_hands_reports_compare_each_outcome_and_only_common_photos(tmp_path, capsys):
    def row(i, plain, rep, won=True):
        return {"image": f"images/val/{i:06d}.jpg", "expected": 30, "without_repair": plain, "with_repair": rep, "won": won}

    a = tmp_path / "a.json"
    a.write_text(json.dumps({"per_photo": [row(i, 30, 30) for i in range(12)] + [row(99, 30, 30)]}))
    b = tmp_path / "b.json"
    b.write_text(json.dumps({"per_photo": [row(i, None, 40) for i in range(10)] + [row(10, 30, 30), row(11, 30, 30)]}))
    c = compare(a, b)
    assert c["photos"] == 12 and c["only_in_a"] == 1 and c["only_in_b"] == 0
    o = c["outcomes"]
    assert len(o["without repair"]["right_in_a_only"]) == 10 and o["without repair"]["p"] < 0.01
    assert o["no wrong total on a legal win"]["b"] == 2  # ten wrong totals on a legal win in B
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "1 only in A and 0 only in B, left out" in out and "A better at the 5 % level" in out


def test_reports_that_cannot_be_compared_are_one_sentence(tmp_path, capsys):
    a = _recognizer_report(tmp_path / "a.json", [True])
    hands = tmp_path / "h.json"
    hands.write_text(json.dumps({"per_photo": [{"image": "images/train/000000.jpg"}]}))
    other = tmp_path / "o.json"
    other.write_text(json.dumps({"per_image": [{"image": "images/train/000005.jpg", "exact": True}]}))
    junk = tmp_path / "j.json"
    junk.write_text("not json")
    for args, says in (([a, hands], "compare two of one kind"), ([a, other], "no photo in common"),
                       ([a, junk], "is not a JSON report"), ([a, tmp_path / "none.json"], "No report at"),
                       ([a, tmp_path], "is not a JSON report")):
        assert main(["compare", *map(str, args)]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err and err.count("\n") == 1
