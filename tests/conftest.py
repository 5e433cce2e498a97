"""Shared fixtures: the released model and sample photos rendered by the synth pipeline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vision import DEFAULT_MODEL_NAME

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / DEFAULT_MODEL_NAME
SAMPLES = ROOT / "docs" / "samples"

requires_model = pytest.mark.skipif(not (MODEL / "model.json").exists(), reason=f"no released model under models/{DEFAULT_MODEL_NAME}")


@pytest.fixture(scope="session")
def sample_scenes() -> list[Path]:
    files = sorted(SAMPLES.glob("hand_*.jpg"))
    assert files, "docs/samples/hand_*.jpg are committed sample photos"
    return files


def model_variant(dest: Path, copy: bool = False, **settings) -> Path:
    """A model folder at ``dest``: the released model's networks (linked, or copied with ``copy``) and its
    model.json with ``settings`` changed, to run the released networks under other thresholds."""
    from vision.infer.model import BOX_NETS

    dest.mkdir(parents=True)
    for f in ("detector.onnx", "classifier.onnx", *BOX_NETS):
        if (MODEL / f).is_file():
            shutil.copy(MODEL / f, dest / f) if copy else (dest / f).symlink_to(MODEL / f)
    (dest / "model.json").write_text(json.dumps(json.loads((MODEL / "model.json").read_text()) | settings))
    return dest
