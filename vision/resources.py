"""Where the project's data files are: beside the source tree (a clone, an editable install), or where a plain
``pip install`` put them (``<prefix>/share/changpai``, pyproject's data-files): the released model, the fonts,
the rule book. One place decides, so every command and the page find them from any folder."""

from __future__ import annotations

import sys
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[1]
INSTALLED_ROOT = Path(sys.prefix) / "share" / "changpai"


def data_root(relative: str) -> Path:
    """The folder or file ``relative`` (e.g. ``models``, ``datasets/fonts``, ``docs/rules.md``) from the source
    tree when it is there, else from the installed data files (which may not exist either: the caller says so)."""
    here = SOURCE_ROOT / relative
    return here if here.exists() else INSTALLED_ROOT / relative
