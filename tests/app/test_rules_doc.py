"""The rule book in the repository (docs/rules.md): every citation a breakdown makes leads to a section of it, and
the CLI prints the sections."""

from __future__ import annotations

import random
from pathlib import Path

from app.cli import main
from app.rules import explain, section_of, sections
from scoring.hand import hand_from_dict
from scoring.random_hands import random_winning_hand
from scoring.rulesets import OPTIONS, RULESETS
from scoring.score import score_hand


def test_the_rule_book_has_every_section_and_option():
    known = sections()
    assert list(known) == [f"R{n}" for n in range(1, 12)]
    text = "\n".join(known.values())
    assert "R10. Worked examples" in text
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    assert all(f"`{k}`" in doc for k in OPTIONS)  # the open questions, settled as options


def test_every_citation_of_a_breakdown_is_a_section():
    rng = random.Random(11)
    cited = set()
    for i in range(600):
        rs = list(RULESETS)[i % len(RULESETS)]
        res = score_hand(hand_from_dict(random_winning_hand(rng, rs)))
        cited |= {it.rule for it in res.items}
    assert {section_of(c) for c in cited} <= set(sections())
    assert {"R4", "R6"} <= {section_of(c) for c in cited}


def test_rules_command_and_explain(capsys):
    assert main(["rules", "[R6.3]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## R6. The final total") and "自摸" in out
    assert main(["rules", "R99"]) == 2
    assert "No section 'R99'" in capsys.readouterr().err
    assert main(["score-hand", "123t 456t 789w hh hh hh 222b 123b 9b 9b", "--pong", "555b", "--jiang", "2t,3w",
                 "--win", "9b", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "70 胡" in out and "## R4. Group points" in out and "## R6." in out and "## R5." not in out
    assert explain(["R4", "[R4]", "R6.2"]).count("## R4.") == 1
