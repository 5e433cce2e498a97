"""The measuring suite of a release: every `changpai eval` behind the README's "How well it works" table, in one
place, so a model is measured the same way each time (`changpai measure`). Each entry names its photos, the eval's
arguments, and the command that makes the photos when they are the project's own (rendered, never kept in git)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FOREIGN = Path("../shared/foreign-deck")
# vision.synth.decks.DECK_FAMILIES, written out here: their order fixes the test sets' seeds (9501-9507), and
# `changpai measure` starts without loading the renderer
FAMILIES = ("woodblock", "dotted", "boxed", "sideways", "formal", "assorted", "heroes", "medley")  # seeds 9501-9508, in this order
TIGHT = ("woodblock", "dotted", "boxed", "formal", "assorted", "sideways", "own", "heroes", "medley")  # seeds 9511-9519, in this order
# winning hands laid as players lay them (stairs and fans down to 0.3 of a card showing): the families the networks
# were taught, their named cards the printer's way (seed 9521), and the one family no network was taught (9522), the
# project's own leave-one-family-out figure for the foreign deck's hands target
TAUGHT = ("assorted", "woodblock", "dotted", "boxed", "formal", "heroes", "medley")
HELD_OUT = "sideways"


@dataclass(frozen=True)
class Entry:
    """One eval of the suite: reports ``<name>_<tag>.json`` and ``.txt``."""

    name: str
    photos: str  # the folder `changpai eval` reads
    args: tuple[str, ...] = ()  # more arguments of `changpai eval`
    make: str = ""  # the `changpai synth` command that renders the photos ("": they come from outside the project)
    group: str = "own"  # foreign, families, tight, transfer, own
    alone: bool = False  # a latency figure (12 MP, photo → total): measured with the whole machine, after the others

    @property
    def hands(self) -> bool:
        return "--hands" in self.args


def _synth(out: str, seed: int, n: int, kind: str, more: str = "") -> str:
    return f"changpai synth --out {out} --n {n} --seed {seed} --kind {kind}{more} --val-frac 0"


def _tight(out: str, seed: int, style: str) -> str:
    """40 scenes of a deck family (or the renderer's own styles) laid as tight as players hold them."""
    return _synth(out, seed, 40, "detect", ("" if style == "own" else f" --styles {style}") + " --tables all --least-show 0.22")


SUITE: tuple[Entry, ...] = (
    Entry("foreign_scenes", str(FOREIGN / "scenes"), group="foreign"),
    Entry("foreign_hands", str(FOREIGN / "hands"), ("--hands", "--context-jiang"), group="foreign"),
    *(Entry(f"family_{f}", f"data/test/family_{f}", make=_synth(f"data/test/family_{f}", 9501 + i, 40, "detect", f" --styles {f}"),
            group="families") for i, f in enumerate(FAMILIES)),
    *(Entry(f"tight_{f}", f"data/test/tight_{f}", make=_tight(f"data/test/tight_{f}", 9511 + i, f), group="tight")
      for i, f in enumerate(TIGHT)),
    Entry("hands_families", "data/test/hands_families", ("--hands",),
          make=_synth("data/test/hands_families", 9521, 100, "hands",
                      f" --styles {','.join(TAUGHT)} --tables all --named-ways --least-show 0.3"), group="transfer"),
    Entry(f"hands_{HELD_OUT}", f"data/test/hands_{HELD_OUT}", ("--hands",),
          make=_synth(f"data/test/hands_{HELD_OUT}", 9522, 100, "hands", f" --styles {HELD_OUT} --tables all --least-show 0.3"),
          group="transfer"),
    Entry("test_detect", "data/test/detect", make=_synth("data/test/detect", 9001, 200, "detect")),
    Entry("test_holdout", "data/test/holdout", make=_synth("data/test/holdout", 9003, 100, "detect", " --styles holdout")),
    Entry("test_hands", "data/test/hands", ("--hands",), make=_synth("data/test/hands", 9002, 200, "hands"),
          alone=True),  # photo → total latency
    Entry("test_12mp", "data/test/12mp", ("--repeat", "5"), make=_synth("data/test/12mp", 9004, 12, "hands", " --size 4000x3000"),
          alone=True),
)


# The val photos candidates are chosen on (`changpai measure --val`): never the test sets above, never the foreign
# deck. The tight sets' seeds 7611-7619 follow VAL_TIGHT's order; the hands as the test hands above, other seeds.
VAL_TIGHT = ("woodblock", "own", "dotted", "boxed", "formal", "assorted", "sideways", "heroes", "medley")
VAL: tuple[Entry, ...] = (
    *(Entry(f"val_tight_{f}", f"data/val40/tight_{f}", make=_tight(f"data/val40/tight_{f}", 7611 + i, f), group="val_tight")
      for i, f in enumerate(VAL_TIGHT)),
    Entry("val_loose", "data/val_detect", make=_synth("data/val_detect", 7373, 150, "detect"), group="val_loose"),
    Entry("val_hands", "data/val_hands3", ("--hands", "--limit", "300"),
          make="changpai synth --out data/val_hands3 --n 600 --seed 8383 --kind hands --val-frac 0.99", group="val_hands"),
    Entry("val_extra_hands", "data/val40/named_extra_hands", ("--hands",),
          make=_synth("data/val40/named_extra_hands", 7623, 80, "hands", f" --styles {','.join(TAUGHT)} --tables all "
                      "--named-ways --rulesets rugao,nantong-single+xi_er"), group="val_hands"),
    Entry("val_family_hands", "data/val40/fam_hands", ("--hands",),
          make=_synth("data/val40/fam_hands", 7624, 120, "hands",
                      f" --styles {','.join(TAUGHT)} --tables all --named-ways --least-show 0.3"), group="val_hands"),
    Entry(f"val_{HELD_OUT}_hands", "data/val40/side_hands", ("--hands",),
          make=_synth("data/val40/side_hands", 7625, 60, "hands", f" --styles {HELD_OUT} --tables all --least-show 0.3"),
          group="val_hands"),
)


def select(names: list[str] | None = None, val: bool = False) -> list[Entry]:
    """The suite's entries (``val``: the val photos' instead), all or those named (each an entry's name or a group);
    ValueError naming what is none of them."""
    entries = VAL if val else SUITE
    if not names:
        return list(entries)
    known = {e.name for e in entries} | {e.group for e in entries}
    wanted = set(names)
    bad = sorted(wanted - known)
    if bad:
        raise ValueError(f"{', '.join(bad)} is not in the {'val ' if val else ''}suite: its entries are "
                         f"{', '.join(e.name for e in entries)}; its groups {', '.join(sorted({e.group for e in entries}))}.")
    return [e for e in entries if e.name in wanted or e.group in wanted]


def missing(entries: list[Entry]) -> list[Entry]:
    """The entries whose photos are not on this machine."""
    return [e for e in entries if not Path(e.photos).is_dir()]


def summary(entry: Entry, report: dict[str, Any]) -> dict[str, Any]:
    """An eval report's headline figures, as the README's table quotes them."""
    if entry.hands:
        c = report["cards"]
        return {"with_repair": report["exact_with_repair"], "without_repair": report["exact_without_repair"],
                "wrong_on_a_win_unwarned": report["wrong_total_on_a_win_unflagged"], "recall": c["recall"],
                "codes": c["classification_accuracy"], "photo_to_total_ms_p50": report["latency_ms"]["p50"]}
    return {"recall": report["recall"], "precision": report["precision"], "codes": report["classification_accuracy"],
            "exact": report["whole_photo_exact"], "images": report["images"], "latency_ms_p50": report["latency_ms"]["p50"]}


def format_summary(rows: list[tuple[Entry, dict[str, Any]]]) -> str:
    """The summaries as one text table (and the val tight sets' mean, as candidates are compared)."""
    out = []
    tight = [(e, s) for e, s in rows if e.group == "val_tight"]
    if tight:
        exact = sum(round(s["exact"] * s["images"]) for _, s in tight)
        out.append(f"{'val_tight (mean)':20s} codes {sum(s['codes'] for _, s in tight) / len(tight) * 100:6.2f} %, "
                   f"photos exact {exact} of {sum(s['images'] for _, s in tight)} ({len(tight)} sets)")
    for e, s in rows:
        if e.hands:
            out.append(f"{e.name:20s} hands right with repair {s['with_repair'] * 100:5.1f} %, without {s['without_repair'] * 100:5.1f} %, "
                       f"unwarned wrong on a win {s['wrong_on_a_win_unwarned']}; cards recall {s['recall'] * 100:.2f} %, "
                       f"codes {s['codes'] * 100:.2f} %; photo → total p50 {s['photo_to_total_ms_p50']} ms")
        else:
            out.append(f"{e.name:20s} recall {s['recall'] * 100:6.2f} %, precision {s['precision'] * 100:6.2f} %, "
                       f"codes {s['codes'] * 100:6.2f} %, exact {s['exact'] * 100:5.1f} %; p50 {s['latency_ms_p50']} ms")
    return "\n".join(out)


def read_summaries(entries: list[Entry], out: Path, tag: str) -> list[tuple[Entry, dict[str, Any]]]:
    """The summaries of the reports written for ``tag`` (entries without a report are left out)."""
    rows = []
    for e in entries:
        p = out / f"{e.name}_{tag}.json"
        if p.exists():
            rows.append((e, summary(e, json.loads(p.read_text()))))
    return rows
