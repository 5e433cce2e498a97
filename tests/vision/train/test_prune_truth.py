"""A prune net taught the ground truth on a model's own kept boxes (vision.train.prune_truth, `changpai train prune --truth`)."""

from __future__ import annotations

import numpy as np

from tests.conftest import requires_model
from vision.infer.geometry import obb_to_quad
from vision.infer.recover import CHANNELS, EXTRA, VIEW_H, VIEW_W


def _box(cx: float) -> np.ndarray:
    return obb_to_quad(cx, 200, 40, 200, 0.0).astype(np.float32)  # a long card standing upright (w 40, h 200)


def test_every_round_of_pruning_is_seen_and_labelled_by_the_cards_each_box_lies_on():
    """Two cards half over each other (A, B), a second box on A lying less well on it (A2), and a box on no card (C)
    over B: at first A and A2 are each covered by a box on the same card (0), B is a card of its own (1), C no card (0).
    C goes first (no card), then A2 (the worse of two on A); A is then a card of its own, and each box is seen again
    only when a box taken away had overlapped it."""
    from vision.train.prune_truth import scene_views

    img = np.full((400, 400, 3), 90, np.uint8)
    a, b, a2, c = _box(120), _box(140), _box(126), _box(160)
    seen = scene_views(img, [(a, 0.9), (a2, 0.6), (b, 0.9), (c, 0.5)], [a, b])
    by_box = {k: [y for i, _, _, y in seen if i == k] for k in range(4)}
    assert by_box == {0: [0, 1], 1: [0, 0], 2: [1, 1, 1], 3: [0]}
    v, e = seen[0][1], seen[0][2]
    assert v.shape == (VIEW_H, VIEW_W, CHANNELS) and e.shape == (EXTRA,) and e[0] == np.float32(0.9)


def test_a_box_lying_free_or_repeating_another_is_not_judged():
    """prune never judges a box the others cover less than PRUNE_COVER of, and drops unjudged one that repeats
    another (recover.SAME): neither is a view to learn from."""
    from vision.train.prune_truth import scene_views

    img = np.full((400, 400, 3), 90, np.uint8)
    alone, twin = _box(60), _box(300)
    seen = scene_views(img, [(alone, 0.9), (twin, 0.9), (twin + 0.5, 0.8)], [alone, twin])
    assert seen == []


def test_judged_gives_cards_pruned_and_others_kept_at_each_threshold():
    from vision.train.prune_truth import judged

    got = judged(np.array([0.005, 0.5, 0.9, 0.02, 0.2]), np.array([1, 1, 1, 0, 0], np.float32))
    assert got["cards"] == 3 and got["others"] == 2
    assert got["cards_pruned_at_0.01"] == round(1 / 3, 4) and got["others_kept_at_0.01"] == 1.0
    assert got["others_kept_at_0.03"] == 0.5 and got["others_kept_at_0.3"] == 0.0 and got["auc"] == round(4 / 6, 4)


@requires_model
def test_train_prune_truth_collects_labelled_views_trains_and_releases(tmp_path, monkeypatch):
    """`changpai train prune --truth`: the model's kept boxes on labelled scenes, seen as prune sees them and
    labelled by the ground truth; a slim net learns them; the release is the model with that net as prune.onnx, its
    thresholds and other files as they were, and loads."""
    import json

    from app.cli import main
    from tests.vision.infer.test_recover import _scenes_to_train_on
    from vision.infer.model import PRUNE_NET, model_info
    from vision.infer.recognize import recognize

    base = model_info(None)
    job = _scenes_to_train_on(tmp_path, monkeypatch, n=3, seed=7)
    args = ["train", "prune", "--truth", "--data", job.out, "--val", job.out, "--epochs", "1", "--batch", "8",
            "--name", "t", "--release", "truth"]
    assert main(args) == 0
    d = np.load(tmp_path / "runs" / "t" / "prune_train.npz")
    assert len(d["labels"]) >= 8 and d["views"].shape[1:] == (CHANNELS, VIEW_H, VIEW_W)
    assert set(np.unique(d["labels"])) <= {0.0, 1.0} and d["labels"].mean() > 0.5  # most kept boxes are cards
    figures = json.loads((tmp_path / "runs" / "t" / "figures.json").read_text())
    assert figures[0]["views"] == len(np.load(tmp_path / "runs" / "t" / "prune_val.npz")["labels"])
    dest = tmp_path / "models" / "truth"
    meta, own = json.loads((dest / "model.json").read_text()), json.loads((base.path / "model.json").read_text())
    assert {k: meta[k] for k in ("conf", "prune", "settle")} == {k: own[k] for k in ("conf", "prune", "settle")}
    assert not meta["prune_net"]["distilled"] and "ground truth" in meta["prune_net"]["taught"]
    assert (dest / PRUNE_NET).read_bytes() == (tmp_path / "runs" / "t" / PRUNE_NET).read_bytes()
    assert "(vision.train.prune_truth) taught the ground truth" in (dest / "MODEL_CARD.md").read_text()
    assert recognize(next((tmp_path / "hands" / "images").rglob("*.jpg")), dest).cards  # the release loads and runs
