"""`changpai measure`: the README table's evals run as one suite, their reports and one summary table."""

from __future__ import annotations

import json

from app.cli import main
from tests.conftest import requires_model
from tests.vision.eval.test_evaluate import _render
from vision.eval import suite


def test_the_suite_names_its_entries_groups_and_how_to_render_its_photos():
    names = [e.name for e in suite.SUITE]
    assert names[:2] == ["foreign_scenes", "foreign_hands"] and len(set(names)) == len(names)
    assert [e.name for e in suite.select(["tight"])] == [f"tight_{f}" for f in suite.TIGHT]
    assert {e.name for e in suite.select(["test_hands", "foreign"])} == {"test_hands", "foreign_scenes", "foreign_hands"}
    from vision.synth.decks import DECK_FAMILIES

    assert set(suite.FAMILIES) == set(DECK_FAMILIES) and set(suite.TIGHT) == set(DECK_FAMILIES) | {"own"}
    tight_own = next(e for e in suite.SUITE if e.name == "tight_own")
    assert "--seed 9517" in tight_own.make and "--styles" not in tight_own.make and "--least-show 0.22" in tight_own.make
    assert all(e.make.startswith("changpai synth --out " + e.photos + " ") for e in suite.SUITE if e.group != "foreign")
    # the leave-one-family-out hands: the held-out family is none the networks were taught, both laid tight
    assert suite.HELD_OUT in DECK_FAMILIES and suite.HELD_OUT not in suite.TAUGHT
    assert set(suite.TAUGHT) | {suite.HELD_OUT} == set(DECK_FAMILIES)
    transfer = suite.select(["transfer"])
    assert [e.name for e in transfer] == ["hands_families", f"hands_{suite.HELD_OUT}"] and all(e.hands for e in transfer)
    assert all("--least-show 0.3" in e.make and "--kind hands" in e.make for e in transfer)
    assert f"--styles {suite.HELD_OUT} " in transfer[1].make and suite.HELD_OUT not in transfer[0].make


def test_the_val_suite_is_apart_from_the_test_suite():
    val = suite.select(val=True)
    names = [e.name for e in val]
    assert len(set(names)) == len(names) and not set(names) & {e.name for e in suite.SUITE}
    assert not {e.photos for e in val} & {e.photos for e in suite.SUITE}  # never a test set, never the foreign deck
    assert all(e.make.startswith("changpai synth --out " + e.photos + " ") for e in val)
    seeds = [int(e.make.split("--seed ")[1].split()[0]) for e in val]
    test_seeds = {int(e.make.split("--seed ")[1].split()[0]) for e in suite.SUITE if e.make}
    assert len(set(seeds)) == len(seeds) and not set(seeds) & test_seeds
    assert [e.name for e in suite.select(["val_tight"], val=True)] == [f"val_tight_{f}" for f in suite.VAL_TIGHT]
    held_out = next(e for e in val if e.name == f"val_{suite.HELD_OUT}_hands")
    assert f"--styles {suite.HELD_OUT} " in held_out.make and "--least-show 0.3" in held_out.make


def test_measure_says_which_photos_are_missing_and_how_to_render_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(suite, "SUITE", (suite.Entry("a", str(tmp_path / "nowhere"), make="changpai synth --out X"),))
    assert main(["measure", "--tag", "t", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "nowhere" in err and "changpai synth --out X" in err and "--skip-missing" in err
    assert main(["measure", "--tag", "t", "--only", "zzz"]) == 2
    assert "not in the suite" in capsys.readouterr().err
    assert main(["measure", "--tag", "t", "--out", str(tmp_path / "o"), "--skip-missing"]) == 2  # nothing measured
    assert "No reports" in capsys.readouterr().err


@requires_model
def test_measure_runs_each_eval_and_tables_their_figures(tmp_path, capsys, monkeypatch):
    d = _render(tmp_path / "det", "detect", 2)
    h = _render(tmp_path / "hands", "hands", 2)
    monkeypatch.setattr(suite, "SUITE", (suite.Entry("loose", str(d)), suite.Entry("hands", str(h), ("--hands",), alone=True),
                                         suite.Entry("gone", str(tmp_path / "nowhere"))))
    out = tmp_path / "reports"
    assert main(["measure", "--tag", "x", "--out", str(out), "--skip-missing", "--jobs", "2"]) == 0
    printed = capsys.readouterr().out
    loose = json.loads((out / "loose_x.json").read_text())
    text = (out / "loose_x.txt").read_text()
    assert loose["images"] == 2 and "card recall" in text and "img/s]" not in text and "\r" not in text  # no progress bars
    summary = json.loads((out / "measure_x.json").read_text())["reports"]
    assert set(summary) == {"loose", "hands"}
    assert summary["loose"]["recall"] == loose["recall"] and summary["hands"]["with_repair"] == json.loads(
        (out / "hands_x.json").read_text())["exact_with_repair"]
    assert "loose" in printed and "hands right with repair" in printed
    assert "hands measured alone" in printed and "one core's latency" in printed  # which p50 is which
    assert main(["measure", "--tag", "x", "--out", str(out), "--summary"]) == 0  # the table again, nothing run
    assert "hands right with repair" in capsys.readouterr().out
    # --val: the val photos' suite, its tight sets' mean, a summary file of its own
    monkeypatch.setattr(suite, "VAL", (suite.Entry("val_tight_a", str(d), group="val_tight"),))
    assert main(["measure", "--val", "--tag", "x", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "val_tight (mean)" in printed and "photos exact" in printed and "of 2 (1 sets)" in printed
    assert set(json.loads((out / "measure_val_x.json").read_text())["reports"]) == {"val_tight_a"}
    assert set(json.loads((out / "measure_x.json").read_text())["reports"]) == {"loose", "hands"}  # untouched
