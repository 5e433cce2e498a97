"""How often a calibration photo is split into its faces and named right without knowing the deck: rendered
calibration photos (vision.deck.photo) of every deck family and the renderer's own
style, on the renderer's tables, read by the finder alone (vision.deck.find: what any card is) and with the
detector's boxes as the second opinion (vision.deck.calibrate.name_faces, what `changpai calibrate` does).

A photo counts as right when every face is named with its card's code and outlined on it (IoU > 0.8 with the
card's true outline); as loose when every name is right but some outline is not that close (the face then carries a
strip of table, or misses a strip of card); as wrong when a card is missed or named as another; a photo refused counts
as refused, with the sentence the player would read."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np

FAMILIES = ("classic", "woodblock", "dotted", "boxed", "sideways", "formal", "assorted", "heroes")
TIGHT_IOU = 0.8  # a face outlined on its card


def verdict(faces: list, gt: dict) -> str:
    """right, loose or wrong (above), and the least outline IoU."""
    from vision.infer.geometry import quad_iou

    if len(faces) != len(gt["cards"]):
        return "wrong"
    loose = False
    for f in faces:
        best = max(gt["cards"], key=lambda c: quad_iou(f.quad, np.array(c["quad"], np.float32)))
        if best["code"] != f.code:
            return "wrong"
        loose |= quad_iou(f.quad, np.array(best["quad"], np.float32)) <= TIGHT_IOU
    return "loose" if loose else "right"


def _outcome(name, img: np.ndarray, gt: dict) -> dict[str, Any]:
    from vision.deck.name import CalibrationError

    try:
        faces = name(img)[0]
    except CalibrationError as e:
        return {"outcome": "refused", "said": str(e)}
    return {"outcome": verdict(faces, gt), "faces": len(faces)}


def measure_faces(families: tuple[str, ...] = FAMILIES, seeds: range = range(10), base: str | Path | None = None,
                  second_opinion: bool = True, progress: bool = True) -> dict[str, Any]:
    """Per photo and in all: named right by the finder alone, and (``second_opinion``) as calibrate names them."""
    from tqdm import tqdm

    from vision.deck.calibrate import _named, name_faces
    from vision.deck.find import find_cards
    from vision.deck.photo import render_calibration_photo
    from vision.synth.decks import deck_style

    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise ValueError(f"Unknown family {unknown[0]!r}; families are {', '.join(FAMILIES)}.")
    photos = []
    jobs = [(f, s) for f in families for s in seeds]
    for family, seed in tqdm(jobs, desc="calibration photos", unit="photo", disable=not progress):
        img, gt = render_calibration_photo(deck_style(random.Random(seed), family), seed)
        row = {"family": family, "seed": seed, "finder": _outcome(lambda im: _named(im, find_cards(im), False), img, gt)}
        if second_opinion:
            row["calibrate"] = _outcome(lambda im: name_faces(im, base=base), img, gt)
        photos.append(row)
    out: dict[str, Any] = {"photos": len(photos), "families": list(families), "seeds": [seeds.start, seeds.stop]}
    for who in ("finder", "calibrate") if second_opinion else ("finder",):
        right = sum(p[who]["outcome"] == "right" for p in photos)
        out[who] = {"right": right, "refused": sum(p[who]["outcome"] == "refused" for p in photos),
                    "loose": sum(p[who]["outcome"] == "loose" for p in photos),
                    "wrong": sum(p[who]["outcome"] == "wrong" for p in photos),
                    "by_family": {f: sum(p[who]["outcome"] == "right" for p in photos if p["family"] == f) for f in families}}
    out["per_photo"] = photos
    return out
