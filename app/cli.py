"""`changpai` command line. Each sub-command lives in its own small module; imports are lazy so
`changpai score-hand` starts fast and never loads OpenCV or a model."""

from __future__ import annotations

import argparse
import importlib
import sys

# sub-command -> module under app.commands (each has add_arguments(parser) and run(args) -> int)
COMMANDS = {
    "app": ("app", "serve the phone page for the table (Streamlit)"),
    "score": ("score_photo", "score a photo of a finished hand: the hu with its breakdown"),
    "score-hand": ("score_hand", "score a hand written in notation or a hand file (JSON)"),
    "rules": ("rules", "print a section of the rule book (docs/rules.md) that a breakdown line cites, e.g. R6"),
    "synth": ("synth", "render synthetic card photos with labels (detect, classify, hands)"),
    "preview": ("preview", "contact sheets of rendered card faces and scenes"),
    "recognize": ("recognize", "list the cards in a photo"),
    "eval": ("evaluate", "evaluate the recognizer on a synthetic test set"),
    "label": ("label", "auto-label a folder of card photos for review and training"),
    "calibrate": ("calibrate", "fit the recognizer to your own deck from a photo of its faces"),
    "measure": ("measure", "every eval behind the README's table for one model, and their figures in one table"),
    "compare": ("compare", "compare two eval reports of the same photos, photo by photo (McNemar's test)"),
    "eval-calibration": ("eval_calibration", "measure calibration on a deck style the model never saw"),
    "eval-faces": ("eval_faces", "how many rendered calibration photos are split into their faces named right, deck unknown"),
    "mix": ("mix", "a detector training list drawn from several synth folders (fans and stairs, some rows, loose scenes)"),
    "mine": ("mine", "cut classifier crops where the detector puts its boxes, or boxes that are no card"),
    "train": ("train", "train the card detector or classifier (CPU, resumable)"),
    "round": ("round", "one training round of both networks from a released model, held to a time budget (a lent GPU)"),
    "release": ("release", "a model folder with some thresholds changed (as `changpai eval --set` measured them), or "
                           "with the network of a finished training run"),
    "average": ("average", "average the weights of several checkpoints of one network (a model soup)"),
    "bench-synth": ("bench_synth", "benchmark synthetic scene generation (scenes/second)"),
    "bench-label": ("bench_label", "benchmark labelling throughput and label accuracy on synthetic photos"),
    "bench-score": ("bench_score", "benchmark the rules engine (hands/second, worst case)"),
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="changpai",
        description="Nantong long cards (南通长牌): score hands from photos or notation.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (mod, help_text) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(f"app.commands.{mod}").add_arguments(sp)
        sp.set_defaults(_module=mod)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_module", None):
        parser.print_help()
        return 2
    module = importlib.import_module(f"app.commands.{args._module}")
    from scoring.errors import HandError

    try:
        return int(module.run(args) or 0)
    except HandError as e:
        print(f"changpai: {e}", file=sys.stderr)
        return 2
    except UserError as e:
        print(f"changpai: {e}", file=sys.stderr)
        return 2
    except ImportError as e:  # a command of an extra the install lacks (training, a Dask cluster)
        extra = {"torch": "train", "torchvision": "train", "ultralytics": "train", "onnxslim": "train",
                 "dask": "dask", "distributed": "dask"}.get((e.name or "").split(".")[0])
        if extra is None:
            raise
        print(f"changpai: `changpai {args.command}` needs the {extra} extra, which this install lacks: "
              f"pip install -e \".[{extra}]\" (or pip install \"changpai[{extra}]\").", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("changpai: interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped reading (`changpai recognize photo.jpg | head`): not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return 141  # as a shell reports a command ended by SIGPIPE


class UserError(Exception):
    """A problem with what the user asked for, said in one sentence."""


def comma_list(text: str | None) -> tuple[str, ...]:
    """An option's comma-separated names (styles, rulesets, tables …), blanks dropped; none for no text."""
    return tuple(s.strip() for s in (text or "").split(",") if s.strip())


if __name__ == "__main__":
    sys.exit(main())
