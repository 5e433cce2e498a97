"""A model folder's config: one frozen ModelInfo with its knobs, every default written once, loaded and validated in
one place (vision.infer.model.model_info)."""

from __future__ import annotations

import json
import shutil
from dataclasses import fields

import pytest

import vision.infer.model as M


def _copy(tmp_path, **changes):
    model = tmp_path / "m"
    shutil.copytree(M.DEFAULT_MODEL, model, ignore=shutil.ignore_patterns("*.pt"))
    d = json.loads((model / "model.json").read_text())
    d.update(changes)
    (model / "model.json").write_text(json.dumps(d))
    return model


def test_the_released_model_loads_with_the_default_knobs():
    info = M.model_info(None)
    assert info.knobs == M.KNOBS and info.settle > 0 and info.refine > 0
    assert {f.name for f in fields(M.ModelInfo)} >= set(M.SETTINGS) | {"knobs"}


def test_a_model_may_set_its_knobs(tmp_path):
    info = M.model_info(_copy(tmp_path, knobs={"unsure": 0.5, "shifts": [-0.1, 0.1], "spares": 3}))
    assert (info.knobs.unsure, info.knobs.shifts, info.knobs.spares) == (0.5, (-0.1, 0.1), 3)
    assert info.knobs.crowd_iou == M.KNOBS.crowd_iou  # the others keep their defaults


@pytest.mark.parametrize("changes, says", [
    ({"knobs": {"bogus": 1}}, "unknown bogus"),
    ({"knobs": [1]}, "'knobs' is not an object"),
    ({"knobs": {"unsure": "high"}}, "'unsure' is not a number"),
    ({"conf": "0.4"}, "'conf' is not a number"),
    ({"mirror": "yes"}, "'mirror' is not true or false"),
    ({"absent": "fu"}, "'absent' is not a list"),
])
def test_a_wrongly_typed_setting_is_one_sentence(tmp_path, changes, says):
    with pytest.raises(M.ModelError, match=says) as e:
        M.model_info(_copy(tmp_path, **changes))
    assert "cannot be read" in str(e.value) and "\n" not in str(e.value)
