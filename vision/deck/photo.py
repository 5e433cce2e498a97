"""A rendered calibration photo: one card of each kind of a deck laid in rows of nine, in the calibration order, on
one of the renderer's tables, with the cards' true outlines. What eval-calibration and eval-faces measure with, and
what the tests split into faces."""

from __future__ import annotations

import numpy as np

from vision.deck.name import CALIBRATION_ORDER


def render_calibration_photo(style, seed: int = 0, n: int = 30, size: tuple[int, int] = (1600, 1200)) -> tuple[np.ndarray, dict]:
    """A photo of one card of each kind laid in rows of nine, in the calibration order."""
    import random

    from vision.synth.faces import FaceSource
    from vision.synth.scene import SceneSpec, compose

    rng = random.Random(f"calib:{seed}")
    spec = SceneSpec(size[0], size[1], "grid", list(CALIBRATION_ORDER[:n]), [], [], 1 / 12)
    return compose(spec, FaceSource(style, seed=seed), rng)
