"""The table's running tally: rounds of points per player, shared by every phone that opens the same
table code, stored in SQLite (survives reloads and server restarts)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from scoring.messages import Msg

DEFAULT_DB = Path(os.environ.get("CHANGPAI_DB", Path.home() / ".changpai" / "tally.sqlite3"))
CODE_RE = re.compile(r"^[A-Za-z0-9_-]{1,24}$")


class TallyError(ValueError):
    pass


def check_code(code: str) -> str:
    code = (code or "").strip().upper()
    if not CODE_RE.match(code):
        raise TallyError(Msg("tally_code", "A table code is 1–24 letters or digits, e.g. A7K2."))
    return code


class Tally:
    def __init__(self, path: str | Path = DEFAULT_DB):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.execute("CREATE TABLE IF NOT EXISTS rounds (id INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, "
                       "created REAL NOT NULL, players TEXT NOT NULL, points TEXT NOT NULL, note TEXT)")
            db.execute("CREATE INDEX IF NOT EXISTS rounds_tbl ON rounds (tbl, id)")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def add(self, table: str, players: list[str], points: list[int], note: str = "") -> int:
        table = check_code(table)
        if len(players) != len(points):
            raise TallyError(Msg("tally_points", "Each player needs points."))
        with closing(self._connect()) as db, db:
            cur = db.execute("INSERT INTO rounds (tbl, created, players, points, note) VALUES (?, ?, ?, ?, ?)",
                             (table, time.time(), json.dumps(players, ensure_ascii=False), json.dumps(points), note))
            return int(cur.lastrowid)

    def rounds(self, table: str) -> list[dict]:
        table = check_code(table)
        with closing(self._connect()) as db:
            rows = db.execute("SELECT id, created, players, points, note FROM rounds WHERE tbl = ? ORDER BY id", (table,)).fetchall()
        return [{"id": r[0], "created": r[1], "players": json.loads(r[2]), "points": json.loads(r[3]), "note": r[4] or ""}
                for r in rows]

    def undo(self, table: str) -> bool:
        """Remove the table's last round; False when there is none."""
        table = check_code(table)
        with closing(self._connect()) as db, db:
            row = db.execute("SELECT MAX(id) FROM rounds WHERE tbl = ?", (table,)).fetchone()
            if not row or row[0] is None:
                return False
            db.execute("DELETE FROM rounds WHERE id = ?", (row[0],))
            return True

    def totals(self, table: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rounds(table):
            for p, v in zip(r["players"], r["points"], strict=True):
                out[p] = out.get(p, 0) + int(v)
        return out

    def csv(self, table: str) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        rounds = self.rounds(table)
        players = []
        for r in rounds:
            for p in r["players"]:
                if p not in players:
                    players.append(p)
        w.writerow(["round", "time", *players, "note"])
        for i, r in enumerate(rounds, 1):
            pts = dict(zip(r["players"], r["points"], strict=True))
            w.writerow([i, time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"])), *[pts.get(p, "") for p in players], r["note"]])
        return buf.getvalue()
