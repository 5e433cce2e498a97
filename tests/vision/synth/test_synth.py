"""Synthetic photos: geometry of labels, legal card counts, determinism, winning-hand totals, bad args."""

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.cli import main
from scoring import score_dict
from scoring.cards import CODES, EXTRAS, N_PLAIN
from vision.infer.geometry import box_error, fold, jitter_quad, quad_iou, rectify, swap_ends
from vision.synth.faces import FACE_H, FACE_W, FaceSource, random_style, render_face
from vision.synth.scene import SceneSpec, _paste, compose, random_cards
from vision.synth.write import Job, SynthError, prepare, render_one, yolo_obb_line


def test_paste_covers_its_quad_and_nothing_else():
    img = np.zeros((200, 300, 3), np.uint8)
    occ = np.full((200, 300), -1, np.int16)
    face = np.full((FACE_H, FACE_W, 3), 255, np.uint8)
    alpha = np.full((FACE_H, FACE_W), 255, np.uint8)
    quad = np.array([[100, 20], [140, 25], [120, 180], [80, 175]], np.float32)
    _paste(img, occ, 0, face, alpha, quad, None, random.Random(0))
    inside = np.zeros((200, 300), np.uint8)
    cv2.fillConvexPoly(inside, quad.astype(np.int32), 1)
    core = cv2.erode(inside, np.ones((5, 5), np.uint8))
    halo = 1 - cv2.dilate(inside, np.ones((5, 5), np.uint8))
    assert (occ[core > 0] == 0).all()
    assert (occ[halo > 0] == -1).all()
    assert img[halo > 0].max() == 0


def test_rectified_gt_quad_reads_as_its_own_face():
    rng = random.Random(3)
    style = random_style(rng, "bold")
    faces = FaceSource(style)
    spec = SceneSpec(1280, 960, "row", ["1t", "9b", "5w", "hh", "qz", "3t"], [], [], 1 / 8)
    img, gt = compose(spec, faces, rng)
    refs = {c: cv2.resize(render_face(c, style, 0)[0], (64, 256), interpolation=cv2.INTER_AREA).astype(np.float32) for c in CODES[:N_PLAIN]}

    def ncc(a, b):
        a = (a - a.mean()) / (a.std() + 1e-6)
        b = (b - b.mean()) / (b.std() + 1e-6)
        return float((a * b).mean())

    for card in gt["cards"]:
        crop = rectify(img, np.array(card["quad"], np.float32), ordered=True).astype(np.float32)
        best = max(refs, key=lambda c: ncc(crop, refs[c]))
        assert best == card["code"], (card["code"], best)


def test_random_cards_respect_the_deck():
    rng = random.Random(1)
    for _ in range(50):
        jiang = random_cards(rng, 2, [], False)
        cards = random_cards(rng, 35, jiang, True)
        cnt = Counter(cards + jiang)
        assert all(v <= (1 if CODES.index(k) >= N_PLAIN else 4) for k, v in cnt.items())


def _job(tmp_path, kind, n=3, seed=7, styles=("classic", "fine")):
    return Job(str(tmp_path / kind), kind, seed, n, styles, None, 0.34, 640, 480)


def _render(job):
    """Render every image of the job; return the ground truths in order."""
    prepare(job)
    out = []
    for i in range(job.n):
        render_one(job, i)
        out.append(json.loads((Path(job.out) / "gt" / f"{i:06d}.json").read_text()))
    return out


def test_same_seed_same_files(tmp_path):
    a, b = _job(tmp_path / "a", "detect"), _job(tmp_path / "b", "detect")
    for job in (a, b):
        prepare(job)
        for i in range(job.n):
            render_one(job, i)
    for i in range(3):
        ga = json.loads((tmp_path / "a/detect/gt" / f"{i:06d}.json").read_text())
        gb = json.loads((tmp_path / "b/detect/gt" / f"{i:06d}.json").read_text())
        assert ga["cards"] == gb["cards"]
        split = ga["split"]
        assert (tmp_path / "a/detect/images" / split / f"{i:06d}.jpg").read_bytes() == \
               (tmp_path / "b/detect/images" / split / f"{i:06d}.jpg").read_bytes()


def test_labels_match_ground_truth(tmp_path):
    for gt in _render(_job(tmp_path, "detect", n=4)):
        lines = (tmp_path / "detect" / gt["image"].replace("images", "labels").replace(".jpg", ".txt")).read_text().split("\n")
        lines = [ln for ln in lines if ln]
        labelled = [c for c in gt["cards"] if c["visible"] >= 0.2]
        assert len(lines) == len(labelled)
        for ln, c in zip(lines, labelled, strict=True):
            vals = [float(v) for v in ln.split()]
            assert int(vals[0]) == CODES.index(c["code"])
            q = np.array(vals[1:]).reshape(4, 2) * [gt["width"], gt["height"]]
            assert quad_iou(q, np.array(c["quad"])) > 0.97


def test_hand_scenes_score_to_their_totals(tmp_path):
    gts = _render(_job(tmp_path, "hands", n=3))
    # laid out by split like detect scenes, so a dataset.yaml can train the detector on them too
    root = tmp_path / "hands"
    assert "train: images/train" in (root / "dataset.yaml").read_text()
    for gt in gts:
        img = root / gt["image"]
        assert img.is_file() and img.parent.name == gt["split"]
        assert (root / "labels" / gt["split"] / f"{img.stem}.txt").is_file()
    for gt in gts:
        assert score_dict(gt["hand"]).total == gt["expected_total"]
        seen = Counter(c["code"] for c in gt["cards"])
        hand = gt["hand"]
        expected = Counter(hand["concealed"] + [c for g in hand["declared"] for c in g["cards"]] + hand["jiang"])
        assert seen == expected


def test_classify_crops_are_folded_squares(tmp_path):
    job = _job(tmp_path, "classify", n=2)
    prepare(job)
    for i in range(job.n):
        render_one(job, i)
    crops = list((tmp_path / "classify").glob("*/*/*.jpg"))
    assert crops
    im = cv2.imread(str(crops[0]))
    assert im.shape == (128, 128, 3)


def test_fold_shape():
    assert fold(np.zeros((256, 64, 3), np.uint8)).shape == (128, 128, 3)


def test_card_turned_end_for_end_folds_to_swapped_halves():
    # the classifier's second reading (recognize.classify) must be the same card the other way round
    rng = np.random.default_rng(5)
    img = rng.integers(0, 255, (400, 300, 3), np.uint8)
    q = np.array([[50, 40], [110, 45], [100, 330], [40, 325]], np.float32)
    a = fold(rectify(img, q, ordered=True))
    b = fold(rectify(img, q[[2, 3, 0, 1]], ordered=True))
    diff = np.abs(swap_ends(a).astype(int) - b)
    assert diff.max() <= 1 and diff.mean() < 0.01  # equal up to the warp's rounding
    assert np.abs(a.astype(int) - b).mean() > 20


def test_box_error_and_jitter_agree():
    q = np.array([[0, 0], [40, 0], [40, 187], [0, 187]], np.float32)
    assert box_error(q + np.array([4, 0], np.float32), q) == {"across": 0.1, "along": 0.0, "width": 1.0, "length": 1.0}
    assert np.allclose(jitter_quad(q, np.random.default_rng(0), 0.0), q)
    rng = np.random.default_rng(1)
    errs = [box_error(jitter_quad(q, rng), q) for _ in range(2000)]
    across = np.std([e["across"] for e in errs])
    along = np.std([e["along"] for e in errs])
    assert 0.09 < across < 0.11 and along < 0.02  # detector-like: off across the card, close along it


def test_yolo_line_is_normalized():
    line = yolo_obb_line(3, [[0, 0], [64, 0], [64, 48], [0, 48]], 64, 48)
    assert line == "3 0.000000 0.000000 1.000000 0.000000 1.000000 1.000000 0.000000 1.000000"


def test_refuses_foreign_folder(tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("keep me")
    with pytest.raises(SynthError, match="not empty"):
        prepare(Job(str(d), "detect", 0, 2, ("classic",), None, 0.1, 640, 480))
    job = _job(tmp_path, "detect")
    prepare(job)
    with pytest.raises(SynthError, match="other settings"):
        prepare(Job(job.out, "classify", job.seed, 2, job.styles, None, job.val_frac, 640, 480))


@pytest.mark.parametrize("args,needle", [
    (["--n", "0"], "at least 1"),
    (["--n", "2", "--styles", "glitter"], "Unknown style"),
    (["--n", "2", "--size", "big"], "WIDTHxHEIGHT"),
    (["--n", "2", "--faces", "/nonexistent"], "does not exist"),
    (["--n", "2", "--val-frac", "1"], "at least 0 and below 1"),
    (["--n", "2", "--kind", "hands", "--rulesets", "moon"], "Unknown ruleset 'moon'"),
    (["--n", "2", "--rulesets", "rugao"], "--rulesets is for --kind hands"),
    (["--n", "2", "--kind", "hands", "--rulesets", "rugao+xi_er"], "nantong-single+xi_er"),
    (["--n", "2", "--kind", "hands", "--rulesets", "nantong-single+qiong_hen"], "the one option"),
    (["--n", "2", "--tables", "wood,lava"], "Unknown table 'lava'"),
    (["--n", "2", "--least-show", "0.05"], "between 0.15 and 0.7"),
])
def test_synth_cli_bad_args(tmp_path, capsys, args, needle):
    code = main(["synth", "--out", str(tmp_path / "o"), *args])
    err = capsys.readouterr().err
    assert code == 2 and needle in err


def test_user_faces_folder_is_used(tmp_path):
    faces = tmp_path / "faces"
    (faces / "hh").mkdir(parents=True)
    img = np.zeros((300, 60, 3), np.uint8)
    img[:, :, 1] = 200  # a green card nobody prints
    cv2.imwrite(str(faces / "hh" / "a.png"), img)
    src = FaceSource(random_style(random.Random(0)), faces)
    face, _ = src.face("hh")
    assert face[..., 1].mean() > 150 and face.shape == (FACE_H, FACE_W, 3)
    other, _ = src.face("1t")
    assert other[..., 1].mean() != face[..., 1].mean()


def test_a_face_photographed_on_an_iphone_is_taken_upright(tmp_path):
    """A face in a face folder may be a phone's HEIC, stored turned with an EXIF rotation: read as seen."""
    heif = pytest.importorskip("pillow_heif")
    from PIL import Image

    faces = tmp_path / "faces"
    (faces / "bh").mkdir(parents=True)
    img = np.zeros((300, 60, 3), np.uint8)
    img[:150, :, 2] = 220  # red above, blue below, upright
    img[150:, :, 0] = 220
    ex = Image.Exif()
    ex[0x0112] = 8  # shown turned 90° anticlockwise (read without it, the face would come out upside down)
    turned = Image.fromarray(img[:, :, ::-1]).transpose(Image.Transpose.ROTATE_270)
    heif.from_pillow(turned).save(faces / "bh" / "IMG_0003.HEIC", exif=ex.tobytes(), quality=95)
    face, _ = FaceSource(random_style(random.Random(0)), faces).face("bh")
    top, bottom = face[: FACE_H // 3], face[-FACE_H // 3:]
    assert top[..., 2].mean() > 150 > top[..., 0].mean() and bottom[..., 0].mean() > 150 > bottom[..., 2].mean()


def test_scrambled_heads_show_no_numeral_and_only_when_asked_for():
    from vision.synth.faces import NUM_SUZHOU, NUM_UPPER, NUM_ZH, SCRAMBLED, TRAIN_FAMILIES, _head

    # a random style is still drawn from the four training families: seeds keep their files
    assert {random_style(random.Random(i)).family for i in range(200)} == set(TRAIN_FAMILIES)
    styles = [random_style(random.Random(i), SCRAMBLED) for i in range(40)]
    for st in styles:
        assert st.family == SCRAMBLED and st.numeral == "scrambled" and len(set(st.glyphs)) == 9
        assert not set(st.glyphs) & set(NUM_ZH + NUM_SUZHOU + NUM_UPPER + "十条丙万千福禄寿禧财")
    assert len({st.glyphs for st in styles}) == 40  # a new reading of the ranks for each style
    st = styles[0]
    # the head of 6t shows the style's sixth character, the field still six strings (as the same family prints it)
    plain = replace(st, numeral="zh", glyphs="")
    six = np.array(_head("6t", st, FACE_W, 96).ink)
    assert np.abs(six.astype(int) - np.array(_head("6t", plain, FACE_W, 96).ink, int)).sum() > 0
    face, plain_face = render_face("6t", st, 0)[0], render_face("6t", plain, 0)[0]
    h = face.shape[0]
    assert np.array_equal(face[h // 3: 2 * h // 3], plain_face[h // 3: 2 * h // 3])


def _hand_scenes(tmp_path, seed: int, ruleset: str) -> tuple[Job, list[dict]]:
    """8 hand scenes drawn in ``ruleset`` (a --rulesets name), some of them holding extras."""
    job = Job(str(tmp_path / "hands"), "hands", seed, 8, ("classic",), None, 0.0, 640, 480, rulesets=(ruleset,))
    gts = _render(job)
    assert any(set(EXTRAS) & set(gt["hand"]["concealed"]) for gt in gts)
    return job, gts


def _cards_are_the_hands(gt: dict) -> bool:
    """The scene's cards are its hand's: concealed, declared and 将."""
    hand = gt["hand"]
    return Counter(c["code"] for c in gt["cards"]) == Counter(hand["concealed"] + hand["jiang"]
                                                              + [c for g in hand["declared"] for c in g["cards"]])


def test_rugao_hand_scenes_lay_their_wild_cards_and_score_to_their_totals(tmp_path):
    """--rulesets rugao: hands with 0–2 wild cards 福禄寿禧财 (R8); each wild is laid in the group it completes and
    the scene's cards are the hand's, wilds included; the nantong draws are those of before (a rugao run is apart)."""
    job, gts = _hand_scenes(tmp_path, 11, "rugao")
    wild = set(EXTRAS)
    for gt in gts:
        hand = gt["hand"]
        assert hand["ruleset"] == "rugao" and score_dict(hand).total == gt["expected_total"] and score_dict(hand).is_win
        assert _cards_are_the_hands(gt)
        assert hand["win"]["card"] not in wild
    with pytest.raises(SynthError, match="other settings"):  # the same folder with the nantong draws
        prepare(Job(job.out, "hands", 11, 8, ("classic",), None, 0.0, 640, 480))


def test_random_hands_with_wilds_are_rugao_wins_and_without_them_unchanged():
    import random

    from scoring.random_hands import random_winning_hand

    for seed in range(60):
        rng = random.Random(seed)
        k = 1 + seed % 3
        d = random_winning_hand(rng, "rugao", p_seq=0.8, wilds=k)
        assert sum(c in ("fu", "lu", "shou", "xi", "cai") for c in d["concealed"]) == k and score_dict(d).is_win
    with pytest.raises(ValueError, match="rugao"):
        random_winning_hand(random.Random(1), "nantong-double", wilds=1)
    # the draw of a seed is the one it was before wilds existed (synthetic sets of earlier stops stay reproducible)
    d = random_winning_hand(random.Random(7), "nantong-double", p_seq=0.5)
    assert d["jiang"] == ["2b", "5t"] and d["win"] == {"card": "5t", "self_drawn": False}
    assert d["concealed"][:6] == ["5t", "3t", "3w", "2w", "1w", "4t"]


def test_xi_er_hand_scenes_hold_bonus_extras_and_score_to_their_totals(tmp_path):
    """--rulesets nantong-single+xi_er: nantong-single hands with R7's 喜儿 option, holding 0–2 extras as bonus cards
    besides their groups, laid together in the hand; each scores to its total with the option (喜儿 points, or 穷狠's
    doubling when none is held) and the scene's cards are the hand's."""
    _, gts = _hand_scenes(tmp_path, 12, "nantong-single+xi_er")
    extras = set(EXTRAS)
    for gt in gts:
        hand = gt["hand"]
        res = score_dict(hand)
        assert hand["ruleset"] == "nantong-single" and hand["options"] == {"xi_er": True}
        assert res.is_win and res.total == gt["expected_total"]
        held = sum(c in extras for c in hand["concealed"])
        assert any(i.key == ("xi_er" if held else "qiong_hen_x2") for i in res.items)
        assert _cards_are_the_hands(gt)
        assert hand["win"]["card"] not in extras
    import random

    from scoring.random_hands import random_winning_hand

    with pytest.raises(ValueError, match="nantong-single"):
        random_winning_hand(random.Random(1), "nantong-double", xi_er=1)


@pytest.mark.parametrize("kind", ["dots", "stripes", "tiles", "plaid"])
def test_printed_tables_are_regular_marks_on_a_ground(kind):
    from vision.synth.tables import table

    img = table(kind, 400, 300, np.random.default_rng(3))
    assert img.shape == (300, 400, 3) and img.dtype == np.uint8
    # two or more inks on a ground: many pixels far from the median colour, many near it
    far = np.abs(img.astype(int) - np.median(img.reshape(-1, 3), 0)).sum(-1) > 60
    assert 0.05 < far.mean() < 0.95


def test_tight_stairs_and_fans_show_less_of_each_card_and_tables_are_drawn_among_the_asked(tmp_path):
    least = {}
    for knob in (None, 0.2):
        job = Job(str(tmp_path / f"j{knob}"), "detect", 11, 40, ("classic",), None, 0.0, 640, 480,
                  tables=("dots",) if knob else (), least_show=knob)
        prepare(job)
        shown = []
        for i in range(job.n):
            render_one(job, i)
            gt = json.loads((Path(job.out) / "gt" / f"{i:06d}.json").read_text())
            if gt["layout"] in ("stair", "fan"):
                shown += [c["visible"] for c in gt["cards"]]
        least[knob] = np.percentile(shown, 5)
    assert least[0.2] < least[None] - 0.1
    meta = json.loads((tmp_path / "j0.2" / ".changpai-synth.json").read_text())
    assert meta["tables"] == ["dots"] and meta["least_show"] == 0.2
    with pytest.raises(SynthError, match="other settings"):
        prepare(replace(job, tables=("stripes",)))


def test_default_scenes_render_as_before_the_table_knobs(tmp_path):
    """A seed renders the same photo with the knobs left unset as with them set to the old defaults."""
    from vision.synth.tables import TABLES

    a = Job(str(tmp_path / "a"), "detect", 5, 3, ("classic",), None, 0.0, 640, 480)
    b = replace(a, out=str(tmp_path / "b"), tables=TABLES)
    for job in (a, b):
        prepare(job)
        for i in range(job.n):
            render_one(job, i)
    for i in range(3):
        assert (tmp_path / f"a/images/train/{i:06d}.jpg").read_bytes() == (tmp_path / f"b/images/train/{i:06d}.jpg").read_bytes()


def test_a_seed_draws_the_same_scenes_in_every_python_process():
    """Python salts its string hashes per process: a scene drawn by iterating a set of codes would change from run to
    run (and a calibrated model with it)."""
    import subprocess
    import sys

    code = ("import random; from vision.synth.write import Job, _scene_spec\n"
            "for kind in ('classify', 'detect', 'hands'):\n"
            "    job = Job('x', kind, 7, 60, ('classic',), None, 0.0, 640, 480)\n"
            "    for i in range(60):\n"
            "        print(repr(_scene_spec(job, random.Random(f'7:{i}'))))\n")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**__import__("os").environ, "PYTHONHASHSEED": str(s)},
                           cwd=Path(__file__).resolve().parents[3]).stdout for s in (1, 2, 3)]
    assert runs[0] and runs[0] == runs[1] == runs[2]


def _tilts(gt: dict) -> list[float]:
    """Each card's long axis against the photo's vertical, 0–90°."""
    out = []
    for c in gt["cards"]:
        q = np.asarray(c["quad"], np.float32)
        v = q[3] - q[0] if np.linalg.norm(q[3] - q[0]) > np.linalg.norm(q[1] - q[0]) else q[1] - q[0]
        a = abs(np.degrees(np.arctan2(v[0], v[1]))) % 180
        out.append(min(a, 180 - a))
    return out


def test_turn_any_lays_the_hand_at_any_angle_and_upright_stays_as_it_was():
    """SceneSpec.turn (synth --turn any): rows upright lie within 20° + the camera's tilt of the photo's axes; turned,
    rows lie at every angle, cards between 30° and 60° among them; upright scenes render as before the option."""
    cards = ["1t", "2t", "3t", "4t", "5t", "6t"]
    upright, turned = [], []
    for seed in range(12):
        spec = SceneSpec(1280, 960, "row", cards, [], [], 1 / 14)
        upright += _tilts(compose(spec, FaceSource(random_style(random.Random(seed), "classic")), random.Random(seed))[1])
        img_a, gt_a = compose(spec, FaceSource(random_style(random.Random(seed), "classic")), random.Random(seed))
        assert gt_a["cards"] == compose(replace(spec, turn="upright"), FaceSource(random_style(random.Random(seed), "classic")),
                                        random.Random(seed))[1]["cards"]  # the default is upright
        turned += _tilts(compose(replace(spec, turn="any"), FaceSource(random_style(random.Random(seed), "classic")),
                                 random.Random(seed))[1])
    assert not any(32 < a < 58 for a in upright)
    assert sum(30 < a < 60 for a in turned) >= len(cards)


def test_synth_turn_is_kept_with_the_set(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["synth", "--out", str(out), "--n", "1", "--seed", "3", "--turn", "any", "--val-frac", "0", "--workers", "1"]) == 0
    assert json.loads((out / ".changpai-synth.json").read_text())["turn"] == "any"
    # the same folder asked upright: another set's settings, one sentence
    assert main(["synth", "--out", str(out), "--n", "1", "--seed", "3", "--val-frac", "0", "--workers", "1"]) == 2
    assert "turn" in capsys.readouterr().err


def _directions(gt: dict, group) -> list[float]:
    """The long-axis directions (0–180°) of the cards of ``group`` (a predicate on the card's group)."""
    out = []
    for c in gt["cards"]:
        if group(c["group"]):
            q = np.asarray(c["quad"], np.float32)
            v = q[3] - q[0] if np.linalg.norm(q[3] - q[0]) > np.linalg.norm(q[1] - q[0]) else q[1] - q[0]
            out.append(float(np.degrees(np.arctan2(v[1], v[0]))) % 180)
    return out


def _overlap_between_groups(gt: dict) -> float:
    """The largest share of a card's area that a card of another group covers."""
    cards = [(c["group"], np.asarray(c["quad"], np.float32)) for c in gt["cards"]]
    worst = 0.0
    for ga, a in cards:
        for gb, b in cards:
            if ga != gb:
                area, _ = cv2.intersectConvexConvex(a, b)
                worst = max(worst, area / cv2.contourArea(a))
    return worst


def test_turn_any_also_turns_each_declared_group_on_its_own_clear_of_the_others():
    """SceneSpec.turn "any": besides the whole hand, each declared group is turned about its own centre (up to
    GROUP_TURN), as players lay groups at any angle; upright, a group lies within a few degrees of the hand. The turned
    groups stay clear of each other and of the hand: their cards show whole."""
    hand = ["1t", "2t", "3t", "4t", "5t", "6t", "7t"]
    melds = [["8b", "8b", "8b"], ["9w", "9w", "9w", "9w"], ["qz", "qz", "qz"]]
    off = {"upright": [], "any": []}
    for seed in range(10):
        for turn in off:
            spec = SceneSpec(1280, 960, "row", hand, melds, [], 1 / 30, turn=turn)
            gt = compose(spec, FaceSource(random_style(random.Random(seed), "classic")), random.Random(seed))[1]
            base = float(np.median(_directions(gt, lambda g: g == "hand")))
            for m in range(len(melds)):
                d = _directions(gt, lambda g, m=m: g == f"meld:{m}")
                assert len(d) == len(melds[m]) and max(d) - min(d) < 10  # a group keeps together
                off[turn].append(abs((float(np.median(d)) - base + 90) % 180 - 90))
            if turn == "any":
                assert _overlap_between_groups(gt) < 0.01
    assert max(off["upright"]) < 15
    assert sum(a > 25 for a in off["any"]) >= len(off["any"]) // 3


def test_named_ways_draw_every_familys_named_cards_the_printers_way_and_keep_the_rest_of_the_deck(tmp_path):
    """`synth --named-ways`: a family other than medley draws its named cards and extras as the printers do (the
    extras also in a seal or a medallion), while every other card of the deck renders as it did without the knob,
    and the run's folder records the knob (a rerun without it is refused)."""
    from vision.synth.decks import DeckSpec
    from vision.synth.names import MORE_EXTRA_WAYS
    from vision.synth.write import _faces

    plain = Job(str(tmp_path / "plain"), "detect", 21, 2, ("woodblock", "boxed", "formal"), None, 0.0, 640, 480)
    named = replace(plain, out=str(tmp_path / "named"), named_ways=True)
    ways = set()
    for k in range(30):
        a, b = _faces(plain, k).style, _faces(named, k).style
        assert isinstance(b, DeckSpec) and a.names == {} and b.names
        assert replace(b, names={}) == a  # the deck itself is drawn as before
        ways.add(b.names["extra"])
    assert ways == set(MORE_EXTRA_WAYS)
    fa, fb = _faces(plain, 0), _faces(named, 0)
    assert np.array_equal(fa.face("5t")[0], fb.face("5t")[0])
    assert not np.array_equal(fa.face("fu")[0], fb.face("fu")[0])
    prepare(named)
    assert json.loads((tmp_path / "named" / ".changpai-synth.json").read_text())["named_ways"] is True
    with pytest.raises(SynthError, match="named_ways"):
        prepare(replace(plain, out=named.out))


def test_extras_weight_draws_the_extras_as_if_the_deck_held_that_many_and_is_recorded(tmp_path):
    """`synth --extras-weight K`: the drawn deck holds K of each extra (the rare cards seen more often in training),
    never more of a plain kind than a deck has; the run's folder records it; hands, whose extras come from the
    ruleset, refuse it."""
    import random
    from collections import Counter

    from scoring.cards import EXTRAS
    from vision.synth.scene import random_cards

    once, four = Counter(), Counter()
    for i in range(200):
        once.update(random_cards(random.Random(i), 40, [], True))
        four.update(random_cards(random.Random(i), 40, [], True, extra_copies=4))
    assert all(four[e] > 2.5 * once[e] for e in EXTRAS)
    assert max(Counter(random_cards(random.Random(3), 200, [], True, extra_copies=4)).values()) == 4
    job = Job(str(tmp_path / "w"), "classify", 5, 1, ("woodblock",), None, 0.0, 640, 480, extras_weight=4)
    prepare(job)
    assert json.loads((tmp_path / "w" / ".changpai-synth.json").read_text())["extras_weight"] == 4
    with pytest.raises(SynthError, match="extras_weight"):
        prepare(replace(job, extras_weight=1))
    with pytest.raises(SynthError, match="extras-weight"):
        prepare(replace(job, out=str(tmp_path / "h"), kind="hands"))
