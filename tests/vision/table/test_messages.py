"""What photo → hu tells the table is said in the page's Chinese, every message."""

import io

import numpy as np
import pytest
from PIL import Image

from tests.vision.table.photo_helpers import _ctx, _recognition_from_gt
from vision.infer.imageio import ImageError, load_image
from vision.table.context import PhotoContext, PhotoError
from vision.table.pipeline import score_recognition
from vision.types import Card, Recognition


def test_the_pages_chinese_says_every_message_of_photo_to_hu(hand_scenes):
    """Warnings, defaults to confirm and errors are English strings that carry a key and values (scoring.messages);
    the Chinese page says each one from app/locales/zh.json, card codes by their names."""
    import re
    import string
    from collections import Counter
    from pathlib import Path

    from app.i18n import _table, say
    from scoring.cards import NAMES_ZH
    from scoring.messages import Msg

    root = Path(__file__).resolve().parents[3]
    files = [*sorted((root / "vision" / "table").glob("*.py")), *(root / f for f in ("vision/infer/imageio.py", "scoring/hand.py",
                                                                                     "scoring/cards.py"))]
    src = "".join(f.read_text() for f in files)
    keys = set(re.findall(r'Msg\(\s*"(\w+)"', src)) | set(re.findall(r'"(jiang_missing\w*)"', src))
    keys |= {"meld_pong", "meld_exposed_kong", "meld_concealed_kong"}  # Msg(f"meld_{how}", …)
    assert len(keys) >= 40 and all(f"msg.{k}" in _table("zh") for k in keys)

    said: dict[str, Msg] = {}

    def keep(*msgs):
        for m in msgs:
            assert isinstance(m, Msg), m
            said[m.key] = m

    gt = hand_scenes[0]
    ctx = _ctx(gt)
    ctx.win, ctx.self_drawn = None, False
    ps = score_recognition(_recognition_from_gt(gt), ctx)
    keep(*ps.warnings, *ps.defaults)
    for rec, ctx in ((Recognition(100, 100, []), _ctx(gt)),
                     (Recognition(200, 200, _recognition_from_gt(gt).cards[:3]), PhotoContext(jiang=["2t", "3w"]))):
        with pytest.raises(PhotoError) as e:
            score_recognition(rec, ctx)
        keep(e.value.args[0])
    rec = _recognition_from_gt(gt)
    rec.cards = [c for c, g in zip(rec.cards, gt["cards"], strict=True) if g["group"] != "jiang"]
    with pytest.raises(PhotoError) as e:
        score_recognition(rec, _ctx(gt))
    keep(e.value.args[0])
    for gt in hand_scenes:  # a card missed: no win without repair, the spare added with it
        rec = _recognition_from_gt(gt)
        i = next(i for i, g in enumerate(gt["cards"]) if g["group"] == "hand")
        missed = rec.cards.pop(i)
        keep(*score_recognition(rec, _ctx(gt), repair_on=False).warnings)
        rec.spares = [Card(missed.code, 0.9, missed.alternatives, missed.quad, det_score=0.3)]
        keep(*score_recognition(rec, _ctx(gt)).warnings)
        hand = [k for k, g in enumerate(gt["cards"]) if g["group"] == "hand"]
        for code in [c for c, n in Counter(gt["cards"][k]["code"] for k in hand).items() if n == 3]:
            rec = _recognition_from_gt(gt)
            q = np.array(next(rec.cards[k].quad for k in reversed(hand) if rec.cards[k].code == code))
            rec.spares = [Card(code, 0.95, [(code, 0.95)], (q + (q[1] - q[0]) * 0.5).tolist(), det_score=0.4)]
            keep(*score_recognition(rec, _ctx(gt)).warnings)
    tiny = io.BytesIO()
    Image.new("RGB", (8, 8)).save(tiny, "JPEG")
    for bad in (b"", b"not an image", tiny.getvalue()):
        with pytest.raises(ImageError) as e:
            load_image(bad)
        keep(e.value.args[0])
    from scoring import HandError, build_hand

    for kw in (dict(concealed="123t xx"), dict(concealed="1t 1t 1t 1t 1t"), dict(concealed="123t", jiang=["2t"]),
               dict(concealed=""), dict(concealed="123t", events=["gang_kai"])):
        with pytest.raises(HandError) as e:
            build_hand(**({"jiang": ["2t", "3w"]} | kw))
        keep(e.value.args[0])
    inner = said["too_many"]
    keep(Msg("cannot_be_hand", f"The cards seen cannot be a hand: {inner}", error=inner))
    assert say(said["cannot_be_hand"], "zh").endswith(say(inner, "zh"))  # the hand error inside, in Chinese too
    assert {"unknown_card", "jiang_count", "hand_empty", "gang_kai_needs_win", "image_empty", "image_unreadable",
            "image_too_small", "no_cards", "too_few", "jiang_missing", "not_win",
            "recount_added", "check_with",
            "jiang_from_apart", "no_win_card", "discard"} <= set(said)
    for m in said.values():
        zh = say(m, "zh")
        fields = {f for _, f, _, _ in string.Formatter().parse(_table("zh")[f"msg.{m.key}"]) if f}
        assert fields <= set(m.values), m.key
        assert zh != str(m) and "{" not in zh and re.search(r"[\u4e00-\u9fff]", zh)
        codes = [m.values[k] for k in ("code", "old", "new") if k in m.values and m.key != "cannot_be_hand"]
        codes += [c for k in ("codes", "apart", "given") for c in m.values.get(k, [])] + [b[0] for b in m.values.get("boxes", [])]
        assert all(NAMES_ZH[c] in zh for c in codes), (m.key, zh)
        assert say(m, "en") == str(m)
