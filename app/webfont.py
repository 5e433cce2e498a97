"""The page's own CJK font: a subset of Noto Sans CJK SC holding every character the page can show, served
with the page (app/static) so the breakdown reads right on any device, fonts installed or not.

Rebuild after adding text: ``python -m app.webfont /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc``
(Debian package fonts-noto-cjk; SIL Open Font License 1.1, datasets/fonts/licences)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FONT = ROOT / "app" / "static" / "changpai-cjk.otf"
FAMILY = "changpai-cjk"
# where the page's words come from: its locales and code, the rules engine's labels, the photo pipeline's messages
SOURCES = ("app/locales/*.json", "app/*.py", "scoring/*.py", "vision/table/*.py", "datasets/fonts/CHARSET.txt")


# the blocks the font serves: punctuation, CJK symbols, kana, CJK ideographs, full-width forms (marks such as
# ✗ and emoji come from the device's symbol fonts)
BLOCKS = ((0x2000, 0x206F), (0x3000, 0x30FF), (0x4E00, 0x9FFF), (0xFF00, 0xFFEF))


def page_chars() -> str:
    """Every character of those blocks in the page's sources (a superset of what it shows)."""
    chars: set[str] = set()
    for pattern in SOURCES:
        for p in ROOT.glob(pattern):
            chars |= {c for c in p.read_text(encoding="utf-8") if any(lo <= ord(c) <= hi for lo, hi in BLOCKS)}
    return "".join(sorted(chars))


def build(source: str, font_number: int = 2) -> Path:
    """Subset ``source`` (a Noto Sans CJK collection; face 2 is SC) to the page's characters."""
    from fontTools import subset

    FONT.parent.mkdir(parents=True, exist_ok=True)
    subset.main([source, f"--font-number={font_number}", f"--text={page_chars()}", f"--output-file={FONT}",
                 "--layout-features=*", "--no-hinting", "--desubroutinize"])
    return FONT


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"))
