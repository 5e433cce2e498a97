"""Messages the table reads (a hand's errors, photo → hu's warnings, defaults to confirm and errors): English
text that also carries a key and its values, so the page can say it in the player's language (app/locales,
``msg.KEY``)."""

from __future__ import annotations

from typing import Any


class Msg(str):
    """An English message (it is that string everywhere: CLI, JSON, logs) with ``key`` and ``values`` for
    other languages. Values are codes, numbers and lists of them, never English words."""

    key: str
    values: dict[str, Any]

    def __new__(cls, key: str, text: str, **values: Any) -> Msg:
        obj = super().__new__(cls, text)
        obj.key = key
        obj.values = values
        return obj

    def __reduce__(self):  # kept in the page's session state: pickles with its key and values
        return (_rebuild, (self.key, str(self), self.values))


def _rebuild(key: str, text: str, values: dict[str, Any]) -> Msg:
    return Msg(key, text, **values)


def message(e: BaseException) -> str:
    """What an error says: its Msg (key and values kept) when it was raised with one, else its text."""
    return e.args[0] if len(e.args) == 1 and isinstance(e.args[0], str) else str(e)
