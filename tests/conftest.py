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
    from vision.infer.model import ADAPT_CLASSIFIER, BOX_NETS

    dest.mkdir(parents=True)
    for f in ("detector.onnx", "classifier.onnx", ADAPT_CLASSIFIER, *BOX_NETS):
        if (MODEL / f).is_file():
            shutil.copy(MODEL / f, dest / f) if copy else (dest / f).symlink_to(MODEL / f)
    (dest / "model.json").write_text(json.dumps(json.loads((MODEL / "model.json").read_text()) | settings))
    return dest


_EN_MISMATCHES: list[str] = []


def _check_english(msg) -> None:
    """A message the code makes says in English exactly what app/locales/en.json's template says with its values:
    the locale file is where the English is read and translated, the code's text what the CLI prints."""
    import sys

    caller = sys._getframe(2).f_code.co_filename
    if f"{ROOT.name}/tests/" in caller.replace("\\", "/") or not msg.key:
        return  # tests build messages of their own
    from app.i18n import say

    try:
        said = say(msg, "en")
    except (KeyError, IndexError, ValueError) as e:
        said = f"<template does not render: {e!r}>"
    if said != str(msg):
        _EN_MISMATCHES.append(f"{msg.key}: code says {str(msg)!r}, en.json {said!r}")


@pytest.fixture(autouse=True)
def english_messages_match_the_locale(monkeypatch):
    from scoring import messages

    made = messages.Msg.__new__

    def checked(cls, key, text, **values):
        obj = made(cls, key, text, **values)
        _check_english(obj)
        return obj

    monkeypatch.setattr(messages.Msg, "__new__", staticmethod(checked))
    _EN_MISMATCHES.clear()
    yield
    assert not _EN_MISMATCHES, "messages whose English differs from app/locales/en.json:\n" + "\n".join(_EN_MISMATCHES[:5])
