"""The wrong cards of a `changpai eval` report as one picture: each misread card cut upright at the box the recognizer
gave it, each missed card at its true corners, labelled with the photo, the true code, what was read and how much of
the card showed. Figures say how many cards are wrong; the sheet says why (a box off its card, a head covered
across its width, blur, a card too small), which is what the next change has to answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.infer.geometry import rectify

TILE_W, TILE_H = 64, 256  # a card cut upright, as the classifier's crop before its fold
LABEL_H = 30
PER_ROW = 12


def wrong_cards(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's misread and missed cards, each with its photo ('image'), 'true', 'read' (None: missed),
    'visible' and 'quad' (rows written before quads were kept are left out)."""
    out = []
    for row in report.get("per_image", []):
        for e in row.get("misread", []):
            if "quad" in e:
                out.append({"image": row["image"], "true": e["true"], "read": e["read"], "visible": e["visible"], "quad": e["quad"]})
        for e in row.get("missed", []):
            if "quad" in e:
                out.append({"image": row["image"], "true": e["true"], "read": None, "visible": e["visible"], "quad": e["quad"]})
    return out


def _tile(img: np.ndarray, card: dict[str, Any]) -> np.ndarray:
    crop = rectify(img, np.asarray(card["quad"], np.float32), (TILE_W, TILE_H))
    label = np.full((LABEL_H, TILE_W, 3), 255, np.uint8)
    read = card["read"] or "miss"
    colour = (0, 0, 200) if card["read"] else (160, 0, 0)
    cv2.putText(label, f"{card['true']}>{read}", (2, 12), cv2.FONT_HERSHEY_SIMPLEX, 0.36, colour, 1, cv2.LINE_AA)
    cv2.putText(label, f"{Path(card['image']).stem[-8:]} {card['visible']:.2f}", (2, 26), cv2.FONT_HERSHEY_SIMPLEX, 0.3,
                (60, 60, 60), 1, cv2.LINE_AA)
    return np.vstack([label, crop])


def write_sheet(report: dict[str, Any], root: str | Path, out: str | Path, limit: int = 240) -> int:
    """Draw the report's wrong cards (the first ``limit``; photos from ``root``, the folder evaluated) into ``out``
    (a PNG); the number of cards drawn. A photo that cannot be read is skipped."""
    cards = wrong_cards(report)[:limit]
    tiles, images = [], {}
    for c in cards:
        if c["image"] not in images:
            images[c["image"]] = cv2.imread(str(Path(root) / c["image"]))
        img = images[c["image"]]
        if img is not None:
            tiles.append(_tile(img, c))
    drawn = len(tiles)
    blank = np.full((LABEL_H + TILE_H, TILE_W, 3), 255, np.uint8)
    if not tiles:
        sheet = blank
    else:
        tiles += [blank] * (-len(tiles) % PER_ROW if len(tiles) > PER_ROW else 0)
        rows = [np.hstack(tiles[k:k + PER_ROW]) for k in range(0, len(tiles), PER_ROW)]
        rows = [cv2.copyMakeBorder(r, 0, 4, 0, 0, cv2.BORDER_CONSTANT, value=(255, 255, 255)) for r in rows]
        sheet = np.vstack(rows)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), sheet):
        raise OSError(f"Cannot write the picture {out}.")
    return drawn
