"""The rule book (docs/rules.md) by section: what `changpai rules R6.3`, `--explain` and the page show for a
breakdown line's [R…] citation."""

from __future__ import annotations

import re
from functools import lru_cache

from vision.resources import data_root

RULES_DOC = "docs/rules.md"
_CITE = re.compile(r"R(\d+)")


@lru_cache(maxsize=1)
def sections() -> dict[str, str]:
    """Section number ('R1' … 'R11') → its text, heading included; empty when the rule book is not installed."""
    path = data_root(RULES_DOC)
    if not path.is_file():
        return {}
    out: dict[str, str] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"## (R\d+)\. ", line)
        if m:
            current = m.group(1)
            out[current] = line
        elif line.startswith("## "):
            current = None
        elif current:
            out[current] += "\n" + line
    return {k: v.rstrip() for k, v in out.items()}


def section_of(citation: str) -> str | None:
    """The section a citation names: '[R6.3]', 'R6.1 (option)' → 'R6'; None when it names none."""
    m = _CITE.search(citation)
    return f"R{m.group(1)}" if m else None


def anchor(section: str) -> str:
    """The anchor of a section's heading in docs/rules.md as GitHub and most Markdown viewers make it."""
    heading = sections().get(section, "")
    slug = re.sub(r"[^\w\- ]", "", heading.lstrip("# ").strip().lower()).replace(" ", "-")
    return f"{RULES_DOC}#{slug}"


def explain(citations: list[str]) -> str:
    """The text of every section the citations name, each once, in the rule book's order."""
    known = sections()
    wanted = sorted({s for c in citations if (s := section_of(c)) and s in known}, key=lambda s: int(s[1:]))
    return "\n\n".join(known[s] for s in wanted)
