"""Deck calibration (`changpai calibrate`): fit the recognizer to a player's own deck.

The player lays one card of each kind in rows, in the documented order (条 1–9, 丙 1–9, 万 1–9, then 千字 红花 白花
and any extras) and takes one photo. vision.deck finds the cards without knowing the deck, names them, draws them
for the player to confirm, and fits the classifier's last layer in seconds (the fast fit, the default). The full fit
here fine-tunes the whole classifier on scenes rendered from the faces (PyTorch; `--fit full`, minutes).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import cv2

from scoring.cards import CODES
from vision import CALIBRATION_MINUTES, CALIBRATION_SCENES, FAST_SCENES
from vision.deck.calibrate import calibrate_fast, check_detector_minutes, collect_faces, mine_deck_hands, save_faces, write_model_folder
from vision.deck.name import CALIBRATION_ORDER, CalibrationError
from vision.deck.photo import render_calibration_photo
from vision.infer.model import DEFAULT_MODEL, NOT_A_CARD, model_info

__all__ = ["CALIBRATION_ORDER", "CalibrationError", "calibrate", "measure", "render_calibration_photo"]


EXPORT_S = 30  # what calibrate does after the fine-tuning (export, copies) takes well under this

# the scenes crops are mined from: finished hands in rows, stairs and fans, as the photos to be read
# (seed 9005's held-out deck, 160 scenes: whole-photo exact 72.5 % mining `detect` scenes, 80 % mining these)
MINE_KIND = "hands"
# and as many again laid tight (stairs and fans down to this share of a card's width showing; None: loose only)
TIGHT_MINE_SHOW: float | None = 0.3


def calibrate(photos: list[str], out: str | Path, base: str | Path | None = None, faces_dir: str | None = None,
              scenes: int | None = None, epochs: int = 4, workers: int = 2, confirm=None,
              minutes: float = CALIBRATION_MINUTES, fit: str = "fast", any_order: bool = False,
              progress: bool = True, detector_minutes: float = 0.0, no_extras: bool = False) -> dict[str, Any]:
    """Build a calibrated model folder ``out`` (the base detector, a classifier fitted to the deck). ``fit="fast"``:
    the last layer refitted (vision.deck.fit, seconds); ``"full"``: the classifier fine-tuned for ``epochs``, fewer
    when they would not end within ``minutes`` from the start (EXPORT_S left for what follows: stop_before); with
    ``detector_minutes``, the detector too, fine-tuned on scenes of the deck for that long after. ``no_extras``: the
    deck has no 福禄寿禧财, and the model never reads them (else extras the photo lacks are read as the base reads them)."""
    check_detector_minutes(fit, detector_minutes)
    if fit == "fast":
        return calibrate_fast(photos, out, base, faces_dir, any_order, confirm, scenes=scenes or FAST_SCENES,
                              workers=workers, progress=progress, no_extras=no_extras)
    scenes = scenes or CALIBRATION_SCENES
    if fit != "full":
        raise CalibrationError(f"A fit is fast or full, not {fit!r}.")
    t0 = time.perf_counter()
    deadline = time.time() + minutes * 60 - EXPORT_S
    base_info = model_info(base or DEFAULT_MODEL)
    out = Path(out)
    faces, sheet = collect_faces(photos, out, faces_dir, any_order, confirm, base_info.path)
    faces_root = save_faces(faces, out)
    # render scenes with these faces and fine-tune the classifier
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run
    from vision.train.yolo import train_classify

    data = out / "synth"
    synth_run(Job(str(data), "classify", 4242, scenes, ("classic",), str(faces_root), 0.15, 1280, 960), workers=workers,
              force=True, progress=progress)
    # and crops cut where the detector puts its boxes, as the classifier will see them (vision.eval.mine); the base
    # classifier rejects boxes that are not cards: keep it doing so
    mine_deck_hands(faces_root, data, base_info.path, max(8, scenes // 2), 4343, None, workers,
                    negatives=NOT_A_CARD in base_info.names, kind=MINE_KIND)
    tight_crops = 0
    if TIGHT_MINE_SHOW is not None:  # as many hands again laid tight, as players hold them
        tight_crops = mine_deck_hands(faces_root, data, base_info.path, max(8, scenes // 2), 4444, TIGHT_MINE_SHOW, workers,
                                      kind=MINE_KIND)
    _fill_missing_classes(data)
    run_dir = train_classify(str(data), epochs=epochs, imgsz=base_info.cls_imgsz, batch=64, name=f"calibrate-{out.name}",
                             model=str(base_info.path / "classifier.pt"), workers=1,
                             extra=dict(warmup_epochs=0), deadline=deadline)  # fine-tuning from weights: lr0 0.001 (vision.train.yolo)
    from vision.train.release import export_onnx, reorder_classifier, run_results

    trained = run_results(run_dir).get("epochs_done", 0)
    tuned, names = reorder_classifier(run_dir / "weights" / "best.pt", run_dir / "weights" / "release.pt")
    onnx = export_onnx(tuned, base_info.cls_imgsz, dynamic=True)
    cal = {"fit": "full", "faces": len(faces), "scenes": scenes, "tight_crops": tight_crops, "epochs": trained, "epochs_asked": epochs,
           "minutes": round((time.perf_counter() - t0) / 60, 1)}
    shutil.rmtree(data, ignore_errors=True)
    if detector_minutes > 0:  # and the detector, on scenes laid out with the deck's faces
        cal["detector"] = fit_detector(faces_root, out, base_info, detector_minutes, workers, progress,
                                       scenes=min(DETECT_SCENES, scenes))
        cal["minutes"] = round((time.perf_counter() - t0) / 60, 1)
    write_model_folder(out, base_info, Path(onnx), faces, names, cal, no_extras)
    if detector_minutes > 0:
        shutil.copy(out / "detector.fitted.onnx", out / "detector.onnx")
        (out / "detector.fitted.onnx").unlink()
    return {"out": str(out), "check": str(sheet), **cal}


DETECT_SCENES = 120  # scenes rendered with the deck's faces to fine-tune the detector on


def fit_detector(faces_root: Path, out: Path, base: Any, minutes: float, workers: int = 2, progress: bool = True,
                 scenes: int = DETECT_SCENES) -> dict[str, Any]:
    """The base detector fine-tuned on scenes laid out with the deck's faces (loose cards, covered, tilted), for the
    epochs that fit in ``minutes``; written to OUT/detector.fitted.onnx. A deck whose cards the detector finds
    poorly (another printer's proportions and borders) is what it is for."""
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run
    from vision.train.release import export_onnx, run_results
    from vision.train.yolo import train_detect

    t0 = time.perf_counter()
    data = out / "synth-detect"
    synth_run(Job(str(data), "detect", 4545, scenes, ("classic",), str(faces_root), max(0.1, 2 / scenes), 1280, 960), workers=workers,
              force=True, progress=progress)
    deadline = time.time() + minutes * 60 - EXPORT_S
    run_dir = train_detect(str(data / "dataset.yaml"), epochs=3, imgsz=base.det_imgsz, batch=8, name=f"calibrate-det-{out.name}",
                           model=str(base.path / "detector.pt"), workers=1,
                           extra=dict(lr0=0.0005, warmup_epochs=0.0, close_mosaic=0), deadline=deadline)
    weights = run_dir / "weights" / ("best.pt" if (run_dir / "weights" / "best.pt").is_file() else "last.pt")
    shutil.copy(export_onnx(weights, base.det_imgsz, dynamic=False), out / "detector.fitted.onnx")
    shutil.rmtree(data, ignore_errors=True)
    return {"scenes": scenes, "epochs": run_results(run_dir).get("epochs_done", 0),
            "minutes": round((time.perf_counter() - t0) / 60, 1)}


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


def measure(work: str | Path, base: str | Path | None = None, n_test: int = 60, seed: int = 9005, scenes: int | None = None,
            epochs: int = 4, minutes: float = CALIBRATION_MINUTES, family: str = "holdout", fit: str = "fast",
            least_show: float | None = None, detector_minutes: float = 0.0,
            rulesets: tuple[str, ...] = ()) -> dict[str, Any]:
    """Before/after figures on one deck the base model never saw (``family``: the held-out style, or a deck
    family, vision.synth.decks): one calibration photo, a test set of that deck's winning hands (drawn among
    ``rulesets``: rugao's and 喜儿's hold the extras a photo of 30 faces leaves out), read card by card and scored
    photo → total (the issue's hands figure)."""
    import random

    from vision.eval.evaluate import evaluate, evaluate_hands
    from vision.synth.decks import deck_style
    from vision.synth.faces import FaceSource
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    style = deck_style(random.Random(seed), family)
    # the deck's true faces, to render the test photos of this deck
    true_faces = work / "deck_faces"
    src = FaceSource(style, seed=seed)
    for code in CODES:
        (true_faces / code).mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(true_faces / code / "face.png"), src.face(code)[0])
    test = work / "test"
    shutil.rmtree(test, ignore_errors=True)  # synth keeps the photos already there: another seed's deck would stay
    synth_run(Job(str(test), "hands", seed, n_test, ("holdout",), str(true_faces), 0.0, 1280, 960, least_show=least_show,
                  rulesets=rulesets), workers=2, force=True, progress=False)
    photo, _ = render_calibration_photo(style, seed)
    photo_path = work / "calibration_photo.jpg"
    cv2.imwrite(str(photo_path), photo, [cv2.IMWRITE_JPEG_QUALITY, 92])
    before = evaluate(test, base, progress=False)
    hands_before = evaluate_hands(test, base, progress=False)
    t = time.perf_counter()
    shutil.rmtree(work / "model", ignore_errors=True)
    cal = calibrate([str(photo_path)], work / "model", base, scenes=scenes, epochs=epochs, minutes=minutes, fit=fit,
                    progress=False, detector_minutes=detector_minutes)
    took = (time.perf_counter() - t) / 60
    after = evaluate(test, work / "model", progress=False)
    hands_after = evaluate_hands(test, work / "model", progress=False)
    return {"test_images": n_test, "style": family, "seed": seed, "fit": fit, "least_show": least_show,
            "rulesets": list(rulesets),
            "detector_minutes": detector_minutes, "calibration_minutes": round(took, 2),
            "before": _figures(before) | {"hands": _hand_figures(hands_before)},
            "after": _figures(after) | {"hands": _hand_figures(hands_after)}, "calibration": cal}


def _hand_figures(report: dict) -> dict:
    """The photo → total figures of an evaluate_hands report: right with and without repair, wrong totals on a
    legal win and those without a check: warning."""
    return {k: report[k] for k in ("photos", "exact_with_repair", "exact_without_repair", "wrong_total_on_a_win",
                                   "wrong_total_on_a_win_unflagged")}


def _figures(report: dict) -> dict:
    """What a calibration changes, from an evaluate report: the card figures, and what keeps photos from being
    exact (cards missed, boxes that are no card, codes misread: the detector's part and the classifier's)."""
    per = report["per_image"]
    return {k: report[k] for k in ("precision", "recall", "classification_accuracy", "whole_photo_exact",
                                 "whole_photo_exact_ci95") if k in report} | {
        "cards": sum(p["cards"] for p in per), "missed": sum(p["cards"] - p["found"] for p in per),
        "extra": sum(p["extra"] for p in per), "misread": sum(p["found"] - p["right"] for p in per),
        "confusions": report["confusions"]}
