"""The pull toward the start's readings (vision.train.keep): only where the start reads right, zero where the student
already agrees, and wired into a classify fine-tune by `changpai train classify --keep`."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from vision.train.keep import KeepLoss  # noqa: E402


class _Fixed(torch.nn.Module):
    """A start network that gives the same logits for every image, as an eval-mode Classify head: (probs, logits)."""

    def __init__(self, logits):
        super().__init__()
        self.logits = torch.as_tensor(logits, dtype=torch.float32)

    def forward(self, x):
        return self.logits.softmax(1), self.logits


def _batch(labels):
    return {"img": torch.zeros(len(labels), 3, 4, 4), "cls": torch.as_tensor(labels)}


def test_no_pull_where_the_student_reads_as_the_start():
    logits = torch.tensor([[3.0, 0.0, -1.0], [0.0, 2.0, 0.5]])
    ce = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1]))
    loss, items = KeepLoss(_Fixed(logits), weight=1.0)(logits, _batch([0, 1]))
    assert torch.isclose(loss, ce, atol=1e-6) and torch.isclose(items["loss"], ce, atol=1e-6)


def test_pull_only_on_crops_the_start_reads_right():
    student = torch.tensor([[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]], requires_grad=True)
    start = torch.tensor([[4.0, 0.0, 0.0], [4.0, 0.0, 0.0]])  # reads class 0
    ce = torch.nn.functional.cross_entropy(student, torch.tensor([0, 2]))
    right, _ = KeepLoss(_Fixed(start), weight=1.0)(student, _batch([0, 2]))  # the first crop: the start is right
    wrong, _ = KeepLoss(_Fixed(start), weight=1.0)(student, _batch([2, 2]))  # neither: labels alone
    assert right > ce + 0.1
    assert torch.isclose(wrong, torch.nn.functional.cross_entropy(student, torch.tensor([2, 2])), atol=1e-6)
    right.backward()  # the pull moves the student toward the start's reading of class 0
    assert student.grad[0, 0] < 0


def test_train_classify_keep_uses_the_pull(tmp_path, monkeypatch):
    import shutil

    import vision.train.keep as keep
    import vision.train.yolo as train
    from vision.synth.write import Job, prepare, render_one
    from vision.train.release import reorder_classifier

    job = Job(str(tmp_path / "cls"), "classify", 3, 3, ("classic",), None, 0.34, 640, 480)
    prepare(job)
    for i in range(job.n):
        render_one(job, i)
    any_crop = next((tmp_path / "cls").glob("train/*/*.jpg"))
    for split in ("train", "val"):
        for d in (tmp_path / "cls" / split).iterdir():
            if not any(d.iterdir()):
                shutil.copy(any_crop, d / "filler.jpg")
    monkeypatch.setattr(train, "RUNS", tmp_path / "runs")
    start = train.train_classify(str(tmp_path / "cls"), epochs=1, imgsz=64, batch=8, name="s", workers=0)
    released, _ = reorder_classifier(start / "weights" / "last.pt", tmp_path / "released.pt")
    calls = []
    real = keep.KeepLoss.__call__
    monkeypatch.setattr(keep.KeepLoss, "__call__", lambda self, p, b: calls.append(self.weight) or real(self, p, b))
    run = train.train_classify(str(tmp_path / "cls"), epochs=1, imgsz=64, batch=8, name="k", workers=0,
                               model=str(released), keep=0.5)
    assert (run / "weights" / "last.pt").exists()
    assert calls and set(calls) == {0.5}
    kept = json.loads((run / train.KEEP_FILE).read_text())  # for a resumed run
    assert kept == {"start": str((tmp_path / "runs" / "k_start.pt").resolve()), "weight": 0.5}
    with pytest.raises(ValueError, match="weights"):
        train.train_classify(str(tmp_path / "cls"), epochs=1, imgsz=64, batch=8, name="k2", workers=0, keep=0.5)


def test_a_resumed_keep_run_keeps_its_pull(tmp_path, monkeypatch):
    import ultralytics

    import vision.train.yolo as train

    run = tmp_path / "k"
    (run / "weights").mkdir(parents=True)
    (run / "weights" / "last.pt").write_bytes(b"x")
    (run / train.KEEP_FILE).write_text(json.dumps({"start": str(tmp_path / "k_start.pt"), "weight": 2.0}))
    seen = []

    class Fake:
        def __init__(self, path):
            seen.append(("load", path))

        def add_callback(self, event, fn):
            seen.append(("callback", event))

        def train(self, **kw):
            seen.append(("train", kw["resume"]))

    monkeypatch.setattr(ultralytics, "YOLO", Fake)
    train._resume(run, "cpu", 0)
    assert seen == [("load", str(run / "weights" / "last.pt")), ("callback", "on_pretrain_routine_end"), ("train", True)]
    (run / train.KEEP_FILE).unlink()
    seen.clear()
    train._resume(run, "cpu", 0)
    assert ("callback", "on_pretrain_routine_end") not in seen


@pytest.mark.parametrize("args", [["--keep", "1"], ["--keep", "-1", "--weights", "{w}"]])
def test_train_cli_keep_needs_a_start(tmp_path, capsys, args):
    from app.cli import main

    w = tmp_path / "w.pt"
    w.write_bytes(b"x")
    (tmp_path / "d").mkdir()
    code = main(["train", "classify", "--data", str(tmp_path / "d"), *[a.format(w=w) for a in args]])
    assert code != 0
    assert "--keep is for a new classify run from --weights" in capsys.readouterr().err
