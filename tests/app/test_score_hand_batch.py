"""`changpai score-hand --file` with many hands: a bad hand is an error entry in its place, the others are scored,
and the exit code says some failed; JSON for a list is compact, --jsonl one hand a line."""

from __future__ import annotations

import json

from app.cli import main

GOOD = {"jiang": ["2t", "3w"], "concealed": "123t 456t 789w hh hh hh 222b 123b 9b 9b",
        "declared": [{"cards": "555b", "how": "pong"}], "win": {"card": "9b", "self_drawn": False}, "name": "good"}


def _file(tmp_path, hands, encoding="utf-8"):
    p = tmp_path / "hands.json"
    p.write_bytes(json.dumps(hands, ensure_ascii=False).encode(encoding))
    return str(p)


def test_one_bad_hand_among_many_is_an_error_entry_and_the_rest_are_scored(tmp_path, capsys):
    hands = [GOOD, dict(GOOD, dealer="false"), GOOD, dict(GOOD, concealed=["zz"])]
    assert main(["score-hand", "--file", _file(tmp_path, hands), "--json"]) == 2
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert [o.get("total") for o in out] == [70, None, 70, None]
    assert out[1]["index"] == 2 and "'dealer' must be true or false" in out[1]["error"]
    assert out[3]["index"] == 4 and "Unknown card" in out[3]["error"]
    assert "2 of 4 hands could not be scored (hand 2, 4)" in captured.err
    assert len(captured.out.splitlines()) == 4  # compact: one hand a line


def test_text_and_jsonl_keep_every_hand_in_its_place(tmp_path, capsys):
    f = _file(tmp_path, [GOOD, dict(GOOD, win={"card": 9}), GOOD], encoding="utf-16")
    assert main(["score-hand", "--file", f]) == 2
    out = capsys.readouterr().out
    assert out.count("合计 total") == 2 and "hand 2: error: The hand's 'win.card' must be a card string" in out
    assert main(["score-hand", "--file", f, "--jsonl"]) == 2
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x.get("total", x.get("error", "")[:8]) for x in lines] == [70, "The hand", 70]


def test_one_hand_file_and_a_folder_are_one_sentence(tmp_path, capsys):
    assert main(["score-hand", "--file", _file(tmp_path, dict(GOOD, dealer="no"))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("changpai: Hand 1 in hands.json: The hand's 'dealer'") and err.count("\n") == 1
    assert main(["score-hand", "--file", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
