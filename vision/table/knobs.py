"""Photo → hu's own settings: every number of the layout, the checks and the repairs that changes a total, written
once in one frozen config (the model's own numbers are vision.infer.model.ModelInfo and Knobs). How each was chosen,
on val photos: docs/photo-to-hu.md."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TableKnobs:
    """The numbers photo → hu decides by; TABLE holds them (one place to read them, one to change them)."""

    min_cards: int = 8  # a photo with fewer cards seen holds no hand to score
    repair_min_p: float = 0.05  # a code repair takes only readings the classifier gives at least this
    code_changes: int = 2  # a code repair reads at most this many cards as one of their alternatives (more: the recount)
    mixed_code_changes: int = 3  # no change of the cards seen wins: one change and one code repair, else this many code repairs
    check_code_p: float = 0.1  # a legal win with one card of the hand read as an alternative given this or more is named (check:)
    doubtful_cards: int = 3  # a legal win with this many cards scored read below doubt_p, or more, is named (check:; 0: never)
    doubt_p: float = 0.5
    last_min_p: float = 0.01  # ... and last, one code repair taking readings down to this
    recount_margin: float = 10.0  # of changes that win with different totals, the likeliest is taken when this many times as likely
    judged_floor: float = 0.01  # the recover net's word on a spare counts down to this
    spare_pairs: int = 8  # two changes: among this many spares, the most confident first (and every doubtful card)
    twice: float = 0.2  # two boxes read the same overlapping by this quad IoU may be one card boxed twice
    group_gap: float = 0.25  # 3–4 equal cards of the hand this many card widths from the rest may be a declared group laid close
    most_grouped: int = 12  # cards in a cluster read as groups laid close together (split_table)
    even_row: float = 0.5  # card widths: runs of a hand's row lie no further apart than its cards do, plus this
    spaced: float = 0.2  # card widths: cards lie apart from the others when further from them than those lie from each other, plus this
    max_apart: int = 4  # small clusters considered one by one (3 ** 4 readings at most)


TABLE = TableKnobs()
