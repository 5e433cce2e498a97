"""Card figures over photos (CardTally): each photo's recognized cards matched to its labelled ones by quad IoU
(``match``), counted by the share of each card showing and by its tilt to the photo, with the boxes' errors against
the true cards, the wrong cards of each photo, and the report `changpai eval` prints and saves."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from vision.infer.geometry import axes, box_error, order_long_axis_vertical, quad_iou
from vision.types import MIN_LABEL_VISIBLE as MIN_VISIBLE  # less visible ground-truth cards are not labelled


def interval(k: int, n: int, z: float = 1.96) -> list[float]:
    """Wilson score interval (95 % for z = 1.96) of a share of ``k`` out of ``n``: where the share over
    unlimited photos like these would lie. Unlike ±z·se it stays within [0, 1] at 0 and n."""
    if n <= 0:
        return [0.0, 1.0]
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [round(max(0.0, float(centre - half)), 4), round(min(1.0, float(centre + half)), 4)]


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


def _rounded(quad: np.ndarray) -> list[list[float]]:
    return [[round(float(x), 1), round(float(y), 1)] for x, y in quad]


SHOWING_BINS = (0.2, 0.3, 0.4, 0.5, 0.7, 1.01)  # shares of a card showing (gt 'visible'): the report's by_showing rows


WHOLE = 0.9  # a card showing this share or more counts as whole: its box errors are the box's own, not the cover's

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
        # the same of whole cards only (WHOLE): a covered card's box may rightly end where the cover starts, a whole
        # card's box that ends inside the card took a rim or a frame for the card's edge
        self.whole_errs: dict[str, list[float]] = {"width": [], "length": []}
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
            err = box_error(pq[i], gq[j])
            for k, val in (err | {"iou": quad_iou(pq[i], gq[j])}).items():
                self.errs[k].append(val)
            if gcards[j]["visible"] >= WHOLE:
                for k in self.whole_errs:
                    self.whole_errs[k].append(err[k])
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
            if self.whole_errs["width"]:
                w = self.whole_errs
                out["box_errors_whole"] = {"cards": len(w["width"])} | {
                    k: {"median": round(float(np.median(v)), 4), "p10": round(float(np.percentile(v, 10)), 4),
                        "p90": round(float(np.percentile(v, 90)), 4)} for k, v in w.items()}
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
