"""Winning hands rendered once for every photo → hu test."""

import json

import pytest

from vision.synth.write import Job, prepare, render_one


@pytest.fixture(scope="session")
def hand_scenes(tmp_path_factory):
    root = tmp_path_factory.mktemp("hands")
    job = Job(str(root / "h"), "hands", 11, 12, ("classic", "bold"), None, 0.0, 1280, 960)
    prepare(job)
    out = []
    for i in range(job.n):
        render_one(job, i)
        out.append(json.loads((root / "h" / "gt" / f"{i:06d}.json").read_text()))
    return out
