"""Shared fixtures: the released model and sample photos rendered by the synth pipeline."""

from __future__ import annotations

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
