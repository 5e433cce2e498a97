"""What photo → hu takes and gives: the context a photo cannot show (R9) and the photo's score, with every
default taken, repair and check the table should confirm."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scoring.hand import MELD_TAG
from scoring.messages import Msg
from scoring.repair import RepairResult
from scoring.score import ScoreResult
from vision.infer.model import NOT_A_CARD
from vision.table.layout import TableLayout
from vision.types import Recognition

NO_CARDS = Msg("no_cards", "No cards were found in the photo.")


class PhotoError(ValueError):
    """The photo cannot be scored; the message says what was seen."""


@dataclass
class PhotoContext:
    ruleset: str = "nantong-double"
    jiang: list[str] | None = None
    win: str | None = None
    self_drawn: bool = False
    dealer: bool = False
    events: list[str] = field(default_factory=list)
    from_deal: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    declared_how: dict[str, str] = field(default_factory=dict)  # card code -> how
    is_win: bool = True

    @classmethod
    def from_hand_file(cls, d: dict[str, Any]) -> PhotoContext:
        """A hand file's context (its card lists are ignored)."""
        win = d.get("win")
        return cls(
            ruleset=d.get("ruleset", "nantong-double"),
            jiang=list(d["jiang"]) if d.get("jiang") else None,
            win=(win or {}).get("card"),
            self_drawn=bool((win or {}).get("self_drawn", False)),
            dealer=bool(d.get("dealer", False)),
            events=list(d.get("events") or []),
            from_deal=list(d.get("from_deal") or []),
            options=dict(d.get("options") or {}),
            declared_how={g["cards"][0]: g.get("how", "pong") for g in d.get("declared") or [] if g.get("cards")},
            is_win=win is not None or "tian_cheng" in (d.get("events") or []),
        )


@dataclass
class PhotoScore:
    recognition: Recognition
    layout: TableLayout
    repair: RepairResult
    result: ScoreResult | None
    hand: dict[str, Any]
    defaults: list[str]
    warnings: list[str]
    timings_ms: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        d = self.result.to_dict() if self.result else {}
        d.update({
            "cards": [c.to_dict() | {"role": self.role(i)} for i, c in enumerate(self.recognition.cards)],
            "repairs": [c.to_dict() for c in self.repair.changes],
            "hand": self.hand,
            "defaults": self.defaults,
            "warnings": self.warnings,
            "timings_ms": self.timings_ms,
        })
        return d

    def role(self, i: int) -> str:
        return self.layout.role(i)

    def card_tags(self) -> tuple[list[str], list[int]]:
        """Per card a label (+ a box the detector had left out, added by a repair; 将, × not a card, or how its
        declared group was made as scored: 碰 明杠 暗杠 起手; then the Chinese name, ? when unsure) and a colour group
        (0 hand, 1 将, 2… each declared group, 9 left out), for annotated photos."""
        labels, groups = [], []
        added = {ch.index for ch in self.repair.changes if ch.old == NOT_A_CARD}
        hows = [d["how"] for d in self.hand.get("declared", [])]  # in the order of the layout's melds
        for i, c in enumerate(self.recognition.cards):
            role = self.role(i)
            meld = int(role.split(":")[1]) if role.startswith("meld") else None
            tag = {"jiang": "将", "ignored": "×"}.get(role, "") if meld is None else \
                MELD_TAG[hows[meld] if meld < len(hows) else "pong"]
            labels.append(("+" if i in added else "") + tag + c.label)
            groups.append(2 + meld if meld is not None else {"hand": 0, "jiang": 1, "ignored": 9}[role])
        return labels, groups
