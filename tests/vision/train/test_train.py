"""Training and release on a tiny synthetic set: ultralytics offline, checkpoints, ONNX export, model card."""

from __future__ import annotations

import json

import pytest

from scoring.cards import CODES
from vision.synth.write import Job, prepare, render_one


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    det = Job(str(root / "det"), "detect", 3, 6, ("classic",), None, 0.34, 320, 240)
    cls = Job(str(root / "cls"), "classify", 3, 3, ("classic",), None, 0.34, 640, 480)
    for job in (det, cls):
        prepare(job)
        for i in range(job.n):
            render_one(job, i)
    return root


def test_training_runs_on_every_core():
    """ultralytics alone would train with one thread less than the cores (one on a 2-core machine)."""
    import torch

    from vision.train.ultra import offline_ultralytics, train_threads

    offline_ultralytics()
    from ultralytics.utils.torch_utils import select_device

    before = torch.get_num_threads()
    try:
        select_device("cpu", verbose=False)
        assert torch.get_num_threads() == train_threads()
    finally:
        torch.set_num_threads(before)


def test_training_threads_follow_the_cores_it_may_use(monkeypatch):
    """A run pinned to one core (taskset -c 0) trains with one thread, so two pinned runs share two cores."""
    import os

    from vision.train.ultra import train_threads

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {1}, raising=False)  # (not on every platform)
    assert train_threads() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert train_threads() == 3


def test_train_detect_and_release(tiny, tmp_path, monkeypatch):
    import vision.train.yolo as train

    monkeypatch.setattr(train, "RUNS", tmp_path / "runs")
    run_dir = train.train_detect(str(tiny / "det" / "dataset.yaml"), epochs=1, imgsz=160, batch=2, name="t", workers=0)
    assert (run_dir / "weights" / "last.pt").exists()
    import vision.train.release as release

    monkeypatch.setattr(release, "MODELS_DIR", tmp_path / "models")
    dest = release.release("detect", run_dir, "m")
    meta = json.loads((dest / "model.json").read_text())
    assert (dest / "detector.onnx").stat().st_size > 1e6 and meta["det_imgsz"] == 160
    assert "detector" in (dest / "MODEL_CARD.md").read_text()
    with pytest.raises(FileNotFoundError):
        train.train_detect("unused", name="never-ran", resume=True)
    # fine-tuning from weights starts from them (ultralytics builds a fresh network unless told it is pretrained)
    import torch
    from ultralytics import YOLO

    start = run_dir / "weights" / "last.pt"
    # (through a warm-up: by default ultralytics starts the biases' rate there at 0.1, which moves them at once)
    tuned = train.train_detect(str(tiny / "det" / "dataset.yaml"), epochs=2, imgsz=160, batch=2, name="t2", workers=0,
                               model=str(start), extra=dict(lr0=1e-9, warmup_epochs=0.5))
    a = YOLO(str(start)).model.state_dict()
    b = YOLO(str(tuned / "weights" / "last.pt")).model.state_dict()
    for suffix in ("conv.weight", "bn.bias"):
        key = next(k for k in a if k.endswith(suffix))
        assert torch.allclose(a[key].float(), b[key].float(), atol=1e-3), key


def test_release_a_runs_network_alone_into_a_copy_of_the_base(tiny, tmp_path, monkeypatch, capsys):
    """`changpai release BASE --name NAME --detector RUN`: the base with the run's detector, every other file the
    base's; it loads; --set with a run, or a run without weights, is one sentence."""
    import vision.train.release as release
    import vision.train.yolo as train
    from app.cli import main
    from tests.conftest import MODEL
    from vision.infer.model import model_info

    if not (MODEL / "model.json").exists():
        pytest.skip("no released model")
    monkeypatch.setattr(train, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(release, "MODELS_DIR", tmp_path / "models")
    run_dir = train.train_detect(str(tiny / "det" / "dataset.yaml"), epochs=1, imgsz=160, batch=2, name="d", workers=0)
    assert main(["release", str(MODEL), "--name", "alone", "--detector", str(run_dir), "--note", "chosen on val"]) == 0
    dest = tmp_path / "models" / "alone"
    meta, was = json.loads((dest / "model.json").read_text()), json.loads((MODEL / "model.json").read_text())
    assert meta["det_imgsz"] == 160 and meta["classifier"] == was["classifier"] and meta["temperature"] == was["temperature"]
    assert "evaluation" not in meta and "the detector of the run d: chosen on val" in meta["version_note"]
    assert (dest / "classifier.onnx").read_bytes() == (MODEL / "classifier.onnx").read_bytes()
    assert (dest / "detector.onnx").read_bytes() != (MODEL / "detector.onnx").read_bytes()
    assert all((dest / f.name).is_file() for f in MODEL.glob("*.onnx"))
    assert model_info(dest).path == dest
    capsys.readouterr()
    assert main(["release", str(MODEL), "--name", "warm", "--detector", str(run_dir), "--set", "temperature=1.25"]) == 0
    warm = json.loads((tmp_path / "models" / "warm" / "model.json").read_text())
    assert warm["temperature"] == 1.25 and model_info(tmp_path / "models" / "warm").temperature == 1.25
    assert "temperature 1.25" in warm["version_note"] and "temperature 1.25" in (tmp_path / "models" / "warm" / "MODEL_CARD.md").read_text()
    capsys.readouterr()
    assert main(["release", str(MODEL), "--name", "x", "--detector", str(run_dir), "--set", "warmth=0.5"]) == 2
    assert "warmth cannot be set" in capsys.readouterr().err and not (tmp_path / "models" / "x").exists()
    assert main(["release", str(MODEL), "--name", "x", "--classifier", str(tmp_path / "runs" / "none")]) == 2
    assert "No weights" in capsys.readouterr().err and not (tmp_path / "models" / "x").exists()
    assert main(["release", str(MODEL), "--name", "x"]) == 2


def test_train_classify_one_epoch(tiny, tmp_path, monkeypatch):
    import vision.train.yolo as train

    monkeypatch.setattr(train, "RUNS", tmp_path / "runs")
    # every class needs a folder with an image for ultralytics: fill the empty ones from any crop
    import shutil

    any_crop = next((tiny / "cls").glob("train/*/*.jpg"))
    for split in ("train", "val"):
        for d in (tiny / "cls" / split).iterdir():
            if not any(d.iterdir()):
                shutil.copy(any_crop, d / "filler.jpg")
    run_dir = train.train_classify(str(tiny / "cls"), epochs=1, imgsz=64, batch=8, name="c", workers=0)
    assert (run_dir / "weights" / "last.pt").exists()
    # released weights list the codes in project order; starting a fine-tune puts them back in the dataset's
    # order, so every output keeps its card
    import torch
    from ultralytics import YOLO

    from vision.train.release import align_classifier, reorder_classifier

    best = run_dir / "weights" / "last.pt"
    released, _ = reorder_classifier(best, tmp_path / "released.pt")
    back = align_classifier(released, tiny / "cls", tmp_path / "start.pt")
    a, b = YOLO(str(best)).model, YOLO(str(back)).model
    assert a.names == b.names
    assert torch.allclose(a.model[-1].linear.weight.float(), b.model[-1].linear.weight.float())
    assert not torch.allclose(YOLO(str(released)).model.model[-1].linear.weight.float(), b.model[-1].linear.weight.float())
    # and fine-tuning starts from those weights (ultralytics resets every layer unless told it is pretrained)
    tuned = train.train_classify(str(tiny / "cls"), epochs=1, imgsz=64, batch=8, name="c2", workers=0, model=str(released),
                                 extra=dict(lr0=1e-9, warmup_epochs=0))
    c = YOLO(str(tuned / "weights" / "last.pt")).model
    assert torch.allclose(c.model[-1].linear.weight.float(), b.model[-1].linear.weight.float(), atol=1e-3)
    # a dataset with a not-a-card class (`none`) grows the head by one row, which starts unlikely; the cards'
    # rows are kept; released again it comes last; a dataset without it (a calibration deck) drops it again
    from vision.infer.model import NOT_A_CARD

    with_none = tmp_path / "with_none"
    shutil.copytree(tiny / "cls", with_none)
    for split in ("train", "val"):
        (with_none / split / NOT_A_CARD).mkdir()
        shutil.copy(any_crop, with_none / split / NOT_A_CARD / "table.jpg")
    grown = YOLO(str(align_classifier(released, with_none, tmp_path / "grown.pt"))).model
    names = list(grown.names.values())
    lin = grown.model[-1].linear
    assert len(names) == 36 and lin.out_features == 36 and names == sorted(names)
    k = names.index(NOT_A_CARD)
    assert lin.bias[k] < lin.bias[[i for i in range(36) if i != k]].min()
    code_rows = [i for i in range(36) if i != k]
    assert torch.allclose(lin.weight[code_rows].float(), b.model[-1].linear.weight.float())
    tuned_none = train.train_classify(str(with_none), epochs=1, imgsz=64, batch=8, name="c3", workers=0,
                                      model=str(released), extra=dict(lr0=1e-9, warmup_epochs=0))
    out = YOLO(str(reorder_classifier(tuned_none / "weights" / "last.pt", tmp_path / "released_none.pt")[0])).model
    assert list(out.names.values()) == [*CODES, NOT_A_CARD]
    dropped = YOLO(str(align_classifier(tmp_path / "released_none.pt", tiny / "cls", tmp_path / "dropped.pt"))).model
    assert dropped.model[-1].linear.out_features == 35 and NOT_A_CARD not in dropped.names.values()


def test_combine_crops_with_repeats(tiny, tmp_path):
    from vision.train.yolo import combine_crops

    src = tiny / "cls"
    out = combine_crops([src, src], tmp_path / "both", {"1t": 3})
    for code in ("1t", "2b"):
        n = len(list((src / "train" / code).iterdir()))
        times = 3 if code == "1t" else 1
        assert len(list((out / "train" / code).iterdir())) == 2 * times * n
        assert len(list((out / "val" / code).iterdir())) == 2 * len(list((src / "val" / code).iterdir()))


@pytest.mark.parametrize("args,needle", [
    (["--repeat", "zz=3"], "not a card code"),
    (["--repeat", "fu=x"], "CODES=N"),
])
def test_train_cli_bad_repeat(tiny, capsys, args, needle):
    from app.cli import main

    assert main(["train", "classify", "--data", str(tiny / "cls"), *args]) == 2
    assert needle in capsys.readouterr().err


def test_train_cli_passes_the_schedule_and_mosaic_off(tiny, monkeypatch, capsys, tmp_path):
    import vision.train.yolo as train
    from app.cli import main

    seen = {}

    def fake(data, **kw):
        seen.update(kw, data=data)
        return tmp_path

    monkeypatch.setattr(train, "train_detect", fake)
    data = str(tiny / "det" / "dataset.yaml")
    assert main(["train", "detect", "--data", data, "--epochs", "4", "--lr0", "0.0005", "--lrf", "0.05",
                 "--warmup", "0.1", "--no-mosaic"]) == 0
    assert seen["data"] == data and seen["epochs"] == 4
    assert seen["extra"] == {"lr0": 0.0005, "lrf": 0.05, "warmup_epochs": 0.1, "mosaic": 0.0}
    seen.clear()
    assert main(["train", "detect", "--data", data]) == 0 and "extra" not in seen
    assert main(["train", "classify", "--data", str(tiny / "cls"), "--no-mosaic"]) == 2
    assert "--no-mosaic is for detect" in capsys.readouterr().err


def test_train_cli_shows_its_progress(tiny, tmp_path):
    """`changpai train` lets ultralytics show its epoch bars and figures (kept quiet elsewhere): a user whose
    run takes an hour sees where it is, also in a log file."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.conftest import ROOT

    data = tmp_path / "cls"
    shutil.copytree(tiny / "cls", data)
    any_crop = next(data.glob("train/*/*.jpg"))
    for split in ("train", "val"):
        for d in (data / split).iterdir():
            if not any(d.iterdir()):
                shutil.copy(any_crop, d / "filler.jpg")
    env = {k: v for k, v in os.environ.items() if k != "YOLO_VERBOSE"} | {"PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "app.cli", "train", "classify", "--data", str(data), "--epochs", "1",
                          "--imgsz", "64", "--batch", "8", "--workers", "0", "--name", "p"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-2000:]
    assert "Epoch" in text and "1/1" in text and "top1_acc" in text and "trained: runs/p/weights/best.pt" in text


def test_average_weights_is_the_mean_and_releases(tiny, tmp_path, monkeypatch, capsys):
    import torch
    from ultralytics import YOLO

    import vision.train.release as release
    import vision.train.yolo as train
    from app.cli import main

    monkeypatch.setattr(train, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(release, "MODELS_DIR", tmp_path / "models")
    run_dir = train.train_detect(str(tiny / "det" / "dataset.yaml"), epochs=1, imgsz=160, batch=2, name="a", workers=0)
    a = run_dir / "weights" / "last.pt"
    ck = torch.load(a, map_location="cpu", weights_only=False)
    net = (ck.get("ema") or ck["model"]).float()
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)
    ck.update(model=net, ema=None)
    b = tmp_path / "b.pt"
    torch.save(ck, b)
    assert main(["average", "soup", str(a), str(b), "--release", "m"]) == 0
    out = capsys.readouterr().out
    assert "averaged 2 checkpoints" in out and "released:" in out
    sa, sb = YOLO(str(a)).model.float().state_dict(), YOLO(str(b)).model.float().state_dict()
    mean = YOLO(str(tmp_path / "runs" / "soup" / "weights" / "last.pt")).model.float().state_dict()
    key = next(k for k in sa if k.endswith("conv.weight"))
    assert not torch.allclose(sa[key], sb[key])
    assert torch.allclose(mean[key], (sa[key] + sb[key]) / 2, atol=1e-5)
    # a checkpoint named twice weighs twice (a start 2 : 1 against its fine-tune, as soup34b in docs/training.md)
    assert main(["average", "soup21", str(a), str(a), str(b)]) == 0
    capsys.readouterr()
    w21 = YOLO(str(tmp_path / "runs" / "soup21" / "weights" / "last.pt")).model.float().state_dict()
    assert torch.allclose(w21[key], (2 * sa[key] + sb[key]) / 3, atol=1e-5)
    meta = json.loads((tmp_path / "models" / "m" / "model.json").read_text())
    assert (tmp_path / "models" / "m" / "detector.onnx").is_file() and meta["det_imgsz"] == 160
    assert str(a) in meta["detector"]["trained_from"] and str(b) in meta["detector"]["trained_from"]
    # what cannot be averaged is one sentence: a network whose classes are listed in another order (a released
    # classifier's project order against a training run's folder order) would average one card's row with another's
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    for order, path in ((["1t", "1b"], tmp_path / "project.pt"), (["1b", "1t"], tmp_path / "turned.pt")):
        net.names = dict(enumerate(order))
        ck.update(model=net, ema=None)
        torch.save(ck, path)
    for bad, needle in (([str(a)], "two checkpoints or more"), ([str(a), str(tmp_path / "none.pt")], "No checkpoint at"),
                        ([str(a), str(tmp_path / "junk.pt")], "cannot be read as a checkpoint"),
                        ([str(tmp_path / "project.pt"), str(tmp_path / "turned.pt")], "orders its classes differently")):
        assert main(["average", "bad", *bad]) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1


def test_train_minutes_ends_by_then(tiny, tmp_path, monkeypatch):
    """`changpai train detect --minutes M`: a run held to a lent machine's time ends with the epochs that fit (here
    none more than the first), the epochs asked for cut; a bad value or another network gets one sentence."""
    import vision.train.yolo as train
    from app.cli import main

    monkeypatch.setattr(train, "RUNS", tmp_path / "runs")
    args = ["train", "detect", "--data", str(tiny / "det" / "dataset.yaml"), "--epochs", "3", "--imgsz", "160",
            "--batch", "2", "--workers", "0", "--name", "m"]
    assert main([*args, "--minutes", "0.001"]) == 0
    rows = (tmp_path / "runs" / "m" / "results.csv").read_text().strip().splitlines()
    assert len(rows) == 2  # the header and the one epoch that ended past the deadline
    assert main([*args, "--minutes", "0"]) == 2
    assert main(["train", "recover", "--data", str(tiny / "det"), "--minutes", "5"]) == 2
