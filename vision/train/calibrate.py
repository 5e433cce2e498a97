"""Deck calibration (`changpai calibrate`): fit the classifier to a player's own deck.

The player lays one card of each kind in rows, in the documented order (CALIBRATION_ORDER: 条 1–9, 丙 1–9,
万 1–9, then 千字 红花 白花 and any extras) and takes one or a few photos. The detector finds the cards,
the order names them, a check sheet shows each face with its name, and the classifier is fine-tuned on
scenes rendered from those faces.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scoring.cards import CODES, EXTRAS, NAMES_ZH
from vision import CALIBRATION_MINUTES, CALIBRATION_SCENES
from vision.infer.geometry import axes, order_long_axis_vertical, rectify
from vision.infer.imageio import load_image
from vision.infer.model import BOX_NETS, DEFAULT_MODEL, NOT_A_CARD, model_info
from vision.infer.recognize import reading_order, recognize_array
from vision.synth.faces import FACE_H, FACE_W

CALIBRATION_ORDER: tuple[str, ...] = CODES  # 1t…9t 1b…9b 1w…9w qz hh bh [fu lu shou xi cai]


class CalibrationError(ValueError):
    pass


def faces_from_photo(img: np.ndarray, model: str | Path | None = None) -> list[tuple[str, np.ndarray]]:
    """Cut the cards of a calibration photo and name them by their place in the rows."""
    rec = recognize_array(img, model)
    cards = reading_order(rec.cards)
    n = len(cards)
    if n not in (30, 35):
        raise CalibrationError(
            f"Found {n} cards, but a calibration photo holds 30 (条, 丙, 万 1–9, 千字 红花 白花) or 35 (with the five extras) "
            "in rows of nine; check that every card is in the photo, apart from its neighbours, and nothing else lies there.")
    out = []
    for code, c in zip(CALIBRATION_ORDER[:n], cards, strict=True):
        crop = rectify(img, inset(np.array(c.quad, np.float32)), (FACE_W, FACE_H), ordered=True)
        out.append((code, clean_face(crop)))
    return out


INSET_ACROSS, INSET_ALONG = 0.06, 0.012  # of the card's width and length, each side


def inset(quad: np.ndarray) -> np.ndarray:
    """The detector's box a little inside the card, so no strip of table comes with the face (its boxes
    run ~3 % wide and shift sideways, geometry.BOX_ERROR); the face keeps its whole design."""
    q = order_long_axis_vertical(quad)
    u, v = axes(q)
    du, dv = u * INSET_ALONG, v * INSET_ACROSS
    return np.array([q[0] + du + dv, q[1] + du - dv, q[2] - du - dv, q[3] - du + dv], np.float32)


def clean_face(face: np.ndarray, paper: tuple[int, int, int] = (222, 236, 244)) -> np.ndarray:
    """Take the photo's light out of a face cut from it: each channel scaled so the paper (the bright
    end of the face) comes out a plain paper colour, and the ink stays as dark as it was printed; then
    sharpened. The scenes rendered from the face add their own light and blur, as for every face."""
    f = face.astype(np.float32)
    hi = np.percentile(f.reshape(-1, 3), 90, axis=0)
    lo = np.percentile(f.reshape(-1, 3), 1, axis=0)
    target_lo = np.minimum(lo, 40.0)
    out = (f - lo) / np.maximum(hi - lo, 1.0) * (np.array(paper, np.float32) - target_lo) + target_lo
    # and some of the sharpness the photo's resolution took (faces are drawn crisp)
    out = cv2.addWeighted(out, 1.6, cv2.GaussianBlur(out, (0, 0), 2.0), -0.6, 0)
    return np.clip(out, 0, 255).astype(np.uint8)


def faces_from_folder(folder: Path) -> list[tuple[str, np.ndarray]]:
    from vision.synth.faces import load_face_folder

    got = load_face_folder(folder)
    missing = [c for c in CALIBRATION_ORDER[:30] if c not in got]
    if missing:
        raise CalibrationError(f"The face folder lacks {', '.join(missing)}: it needs one sub-folder per card code.")
    return [(code, load_image(paths[0])) for code, paths in got.items()]


def check_sheet(faces: list[tuple[str, np.ndarray]]) -> np.ndarray:
    """Every face with the name it was given, for the player to confirm."""
    from PIL import Image, ImageDraw

    from vision.fonts import UI_FONT, font

    tiles = []
    for code, face in faces:
        f = cv2.resize(face, (FACE_W, FACE_H))
        label = Image.new("RGB", (FACE_W, 40), (40, 40, 40))
        ImageDraw.Draw(label).text((FACE_W / 2, 20), f"{NAMES_ZH[code]} {code}", font=font(UI_FONT, 16), fill=(255, 255, 255), anchor="mm")
        tiles.append(np.vstack([cv2.cvtColor(np.asarray(label), cv2.COLOR_RGB2BGR), f]))
    rows = [np.hstack([np.pad(t, ((4, 4), (4, 4), (0, 0)), constant_values=90) for t in tiles[i:i + 9]]) for i in range(0, len(tiles), 9)]
    width = max(r.shape[1] for r in rows)
    return np.vstack([np.pad(r, ((0, 0), (0, width - r.shape[1]), (0, 0)), constant_values=90) for r in rows])


EXPORT_S = 30  # what calibrate does after the fine-tuning (export, copies) takes well under this

# the scenes crops are mined from: finished hands in rows, stairs and fans, as the photos to be read
# (seed 9005's held-out deck, 160 scenes: whole-photo exact 72.5 % mining `detect` scenes, 80 % mining these)
MINE_KIND = "hands"


def calibrate(photos: list[str], out: str | Path, base: str | Path | None = None, faces_dir: str | None = None,
              scenes: int = CALIBRATION_SCENES, epochs: int = 4, workers: int = 2, confirm=None,
              minutes: float = CALIBRATION_MINUTES) -> dict[str, Any]:
    """Build a calibrated model folder ``out`` (the base detector, a fine-tuned classifier). The fine-tuning trains
    ``epochs``, fewer when they would not end within ``minutes`` from the start (EXPORT_S left for what follows:
    vision.train.stop_before)."""
    t0 = time.perf_counter()
    deadline = time.time() + minutes * 60 - EXPORT_S
    base_info = model_info(base or DEFAULT_MODEL)
    out = Path(out)
    faces_root = out / "faces"
    if faces_dir:
        faces = faces_from_folder(Path(faces_dir))
    else:
        if not photos:
            raise CalibrationError("Give a calibration photo (or --faces DIR).")
        faces: list[tuple[str, np.ndarray]] = []
        for p in photos:  # the first photo's faces; later photos add kinds not seen yet
            seen = {c for c, _ in faces}
            faces += [(c, f) for c, f in faces_from_photo(load_image(p), base_info.path) if c not in seen]
    out.mkdir(parents=True, exist_ok=True)
    for code, face in faces:
        d = faces_root / code
        d.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(d / "face.png"), face)
    sheet = out / "check.png"
    cv2.imwrite(str(sheet), check_sheet(faces))
    if confirm is not None and not confirm(sheet):
        raise CalibrationError(f"Not confirmed: look at {sheet}, lay the cards in the documented order and try again.")
    # render scenes with these faces and fine-tune the classifier
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run
    from vision.train.yolo import train_classify

    data = out / "synth"
    synth_run(Job(str(data), "classify", 4242, scenes, ("classic",), str(faces_root), 0.15, 1280, 960), workers=workers, force=True)
    # and crops cut where the detector puts its boxes, as the classifier will see them (vision/mine.py)
    from vision.train.mine import mine, mine_negatives

    scenes_dir = out / "synth-scenes"
    synth_run(Job(str(scenes_dir), MINE_KIND, 4343, max(8, scenes // 2), ("classic",), str(faces_root), 0.0, 1280, 960),
              workers=workers, force=True, progress=False)
    mine(scenes_dir, data, base_info.path, progress=False)
    if NOT_A_CARD in base_info.names:  # the base classifier rejects boxes that are not cards: keep it doing so
        mine_negatives(scenes_dir, data, base_info.path, progress=False)
    shutil.rmtree(scenes_dir, ignore_errors=True)
    _fill_missing_classes(data)
    run_dir = train_classify(str(data), epochs=epochs, imgsz=base_info.cls_imgsz, batch=64, name=f"calibrate-{out.name}",
                             model=str(base_info.path / "classifier.pt"), workers=1,
                             extra=dict(warmup_epochs=0), deadline=deadline)  # fine-tuning from weights: lr0 0.001 (vision.train.yolo)
    from vision.train.release import export_onnx, reorder_classifier, run_results

    trained = run_results(run_dir).get("epochs_done", 0)
    tuned, names = reorder_classifier(run_dir / "weights" / "best.pt", run_dir / "weights" / "release.pt")
    onnx = export_onnx(tuned, base_info.cls_imgsz, dynamic=True)
    shutil.copy(onnx, out / "classifier.onnx")
    shutil.copy(base_info.path / "detector.onnx", out / "detector.onnx")
    for net in BOX_NETS:  # they judge boxes, not faces: they carry over
        if (base_info.path / net).is_file():
            shutil.copy(base_info.path / net, out / net)
    meta = json.loads((base_info.path / "model.json").read_text())
    meta["names"] = names  # the codes, and `none` when the base has that class
    meta["calibrated_from"] = str(base_info.path)
    # 福禄寿禧财 are laid out only when the deck has them (README): a deck shown without them never reads them
    meta["absent"] = [c for c in EXTRAS if c not in {code for code, _ in faces}]
    meta["calibration"] = {"faces": len(faces), "scenes": scenes, "epochs": trained, "epochs_asked": epochs,
                           "minutes": round((time.perf_counter() - t0) / 60, 1)}
    (out / "model.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False))
    shutil.rmtree(data, ignore_errors=True)
    return {"out": str(out), "faces": len(faces), "check": str(sheet), **meta["calibration"]}


def _fill_missing_classes(data: Path) -> None:
    """ultralytics wants every class in train and val: an empty class folder gets crops from the other split,
    or, for a kind the calibration deck does not have, faces rendered in a stock style."""
    import random

    from vision.infer.geometry import fold
    from vision.synth.faces import random_style, render_face

    with_none = any((data / split / NOT_A_CARD).is_dir() for split in ("train", "val"))  # mined when the base has it
    for code in CODES + (NOT_A_CARD,) * with_none:
        tr, va = data / "train" / code, data / "val" / code
        tr.mkdir(parents=True, exist_ok=True)
        va.mkdir(parents=True, exist_ok=True)
        if not any(tr.iterdir()) and not any(va.iterdir()):
            for k in range(4):
                face, _ = render_face(code, random_style(random.Random(k)), k)
                crop = fold(cv2.resize(face, (64, 256), interpolation=cv2.INTER_AREA))
                cv2.imwrite(str((tr if k < 3 else va) / f"stock_{k}.jpg"), crop)
        for a, b in ((tr, va), (va, tr)):
            if not any(a.iterdir()):
                src = next(iter(b.glob("*.jpg")), None)
                if src is not None:
                    shutil.copy(src, a / src.name)


def render_calibration_photo(style, seed: int = 0, n: int = 30, size: tuple[int, int] = (1600, 1200)) -> tuple[np.ndarray, dict]:
    """A photo of one card of each kind laid in rows of nine, in the calibration order."""
    import random

    from vision.synth.faces import FaceSource
    from vision.synth.scene import SceneSpec, compose

    rng = random.Random(f"calib:{seed}")
    spec = SceneSpec(size[0], size[1], "grid", list(CALIBRATION_ORDER[:n]), [], [], 1 / 12)
    return compose(spec, FaceSource(style, seed=seed), rng)


def measure(work: str | Path, base: str | Path | None = None, n_test: int = 60, seed: int = 9005, scenes: int = CALIBRATION_SCENES,
            epochs: int = 4, minutes: float = CALIBRATION_MINUTES) -> dict[str, Any]:
    """Before/after figures on a deck in the held-out style: one calibration photo, a test set of that deck."""
    import random

    from vision.eval.evaluate import evaluate
    from vision.synth.faces import FaceSource, random_style
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    style = random_style(random.Random(seed), "holdout")
    # the deck's true faces, to render the test photos of this deck
    true_faces = work / "deck_faces"
    src = FaceSource(style, seed=seed)
    for code in CODES:
        (true_faces / code).mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(true_faces / code / "face.png"), src.face(code)[0])
    test = work / "test"
    shutil.rmtree(test, ignore_errors=True)  # synth keeps the photos already there: another seed's deck would stay
    synth_run(Job(str(test), "hands", seed, n_test, ("holdout",), str(true_faces), 0.0, 1280, 960), workers=2, force=True, progress=False)
    photo, _ = render_calibration_photo(style, seed)
    photo_path = work / "calibration_photo.jpg"
    cv2.imwrite(str(photo_path), photo, [cv2.IMWRITE_JPEG_QUALITY, 92])
    before = evaluate(test, base, progress=False)
    t = time.perf_counter()
    cal = calibrate([str(photo_path)], work / "model", base, scenes=scenes, epochs=epochs, minutes=minutes)
    took = (time.perf_counter() - t) / 60
    after = evaluate(test, work / "model", progress=False)
    return {"test_images": n_test, "style": "holdout", "seed": seed, "calibration_minutes": round(took, 1),
            "before": _figures(before), "after": _figures(after), "calibration": cal}


def _figures(report: dict) -> dict:
    """What a calibration changes, from an evaluate report: the card figures, and what keeps photos from being
    exact (cards missed, boxes that are no card, codes misread: the detector's part and the classifier's)."""
    per = report["per_image"]
    return {k: report[k] for k in ("precision", "recall", "classification_accuracy", "whole_photo_exact",
                                 "whole_photo_exact_ci95") if k in report} | {
        "cards": sum(p["cards"] for p in per), "missed": sum(p["cards"] - p["found"] for p in per),
        "extra": sum(p["extra"] for p in per), "misread": sum(p["found"] - p["right"] for p in per),
        "confusions": report["confusions"]}
