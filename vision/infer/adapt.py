"""One photo's cards read with the photo's own BatchNorm statistics mixed into the trained ones (adaptive BatchNorm).

Every card of a photo is of one deck; a deck the classifier never saw (its ink, paper, drawing) shifts the
activations away from the statistics it was trained with. ``PhotoStatistics`` runs the model's adaptive classifier
(classifier_adapt.onnx, written by vision.train.adapt_export) as the recognizer runs a classifier session: its first
batch of crops (every box of the photo, one way round) is normalized with ``alpha`` × that batch's statistics +
(1 − ``alpha``) × the trained ones, and those statistics are kept for the photo's later reads (turned crops, second
looks, a few crops at a time), so that one photo is read with one set. One instance per photo.
"""

from __future__ import annotations

import numpy as np


class PhotoStatistics:
    """An onnxruntime-like session (``get_inputs``, ``run``) over the adaptive classifier, for one photo."""

    def __init__(self, session, alpha: float):
        self.session, self.alpha = session, np.full(1, alpha, np.float32)
        self.kept: np.ndarray | None = None
        self._size = int(session.get_inputs()[1].shape[0])

    def get_inputs(self):
        return self.session.get_inputs()[:1]

    def run(self, _names, feeds):
        x = next(iter(feeds.values()))
        use = self.kept is not None
        stats = self.kept if use else np.zeros(self._size, np.float32)
        probs, used = self.session.run(None, {"images": x, "stats": stats, "use": np.full(1, float(use), np.float32),
                                              "alpha": self.alpha})
        if not use:
            self.kept = used
        return [probs]
