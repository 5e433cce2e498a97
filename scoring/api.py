"""Public API in the spirit of the mahjong library's HandCalculator: cards + Context -> ScoreResult."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .hand import Hand, build_hand, hand_from_dict
from .score import ScoreResult, score_hand


@dataclass(frozen=True)
class Context:
    """What a photograph cannot show (R9). The defaults never over-score."""

    ruleset: str = "nantong-double"
    jiang: tuple[str, ...] = ()
    win: str | None = None
    is_win: bool | None = None
    self_drawn: bool = False
    dealer: bool = False
    events: tuple[str, ...] = ()
    from_deal: tuple[str, ...] = ()
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)


def calculate(concealed: str | list[str], declared: list[tuple[Any, str]] | None = None,
              context: Context = Context(), all_readings: bool = False) -> ScoreResult:
    """Score a hand: ``calculate("123t 456t …", [("555b", "pong")], Context(jiang=("2t", "3w")))``."""
    hand = build_hand(
        concealed=concealed, declared=declared, jiang=list(context.jiang), ruleset=context.ruleset,
        options=dict(context.options), from_deal=list(context.from_deal), win=context.win,
        is_win=context.is_win, self_drawn=context.self_drawn, dealer=context.dealer,
        events=list(context.events),
    )
    return score_hand(hand, all_readings)


def score_dict(d: dict[str, Any], all_readings: bool = False) -> ScoreResult:
    """Score one hand in the hand-file format."""
    return score_hand(hand_from_dict(d), all_readings)


def load_hand_file(text: str | bytes) -> list[Any]:
    """The hands of a hand file (one hand, or a list of them), its text or its bytes in any encoding an editor saves;
    each hand is checked when it is scored (hand_from_dict), so one bad hand does not hide the others."""
    from .errors import HandError
    from .hand_file import decode, parse

    data = parse(decode(text) if isinstance(text, bytes) else text.removeprefix("\ufeff"))
    hands = data if isinstance(data, list) else [data]
    if not hands:
        raise HandError("The hand file holds an empty list: no hand to score.")
    return hands


__all__ = ["Context", "Hand", "calculate", "score_dict", "load_hand_file"]
