"""`changpai rules [SECTION]`: the rule book's sections in the terminal."""

from __future__ import annotations

import argparse

from ..cli import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("section", nargs="?", help="a section, as a breakdown cites it (R4, R6.3, [R7]); none: list the sections")


def run(args: argparse.Namespace) -> int:
    from ..rules import RULES_DOC, section_of, sections

    known = sections()
    if not known:
        raise UserError(f"The rule book ({RULES_DOC}) is not installed; reinstall changpai from its source tree.")
    if not args.section:
        for text in known.values():
            print(text.splitlines()[0].removeprefix("## "))
        return 0
    sec = section_of(args.section)
    if sec not in known:
        raise UserError(f"No section {args.section[:20]!r} in the rule book: it has {', '.join(known)}.")
    print(known[sec])
    return 0
