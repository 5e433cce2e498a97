"""The core types every role passes on: a card as recognized, and a photo's recognition.

A recognition serializes to a dict (`to_dict`, the CLI's --json and the labeller's records) and back (`from_dict`),
with a schema version, so evaluation, labelling and the page read one shape."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from scoring.cards import NAMES_ZH

DOUBT = 0.8  # a card read with less probability is shown with "?" (annotated photos, the page)


@dataclass
class Card:
    code: str
    confidence: float
    alternatives: list[tuple[str, float]]
    quad: list[list[float]]  # 4 corners in pixels of the upright photo, long side vertical first
    det_score: float = 0.0
    recovered: float = 0.0  # a box NMS had dropped: the recover net's probability that it is a card (vision.infer.recover)
    # a spare (Recognition.spares): the recover net's probability that it is a card none of the cards covers (None:
    # not judged, a model without the net)
    judged: float | None = None

    @property
    def name_zh(self) -> str:
        return NAMES_ZH[self.code]

    @property
    def label(self) -> str:
        """The Chinese name, with ? when the reading is unsure (below DOUBT): what annotated photos show."""
        return self.name_zh + ("?" if self.confidence < DOUBT else "")

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "confidence": round(self.confidence, 4),
                "alternatives": [[c, round(p, 4)] for c, p in self.alternatives],
                "quad": [[round(x, 1), round(y, 1)] for x, y in self.quad], "det_score": round(self.det_score, 4)} | \
            ({"recovered": round(self.recovered, 4)} if self.recovered else {}) | \
            ({"judged": round(self.judged, 4)} if self.judged is not None else {})


@dataclass
class Recognition:
    width: int
    height: int
    cards: list[Card] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    model: str = ""
    # boxes read as a card that did not count as cards: scored below the detector's thresholds and away from
    # the cards, or confident but left out by NMS for overlapping a card (Found.crowded). What photo → hu may
    # add when the hand is a card or two short (pipeline); not cards of the recognition
    spares: list[Card] = field(default_factory=list)
    det_conf: float = 0.0  # the detector score a box needed to count on its own (below it, the classifier vouched)

    def scaled(self, f: float) -> Recognition:
        """The same recognition of the photo ``f`` times larger (read from a smaller decode)."""
        def big(c: Card) -> Card:
            return replace(c, quad=[[x * f, y * f] for x, y in c.quad])

        return replace(self, width=round(self.width * f), height=round(self.height * f),
                       cards=[big(c) for c in self.cards], spares=[big(c) for c in self.spares])

    def to_dict(self) -> dict[str, Any]:
        return {"width": self.width, "height": self.height, "model": self.model,
                "cards": [c.to_dict() for c in self.cards], "timings_ms": self.timings_ms}
