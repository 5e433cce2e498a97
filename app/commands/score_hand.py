"""`changpai score-hand`: score a hand from notation or a hand file."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson  # compact JSON, the same text as json.dumps(ensure_ascii=False), several times faster

from scoring import ScoreResult, build_hand, load_hand_file, score_dict, score_hand
from scoring.errors import HandError
from scoring.rulesets import EVENTS, OPTIONS, RULESETS, parse_options

from ..render_text import render_result
from ..rules import explain


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("notation", nargs="?", help="concealed cards incl. the winning card, e.g. '123t 456t 9b 9b'")
    p.add_argument("--file", help="hand file (JSON): one hand or a list of hands")
    p.add_argument("--jiang", default="", help="flipped 将 card(s), e.g. 2t,3w")
    p.add_argument("--pong", action="append", default=[], metavar="CARDS", help="a declared pong, e.g. 555b")
    p.add_argument("--kong", action="append", default=[], metavar="CARDS", help="an exposed quad 明杠, e.g. 5w5w5w5w or 5555w")
    p.add_argument("--concealed-kong", action="append", default=[], metavar="CARDS", help="a declared 后摸 quad")
    p.add_argument("--dealt-kong", action="append", default=[], metavar="CARDS", help="a declared 起手 quad (龙)")
    p.add_argument("--from-deal", default="", help="kinds held since the deal (起手), e.g. 3b,hh")
    p.add_argument("--win", help="the winning card; 'any' for a win whose card is unknown")
    p.add_argument("--tsumo", action="store_true", help="self-drawn win (自摸)")
    p.add_argument("--dealer", action="store_true", help="the player is the dealer (庄)")
    p.add_argument("--event", action="append", default=[], choices=EVENTS, help="天成 地胡 天听 折庄 海底 杠开 …")
    p.add_argument("--ruleset", default="nantong-double", choices=list(RULESETS), help="rule book variant (default nantong-double)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="ruleset option: " + ", ".join(OPTIONS))
    p.add_argument("--all", action="store_true", help="list every legal reading")
    p.add_argument("--json", action="store_true", help="print JSON (a list of hands: compact, one hand a line)")
    p.add_argument("--jsonl", action="store_true", help="print JSON Lines: one hand's JSON a line")
    p.add_argument("--en", action="store_true", help="English labels")
    p.add_argument("--explain", action="store_true", help="after the breakdown, the rule book's sections its lines cite (docs/rules.md)")


def run(args: argparse.Namespace) -> int:
    if args.file and args.notation:
        raise HandError("Give either the hand's notation or --file, not both.")
    if args.file:
        path = Path(args.file)
        if path.is_dir():
            raise HandError(f"{path} is a folder; --file takes a hand file (JSON).")
        if not path.is_file():
            raise HandError(f"No hand file at {path}.")
        hands = load_hand_file(path.read_bytes())
        gc.freeze()  # the file's hands live to the end: the collector need not walk them again and again
        results = _scored_file(hands, path.name, args.all)
        single = False
    else:
        results = iter([(1, None, _scored_notation(args), None)])
        single = True
    # each hand is written as soon as it is scored, and nothing is kept: a batch of any size runs in little memory,
    # and Python's collector never walks thousands of kept results
    bad: list[int] = []
    n = 0
    out = sys.stdout
    # batch JSON goes out as orjson's UTF-8 bytes, straight to the byte stream when there is one
    raw = out.buffer.write if (args.jsonl or (args.json and not single)) and hasattr(out, "buffer") else None
    emit = raw or (lambda b: out.write(b.decode()))
    if raw:
        out.flush()
    if args.json and not (single or args.jsonl):
        emit(b"[")
    for i, d, res, err in results:
        if err:
            bad.append(i)
        if args.jsonl:
            emit(orjson.dumps(_entry(i, d, res, err, args.all), option=orjson.OPT_APPEND_NEWLINE))
        elif args.json and single:
            json.dump(_entry(i, d, res, err, args.all), out, ensure_ascii=False, indent=2)
            out.write("\n")
        elif args.json:  # a list: compact, one hand a line
            emit((b",\n" if n else b"") + orjson.dumps(_entry(i, d, res, err, args.all)))
        else:
            if n:
                out.write("\n")
            if isinstance(d, dict) and isinstance(d.get("name"), str):
                out.write(f"# {d['name'][:80]}\n")
            if err:
                out.write(f"hand {i}: error: {err}\n")
            else:
                out.write(render_result(res, english=args.en, all_readings=args.all) + "\n")
                if args.explain:
                    out.write("\n" + explain([it.rule for it in res.items]) + "\n")
        n += 1
    if args.json and not (single or args.jsonl):
        emit(b"]\n")
    if raw:
        out.buffer.flush()
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (" …" if len(bad) > 10 else "")
        print(f"changpai: {len(bad)} of {n} hands could not be scored (hand {shown}); "
              "each has its error in place of its score.", file=sys.stderr)
        return 2
    return 0


def _scored_file(hands: list[Any], name: str, all_readings: bool) -> Iterator[tuple[int, Any, ScoreResult | None, str | None]]:
    """Each hand of a file with its score, or the sentence saying why it has none (a file of one hand: that sentence
    is the command's error)."""
    for i, d in enumerate(hands, 1):
        try:
            yield i, d, score_dict(d, all_readings), None
        except HandError as e:
            if len(hands) == 1:
                raise HandError(f"Hand 1 in {name}: {e}") from None
            yield i, d, None, str(e)


def _scored_notation(args: argparse.Namespace) -> ScoreResult:
    if not args.notation:
        raise HandError("Give the hand, e.g. changpai score-hand \"123t 456t … 9b 9b\" --jiang 2t,3w --win 9b.")
    declared = [(c, "pong") for c in args.pong] + [(c, "exposed_kong") for c in args.kong]
    declared += [(c, "concealed_kong") for c in args.concealed_kong]
    declared += [(c, "dealt_kong") for c in args.dealt_kong]
    win = None if args.win in (None, "any") else args.win
    is_win = True if args.win == "any" else None
    hand = build_hand(concealed=args.notation, jiang=args.jiang, declared=declared,
                      ruleset=args.ruleset, options=parse_options(args.option),
                      from_deal=args.from_deal, win=win, is_win=is_win, self_drawn=args.tsumo,
                      dealer=args.dealer, events=args.event)
    res = score_hand(hand, args.all)
    if args.win is None and "tian_cheng" not in args.event:
        res.notes.append("No --win given: scored as a hand that did not win "
                         "(--win CODE, or --win any for a win whose card is unknown).")
    return res


def _entry(i: int, d: Any, res: ScoreResult | None, err: str | None, all_readings: bool) -> dict[str, Any]:
    """One hand's JSON: its score (with the file's name and expected total), or its index and error."""
    if err:
        return {"index": i, "error": err}
    rd = res.to_dict(with_readings=all_readings)
    if isinstance(d, dict):
        for k in ("expected_total", "name"):
            if k in d:
                rd[k] = d[k]
    return rd
