"""R10 bad input: one clear sentence naming the card and the limit, never a traceback."""

import json

import cv2
import pytest

from scoring import HandError, build_hand, hand_from_dict, parse_cards


@pytest.mark.parametrize("kwargs,needle", [
    (dict(concealed="1t 1t 1t 1t 1t", jiang="2t 3w"), "Too many 1t: 5"),
    (dict(concealed="2t 2t 2t 2t", jiang="2t 3w"), "1 flipped"),
    (dict(concealed="1x 2t", jiang="2t 3w"), "Unknown card '1x'"),
    (dict(concealed="", jiang="2t 3w"), "empty"),
    (dict(concealed="1t", jiang="2t 3w", declared=[("555b 6b", "pong")]), "not made of equal cards"),
    (dict(concealed="1t", jiang="2t 3w", declared=[("55b", "pong")]), "A group of 5b made as pong has 3 cards"),
    (dict(concealed="1t", jiang="2t 3w", declared=[("555b", "bogus")]), "one of pong"),
    (dict(concealed="1t", jiang="2t 3w", declared=[("666w", "exposed_kong")]), "6w made as exposed_kong has 4 cards (6w flipped as 将: 0)"),
    (dict(concealed="1t", jiang="2t"), "flips 2"),
    (dict(concealed="1t", jiang="2t 3w", ruleset="nope"), "Unknown ruleset"),
    (dict(concealed="1t 9b", jiang="2t 3w", win="8b"), "winning card 8b is not among"),
    (dict(concealed="1t fu", jiang="2t 3w"), "not in the nantong-double deck"),
    (dict(concealed="1t", jiang="2t 3w", events=["moon"]), "Unknown event"),
    (dict(concealed="1t", jiang="2t 3w", events=["gang_kai"], is_win=True), "needs the winning card"),
    (dict(concealed="1t", jiang="2t 3w", options={"colour": 1}), "Unknown ruleset option"),
    (dict(concealed="1t", jiang="2t 3w", options={"discard_triplet": "maybe"}), "must be one of"),
    (dict(concealed="1t", jiang="2t 3w", declared=[("2t 2t 2t 2t", "exposed_kong")]), "Too many 2t"),
    (dict(concealed="1t", jiang="4b 4b", declared=[("4b 4b 4b", "concealed_kong")]), "(4b flipped as 将: 2)"),
    (dict(concealed="1t", jiang="2t 3w", from_deal="hh"), "held from the deal"),
])
def test_bad_hand(kwargs, needle):
    with pytest.raises(HandError) as e:
        build_hand(**kwargs)
    msg = str(e.value)
    assert needle in msg
    assert "\n" not in msg


def test_chinese_names_parse():
    assert parse_cards("一条 九丙 千字 红花 白花 三万") == ["1t", "9b", "qz", "hh", "bh", "3w"]
    assert parse_cards("一条二条三条") == ["1t", "2t", "3t"]
    assert parse_cards("五饼 五筒") == ["5b", "5b"]
    assert parse_cards("123t,555b") == ["1t", "2t", "3t", "5b", "5b", "5b"]


@pytest.mark.parametrize("doc,needle", [
    ([], "JSON object"),
    ({"jiang": ["2t", "3w"], "concealed": ["1t"], "colour": "red"}, "Unknown field"),
    ({"jiang": ["2t", "3w"], "concealed": ["1t"], "declared": ["555b"]}, "Declared group 1 must be an object"),
    ({"jiang": ["2t", "3w"], "concealed": ["1t"], "win": "1t"}, "The hand's 'win' must be null or an object"),
    ({"jiang": ["2t", "3w"], "concealed": [5]}, "The hand's 'concealed' must be cards"),
])
def test_bad_hand_file(doc, needle):
    with pytest.raises(HandError) as e:
        hand_from_dict(doc)
    assert needle in str(e.value)


def test_not_a_win_is_not_an_error():
    h = build_hand(concealed="1t 2t 3t 5b 5b", jiang="2t 3w", win="5b")
    from scoring import score_hand

    res = score_hand(h)
    assert not res.is_win and res.total == 0
    assert any("do not form a winning hand" in n for n in res.notes)


def test_small_ones_are_one_sentence_before_any_photo_is_read(tmp_path, capsys):
    from app.cli import main

    with pytest.raises(SystemExit) as e:
        main(["app", "--port", "70000"])
    assert e.value.code == 2 and "from 1 to 65535" in capsys.readouterr().err
    assert main(["score-hand", "x" * 100_000]) == 2
    err = capsys.readouterr().err
    assert "Unknown card 'xxx" in err and len(err) < 300
    ctx = tmp_path / "ctx.json"
    ctx.write_text(json.dumps({"jiang": ["2t", "3w"], "concealed": [], "events": "tian_cheng"}))
    missing = str(tmp_path / "no-photo.jpg")  # the context is checked first: the photo is never looked for
    assert main(["score", missing, "--context", str(ctx)]) == 2
    assert "'events' must be a list of event names" in capsys.readouterr().err
    ctx.write_text(json.dumps({"jiang": ["2t", "3w"], "concealed": [], "ruleset": "nowhere"}))
    assert main(["score", missing, "--context", str(ctx)]) == 2
    assert "nowhere" in capsys.readouterr().err
    for cmd in ("score", "recognize"):
        assert main([cmd, missing, "--annotate", str(tmp_path / "out.gifx")]) == 2
        assert "name a .png or .jpg file" in capsys.readouterr().err


def test_a_long_thin_image_is_one_sentence():
    import numpy as np

    from vision.infer.imageio import ImageError, load_image

    ok, buf = cv2.imencode(".png", np.full((32, 100_000, 3), 200, np.uint8))
    with pytest.raises(ImageError, match="too long and thin"):
        load_image(buf.tobytes())


def test_a_command_of_an_extra_the_install_lacks_is_one_sentence(tmp_path, capsys, monkeypatch):
    import sys

    from app.cli import main

    (tmp_path / "d.yaml").write_text("train: images\n")
    monkeypatch.setitem(sys.modules, "ultralytics", None)  # as in the player's install, without the train extra
    assert main(["train", "detect", "--data", str(tmp_path / "d.yaml")]) == 2
    err = capsys.readouterr().err
    assert "needs the train extra" in err and err.count("\n") == 1
