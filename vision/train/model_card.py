"""The model card (MODEL_CARD.md) of a released model, written from its model.json: what each net is, how it was
taught, the thresholds it runs with and what was measured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scoring.cards import CODES
from vision.infer.model import NOT_A_CARD, NOT_A_CARD_P


def write_card(dest: Path, meta: dict[str, Any]) -> Path:
    lines = [f"# Model card: {dest.name}", "",
             "Two-stage long-card recognizer for changpai (DESIGN.md): a YOLO11n-OBB detector that finds every card",
             "as an oriented box, and a YOLO11n-cls classifier that reads each card from its rectified, folded crop.",
             "Both were trained from their YAMLs (no pretrained weights) on synthetic photos from `changpai synth`,",
             "on CPU (or a lent GPU where a recipe says `--device 0`), and run with onnxruntime on CPU (`detector.onnx`,",
             "`classifier.onnx`); the `.pt` files resume training.", ""]
    if meta.get("version_note"):  # what this release changed, in a line
        lines += [meta["version_note"] + ".", ""]
    for part in ("detector", "classifier"):
        d = meta.get(part)
        if not d:
            continue
        lines += [f"## {part}", ""]
        for k in ("recipe", "note", "trained_from", "data", "epochs", "imgsz", "batch", "hours", "released", "confidence_calibration"):
            if d.get(k) is not None:
                lines.append(f"- {k}: {d[k]}")
        res = d.get("results", {}).get("last_epoch")
        if res:
            keys = [k for k in res if k.startswith("metrics/")]
            lines.append("- last epoch (validation on the synthetic val split): " +
                         ", ".join(f"{k.split('/', 1)[1]} {float(res[k]):.4f}" for k in keys))
        lines.append("")
    second = meta.get("second")
    if second:  # vision.infer.model.SecondOpinion
        lines += ["## second classifier", "",
                  f"- `classifier_b.onnx`, the classifier of {second.get('from')}: asked about every crop the classifier "
                  f"reads with less than {second.get('below')}, the two networks' probabilities multiplied (geometric "
                  "mean); the other crops keep the first network's reading (vision.infer.model.SecondOpinion)"]
        lines += [f"- {k}: {second[k]}" for k in ("trained_from", "recipe", "note", "released") if second.get(k)] + [""]
    if "conf" in meta:
        lines += ["## Thresholds", "",
                  f"- detector input {meta.get('det_imgsz')} px, confidence {meta['conf']}, NMS IoU {meta.get('iou')}"
                  + (f"; second look: boxes scored ≥ {meta['rescue_conf']} kept when the classifier gives ≥ {meta['rescue_cls']}"
                     if meta.get("rescue_conf", 1.0) < meta["conf"] else ""),
                  f"- {meta.get('thresholds_note', '')}"]
        if meta.get("recover", 2.0) <= 1:
            r = meta.get("recover_net", {})
            reads = "; it reads the classifier's readings of the box as well (vision.infer.recover.readings)" if r.get("readings") else ""
            lines.append(f"- recover net (`recover.onnx`, vision.infer.recover): a box NMS dropped becomes a card when the net gives it "
                         f"≥ {meta['recover']}{reads}" + (" (not with settled boxes, below: they need no recovering)"
                                                          if meta.get("settle") else "")
                         + "".join(f"; {r[k]}" for k in ("recipe", "note") if r.get(k)))
            pn = meta.get("prune_net")
            if meta.get("prune", 0.0) > 0:
                lines.append(f"- pruning (vision.infer.recover.prune): a kept box {'the prune net' if pn else 'the same net'}, judging "
                             f"it as if NMS had dropped it, gives less than {meta['prune']} is left out (offered to the repairs "
                             "as a spare)" + (f"; {(pn or r)['prune_note']}" if (pn or r).get("prune_note") else ""))
            if pn and pn.get("distilled"):
                t = pn.get("teacher", {})
                lines.append(f"- prune net (`prune.onnx`): prunes the kept boxes and judges the spares; a slimmer net "
                             f"(vision.train.prune_distil) taught the logits of the prune net of {pn.get('from')}"
                             + "".join(f"; {pn[k]}" for k in ("recipe", "note") if pn.get(k)))
                if pn.get("last_epoch"):
                    lines.append("- prune net, last epoch (its val views, against its teacher): " +
                                 ", ".join(f"{k} {v}" for k, v in pn["last_epoch"].items()))
                lines.append(f"- the teacher: the recover net of {t.get('from')}"
                             + "".join(f"; {t[k]}" for k in ("recipe", "note") if t.get(k)))
            elif pn and pn.get("taught"):
                lines.append(f"- prune net (`prune.onnx`): prunes the kept boxes and judges the spares; a slim net "
                             f"(vision.train.prune_truth) taught the {pn['taught']}"
                             + "".join(f"; {pn[k]}" for k in ("recipe", "note") if pn.get(k)))
                if pn.get("last_epoch"):
                    lines.append("- prune net, last epoch (its val views, against the ground truth): " +
                                 ", ".join(f"{k} {v}" for k, v in pn["last_epoch"].items()))
            elif pn:
                lines.append(f"- prune net (`prune.onnx`): prunes the kept boxes and judges the spares; the recover net of "
                             f"{pn.get('from')}" + "".join(f"; {pn[k]}" for k in ("recipe", "note") if pn.get(k)))
            if r.get("last_epoch"):
                lines.append("- recover net, last epoch (its val candidates): " +
                             ", ".join(f"{k} {v}" for k, v in r["last_epoch"].items()))
        if meta.get("refine") or meta.get("settle"):
            f = meta.get("refine_net", {})
            lines.append("- refine net (`refine.onnx`, vision.infer.refine): tells how a card lies in its box; " +
                         ("it settles every box (below)" if meta.get("settle") else
                          f"a card read with less than {meta['refine']} that it moves more than 0.04 of a width across or "
                          "turns more than 1° is read again at the corners it gives, the two readings averaged (the box "
                          "stays the detector's)") + "".join(f"; {f[k]}" for k in ("recipe", "note") if f.get(k)))
            if f.get("last_epoch"):
                lines.append("- refine net, last epoch (its val views; mean errors of the boxes and of the refined corners): " +
                             ", ".join(f"{k} {v}" for k, v in f["last_epoch"].items()))
        if meta.get("settle"):
            lines.append(f"- settled boxes (recognize._settled): every box scored ≥ 0.3 is moved onto its card by the refine "
                         f"net (twice) and NMS at IoU {meta['settle']} runs over the moved boxes, instead of the detector's NMS "
                         "and the recover net; a box is read where it was moved, and at the detector's box too when that "
                         "reading doubts it is a face (either seeing no face drops it) or is below "
                         f"{meta.get('refine', 0.0)} (the two readings then averaged)")
        if meta.get("one_way", 2.0) <= 1:
            lines.append(f"- one-way reads (recognize.classify): a crop the classifier reads with ≥ {meta['one_way']} one way round "
                         "is not read the other way too" + (f"; {meta['one_way_note']}" if meta.get("one_way_note") else ""))
        if meta.get("mirror"):
            lines.append("- mirrored look: the final detector pass also runs on the mirrored input, each box averaged with "
                         "its mirror's (recognize._fuse)" + (f"; {meta['mirror_note']}" if meta.get("mirror_note") else ""))
        lines.append("")
    if meta.get("evaluation"):
        lines += ["## Measured (changpai eval)", "", "```json", json.dumps(meta["evaluation"], indent=1, ensure_ascii=False),
                  "```", ""]
    lines += ["## Limits", "",
              "Trained on rendered decks only: real decks printed differently may need `changpai calibrate`.",
              "Class order: " + " ".join(meta.get("names", CODES)) + "."]
    if NOT_A_CARD in meta.get("names", ()):
        lines.append(f"The classifier's class `{NOT_A_CARD}` is for boxes that show no card face (objects on the table, "
                     "face-down cards, bare table, the detector's false alarms): boxes it finds at least "
                     f"{NOT_A_CARD_P} likely are dropped.")
    p = dest / "MODEL_CARD.md"
    p.write_text("\n".join(lines) + "\n")
    return p
