"""The hand file (JSON) at the boundary: its bytes decoded whatever the editor saved (UTF-8 with or without a BOM,
UTF-16), and every field's type checked before anything is scored, so a wrongly typed field is one sentence that
names it — never a total. (``bool("false")`` is True: a string where a yes/no belongs must not count as yes.)"""

from __future__ import annotations

import json
from typing import Any

from .errors import HandError

# the fields of a hand, and what each may hold
FIELDS = ("ruleset", "jiang", "declared", "concealed", "from_deal", "win", "dealer", "events", "options",
          "expected_total", "name", "note")
WIN_FIELDS = ("card", "self_drawn")
GROUP_FIELDS = ("cards", "how")
SHOWN = 40  # characters of a wrong value quoted back


def _shown(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def _kind(v: Any) -> str:
    return {bool: "true/false", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object",
            type(None): "null"}.get(type(v), type(v).__name__)


def _wrong(field: str, want: str, v: Any) -> HandError:
    return HandError(f"The hand's {field!r} must be {want}, not {_kind(v)} ({_shown(v)}).")


def _cards(field: str, v: Any, optional: bool = True) -> None:
    """Cards: notation in one string ('123t 9b') or a list of card strings."""
    if v is None and optional:
        return
    if isinstance(v, str):
        return
    if not isinstance(v, list) or not set(map(type, v)) <= {str}:  # map: in C, as every hand of a batch passes here
        raise _wrong(field, "cards as a string ('123t 9b') or a list of card strings", v)


def _yes_no(field: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise _wrong(field, "true or false", v)


def check_hand(d: Any) -> dict[str, Any]:
    """``d`` when it is a hand with every field of the right type; HandError naming the first field that is not."""
    if not isinstance(d, dict):
        raise HandError(f"A hand must be a JSON object with at least 'jiang' and 'concealed', not {_kind(d)}.")
    extra = sorted(set(d) - set(FIELDS))
    if extra:
        raise HandError(f"Unknown field(s) in the hand: {', '.join(_shown(str(k)) for k in extra[:5])}.")
    for field in ("ruleset", "name", "note"):
        if field in d and not isinstance(d[field], str):
            raise _wrong(field, "a string", d[field])
    for field in ("jiang", "concealed", "from_deal"):
        if field in d:
            _cards(field, d[field])
    declared = d.get("declared")
    if declared is not None:
        if not isinstance(declared, list):
            raise _wrong("declared", "a list of groups", declared)
        for i, g in enumerate(declared, 1):
            if not isinstance(g, dict) or "cards" not in g:
                raise HandError(f"Declared group {i} must be an object with 'cards' and 'how', e.g. "
                                '{"cards": ["5b","5b","5b"], "how": "pong"}.')
            if extra := sorted(set(g) - set(GROUP_FIELDS)):
                raise HandError(f"Declared group {i} has unknown field(s): {', '.join(_shown(str(k)) for k in extra[:5])}.")
            _cards(f"declared[{i}].cards", g["cards"], optional=False)
            if "how" in g and not isinstance(g["how"], str):
                raise _wrong(f"declared[{i}].how", "a string (pong, exposed_kong, concealed_kong, dealt_kong)", g["how"])
    win = d.get("win")
    if win is not None:
        if not isinstance(win, dict):
            raise _wrong("win", 'null or an object like {"card": "9b", "self_drawn": false}', win)
        if extra := sorted(set(win) - set(WIN_FIELDS)):
            raise HandError(f"The hand's 'win' has unknown field(s): {', '.join(_shown(str(k)) for k in extra[:5])}.")
        if win.get("card") is not None and not isinstance(win["card"], str):
            raise _wrong("win.card", "a card string or null", win["card"])
        if "self_drawn" in win:
            _yes_no("win.self_drawn", win["self_drawn"])
    if "dealer" in d:
        _yes_no("dealer", d["dealer"])
    events = d.get("events")
    if events is not None and (not isinstance(events, list) or not set(map(type, events)) <= {str}):
        raise _wrong("events", 'a list of event names, e.g. ["hai_di"]', events)
    options = d.get("options")
    if options is not None:
        if not isinstance(options, dict):
            raise _wrong("options", 'an object, e.g. {"xi_er": true}', options)
        for k, v in options.items():
            if not isinstance(v, bool | str):
                raise _wrong(f"options.{k}", "true, false or a string", v)
    if "expected_total" in d and (isinstance(d["expected_total"], bool) or not isinstance(d["expected_total"], int)):
        raise _wrong("expected_total", "a whole number", d["expected_total"])
    return d


def decode(data: bytes) -> str:
    """A hand file's text, as UTF-8 (a BOM allowed) or UTF-16 with its BOM; HandError otherwise."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise HandError("The hand file starts as UTF-16 text but is not.") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise HandError("The hand file is not text (save it as UTF-8).") from None


def parse(text: str) -> Any:
    """The JSON of a hand file; HandError in one sentence for text that is not JSON or nests without end."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise HandError(f"The hand file is not valid JSON (line {e.lineno}: {e.msg}).") from None
    except RecursionError:
        raise HandError("The hand file nests too deeply to be a hand file.") from None
