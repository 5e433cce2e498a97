"""The recognitions `changpai eval --hands --recognitions FILE` keeps between runs, and the ground truth's own: a
change to the layout, the repairs or the scoring is measured again in seconds instead of recognizing every photo
again. A file is reused only with the model folder and the thresholds (by value) that made it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vision.types import Card, Recognition, RecordError


class RecognitionsError(ValueError):
    """A recognitions file (evaluate_hands ``recognitions``) that cannot be reused."""


def save_recognitions(path: str | Path, recs: dict[str, Any], model: str, settings: dict[str, float]) -> None:
    """Recognitions by image, as JSON, with the model folder and the thresholds (every one of
    recognize.SETTINGS, by value) that made them (evaluate_hands ``recognitions``)."""
    from dataclasses import asdict

    Path(path).write_text(json.dumps({"model": model, "settings": settings,
                                      "recognitions": {k: asdict(r) for k, r in recs.items()}}))


def load_recognitions(path: str | Path, model: str, settings: dict[str, float]) -> dict[str, Any]:
    try:
        d = json.loads(Path(path).read_text())
        if "settings" not in d:  # kept by name only what --set changed: what model.json said then is not known now
            raise RecognitionsError(f"The recognitions in {path} do not say the thresholds they were made with (an older "
                                    "file): delete it or name another.")
        made_with, made_at = d["model"], d["settings"]
        if made_with != model:
            raise RecognitionsError(f"The recognitions in {path} were made with the model {made_with}, not {model}: "
                                    "delete the file or name another.")
        other = {k: v for k, v in made_at.items() if settings.get(k) != v}
        if other:
            raise RecognitionsError(f"The recognitions in {path} were made with {', '.join(f'{k} {v}' for k, v in other.items())}"
                                    f", not {', '.join(f'{k} {settings.get(k)}' for k in other)}: delete the file or name another.")

        return {k: Recognition.from_dict(r) for k, r in d["recognitions"].items()}
    except (KeyError, TypeError, json.JSONDecodeError, RecordError) as e:
        raise RecognitionsError(f"{path} does not hold recognitions saved by `changpai eval --hands --recognitions` ({e}).") from None


def truth_recognition(gt: dict[str, Any]) -> Recognition:
    """A photo's cards as its ground truth has them (`changpai synth` gt JSON): every card on the table, hidden
    parts and all, its code sure and its corners exact."""
    return Recognition(gt["width"], gt["height"], [Card(c["code"], 1.0, [(c["code"], 1.0)], c["quad"], det_score=1.0)
                                                    for c in gt["cards"]], model="ground truth")
