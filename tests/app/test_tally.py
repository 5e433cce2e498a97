"""The table tally: points by seat shared by table code, seat names, undo of the round a phone saw, an audit line
for every change, long random codes, old tallies migrated, survives a new connection (a server restart)."""

import json
import sqlite3
import threading

import pytest

from app.tally import CODE_LENGTH, Tally, TallyError, new_code


def test_two_sessions_share_by_seat_and_restart_keeps(tmp_path):
    db = tmp_path / "t.sqlite3"
    a, b = Tally(db), Tally(db)
    a.add("abc123", [70, -10, 20], winner=0, device="p1")
    b.add("ABC123", [0, 140, 10], winner=1, device="p2")
    assert len(a.rounds("ABC123")) == 2
    again = Tally(db)  # as after a restart
    assert again.totals("abc123") == [70, 130, 30]
    assert again.rounds("OTHER1") == []


def test_seats_are_named_once_and_renamed_without_splitting_a_total(tmp_path):
    t = Tally(tmp_path / "t.sqlite3")
    assert t.seats("TABLE1") == ["", "", ""]
    t.add("TABLE1", [30, 0, 0], winner=0)
    t.name_seat("TABLE1", 0, "  老  王 ", device="p1")
    t.add("TABLE1", [50, 0, 0], winner=0)
    t.name_seat("TABLE1", 0, "王师傅", device="p2")
    assert t.seats("TABLE1") == ["王师傅", "", ""] and t.totals("TABLE1") == [80, 0, 0]
    assert t.csv("TABLE1", ["王师傅", "Player 2", "Player 3"]).splitlines()[0] == "round,time,王师傅,Player 2,Player 3,note"
    with pytest.raises(TallyError):
        t.name_seat("TABLE1", 3, "x")


def test_undo_takes_back_only_the_round_the_phone_saw(tmp_path):
    t = Tally(tmp_path / "t.sqlite3")
    assert t.undo("TABLE1") is False
    first = t.add("TABLE1", [1, 2, 3])
    last = t.add("TABLE1", [4, 5, 6])
    results = []
    threads = [threading.Thread(target=lambda d=d: results.append(t.undo("TABLE1", last, device=d))) for d in ("p1", "p2")]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(results) == [False, True]  # two phones at once: one round taken back, not two
    assert [r["id"] for r in t.rounds("TABLE1")] == [first]


def test_every_change_leaves_an_audit_line(tmp_path):
    t = Tally(tmp_path / "t.sqlite3")
    rid = t.add("TABLE1", [10, 0, 0], winner=0, device="aa11")
    t.name_seat("TABLE1", 1, "B", device="bb22")
    t.undo("TABLE1", rid, device="cc33")
    log = t.audit("TABLE1")
    assert [(a["device"], a["action"]) for a in log] == [("cc33", "undo"), ("bb22", "name"), ("aa11", "add")]
    assert log[2]["detail"] == {"round": rid, "points": [10, 0, 0], "winner": 0}


@pytest.mark.parametrize("code", ["", "has space", "x" * 30, "中文", "1", "A7K2"])
def test_short_or_bad_table_codes_are_refused(tmp_path, code):
    with pytest.raises(TallyError):
        Tally(tmp_path / "t.sqlite3").add(code, [1, 0, 0])


def test_made_codes_are_long_random_and_accepted(tmp_path):
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200 and all(len(c) == CODE_LENGTH for c in codes)
    Tally(tmp_path / "t.sqlite3").add(next(iter(codes)), [1, 0, 0])


def test_a_tally_from_before_seats_keeps_its_rounds_and_names(tmp_path):
    db = tmp_path / "old.sqlite3"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE rounds (id INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, created REAL NOT NULL, "
                  "players TEXT NOT NULL, points TEXT NOT NULL, note TEXT)")
        c.execute("INSERT INTO rounds (tbl, created, players, points, note) VALUES ('OLDTABLE', 1, ?, '[70, -10, 20]', '')",
                  (json.dumps(["甲", "Player 2", "玩家 3"], ensure_ascii=False),))
    t = Tally(db)
    assert t.totals("OLDTABLE") == [70, -10, 20] and t.seats("OLDTABLE") == ["甲", "", ""]


def test_tally_errors_read_in_the_pages_language(tmp_path):
    from app.i18n import say

    with pytest.raises(TallyError) as e:
        Tally(tmp_path / "t.sqlite3").add("no good", [1, 0, 0])
    assert say(e.value, "zh").startswith("牌桌号") and say(e.value, "en").startswith("A table code")
    with pytest.raises(TallyError) as e:
        Tally(tmp_path / "t.sqlite3").add("TABLE1", [1])
    assert say(e.value, "zh") == "每位玩家都要有分数。"
