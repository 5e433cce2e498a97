"""Fonts shipped under datasets/fonts (small subsets, licences beside them)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

from vision.resources import data_root

FONT_DIR = data_root("datasets/fonts")

# Fonts the training styles draw from; the held-out style uses HOLDOUT_FONTS only.
TRAIN_FONTS = ("NotoSansCJKsc-Regular-subset.otf", "NotoSerifCJKsc-Bold-subset.otf", "ukai-subset.ttf",
               "wqy-zenhei-subset.ttf")
HOLDOUT_FONTS = ("LXGWWenKai-Regular-subset.ttf",)
UI_FONT = "NotoSansCJKsc-Regular-subset.otf"


def font_path(name: str) -> Path:
    p = FONT_DIR / name
    if not p.is_file():
        raise FileNotFoundError(f"Font {name} is missing from {FONT_DIR}; reinstall changpai from its source tree.")
    return p


@lru_cache(maxsize=256)
def font(name: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(font_path(name)), size)
