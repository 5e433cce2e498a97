"""Annotated photos: each card's oriented box and its Chinese name (supervision), readable on a phone."""

from __future__ import annotations

import numpy as np

from .fonts import UI_FONT, font_path
from .recognize import Recognition


def annotate(img: np.ndarray, rec: Recognition, labels: list[str] | None = None, groups: list[int] | None = None) -> np.ndarray:
    """Draw every recognized card; ``labels`` override the default ``name_zh confidence``;
    ``groups`` colour cards by meld index."""
    import supervision as sv

    if not rec.cards:
        return img.copy()
    quads = np.array([c.quad for c in rec.cards], np.float32)
    xyxy = np.concatenate([quads.min(1), quads.max(1)], axis=1)
    cls = np.array(groups if groups is not None else [0] * len(rec.cards), int)
    det = sv.Detections(xyxy=xyxy, class_id=cls, confidence=np.array([c.confidence for c in rec.cards], np.float32),
                        data={"xyxyxyxy": quads})
    card_w = float(np.median(np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1)))
    scale = max(img.shape[:2]) / 1000
    thickness = max(2, int(round(2 * scale)))
    size = int(max(14, min(card_w * 0.45, 22 * scale)))
    palette = sv.ColorPalette.DEFAULT
    out = sv.OrientedBoxAnnotator(color=palette, thickness=thickness).annotate(img.copy(), det)
    if labels is None:
        labels = [c.label for c in rec.cards]
    out = sv.RichLabelAnnotator(color=palette, font_path=str(font_path(UI_FONT)), font_size=size, text_padding=max(3, size // 4),
                                text_position=sv.Position.CENTER, smart_position=True).annotate(out, det, labels)
    return out
