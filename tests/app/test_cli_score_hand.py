"""`changpai score-hand`: text, JSON, hand files, exit codes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run_cli(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_text_breakdown(capsys):
    code, out, _ = run_cli(capsys, "score-hand", "123t 456t 789w hh hh hh 222b 123b 9b 9b",
                           "--jiang", "2t,3w", "--pong", "555b", "--win", "9b")
    assert code == 0
    assert "70 胡" in out and "吊头" in out and "[R6.2]" in out


def test_json_fields(capsys):
    code, out, _ = run_cli(capsys, "score-hand", "hh hh hh qz qz qz 666b 888t 555w 123b 777t bh bh",
                           "--jiang", "6t,8w", "--win", "7t", "--tsumo", "--json")
    d = json.loads(out)
    assert code == 0
    assert (d["is_win"], d["hand_type"], d["total"], d["readings"]) == (True, "piao", 480, 1)
    assert all({"label", "points", "rule"} <= set(i) for i in d["items"])


def test_hand_file_with_expected_totals(capsys):
    code, out, _ = run_cli(capsys, "score-hand", "--file", str(ROOT / "datasets/hands/r10_examples.json"), "--json")
    results = json.loads(out)
    assert code == 0 and len(results) == 11
    assert all(r["total"] == r["expected_total"] for r in results)


def test_non_win_json_total_is_di_hu(capsys):
    code, out, _ = run_cli(capsys, "score-hand", "hh hh hh 1t 5b", "--jiang", "2t,3w", "--pong", "555b", "--json")
    d = json.loads(out)
    assert (code, d["is_win"], d["hand_type"], d["total"]) == (0, False, None, 10)


@pytest.mark.parametrize("args,needle", [
    (["1t 1t 1t 1t 1t", "--jiang", "2t,3w"], "Too many 1t"),
    (["1q", "--jiang", "2t,3w"], "Unknown card"),
    (["--file", "/nonexistent.json"], "No hand file"),
    (["1t", "--jiang", "2t,3w", "--option", "nonsense"], "KEY=VALUE"),
    ([], "Give the hand"),
])
def test_bad_input_exit_code(capsys, args, needle):
    code, out, err = run_cli(capsys, "score-hand", *args)
    assert code == 2
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_json_file(tmp_path, capsys):
    p = tmp_path / "h.json"
    p.write_text("{not json")
    code, _, err = run_cli(capsys, "score-hand", "--file", str(p))
    assert code == 2 and "not valid JSON" in err


def test_console_script_runs_as_subprocess():
    r = subprocess.run([sys.executable, "-m", "app.cli", "score-hand", "9b 9b", "--jiang", "2t,3w"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "not a win" in r.stdout


def test_scoring_is_pure_python():
    """scoring/ imports nothing from vision/ or app/ and needs no numpy."""
    code = ("import sys, scoring; from scoring import calculate, Context; "
            "calculate('9b 9b', context=Context(jiang=('2t','3w'))); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'vision', 'app', 'cv2')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_reader_that_stops_reading_gets_no_traceback():
    """`changpai ... | head`: the pipe closes before the output is written; no traceback, the SIGPIPE status."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "score-hand", "123t 456t 789w hh hh hh 222b 123b 9b 9b",
                             "--jiang", "2t,3w", "--pong", "555b", "--win", "9b"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before it writes a line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and "Traceback" not in err, err


def test_every_option_of_every_command_says_what_it_does():
    """`changpai COMMAND --help` explains each argument: none is listed bare."""
    import argparse

    from app.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    bare = {name: [a.option_strings[0] if a.option_strings else a.dest for a in sp._actions
                   if a.dest != "help" and not a.help]
            for name, sp in sub.choices.items()}
    assert {name: args for name, args in bare.items() if args} == {}
