"""The core types every role passes on: a card as recognized, and a photo's recognition.

A recognition serializes to a dict (`to_dict`, the CLI's --json and the labeller's records) and back (`from_dict`),
with a schema version, so evaluation, labelling and the page read one shape."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from scoring.cards import CODES, NAMES_ZH

# a labelled card less visible than this is not labelled (synth) nor counted (eval): what a detector is taught to find
MIN_LABEL_VISIBLE = 0.2
SCHEMA = 1  # the version of Recognition.to_dict's shape; from_dict reads it and refuses a newer one
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

    def p_of(self, code: str) -> float:
        """The classifier's probability for ``code`` on this card (0 when not among its alternatives)."""
        return next((p for a, p in self.alternatives if a == code), 0.0)

    def read_as(self, code: str, p: float | None = None) -> Card:
        """This card read as ``code`` (with probability ``p``; default its probability among the alternatives, 0 when
        not there): that reading first among its alternatives (what the scoring takes), the others after it in their
        order."""
        p = self.p_of(code) if p is None else p
        return replace(self, code=code, confidence=p,
                       alternatives=[(code, p)] + [(a, q) for a, q in self.alternatives if a != code])

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "confidence": round(self.confidence, 4),
                "alternatives": [[c, round(p, 4)] for c, p in self.alternatives],
                "quad": [[round(x, 1), round(y, 1)] for x, y in self.quad], "det_score": round(self.det_score, 4)} | \
            ({"recovered": round(self.recovered, 4)} if self.recovered else {}) | \
            ({"judged": round(self.judged, 4)} if self.judged is not None else {})

    @classmethod
    def from_dict(cls, d: Any, names: tuple[str, ...] | None = None) -> Card:
        """A card from its dict (``to_dict``'s, or every field as ``dataclasses.asdict`` writes them); RecordError
        in one sentence for anything else. ``names``: the codes a code may be (default the 35 cards)."""
        if not isinstance(d, dict):
            raise RecordError(f"A card must be an object, not {type(d).__name__}.")
        allowed = set(names or CODES)
        try:
            code = d["code"]
            if code not in allowed:
                raise RecordError(f"A card's code {str(code)[:20]!r} is not a card code.")
            alts = [(str(a), float(p)) for a, p in d.get("alternatives", [(code, d["confidence"])])]
            if any(a not in allowed for a, _ in alts):
                raise RecordError("A card's alternatives name something that is not a card code.")
            quad = [[float(x), float(y)] for x, y in d["quad"]]
            if len(quad) != 4:
                raise RecordError(f"A card's quad has {len(quad)} corners, not 4.")
            judged = d.get("judged")
            return cls(code, float(d["confidence"]), alts, quad, float(d.get("det_score", 0.0)), float(d.get("recovered", 0.0)),
                       None if judged is None else float(judged))
        except RecordError:
            raise
        except KeyError as e:
            raise RecordError(f"A card has no {e.args[0]!r}.") from None
        except (TypeError, ValueError):
            raise RecordError("A card has a field of the wrong type (confidence and scores are numbers, quad is 4 [x, y]).") \
                from None


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

    def __post_init__(self) -> None:
        try:
            ok = operator.index(self.width) > 0 and operator.index(self.height) > 0
        except TypeError:
            ok = False
        if not ok:
            raise RecordError(f"A recognition's photo must have a positive size, not {self.width!r} × {self.height!r}.")

    def __len__(self) -> int:
        return len(self.cards)

    def __getitem__(self, index: int | slice | list[int]) -> Card | Recognition:
        """A card by index; a slice or a list of indices gives the recognition of those cards alone (as
        supervision's Detections slice), the photo, the model and the spares kept."""
        if isinstance(index, int):
            return self.cards[index]
        cards = self.cards[index] if isinstance(index, slice) else [self.cards[i] for i in index]
        return replace(self, cards=cards)

    def to_dict(self) -> dict[str, Any]:
        """The recognition as JSON data (the CLI's --json, saved recognitions): ``from_dict`` reads it back."""
        return {"schema": SCHEMA, "width": self.width, "height": self.height, "model": self.model,
                "cards": [c.to_dict() for c in self.cards], "timings_ms": self.timings_ms,
                "spares": [c.to_dict() for c in self.spares], "det_conf": round(self.det_conf, 4)}

    @classmethod
    def from_dict(cls, d: Any) -> Recognition:
        """A recognition from ``to_dict``'s dict (or every field as ``dataclasses.asdict`` writes them); RecordError in
        one sentence for anything else, a newer schema included."""
        if not isinstance(d, dict):
            raise RecordError(f"A recognition must be an object, not {type(d).__name__}.")
        if int(d.get("schema", SCHEMA)) > SCHEMA:
            raise RecordError(f"This recognition was written by a newer changpai (schema {d['schema']}); update changpai.")
        try:
            width, height = int(d["width"]), int(d["height"])
            cards, spares = d["cards"], d.get("spares", [])
            if not isinstance(cards, list) or not isinstance(spares, list):
                raise RecordError("A recognition's cards and spares must be lists.")
            timings = {str(k): float(v) for k, v in dict(d.get("timings_ms", {})).items()}
            return cls(width, height, [Card.from_dict(c) for c in cards], timings, str(d.get("model", "")),
                       [Card.from_dict(c) for c in spares], float(d.get("det_conf", 0.0)))
        except RecordError:
            raise
        except KeyError as e:
            raise RecordError(f"A recognition has no {e.args[0]!r}.") from None
        except (TypeError, ValueError):
            raise RecordError("A recognition has a field of the wrong type (width and height are whole numbers).") from None


class RecordError(ValueError):
    """A saved card or recognition that cannot be read back, said in one sentence."""


# A card's place on the table, as photo → hu lays it out and a person corrects it: in the hand, flipped as 将, in the
# N-th group declared on the table (counted from 0), or no card at all. One spelling, written and read here only.
ROLES = ("hand", "jiang", "ignored")
MELD = "meld"


def meld_role(n: int) -> str:
    """The role of a card in the ``n``-th declared group."""
    return f"{MELD}:{int(n)}"


def parse_role(role: str) -> tuple[str, int | None]:
    """``(kind, group)``: ('hand' | 'jiang' | 'ignored', None) or ('meld', N); RecordError for anything else."""
    if role in ROLES:
        return role, None
    kind, _, n = str(role).partition(":")
    if kind == MELD and n.isdigit():
        return MELD, int(n)
    raise RecordError(f"A card's place is one of {', '.join(ROLES)} or {MELD}:N, not {str(role)[:20]!r}.")


class Boxes:
    """Oriented boxes in a photo's pixels, with their detector scores: the currency of the detector's stage (learnt
    from supervision's Detections). Validated on the way in (N × 4 × 2 corners, N scores), immutable, sliceable
    (an index gives one ``(quad, score)``, a slice or a list of indices gives Boxes), iterable as ``(quad, score)``
    pairs and concatenated with ``+``."""

    __slots__ = ("quads", "scores")

    def __init__(self, quads: Any = (), scores: Any = ()):
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2) if len(quads) else np.zeros((0, 4, 2), np.float32)
        sc = np.asarray(scores, np.float64).reshape(-1)  # a score given as a float stays that float
        if len(q) != len(sc):
            raise RecordError(f"Boxes need one score a box: {len(q)} boxes, {len(sc)} scores.")
        q.setflags(write=False)
        sc.setflags(write=False)
        self.quads, self.scores = q, sc

    @classmethod
    def of(cls, pairs: Iterable[tuple[Any, float]] | Boxes) -> Boxes:
        """Boxes from ``(quad, score)`` pairs (or Boxes as they are)."""
        if isinstance(pairs, Boxes):
            return pairs
        pairs = list(pairs)
        return cls([p[0] for p in pairs], [p[1] for p in pairs])

    def __len__(self) -> int:
        return len(self.scores)

    def __iter__(self) -> Iterator[tuple[np.ndarray, float]]:
        return ((self.quads[i], float(self.scores[i])) for i in range(len(self)))

    def __getitem__(self, index: int | slice | list[int]) -> tuple[np.ndarray, float] | Boxes:
        if isinstance(index, int | np.integer):
            return self.quads[index], float(self.scores[index])
        return Boxes(self.quads[index], self.scores[index])

    def __add__(self, other: Boxes | Iterable[tuple[Any, float]]) -> Boxes:
        other = Boxes.of(other)
        return Boxes(np.concatenate([self.quads, other.quads]), np.concatenate([self.scores, other.scores]))

    def __radd__(self, other: Iterable[tuple[Any, float]]) -> Boxes:
        return Boxes.of(other) + self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Boxes) and np.array_equal(self.quads, other.quads) and np.array_equal(self.scores, other.scores)

    def __repr__(self) -> str:
        return f"Boxes({len(self)})"


def boxes_en(boxes: list[list]) -> str:
    """Boxes named in a message (code, the reading's probability or None, the detector's score), as the English text
    and app/locales/en.json's ``{boxes}`` say them."""
    return ", ".join(f"{c} ({p + ', ' if p else ''}detector {d})" for c, p, d in boxes)
