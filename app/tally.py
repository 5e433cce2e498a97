"""The table's running tally: rounds of points per seat, shared by every phone that opens the same table code, stored
in SQLite (survives reloads and server restarts).

Players sit in seats (0, 1, 2), named once per table and renamable; rounds store points by seat, so a name's spelling
or the page's language never splits a player's total. The table code is the only key a phone needs, so codes are made
long and random (``new_code``) and short typed ones are refused. Every change is one transaction and leaves an audit
line (which phone did what, when) that the page shows; an undo names the round it undoes, so two phones undoing at
once cannot both take one back.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import secrets
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from scoring.messages import Msg

DEFAULT_DB = Path(os.environ.get("CHANGPAI_DB", Path.home() / ".changpai" / "tally.sqlite3"))
SEATS = 3  # the winner and the two other players
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read aloud across a table
CODE_LENGTH = 8  # 31^8 ≈ 8.5 × 10^11 codes
MIN_CODE = 6
CODE_RE = re.compile(rf"^[A-Z0-9_-]{{{MIN_CODE},24}}$")
NAME_MAX = 24


class TallyError(ValueError):
    pass


def new_code() -> str:
    """A table code no one at another table will guess."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def check_code(code: str) -> str:
    code = (code or "").strip().upper()
    if not CODE_RE.match(code):
        raise TallyError(Msg("tally_code", f"A table code is {MIN_CODE}–24 letters or digits (the page makes one, e.g. "
                             "K7QW2MXP), so that no one else can guess it.", min=MIN_CODE))
    return code


class Tally:
    def __init__(self, path: str | Path = DEFAULT_DB):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.execute("CREATE TABLE IF NOT EXISTS rounds (id INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, "
                       "created REAL NOT NULL, players TEXT NOT NULL, points TEXT NOT NULL, note TEXT)")
            db.execute("CREATE INDEX IF NOT EXISTS rounds_tbl ON rounds (tbl, id)")
            cols = {r[1] for r in db.execute("PRAGMA table_info(rounds)")}
            db.execute("CREATE TABLE IF NOT EXISTS seats (tbl TEXT NOT NULL, seat INTEGER NOT NULL, name TEXT NOT NULL, "
                       "PRIMARY KEY (tbl, seat))")
            if "winner" not in cols:  # a tally from before seats: its rounds keep their points by position, and the
                db.execute("ALTER TABLE rounds ADD COLUMN winner INTEGER")  # names a player typed become the seats'
                db.execute("ALTER TABLE rounds ADD COLUMN device TEXT")
                for tbl, players in db.execute("SELECT tbl, players FROM rounds WHERE id IN (SELECT MIN(id) FROM rounds "
                                               "GROUP BY tbl)").fetchall():
                    for seat, name in enumerate(json.loads(players)[:SEATS]):
                        if isinstance(name, str) and not re.fullmatch(r"(Player|玩家) \d", name):
                            db.execute("INSERT OR IGNORE INTO seats (tbl, seat, name) VALUES (?, ?, ?)", (tbl, seat, name[:NAME_MAX]))
            db.execute("CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, "
                       "created REAL NOT NULL, device TEXT NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL)")
            db.execute("CREATE INDEX IF NOT EXISTS audit_tbl ON audit (tbl, id)")
            db.execute("CREATE TABLE IF NOT EXISTS decks (tbl TEXT PRIMARY KEY, model TEXT NOT NULL, created REAL NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    @staticmethod
    def _begin(db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")  # one writer at a time: what a change reads is what it changes

    def _audit(self, db: sqlite3.Connection, table: str, device: str, action: str, detail: str) -> None:
        db.execute("INSERT INTO audit (tbl, created, device, action, detail) VALUES (?, ?, ?, ?, ?)",
                   (table, time.time(), (device or "?")[:40], action, detail))

    # --- seats ---------------------------------------------------------------------------------------
    def seats(self, table: str) -> list[str]:
        """The seats' names ('' for a seat not named: the page shows 'player N' in its language)."""
        table = check_code(table)
        with closing(self._connect()) as db:
            rows = dict(db.execute("SELECT seat, name FROM seats WHERE tbl = ?", (table,)).fetchall())
        return [rows.get(s, "") for s in range(SEATS)]

    def name_seat(self, table: str, seat: int, name: str, device: str = "") -> None:
        table = check_code(table)
        if not 0 <= seat < SEATS:
            raise TallyError(Msg("tally_seat", f"A seat is 1–{SEATS}.", n=SEATS))
        name = " ".join((name or "").split())[:NAME_MAX]
        with closing(self._connect()) as db:
            self._begin(db)
            db.execute("INSERT INTO seats (tbl, seat, name) VALUES (?, ?, ?) ON CONFLICT (tbl, seat) DO UPDATE SET name = "
                       "excluded.name", (table, seat, name))
            self._audit(db, table, device, "name", json.dumps({"seat": seat, "name": name}, ensure_ascii=False))
            db.execute("COMMIT")

    # --- the table's own deck -----------------------------------------------------------------------
    def deck_folder(self, table: str) -> Path:
        """Where a table's calibrated model is written: beside the tally, one folder per table."""
        return self.path.parent / "decks" / check_code(table)

    def deck(self, table: str) -> str | None:
        """The model folder the table's deck was calibrated into, or None (the released model)."""
        table = check_code(table)
        with closing(self._connect()) as db:
            row = db.execute("SELECT model FROM decks WHERE tbl = ?", (table,)).fetchone()
        return row[0] if row and Path(row[0], "model.json").is_file() else None

    def set_deck(self, table: str, model: str | Path | None, device: str = "") -> None:
        """The table reads its photos with ``model`` from now on (None: with the released model again)."""
        table = check_code(table)
        with closing(self._connect()) as db:
            self._begin(db)
            if model is None:
                db.execute("DELETE FROM decks WHERE tbl = ?", (table,))
            else:
                db.execute("INSERT INTO decks (tbl, model, created) VALUES (?, ?, ?) ON CONFLICT (tbl) DO UPDATE SET "
                           "model = excluded.model, created = excluded.created", (table, str(model), time.time()))
            self._audit(db, table, device, "deck", json.dumps({"model": None if model is None else Path(model).name}))
            db.execute("COMMIT")

    # --- rounds --------------------------------------------------------------------------------------
    def add(self, table: str, points: list[int], winner: int | None = None, device: str = "", note: str = "") -> int:
        """A round: each seat's points (seat order), and the winner's seat."""
        table = check_code(table)
        if len(points) != SEATS:
            raise TallyError(Msg("tally_points", "Each player needs points."))
        if winner is not None and not 0 <= winner < SEATS:
            raise TallyError(Msg("tally_seat", f"A seat is 1–{SEATS}.", n=SEATS))
        with closing(self._connect()) as db:
            self._begin(db)
            cur = db.execute("INSERT INTO rounds (tbl, created, players, points, note, winner, device) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (table, time.time(), json.dumps(list(range(SEATS))), json.dumps([int(p) for p in points]), note,
                              winner, (device or "?")[:40]))
            rid = int(cur.lastrowid)
            self._audit(db, table, device, "add", json.dumps({"round": rid, "points": points, "winner": winner}))
            db.execute("COMMIT")
            return rid

    def rounds(self, table: str) -> list[dict]:
        table = check_code(table)
        with closing(self._connect()) as db:
            rows = db.execute("SELECT id, created, points, note, winner, device FROM rounds WHERE tbl = ? ORDER BY id",
                              (table,)).fetchall()
        out = []
        for rid, created, points, note, winner, device in rows:
            pts = [int(p) for p in json.loads(points)][:SEATS]
            out.append({"id": rid, "created": created, "points": pts + [0] * (SEATS - len(pts)), "note": note or "",
                        "winner": winner, "device": device or ""})
        return out

    def undo(self, table: str, round_id: int | None = None, device: str = "") -> bool:
        """Take back the table's last round — only if it is still ``round_id`` (the one the phone showed as last),
        so two phones undoing at once take back one round, not two. False when there is nothing to undo so."""
        table = check_code(table)
        with closing(self._connect()) as db:
            self._begin(db)
            row = db.execute("SELECT MAX(id) FROM rounds WHERE tbl = ?", (table,)).fetchone()
            last = row[0] if row else None
            if last is None or (round_id is not None and last != round_id):
                db.execute("ROLLBACK")
                return False
            db.execute("DELETE FROM rounds WHERE id = ?", (last,))
            self._audit(db, table, device, "undo", json.dumps({"round": last}))
            db.execute("COMMIT")
            return True

    def totals(self, table: str) -> list[int]:
        """Each seat's total."""
        out = [0] * SEATS
        for r in self.rounds(table):
            for s, v in enumerate(r["points"]):
                out[s] += v
        return out

    def audit(self, table: str, last: int = 50) -> list[dict]:
        table = check_code(table)
        with closing(self._connect()) as db:
            rows = db.execute("SELECT created, device, action, detail FROM audit WHERE tbl = ? ORDER BY id DESC LIMIT ?",
                              (table, last)).fetchall()
        return [{"created": c, "device": d, "action": a, "detail": json.loads(x)} for c, d, a, x in rows]

    def csv(self, table: str, names: list[str]) -> str:
        """The rounds as CSV, one column per seat under ``names`` (the seat names as the page shows them)."""
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["round", "time", *names, "note"])
        for i, r in enumerate(self.rounds(table), 1):
            w.writerow([i, time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"])), *r["points"], r["note"]])
        return buf.getvalue()
