"""`changpai eval DIR`: recognizer figures against the ground truth of `changpai synth`.

A prediction matches a ground-truth card when their quadrilaterals overlap with IoU ≥ 0.5 (greedy, best
IoU first). Reported: card precision and recall, accuracy of the matched cards' codes, confusion pairs,
whole-photo exact rate (every card found and right, nothing extra), latency percentiles. The photo shares come
with a 95 % interval (`interval`): 200 photos pin a share of about 80 % down to some ±6 points only.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from vision.eval.recognitions import load_recognitions, save_recognitions, truth_recognition
from vision.eval.tally import WHOLE, CardTally, interval
from vision.infer.model import SETTINGS, ModelInfo, changed_settings, model_info
from vision.infer.recognize import recognize, recognize_adapted, recognize_and_again


def _ground_truth(root: Path, split: str | None) -> list[dict[str, Any]]:
    """The photos' ground truth, of one split (train, val) or all: `changpai synth`'s gt/*.json, or a folder of
    photos each with its labels beside it (NAME.jpg + NAME.json: 'cards' with 'class' and 'corners', as the foreign
    deck's photos come; ``labelled_photo``)."""
    if (root / "gt").is_dir():
        gts = [json.loads(p.read_text()) for p in sorted((root / "gt").glob("*.json"))]
    else:
        gts = [g for p in sorted(root.glob("*.json")) if (g := labelled_photo(p)) is not None]
    return [g for g in gts if split is None or g.get("split") == split]


def labelled_photo(path: Path) -> dict[str, Any] | None:
    """A photo's labels written beside it (NAME.json: 'image', 'cards' with 'class', 'corners' and 'visible_fraction';
    a winning hand's 'hand' and 'expected' total) in the shape of `changpai synth`'s ground truth; None for a JSON
    file that is not such labels."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        cards = [{"code": c["class"], "quad": c["corners"], "visible": float(c.get("visible_fraction", 1.0)),
                  "group": c.get("role") or "hand"} for c in d["cards"]]
        image = d.get("image") or path.with_suffix(".jpg").name
    except (OSError, ValueError, KeyError, TypeError):
        return None
    gt = {"image": image, "width": d.get("width"), "height": d.get("height"), "cards": cards,
          "layout": d.get("layout") if isinstance(d.get("layout"), str) else None}
    if isinstance(d.get("hand"), dict) and isinstance(d.get("expected"), dict) and "total" in d["expected"]:
        gt |= {"hand": d["hand"], "expected_total": d["expected"]["total"]}
    return gt


def _of_split(split: str | None) -> str:
    return f" of the {split} split" if split else ""


def _info(model: str | Path | ModelInfo | None) -> ModelInfo:
    return model if isinstance(model, ModelInfo) else model_info(model)


def format_span(ci: list[float]) -> str:
    """An interval (``interval``) in percent, e.g. "76.1–86.7 %"."""
    return f"{ci[0] * 100:.1f}–{ci[1] * 100:.1f} %"


def evaluate(root: str | Path, model: str | Path | ModelInfo | None = None, limit: int | None = None, progress: bool = True,
             split: str | None = None, repeat: int = 1, true_corners: bool = False) -> dict[str, Any]:
    """Card figures and latency; with ``repeat`` > 1 each photo is recognized that many times and its latency is
    the median of them (a busy machine's hiccups then move the figures less). With ``true_corners`` each matched card
    is read by the classifier once more, cut at its true corners instead of the detector's box (after the latency
    is taken): how much the boxes' errors cost the reading (CardTally.add's ``read_true``)."""
    if repeat < 1:
        raise ValueError("repeat must be at least 1.")
    root = Path(root)
    gts = _ground_truth(root, split)
    if not gts:
        raise FileNotFoundError(f"No ground truth{_of_split(split)} in {root}/gt: make a test set with "
                                f"`changpai synth --out {root} ...`.")
    if limit:
        gts = gts[:limit]
    from tqdm import tqdm

    info = _info(model)  # read once, not for every photo
    tally = CardTally()
    lat = []
    stages: dict[str, list[float]] = {}
    for gt in tqdm(gts, desc="eval", unit="img", disable=not progress):
        img_path = root / gt["image"]
        runs = []
        for _ in range(repeat):
            t = time.perf_counter()
            rec = recognize(img_path, info)
            runs.append(((time.perf_counter() - t) * 1000, rec.timings_ms))
        lat.append(float(np.median([ms for ms, _ in runs])))
        for k, ms in sorted(runs, key=lambda r: r[0])[len(runs) // 2][1].items():  # the stages of the median read
            stages.setdefault(k, []).append(ms)
        tally.add(gt, rec.cards, rec.spares, _true_corner_reader(img_path, info) if true_corners else None)
    changed = changed_settings(info)
    return {"images": len(gts)} | ({"settings": changed} if changed else {}) | tally.report(box_errors=True) | \
        ({"repeat": repeat} if repeat > 1 else {}) | {
        "latency_ms": {"p50": round(float(np.percentile(lat, 50)), 1), "p90": round(float(np.percentile(lat, 90)), 1),
                       "p99": round(float(np.percentile(lat, 99)), 1)},
        "stages_ms_p50": _medians(stages)}


def _true_corner_reader(img_path: Path, info: ModelInfo):
    """Quads in the photo's pixels -> the classifier's code for each, cut as recognize cuts them (from the same
    decode of the photo, the corners in their long-axis order)."""
    from vision.infer.geometry import order_long_axis_vertical
    from vision.infer.imageio import READ_SIDE, read_photo
    from vision.infer.model import _sessions
    from vision.infer.recognize import read_boxes

    img, scale = read_photo(img_path, min_side=READ_SIDE)

    def read(quads: list[np.ndarray]) -> list[str]:
        p, _ = read_boxes(img, [order_long_axis_vertical(q / scale) for q in quads], _sessions(str(info.path))[1], info)
        return [info.codes[int(k)] for k in p.argmax(1)]
    return read


def _medians(stages: dict[str, list[float]]) -> dict[str, float]:
    """Each stage's median time (ms) over the photos: where a recognition's time goes (Recognition.timings_ms)."""
    return {k: round(float(np.median(v)), 1) for k, v in stages.items()}


def format_stages(stages: dict[str, float]) -> str:
    return ", ".join(f"{k} {v}" for k, v in stages.items()) + " ms"


def format_report(r: dict[str, Any]) -> str:
    lines = [
        f"images {r['images']}, cards {r['cards']}",
        f"  card precision        {r['precision'] * 100:6.2f} %",
        f"  card recall           {r['recall'] * 100:6.2f} %",
        f"  classification acc.   {r['classification_accuracy'] * 100:6.2f} %",
        f"  whole-photo exact     {r['whole_photo_exact'] * 100:6.2f} % (95 % interval {format_span(r['whole_photo_exact_ci95'])})",
        f"  latency p50/p90/p99   {r['latency_ms']['p50']} / {r['latency_ms']['p90']} / {r['latency_ms']['p99']} ms"
        + (f" (each photo the median of {r['repeat']} reads)" if r.get("repeat", 1) > 1 else ""),
    ]
    if r.get("stages_ms_p50"):
        lines.append("  stages, median        " + format_stages(r["stages_ms_p50"]))
    if r.get("box_errors"):
        b = r["box_errors"]
        lines.append(f"  box errors (std)      across {b['across']['std']:.3f} W, along {b['along']['std']:.3f} L, "
                     f"width ×{b['width']['mean']:.3f}±{b['width']['std']:.3f}, length ×{b['length']['mean']:.3f}±"
                     f"{b['length']['std']:.3f}, IoU mean {b['iou']['mean']:.2f} p10 {b['iou']['p10']:.2f}")
    if r.get("box_errors_whole"):
        w = r["box_errors_whole"]
        lines.append(f"  whole cards' boxes    width ×{w['width']['median']:.3f} (p10 {w['width']['p10']:.3f}), length "
                     f"×{w['length']['median']:.3f}, medians of {w['cards']} cards showing ≥ {WHOLE:.0%}")
    if r.get("true_corners"):
        t = r["true_corners"]
        lines.append(f"  read at true corners  {t['classification_accuracy'] * 100:6.2f} % (of the cards found: {t['mended']} "
                     f"misread mended, {t['broken']} read right broken)")
    if r.get("by_showing"):
        lines.append("  by share showing      " + "; ".join(
            f"{b['showing'][0]:.1f}–{b['showing'][1]:.1f}: recall {b['recall'] * 100:.1f} %, codes "
            f"{b['classification_accuracy'] * 100:.1f} % ({b['cards']})" for b in r["by_showing"]))
    if r.get("by_tilt"):
        lines.append("  by tilt to the photo  " + "; ".join(
            f"{b['degrees'][0]:.0f}–{b['degrees'][1]:.0f}°: recall {b['recall'] * 100:.1f} % ({b['cards']})" for b in r["by_tilt"]))
    lines.append("  wrong cards           " + format_errors(r["errors"]))
    if r["confusions"]:
        pairs = ", ".join(f"{c['true']}→{c['pred']} ×{c['count']}" for c in r["confusions"][:8])
        lines.append("  most confused (true → predicted): " + pairs)
    return "\n".join(lines)


def format_errors(e: dict[str, int]) -> str:
    """CardTally.errors in one line."""
    return (f"{e['misread']} misread (the true code 2nd in {e['misread_true_2nd']}, among the 5 readings in "
            f"{e['misread_true_in_top5']}), {e['missed']} missed ({e['missed_spare_offered']} offered as spares, "
            f"{e['missed_spare_right']} of them read right), {e['extra']} extra")


AGAIN = "#again"  # a kept recognitions file's key for a photo's second reading: the image's, and this


def _kept(again, made: dict, key: str):
    """``again`` (a photo's second reading, made only when asked for) that also keeps what it reads in ``made``."""
    def read():
        made[key] = again()
        return made[key]
    return read


def evaluate_hands(root: str | Path, model: str | Path | ModelInfo | None = None, limit: int | None = None, progress: bool = True,
                   jiang_from_photo: bool = True, recognitions: str | Path | None = None,
                   split: str | None = None, truth: bool = False) -> dict[str, Any]:
    """End to end over winning-hand photos (`changpai synth --kind hands`): share of photos whose total is
    exactly right, without and with repair, and photo-to-total latency. The context a photo cannot show
    comes from each photo's hand file, as `changpai score --context` would take it.

    ``recognitions``: a file keeping each photo's recognition (and its second reading where one was made). When it
    exists they are read from it instead
    of recognized again (the photo → hu steps after recognition are measured in seconds; the latency is
    then that of those steps alone); otherwise it is written. ``truth``: each photo's true cards instead of a
    recognition (truth_recognition): what the arrangement and the scoring alone get right."""
    from tqdm import tqdm

    from vision.table.changes import OTHER_READING
    from vision.table.context import PhotoContext, PhotoError
    from vision.table.pipeline import score_recognition
    from vision.table.second_reading import score_read_twice

    root = Path(root)
    gts = [g for g in _ground_truth(root, split) if "expected_total" in g][:limit]
    if not gts:
        raise FileNotFoundError(f"No winning-hand ground truth{_of_split(split)} in {root}/gt: make it "
                                "with `changpai synth --kind hands`.")
    if truth and (recognitions or model):
        raise ValueError("The true cards take no model and no recognitions.")
    info = None if truth else _info(model)  # read once, not for every photo
    changed = changed_settings(info) if info else {}
    # recognitions kept under other thresholds are not these: they are kept with every threshold's value
    model_path, settings = (str(info.path.resolve()), {k: getattr(info, k) for k in SETTINGS}) if info else ("", {})
    reuse = load_recognitions(recognitions, model_path, settings) if recognitions and Path(recognitions).is_file() else None
    made = {}
    tally = CardTally()  # the same recognitions, card by card
    right_plain = right_rep = repaired = errors = 0
    lat = []
    stages: dict[str, list[float]] = {}
    rows = []
    for gt in tqdm(gts, desc="eval hands", unit="img", disable=not progress):
        ctx = PhotoContext.from_hand_file(gt["hand"])
        if jiang_from_photo:
            ctx.jiang = None
        t = time.perf_counter()
        again = None  # the photo read with its own statistics, for a hand read uncleanly (vision.table.second_reading)
        if truth:
            rec = truth_recognition(gt)
        elif reuse is not None and gt["image"] in reuse:
            rec = reuse[gt["image"]]
            if info.adapt > 0:  # the second reading kept with it, else made from the photo (and kept)
                again = partial(reuse.get, gt["image"] + AGAIN) if gt["image"] + AGAIN in reuse else \
                    _kept(partial(recognize_adapted, root / gt["image"], info), made, gt["image"] + AGAIN)
        else:
            rec, again = recognize_and_again(root / gt["image"], info)
            made[gt["image"]] = rec
            again = _kept(again, made, gt["image"] + AGAIN) if again is not None else None
            for k, ms in rec.timings_ms.items():
                stages.setdefault(k, []).append(ms)
        t_score = time.perf_counter()
        error = None
        photo_exact = tally.add(gt, rec.cards, rec.spares)
        try:
            with_rep = score_read_twice(rec, ctx, again, repair_on=True)
            if "second_reading" in with_rep.timings_ms:
                stages.setdefault("second_reading", []).append(with_rep.timings_ms["second_reading"])
            total_rep, won = with_rep.result.total, with_rep.result.is_win
            n_rep = len(with_rep.repair.changes)
            flagged = any(w.startswith(OTHER_READING) for w in with_rep.warnings)
        except PhotoError as e:
            total_rep, n_rep, won, error, flagged = None, 0, False, str(e), False
            errors += 1
        lat.append((time.perf_counter() - t) * 1000)
        stages.setdefault("score", []).append((time.perf_counter() - t_score) * 1000)
        try:
            total_plain = score_recognition(rec, ctx, repair_on=False).result.total
        except PhotoError:
            total_plain = None
        exp = gt["expected_total"]
        right_plain += total_plain == exp
        right_rep += total_rep == exp
        repaired += n_rep > 0
        rows.append({"image": gt["image"], "layout": gt.get("layout"), "expected": exp, "without_repair": total_plain,
                     "with_repair": total_rep, "won": won, "repairs": n_rep,
                     "other_reading": flagged, "cards_exact": photo_exact} | ({"error": error} if error else {}) | tally.last_wrong())
    if recognitions and made:
        save_recognitions(recognitions, (reuse or {}) | made, model_path, settings)
    n = len(gts)
    return ({"settings": changed} if changed else {}) | ({
        "photos": n,
        "recognitions": ("ground truth: the photos' true cards, no network" if truth else
                         "reused: latency of the steps after recognition" if reuse and not made else "made"),
        "exact_without_repair": round(right_plain / n, 4),
        "exact_with_repair": round(right_rep / n, 4),
        "exact_without_repair_ci95": interval(right_plain, n),
        "exact_with_repair_ci95": interval(right_rep, n),
        "photos_repaired": repaired,
        "errors": errors,  # no total given: the message says what was seen
        # a total given that is not the right one: the case a table cannot tell from the number alone
        "wrong_total_with_repair": sum(r["with_repair"] is not None and r["with_repair"] != r["expected"] for r in rows),
        # ... of which read as a legal win (the rest are reported as "not a win", with group points)
        "wrong_total_on_a_win": sum(r["won"] and r["with_repair"] != r["expected"] for r in rows),
        # ... of which without a "check:" warning naming a card whose change gives another legal win
        "wrong_total_on_a_win_unflagged": sum(r["won"] and r["with_repair"] != r["expected"] and not r["other_reading"] for r in rows),
        # ... of which with no word at all that something is doubtful: no check: warning and no card repaired
        "wrong_total_on_a_win_silent": sum(r["won"] and r["with_repair"] != r["expected"] and not r["other_reading"]
                                           and not r["repairs"] for r in rows),
        "right_total_flagged": sum(r["with_repair"] == r["expected"] and r["other_reading"] for r in rows),
        "latency_ms": {"p50": round(float(np.percentile(lat, 50)), 1), "p90": round(float(np.percentile(lat, 90)), 1)},
        "stages_ms_p50": _medians(stages),
        "with_repair_by_layout": {lay: round(float(np.mean([r["with_repair"] == r["expected"] for r in rows if r["layout"] == lay])), 4)
                                  for lay in sorted({r["layout"] for r in rows if r["layout"]})},
        # what the photo → hu figures rest on: the recognitions' cards against the labelled ones
        "cards": {k: v for k, v in tally.report().items() if k != "per_image"},
        "per_photo": rows,
    })
