"""`changpai round`: one training round of both networks from a released model, tiny and on CPU here."""

from __future__ import annotations

from pathlib import Path

from vision import DEFAULT_MODEL_NAME

BASE = Path(__file__).resolve().parents[3] / "models" / DEFAULT_MODEL_NAME


def test_a_round_renders_mines_trains_both_and_averages(tmp_path, monkeypatch):
    """Every part rendered (never the sideways family or the held-out style), crops cut where the base boxes them,
    both networks fine-tuned at once and held to the deadline (past it here: one epoch each though two are asked),
    the classifier averaged with the base's into a checkpoint with the base's classes; the classifier's run pulled
    toward the base's readings (--keep)."""
    import torch
    import yaml

    from vision.train.round import PARTS, Budget, run_round

    monkeypatch.chdir(tmp_path)  # runs/ (the trainings run in processes of their own, in this folder)
    budget = Budget(minutes=0.01, scale=0.003, device="cpu", workers=2, det_imgsz=160, det_batch=4, cls_batch=16,
                    det_epochs=2, cls_epochs=2, keep=1.0)
    r = run_round(tmp_path / "d", BASE, "t", budget, progress=False)
    assert not any({"sideways", "holdout"} & set(p.styles) for p in PARTS)
    det = yaml.safe_load((tmp_path / "d" / "det.yaml").read_text())
    assert len(det["train"]) == len(PARTS) and all(Path(f).is_dir() for f in det["train"] + det["val"])
    assert any((tmp_path / "d" / "mine_famtight" / "train").rglob("*.jpg"))  # crops cut where the base boxes cards
    assert any((tmp_path / "d" / "neg").rglob("*.jpg"))  # and boxes on no card
    assert r["detector_epochs"] == 1 and r["classifier_epochs"] == 1  # the deadline cut both runs
    assert (r["detector"] / "weights" / "last.pt").is_file()
    mean = torch.load(r["classifier_mean"], map_location="cpu", weights_only=False)
    base = torch.load(BASE / "classifier.pt", map_location="cpu", weights_only=False)
    assert sorted(mean["model"].names.values()) == sorted(base["model"].names.values())


def test_round_refuses_a_missing_base_and_a_missing_gpu(tmp_path):
    from app.cli import main

    assert main(["round", "--out", str(tmp_path / "d"), "--base", str(tmp_path / "none")]) == 2
    import torch

    if not torch.cuda.is_available():
        assert main(["round", "--out", str(tmp_path / "d"), "--base", str(BASE), "--device", "0"]) == 2
    assert main(["round", "--out", str(tmp_path / "d"), "--minutes", "0"]) == 2
    assert main(["round", "--out", str(tmp_path / "d"), "--base", str(BASE), "--device", "cpu", "--seed-shift", "-1"]) == 2
    assert main(["round", "--out", str(tmp_path / "d"), "--base", str(BASE), "--device", "cpu", "--keep", "-1"]) == 2
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "det.yaml").write_text("train: []\n")
    assert main(["round", "--out", str(tmp_path / "d"), "--base", str(BASE), "--device", "cpu"]) == 2  # a round's folder


def test_trainer_reads_its_results_without_polars(tmp_path, monkeypatch):
    """A lent GPU machine has no polars (ultralytics reads results.csv with it for every checkpoint it saves): the
    trainer then reads it with the csv module, numbers as floats."""
    import importlib
    import importlib.util

    real_find_spec = importlib.util.find_spec

    def no_polars(name, *args, **kwargs):
        return None if name == "polars" or name.startswith("polars.") else real_find_spec(name, *args, **kwargs)

    from ultralytics.engine.trainer import BaseTrainer

    monkeypatch.setattr(BaseTrainer, "read_results_csv", BaseTrainer.read_results_csv)  # restored after the test
    monkeypatch.setattr(importlib.util, "find_spec", no_polars)
    ultra = importlib.import_module("vision.train.ultra")
    ultra.offline_ultralytics()
    csv = tmp_path / "results.csv"
    csv.write_text("epoch,  train/loss,note\n1,0.5,a\n2,0.25,b\n")

    class Run:
        pass

    run = Run()
    run.csv = csv
    assert BaseTrainer.read_results_csv(run) == {"epoch": [1.0, 2.0], "train/loss": [0.5, 0.25], "note": ["a", "b"]}
    assert ultra.read_results(tmp_path / "none.csv") == {}


def test_round_passes_keep_to_the_classifier(monkeypatch):
    import vision.train.yolo as yolo
    from vision.train.round import Budget, _train

    seen = {}
    monkeypatch.setattr(yolo, "train_classify", lambda data, **kw: seen.update(kw))
    _train("classify", "D/clsdata", str(BASE), "t_cls", Budget(keep=0.5, device="cpu"), deadline=0.0)
    assert seen["keep"] == 0.5 and seen["model"].endswith("classifier.pt")
