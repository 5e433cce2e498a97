"""changpai.scoring — the rules engine for Nantong long cards (南通长牌). Pure Python.

>>> from scoring import calculate, Context
>>> calculate("123t 456t 789w hh hh hh 222b 123b 9b 9b", [("555b", "pong")],
...           Context(jiang=("2t", "3w"), win="9b")).total
70
"""

from .api import Context, calculate, load_hand_file, score_dict
from .cards import CODES, NAMES_EN, NAMES_ZH, parse_cards
from .errors import HandError
from .hand import Hand, build_hand, hand_from_dict
from .rulesets import OPTIONS, RULESETS, get_ruleset
from .score import ScoreResult, score_hand

__all__ = [
    "CODES", "NAMES_EN", "NAMES_ZH", "OPTIONS", "RULESETS", "Context", "Hand", "HandError",
    "ScoreResult", "build_hand", "calculate", "get_ruleset", "hand_from_dict", "load_hand_file",
    "parse_cards", "score_dict", "score_hand",
]
