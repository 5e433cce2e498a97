"""The table tally: shared by table code, undo, CSV, survives a new connection (a server restart)."""

import pytest

from app.tally import Tally, TallyError


def test_two_sessions_share_and_restart_keeps(tmp_path):
    db = tmp_path / "t.sqlite3"
    a, b = Tally(db), Tally(db)
    a.add("ab12", ["甲", "乙", "丙"], [70, -10, 20])
    b.add("AB12", ["甲", "乙", "丙"], [0, 140, 10])
    assert len(a.rounds("AB12")) == 2
    again = Tally(db)  # as after a restart
    assert again.totals("ab12") == {"甲": 70, "乙": 130, "丙": 30}
    assert again.rounds("OTHER") == []


def test_undo_and_csv(tmp_path):
    t = Tally(tmp_path / "t.sqlite3")
    assert t.undo("X1") is False
    t.add("X1", ["a", "b", "c"], [1, 2, 3])
    t.add("X1", ["a", "b", "c"], [4, 5, 6])
    assert t.undo("X1") is True
    assert [r["points"] for r in t.rounds("X1")] == [[1, 2, 3]]
    csv = t.csv("X1").splitlines()
    assert csv[0] == "round,time,a,b,c,note" and csv[1].endswith(",1,2,3,")


@pytest.mark.parametrize("code", ["", "has space", "x" * 30, "中文"])
def test_bad_table_code(tmp_path, code):
    with pytest.raises(TallyError):
        Tally(tmp_path / "t.sqlite3").add(code, ["a"], [1])


def test_tally_errors_read_in_the_pages_language(tmp_path):
    from app.i18n import say

    with pytest.raises(TallyError) as e:
        Tally(tmp_path / "t.sqlite3").add("no good", ["a"], [1])
    assert say(e.value, "zh").startswith("桌号") and say(e.value, "en").startswith("A table code")
    with pytest.raises(TallyError) as e:
        Tally(tmp_path / "t.sqlite3").add("T1", ["a", "b"], [1])
    assert say(e.value, "zh") == "每位玩家都要有分数。"
