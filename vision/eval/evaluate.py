"""`changpai eval DIR`: recognizer figures against the ground truth of `changpai synth`.

A prediction matches a ground-truth card when their quadrilaterals overlap with IoU ≥ 0.5 (greedy, best
IoU first). Reported: card precision and recall, accuracy of the matched cards' codes, confusion pairs,
whole-photo exact rate (every card found and right, nothing extra), latency percentiles. The photo shares come
with a 95 % interval (`interval`): 200 photos pin a share of about 80 % down to some ±6 points only.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from vision.eval.recognitions import load_recognitions, save_recognitions, truth_recognition
from vision.infer.geometry import axes, box_error, order_long_axis_vertical, quad_iou
from vision.infer.model import SETTINGS, ModelInfo, changed_settings, model_info
from vision.infer.recognize import recognize
from vision.types import MIN_LABEL_VISIBLE as MIN_VISIBLE  # less visible ground-truth cards are not labelled


def match(pred: list[np.ndarray], gt: list[np.ndarray], thr: float = 0.5) -> list[tuple[int, int]]:
    pairs = []
    for i, p in enumerate(pred):
        for j, g in enumerate(gt):
            # cheap reject by centre distance
            if np.linalg.norm(p.mean(0) - g.mean(0)) > np.linalg.norm(g[2] - g[0]):
                continue
            iou = quad_iou(p, g)
            if iou >= thr:
                pairs.append((iou, i, j))
    pairs.sort(reverse=True)
    used_p, used_g, out = set(), set(), []
    for _, i, j in pairs:
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            out.append((i, j))
    return out


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


def interval(k: int, n: int, z: float = 1.96) -> list[float]:
    """Wilson score interval (95 % for z = 1.96) of a share of ``k`` out of ``n``: where the share over
    unlimited photos like these would lie. Unlike ±z·se it stays within [0, 1] at 0 and n."""
    if n <= 0:
        return [0.0, 1.0]
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [round(max(0.0, float(centre - half)), 4), round(min(1.0, float(centre + half)), 4)]


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


def _rounded(quad: np.ndarray) -> list[list[float]]:
    return [[round(float(x), 1), round(float(y), 1)] for x, y in quad]


SHOWING_BINS = (0.2, 0.3, 0.4, 0.5, 0.7, 1.01)  # shares of a card showing (gt 'visible'): the report's by_showing rows


TILT_BINS = (0, 15, 30, 45.01)  # degrees (0-45) between a card's long side and the photo's nearer axis: by_tilt rows


def tilt(quad: np.ndarray) -> float:
    """Degrees (0–45) between a card's long side and the photo's nearer axis: 0 lying along the photo's sides, 45
    diagonally."""
    v, _ = axes(order_long_axis_vertical(quad))
    a = abs(float(np.degrees(np.arctan2(v[0], v[1])))) % 90
    return min(a, 90 - a)


def _showing_bin(visible: float) -> int:
    return max(0, min(len(SHOWING_BINS) - 2, int(np.searchsorted(SHOWING_BINS, visible, side="right")) - 1))


class CardTally:
    """Card figures over photos: each photo's recognized cards matched to its labelled ones (``match``)."""

    def __init__(self) -> None:
        self.tp = self.fp = self.fn = self.correct = self.exact = 0
        self.confusion: Counter = Counter()
        self.per_class: Counter = Counter()
        self.per_class_ok: Counter = Counter()
        self.errs: dict[str, list[float]] = {"across": [], "along": [], "width": [], "length": [], "iou": []}
        self.rows: list[dict[str, Any]] = []
        self.true_corners: Counter = Counter()
        # by the share of the card showing (SHOWING_BINS): labelled, found, read right; half-covered cards in tight
        # stairs and fans are where the misses and misreads gather, which the overall figures hide
        self.showing = np.zeros((len(SHOWING_BINS) - 1, 3), np.int64)
        # by the card's tilt to the photo's axes (TILT_BINS): a detector taught upright hands misses diagonal ones
        self.tilted = np.zeros((len(TILT_BINS) - 1, 3), np.int64)

    def add(self, gt: dict[str, Any], cards: list, spares: list | None = None, read_true=None) -> bool:
        """One photo: its ground truth (`changpai synth` gt JSON) and the cards recognized (and the spares offered
        to the repairs, ``Recognition.spares``); True when exact. Its row tells each misread card (with the rank of
        the true code among its readings) and each missed one (with the spare offered on it, if any). ``read_true``
        (true quads -> codes): the matched cards read again at their true corners, counted apart (report's
        ``true_corners``: right so, and the cards that reading mends and breaks)."""
        gcards = [c for c in gt["cards"] if c["visible"] >= MIN_VISIBLE]
        pq = [np.array(c.quad, np.float32) for c in cards]
        gq = [np.array(c["quad"], np.float32) for c in gcards]
        m = match(pq, gq)
        ok = 0
        misread = []
        for i, j in m:
            g, pr = gcards[j]["code"], cards[i].code
            for k, val in (box_error(pq[i], gq[j]) | {"iou": quad_iou(pq[i], gq[j])}).items():
                self.errs[k].append(val)
            self.per_class[g] += 1
            if g == pr:
                ok += 1
                self.per_class_ok[g] += 1
            else:
                self.confusion[(g, pr)] += 1
                read = [a[0] for a in cards[i].alternatives]
                misread.append({"true": g, "read": pr, "p_read": round(cards[i].confidence, 3),
                                "rank_true": read.index(g) + 1 if g in read else None, "visible": gcards[j]["visible"],
                                "quad": _rounded(pq[i])})
        if read_true is not None and m:
            for (i, j), code in zip(m, read_true([gq[j] for _, j in m]), strict=True):
                was, now = cards[i].code == gcards[j]["code"], code == gcards[j]["code"]
                self.true_corners.update(read=1, right=now, mended=now and not was, broken=was and not now)
        found = {j for _, j in m}
        right = {j for i, j in m if cards[i].code == gcards[j]["code"]}
        for j, g in enumerate(gcards):
            self.showing[_showing_bin(g["visible"])] += (1, j in found, j in right)
            self.tilted[int(np.searchsorted(TILT_BINS, tilt(gq[j]), side="right")) - 1] += (1, j in found, j in right)
        sq = [np.array(c.quad, np.float32) for c in spares or []]
        missed = []
        for j in range(len(gq)):
            if j not in found:
                on = match(sq, [gq[j]])
                missed.append({"true": gcards[j]["code"], "visible": gcards[j]["visible"],
                               "spare": spares[on[0][0]].code if on else None, "quad": _rounded(gq[j])})
        self.tp += len(m)
        self.fp += len(pq) - len(m)
        self.fn += len(gq) - len(m)
        self.correct += ok
        is_exact = len(m) == len(gq) == len(pq) and ok == len(m)
        self.exact += is_exact
        self.rows.append({"image": gt["image"], "cards": len(gq), "found": len(m), "extra": len(pq) - len(m), "right": ok,
                          "exact": is_exact} | ({"misread": misread} if misread else {}) | ({"missed": missed} if missed else {}))
        return is_exact

    def last_wrong(self) -> dict[str, Any]:
        """The last photo's wrong cards, the kinds it has of them: ``misread``, ``missed`` (as its row), ``extra``."""
        r = self.rows[-1]
        return {k: r[k] for k in ("misread", "missed") if k in r} | ({"extra": r["extra"]} if r["extra"] else {})

    def errors(self) -> dict[str, int]:
        """What the wrong cards were: misread (the true code the 2nd reading, among the 5), missed (a spare offered
        on it: one the repairs can add; read right), extra."""
        mis = [e for r in self.rows for e in r.get("misread", [])]
        gone = [e for r in self.rows for e in r.get("missed", [])]
        return {"misread": len(mis), "misread_true_2nd": sum(e["rank_true"] == 2 for e in mis),
                "misread_true_in_top5": sum(e["rank_true"] is not None for e in mis),
                "missed": len(gone), "missed_spare_offered": sum(e["spare"] is not None for e in gone),
                "missed_spare_right": sum(e["spare"] == e["true"] for e in gone), "extra": self.fp}

    def report(self, box_errors: bool = False) -> dict[str, Any]:
        tp, fp, fn = self.tp, self.fp, self.fn
        out = {
            "cards": tp + fn,
            "precision": round(tp / max(1, tp + fp), 4),
            "recall": round(tp / max(1, tp + fn), 4),
            "classification_accuracy": round(self.correct / max(1, tp), 4),
            "whole_photo_exact": round(self.exact / max(1, len(self.rows)), 4),
            "whole_photo_exact_ci95": interval(self.exact, len(self.rows)),
        }
        if box_errors:
            # matched boxes against the true card, in its frame (shifts ÷ width or length; sizes as ratios)
            out["box_errors"] = {k: {"mean": round(float(np.mean(v)), 4), "std": round(float(np.std(v)), 4),
                                     "p10": round(float(np.percentile(v, 10)), 4), "p90": round(float(np.percentile(v, 90)), 4)}
                                 for k, v in self.errs.items() if v}
        if self.true_corners:
            t = self.true_corners
            out["true_corners"] = {"classification_accuracy": round(t["right"] / max(1, t["read"]), 4), "mended": t["mended"],
                                   "broken": t["broken"]}
        out["by_showing"] = [{"showing": [SHOWING_BINS[b], min(1.0, SHOWING_BINS[b + 1])], "cards": int(n),
                              "recall": round(f / n, 4), "classification_accuracy": round(r / max(1, f), 4)}
                             for b, (n, f, r) in enumerate(self.showing) if n]
        out["by_tilt"] = [{"degrees": [TILT_BINS[b], min(45, TILT_BINS[b + 1])], "cards": int(n), "recall": round(f / n, 4),
                           "classification_accuracy": round(r / max(1, f), 4)} for b, (n, f, r) in enumerate(self.tilted) if n]
        return out | {
            "errors": self.errors(),
            "confusions": [{"true": a, "pred": b, "count": c} for (a, b), c in self.confusion.most_common(20)],
            "per_class_accuracy": {k: round(self.per_class_ok[k] / self.per_class[k], 4) for k in sorted(self.per_class)},
            "per_image": self.rows,
        }


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


def evaluate_hands(root: str | Path, model: str | Path | ModelInfo | None = None, limit: int | None = None, progress: bool = True,
                   jiang_from_photo: bool = True, recognitions: str | Path | None = None,
                   split: str | None = None, truth: bool = False) -> dict[str, Any]:
    """End to end over winning-hand photos (`changpai synth --kind hands`): share of photos whose total is
    exactly right, without and with repair, and photo-to-total latency. The context a photo cannot show
    comes from each photo's hand file, as `changpai score --context` would take it.

    ``recognitions``: a file keeping each photo's recognition. When it exists they are read from it instead
    of recognized again (the photo → hu steps after recognition are measured in seconds; the latency is
    then that of those steps alone); otherwise it is written. ``truth``: each photo's true cards instead of a
    recognition (truth_recognition): what the arrangement and the scoring alone get right."""
    from tqdm import tqdm

    from vision.table.changes import OTHER_READING
    from vision.table.context import PhotoContext, PhotoError
    from vision.table.pipeline import score_recognition

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
        if truth:
            rec = truth_recognition(gt)
        elif reuse is not None and gt["image"] in reuse:
            rec = reuse[gt["image"]]
        else:
            rec = made[gt["image"]] = recognize(root / gt["image"], info)
            for k, ms in rec.timings_ms.items():
                stages.setdefault(k, []).append(ms)
        t_score = time.perf_counter()
        error = None
        photo_exact = tally.add(gt, rec.cards, rec.spares)
        try:
            with_rep = score_recognition(rec, ctx, repair_on=True)
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
