"""The recognizer's inference path (onnxruntime only) on committed sample photos."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from app.cli import main
from scoring.cards import CODES
from tests.conftest import ROOT, SAMPLES, requires_model

pytestmark = requires_model


def _gt(i):
    return json.loads((SAMPLES / f"hand_{i}.json").read_text())


def test_sample_photo_recognized(capsys):
    from vision.eval.tally import match
    from vision.infer.recognize import recognize

    gt = _gt(5)
    rec = recognize(SAMPLES / "hand_5.jpg")
    gq = [np.array(c["quad"], np.float32) for c in gt["cards"]]
    pq = [np.array(c.quad, np.float32) for c in rec.cards]
    m = match(pq, gq)
    assert len(m) == len(gq) == len(pq)
    assert all(rec.cards[i].code == gt["cards"][j]["code"] for i, j in m)


def test_large_jpeg_read_from_a_smaller_decode_gives_corners_in_its_own_pixels(tmp_path):
    import cv2

    from vision.eval.tally import match
    from vision.infer.imageio import READ_SIDE, read_photo
    from vision.infer.recognize import recognize

    # the sample photo 2.6 times as large (3328 px long): decoded at half size, its long side ≥ READ_SIDE
    img = cv2.imread(str(SAMPLES / "hand_5.jpg"))
    big = cv2.resize(img, None, fx=2.6, fy=2.6, interpolation=cv2.INTER_CUBIC)
    path = tmp_path / "big.jpg"
    cv2.imwrite(str(path), big, [cv2.IMWRITE_JPEG_QUALITY, 92])
    small, scale = read_photo(path, min_side=READ_SIDE)
    assert scale == 2.0 and small.shape[:2] == (big.shape[0] // 2, big.shape[1] // 2) and max(small.shape) >= READ_SIDE
    assert read_photo(path)[1] == 1.0 and read_photo(SAMPLES / "hand_5.jpg", min_side=READ_SIDE)[1] == 1.0
    png = tmp_path / "big.png"
    cv2.imwrite(str(png), big)
    shrunk, scale = read_photo(png, min_side=READ_SIDE)  # another format is decoded whole, then shrunk the same way
    assert scale == 2.0 and shrunk.shape == small.shape
    gt = _gt(5)
    gq = [np.array(c["quad"], np.float32) * 2.6 for c in gt["cards"]]
    for photo in (path, png):
        rec = recognize(photo)
        assert (rec.width, rec.height) == (big.shape[1], big.shape[0])
        m = match([np.array(c.quad, np.float32) for c in rec.cards], gq)
        assert len(m) == len(gq) == len(rec.cards)
        assert all(rec.cards[i].code == gt["cards"][j]["code"] for i, j in m)


def test_recognize_cli_json(capsys):
    assert main(["recognize", str(SAMPLES / "hand_5.jpg"), "--json"]) == 0
    cards = json.loads(capsys.readouterr().out)
    c = cards[0]
    assert set(c) >= {"code", "confidence", "alternatives", "quad"} and len(c["quad"]) == 4
    assert abs(sum(p for _, p in c["alternatives"]) - 1) < 0.2


def test_onnx_path_never_imports_torch():
    code = ("import sys; from vision.infer.recognize import recognize; "
            f"r = recognize({str(SAMPLES / 'hand_5.jpg')!r}); "
            "bad = [m for m in ('torch', 'ultralytics', 'torchvision') if m in sys.modules]; "
            "print(len(r.cards), bad); sys.exit(1 if bad or not r.cards else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr


def test_photo_without_cards_is_empty():
    from vision.infer.recognize import recognize_array

    rng = np.random.default_rng(0)
    table = (rng.normal(90, 20, (960, 1280, 3))).clip(0, 255).astype(np.uint8)
    assert recognize_array(table).cards == []


@pytest.mark.parametrize("content,needle", [(b"", "empty"), (b"GIF89a garbage", "not an image")])
def test_cli_bad_files(tmp_path, capsys, content, needle):
    p = tmp_path / "x.jpg"
    p.write_bytes(content)
    assert main(["recognize", str(p)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize("damage,needle", [
    ({"model.json": "{bad"}, "model.json that cannot be read"),
    ({"model.json": '{"names": 5}'}, "model.json that cannot be read"),
    ({"model.json": '{"names": ["1t"]}'}, "35 card codes"),
    ({"detector.onnx": "garbage"}, "detector.onnx cannot be loaded"),
])
def test_a_damaged_model_folder_is_one_sentence_in_either_language(tmp_path, capsys, damage, needle):
    import shutil

    import vision.infer.model as M
    import vision.infer.recognize as R
    from app.i18n import say

    model = tmp_path / "m"
    shutil.copytree(M.DEFAULT_MODEL, model)
    for name, text in damage.items():
        (model / name).write_text(text)
    assert main(["recognize", str(SAMPLES / "hand_1.jpg"), "--model", str(model)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
    with pytest.raises(M.ModelError) as e:
        R.recognize_array(np.full((64, 64, 3), 128, np.uint8), model)
    zh = say(e.value, "zh")
    assert zh != str(e.value) and str(model) in zh  # the page says it in Chinese, naming the folder


@pytest.mark.parametrize("n", [5, 7])
def test_score_photo_cli(capsys, n):
    gt = _gt(n)
    code = main(["score", str(SAMPLES / f"hand_{n}.jpg"), "--context", str(SAMPLES / f"hand_{n}.json"), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["total"] == gt["expected_total"] and d["is_win"]


def test_score_photo_cli_takes_ruleset_options(capsys):
    """--option KEY=VALUE over the context's, as score-hand takes them: hand_5 (nantong-single) holds no extra, so with
    R7's 喜儿 its total doubles (穷狠); an option of another ruleset, or one without a value, is one sentence."""
    args = ["score", str(SAMPLES / "hand_5.jpg"), "--context", str(SAMPLES / "hand_5.json"), "--json"]
    assert main(args + ["--option", "xi_er=on"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 2 * _gt(5)["expected_total"]
    for bad, needle in (("wild_groups=no_points", "belongs to the rugao ruleset"), ("xi_er", "KEY=VALUE")):
        assert main(args + ["--option", bad]) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1


def test_a_heic_photo_turned_by_its_exif_is_scored_as_the_jpeg(tmp_path, capsys):
    """An iPhone's HEIC, held upright (EXIF orientation 6, stored turned): read as the user sees it, its cards'
    corners in those pixels, and scored as the same photo in JPEG."""
    heif = pytest.importorskip("pillow_heif")
    from PIL import Image

    from vision.infer.imageio import load_image
    from vision.infer.recognize import recognize

    jpeg = SAMPLES / "hand_5.jpg"
    im = Image.open(jpeg)
    ex = Image.Exif()
    ex[0x0112] = 6  # the sensor's picture turned 90° clockwise to show it
    heic = tmp_path / "hand_5.heic"
    heif.from_pillow(im.transpose(Image.Transpose.ROTATE_90)).save(heic, exif=ex.tobytes(), quality=92)
    assert load_image(heic).shape[:2] == (im.height, im.width)
    a, b = recognize(jpeg), recognize(heic)
    assert (b.width, b.height) == (a.width, a.height)
    assert sorted(c.code for c in b.cards) == sorted(c.code for c in a.cards)
    assert main(["score", str(heic), "--context", str(SAMPLES / "hand_5.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == _gt(5)["expected_total"]


@pytest.mark.parametrize("mode", ["RGBA", "L"])
def test_a_heic_with_alpha_or_in_grey_is_read_as_colour(mode):
    heif = pytest.importorskip("pillow_heif")
    import io

    from PIL import Image

    from vision.infer.imageio import load_image

    im = Image.open(SAMPLES / "hand_1.jpg")
    buf = io.BytesIO()
    heif.from_pillow(im.convert(mode)).save(buf, quality=90)
    img = load_image(buf.getvalue())
    assert img.shape == (im.height, im.width, 3) and img.dtype == np.uint8


def test_a_truncated_heic_is_one_sentence(tmp_path, capsys):
    heif = pytest.importorskip("pillow_heif")
    from PIL import Image

    whole = tmp_path / "whole.heic"
    heif.from_pillow(Image.open(SAMPLES / "hand_1.jpg")).save(whole, quality=80)
    p = tmp_path / "IMG_0002.HEIC"
    p.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    assert main(["score", str(p)]) == 2
    err = capsys.readouterr().err
    assert "damaged or truncated" in err and err.count("\n") == 1


def test_score_photo_no_cards_message(tmp_path, capsys):
    import cv2

    p = tmp_path / "empty_table.png"
    cv2.imwrite(str(p), np.full((600, 800, 3), 80, np.uint8))
    assert main(["score", str(p)]) == 2
    assert "No cards were found" in capsys.readouterr().err


def test_score_photo_annotates_even_when_it_cannot_score(tmp_path, capsys):
    import cv2

    # the sample hand with its 将 cut out of the photo: no score, but the drawing shows what was seen
    gt = _gt(5)
    img = cv2.imread(str(SAMPLES / "hand_5.jpg"))
    for c in gt["cards"]:
        if c["group"] == "jiang":
            cv2.fillConvexPoly(img, np.array(c["quad"], np.int32), (60, 90, 40))
    p, out = tmp_path / "no_jiang.jpg", tmp_path / "seen.png"
    cv2.imwrite(str(p), img)
    assert main(["score", str(p), "--annotate", str(out)]) == 2
    err = capsys.readouterr().err
    assert "将" in err and str(out) in err and err.count("\n") == 1
    assert cv2.imread(str(out)).shape == img.shape


def test_unsure_cards_get_a_second_look_through_shifted_boxes():
    from vision.infer.model import KNOBS
    from vision.infer.recognize import _second_look

    class Session:  # stands in for the ONNX classifier: sure of a card only when the box sits right of it
        def get_inputs(self):
            return [type("I", (), {"name": "x"})()]

        def run(self, _, feed):
            x = feed["x"]
            out = np.full((len(x), 35), 0.2 / 34, np.float32)
            out[:, 0] = 0.8
            bright = x.max(axis=(1, 2, 3)) > 0.5
            out[bright] = 0.01 / 34
            out[bright, 7] = 0.99
            return [out]

    img = np.zeros((300, 300, 3), np.uint8)
    img[:, 152:] = 255  # the card's true place is a little to the right of the box
    quad = np.array([[100, 20], [150, 20], [150, 250], [100, 250]], np.float32)
    probs = np.full((1, 35), 0.01 / 34, np.float32)
    probs[0, 0] = 0.6  # unsure
    info = _info(CODES)
    out = _second_look(img, [quad], probs, Session(), info)
    assert KNOBS.shifts[0] < 0 < KNOBS.shifts[1]
    assert out[0].argmax() == 7 and out[0].max() > 0.98  # read again through the box moved right
    sure = probs.copy()
    sure[0] = 0.0
    sure[0, 3] = 1.0
    assert np.array_equal(_second_look(img, [quad], sure, Session(), info), sure)  # sure cards are left alone


def _info(names):
    from pathlib import Path

    from vision.infer.model import ModelInfo

    return ModelInfo(Path("."), 640, 128, 1.0, tuple(names), 0.5, 0.4)


def test_not_a_card_class_is_split_off_and_its_boxes_are_no_reading():
    from vision.infer.model import KNOBS, NOT_A_CARD
    from vision.infer.recognize import _second_look, faces_only

    names = (*CODES[:10], NOT_A_CARD, *CODES[10:])  # wherever the class sits in the output
    info = _info(names)
    assert info.codes == tuple(CODES)
    probs = np.full((2, 36), 0.0, np.float32)
    probs[0, 10], probs[0, 3] = 0.7, 0.3  # mostly not a card
    probs[1, 11], probs[1, 0] = 0.6, 0.2  # 11 is CODES[10] in this order
    probs[1, 10] = 0.2
    faces, p_none = faces_only(probs, info)
    assert faces.shape == (2, 35) and np.allclose(faces.sum(1), 1)
    assert np.allclose(p_none, [0.7, 0.2])
    assert faces[1].argmax() == 10 and faces[0].argmax() == 3
    # without that class nothing changes
    plain, none0 = faces_only(probs[:, :35], _info(CODES))
    assert np.array_equal(plain, probs[:, :35]) and not none0.any()
    empty, none_e = faces_only(np.zeros((0, 35), np.float32), info)  # no boxes at all
    assert empty.shape == (0, 35) and none_e.shape == (0,)

    class Session:  # every shifted box reads as "not a card", however sure of a code it would be otherwise
        def get_inputs(self):
            return [type("I", (), {"name": "x"})()]

        def run(self, _, feed):
            out = np.zeros((len(feed["x"]), 36), np.float32)
            out[:, 10] = 0.6
            out[:, 20] = 0.4
            return [out]

    img = np.full((300, 300, 3), 128, np.uint8)
    quad = np.array([[100, 20], [150, 20], [150, 250], [100, 250]], np.float32)
    unsure = np.full((1, 35), 0.4 / 34, np.float32)
    unsure[0, 5] = 0.6
    assert len(KNOBS.shifts) and np.array_equal(_second_look(img, [quad], unsure, Session(), info), unsure)


def test_zoom_finds_small_cards_in_a_large_photo(tmp_path):
    import shutil

    import cv2

    from vision.infer.model import DEFAULT_MODEL
    from vision.infer.recognize import recognize_array

    # the sample hand in the middle of a photo 2.5 times as large: its cards are 2.5 times smaller
    img = cv2.imread(str(SAMPLES / "hand_2.jpg"))
    h, w = img.shape[:2]
    canvas = np.full((h * 5 // 2, w * 5 // 2, 3), 60, np.uint8)
    oy, ox = (canvas.shape[0] - h) // 2, (canvas.shape[1] - w) // 2
    canvas[oy:oy + h, ox:ox + w] = img
    gt = _gt(2)
    found = {}
    for zoom in (0.0, 1.4):
        d = tmp_path / f"z{zoom}"
        d.mkdir()
        for f in ("detector.onnx", "classifier.onnx"):
            shutil.copy(DEFAULT_MODEL / f, d / f)
        # the recover net off (recovering and pruning): it finds the missing card here too, and this is about the zoom alone
        meta = json.loads((DEFAULT_MODEL / "model.json").read_text()) | {"zoom": zoom, "recover": 2.0, "prune": 0.0, "refine": 0.0,
                                                                            "settle": 0.0, "adapt": 0.0}
        (d / "model.json").write_text(json.dumps(meta))
        found[zoom] = recognize_array(canvas, d).cards
    zoomed = found[1.4]
    assert len(zoomed) == len(gt["cards"]) > len(found[0.0])  # every card found only with the zoom
    from vision.eval.tally import match

    gq = [np.array(c["quad"], np.float32) + [ox, oy] for c in gt["cards"]]
    m = match([np.array(c.quad, np.float32) for c in zoomed], gq)
    assert len(m) == len(gq) and all(zoomed[i].code == gt["cards"][j]["code"] for i, j in m)
    quads = np.array([c.quad for c in zoomed])
    assert quads[..., 0].min() > ox - 5 and quads[..., 0].max() < ox + w + 5  # in the big photo's pixels


def test_tune_writes_thresholds_chosen_on_the_val_split(tmp_path, capsys):
    import shutil

    from vision.eval.tune import main as tune_main
    from vision.infer.model import DEFAULT_MODEL
    from vision.synth.write import Job, prepare, render_one

    job = Job(str(tmp_path / "scenes"), "detect", 77, 4, ("classic",), None, 0.5, 1280, 960)
    prepare(job)
    for i in range(job.n):
        render_one(job, i)
    model = tmp_path / "m"
    shutil.copytree(DEFAULT_MODEL, model, ignore=shutil.ignore_patterns("*.pt"))
    assert tune_main([job.out, "--model", str(model), "--write", "--json", str(tmp_path / "t.json")]) == 0
    meta = json.loads((model / "model.json").read_text())
    table = json.loads((tmp_path / "t.json").read_text())
    best = table["rescue"]["best"]
    assert (meta["conf"], meta["rescue_conf"], meta["rescue_cls"]) == (best["conf"], best["rescue_conf"], best["rescue_cls"])
    assert best["f1"] == max(row["f1"] for row in table["rescue"]["table"])
    assert "second look" in capsys.readouterr().out


def test_boxes_left_out_only_for_overlapping_a_kept_box_are_offered_as_crowded():
    """In a tight stair a card's own box overlaps its neighbour's by more than the NMS IoU: such a box (well
    scored, kept by a looser NMS) is returned apart as crowded, not as a card, and a box on the same card is not."""
    from vision.infer.detect import find_boxes
    from vision.infer.model import KNOBS

    info = _info(CODES)
    assert info.iou < KNOBS.crowd_iou
    w, l = 40.0, 140.0  # a card's width and length, in the detector's input pixels (a 640 x 640 photo: scale 1)
    boxes = [  # cx, cy, w, l, score
        (200, 300, w, l, 0.9),  # a card
        (216, 300, w, l, 0.8),  # its neighbour in a stair, 0.4 of a width along: IoU 0.43 with it
        (202, 301, w, l, 0.85),  # the first card boxed again: IoU ~0.9
        (500, 300, w, l, 0.3),  # an unsure card elsewhere
        (184, 300, w, l, KNOBS.crowd_conf - 0.05),  # a weak box on the other side, as far: too weak to be crowded
    ]

    class Session:
        def get_inputs(self):
            return [type("I", (), {"name": "x"})()]

        def run(self, _, feed):
            out = np.zeros((4 + 1 + 1, len(boxes)), np.float32)  # cx cy w h, one class score, angle
            for k, (cx, cy, bw, bl, sc) in enumerate(boxes):
                out[:, k] = [cx, cy, bw, bl, sc, 0.0]
            return [out[None]]

    img = np.full((640, 640, 3), 128, np.uint8)
    found = find_boxes(Session(), img, info)
    centres = sorted(round(float(q[:, 0].mean())) for q, _ in found.boxes)
    assert centres == [200, 500]
    assert [round(float(q[:, 0].mean())) for q, _ in found.crowded] == [216]
    assert found.crowded[0][1] == pytest.approx(0.8)



def test_fuse_averages_each_box_with_its_mirror_image():
    from vision.infer.detect import _fuse

    a = np.array([[100, 100, 50, 10, 89.0], [300, 100, 50, 10, 0.0]])  # cx cy long short angle
    f = np.array([[102, 100, 50, 12, -89.0], [400, 100, 50, 10, 0.0]])  # the first one again, 2 px and 2° off
    boxes, scores = _fuse(a, np.array([0.8, 0.6]), f, np.array([0.8, 0.9]))
    assert np.allclose(boxes[0], [101, 100, 50, 11, 90.0])  # averaged the short way round 90°
    assert scores[0] == pytest.approx(0.8)
    assert np.allclose(boxes[1], a[1]) and scores[1] == pytest.approx(0.3)  # unseen in the mirror: half its score
    none, s = _fuse(a, np.array([0.8, 0.6]), np.zeros((0, 5)), np.zeros(0))
    assert np.allclose(none, a) and np.allclose(s, [0.4, 0.3])


def test_mirrored_look_reads_the_sample_photo(tmp_path):
    from tests.conftest import model_variant
    from vision.eval.tally import match
    from vision.infer.detect import decode
    from vision.infer.imageio import load_image
    from vision.infer.model import _sessions, model_info
    from vision.infer.recognize import recognize_array

    d = model_variant(tmp_path / "mirror", copy=True, mirror=True)
    img = load_image(SAMPLES / "hand_5.jpg")
    gt = _gt(5)
    cards = recognize_array(img, d).cards
    gq = [np.array(c["quad"], np.float32) for c in gt["cards"]]
    m = match([np.array(c.quad, np.float32) for c in cards], gq)
    assert len(m) == len(gq) == len(cards) and all(cards[i].code == gt["cards"][j]["code"] for i, j in m)
    # the mirrored look's boxes are turned back onto the photo: the cards keep their scores (a box the mirror
    # misplaced would find no partner and lose half its score)
    info = model_info(d)
    plain = decode(_sessions(str(info.path))[0], img, info.det_imgsz, 0.3)
    fused = decode(_sessions(str(info.path))[0], img, info.det_imgsz, 0.3, mirror=True)
    top = len(gq)
    assert np.sort(fused.scores)[-top:].min() > 0.8 * np.sort(plain.scores)[-top:].min()


def test_score_cli_says_each_thing_once(capsys):
    # the scorer's note "winning card not given …" and the photo's default to confirm are one sentence: said once
    assert main(["score", str(SAMPLES / "hand_1.jpg")]) == 0
    lines = [ln.split(": ", 1)[1].lower().rstrip(".") for ln in capsys.readouterr().out.splitlines()
             if ln.startswith(("note: ", "to confirm: ", "warning: "))]
    assert lines and len(lines) == len(set(lines)), lines
    assert any("winning card not given" in ln for ln in lines)


@requires_model
def test_spares_carry_the_recover_nets_word_on_them():
    """Each spare (a box offered to photo → hu, not a card) carries the recover net's probability that it is a card
    none of the cards covers; it is in the JSON, and a spare lying free of every card counts as one (1.0)."""
    from dataclasses import replace

    from vision.infer.model import model_info
    from vision.infer.recognize import _judged, recognize

    info = replace(model_info(), settle=0.0)  # its boxes not settled: NMS leaves spares on this tight fan
    rec = recognize(SAMPLES / "hand_6.jpg", info)
    assert rec.spares and all(0.0 <= s.judged <= 1.0 for s in rec.spares)
    assert all("judged" in s.to_dict() for s in rec.spares) and not any("judged" in c.to_dict() for c in rec.cards)
    assert min(s.judged for s in rec.spares) < 0.1  # a second box on a card: not one
    import cv2
    img = cv2.imread(str(SAMPLES / "hand_6.jpg"))
    q = np.array(rec.cards[0].quad)
    corner = replace(rec.spares[0], quad=(q - q.min(0) + 2).tolist())  # the same box in the photo's corner, no card near
    assert _judged(img, [corner], rec.cards, info)[0].judged == 1.0


def test_a_crop_read_surely_one_way_is_not_read_the_other_way():
    """ModelInfo.one_way: only the crops read with less than it one way round are read the other way too, and
    their readings are those of both ways; above 1, every crop is read both ways (as before the setting)."""
    from vision.infer.geometry import swap_ends
    from vision.infer.recognize import classify

    class Session:  # sure of code 4 for a light crop; a dark one reads 0.6 one way and 0.2 the other
        def __init__(self):
            self.seen = []

        def get_inputs(self):
            return [type("I", (), {"name": "x"})()]

        def run(self, _, feed):
            x = feed["x"]
            self.seen.append(len(x))
            out = np.full((len(x), 35), 0.001 / 34, np.float32)
            out[:, 4] = 0.999
            dark = x.mean(axis=(1, 2, 3)) < 0.5
            first = x[..., :64].mean(axis=(1, 2, 3)) > x[..., 64:].mean(axis=(1, 2, 3))  # which half is lighter
            out[dark] = 0.4 / 34
            out[dark & first, 2], out[dark & ~first, 2] = 0.6, 0.2
            out[dark & ~first, 9] = 0.6
            return [out]

    light = np.full((128, 128, 3), 220, np.uint8)
    dark = np.full((128, 128, 3), 30, np.uint8)
    dark[:, :64] = 60  # one half lighter than the other: the two ways round differ
    assert not np.array_equal(swap_ends(dark), dark)
    both = Session()
    want = classify(both, [light, dark, light], 1.2)
    assert both.seen == [3, 3]  # every crop, then every crop turned
    s = Session()
    got = classify(s, [light, dark, light], 1.2, one_way=0.999)
    assert s.seen == [3, 1]  # the dark crop alone read again
    assert np.allclose(got[1], want[1], atol=1e-6)  # its reading is both ways', as before
    assert got[0].argmax() == 4 and got[0].max() >= want[0].max() - 1e-3
    none = Session()
    assert np.allclose(classify(none, [light, dark], 1.2, one_way=2.0), want[:2]) and none.seen == [2, 2]
    import warnings

    for never in (0.0, -1.0):  # every crop read one way only, without numpy's warnings about log(0)
        once = Session()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = classify(once, [light, dark], 1.2, one_way=never)
        assert once.seen == [2] and np.isfinite(got).all() and got[1].argmax() == 2


@requires_model
def test_bench_nets_times_a_net_and_the_released_model(tmp_path, capsys):
    """python -m vision.train.bench_nets: the released networks and an untrained YOLO11n-cls of the classifier's size,
    timed alike; an unknown net or a folder that is no model is one sentence, exit 2."""
    from vision.infer.model import DEFAULT_MODEL
    from vision.train.bench_nets import main

    out = tmp_path / "nets.json"
    assert main(["--nets", "classifier n", "--repeat", "2", "--json", str(out)]) == 0
    nets = json.loads(out.read_text())["nets"]
    assert list(nets) == [f"{DEFAULT_MODEL.name} classifier", f"{DEFAULT_MODEL.name} detector", "classifier n"]
    assert all(r["ms_p50"] > 0 for r in nets.values())
    assert "classifier n" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["--nets", "classifier x"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["--nets", "classifier n", "--model", str(tmp_path)])
    assert e.value.code == 2 and "No model at" in capsys.readouterr().err
