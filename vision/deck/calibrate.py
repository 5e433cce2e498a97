"""Calibrating to a player's deck without PyTorch: the faces cut from the calibration photo (find, name), the check
sheet the player confirms, and the fast fit (fit) written as a complete model folder. The full fine-tune
(vision.train.calibrate) builds on the same faces and writes the same folder."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scoring.cards import CODES, EXTRAS, NAMES_ZH
from scoring.messages import Msg
from vision import FAST_SCENES
from vision.deck import fit as F
from vision.deck.find import Blob, Found, find_cards
from vision.deck.name import (
    SURE_HEAD,
    CalibrationError,
    Face,
    check_layout,
    disagreements,
    name_by_heads,
    name_by_place,
    picture,
    with_heads,
)
from vision.infer.geometry import axes, order_long_axis_vertical, rectify
from vision.infer.imageio import load_image
from vision.infer.model import BOX_NETS, ModelInfo, model_info
from vision.synth.faces import FACE_H, FACE_W

INSET_ACROSS, INSET_ALONG = 0.03, 0.01  # of a found card's width and length, each side: no table comes with the face


def inset(quad: np.ndarray, across: float = INSET_ACROSS, along: float = INSET_ALONG) -> np.ndarray:
    """The card's outline a little inside the card, so no strip of table comes with the face."""
    q = order_long_axis_vertical(quad)
    u, v = axes(q)
    du, dv = u * along, v * across
    return np.array([q[0] + du + dv, q[1] + du - dv, q[2] - du - dv, q[3] - du + dv], np.float32)


def clean_face(face: np.ndarray, paper: tuple[int, int, int] = (222, 236, 244)) -> np.ndarray:
    """Take the photo's light out of a face cut from it: each channel scaled so the paper (the bright end of the
    face) comes out a plain paper colour and the ink stays as dark as it was printed; then sharpened. The scenes
    rendered from the face add their own light and blur, as for every face."""
    f = face.astype(np.float32)
    hi = np.percentile(f.reshape(-1, 3), 90, axis=0)
    lo = np.percentile(f.reshape(-1, 3), 1, axis=0)
    target_lo = np.minimum(lo, 40.0)
    out = (f - lo) / np.maximum(hi - lo, 1.0) * (np.array(paper, np.float32) - target_lo) + target_lo
    out = cv2.addWeighted(out, 1.6, cv2.GaussianBlur(out, (0, 0), 2.0), -0.6, 0)
    return np.clip(out, 0, 255).astype(np.uint8)


def name_faces(img: np.ndarray, any_order: bool = False,
               base: str | Path | None = None) -> tuple[list[Face], np.ndarray, list[str]]:
    """The photo's cards found and named (by place; or, ``any_order``, by their heads), with the picture of them
    and notes where a head reads another card than the name given (a head reader's doubt, for the player to look
    at on the picture, not a refusal); CalibrationError, with the picture, when the layout keeps the naming from
    being sure. Where the cards cannot be told from the table, the detector's boxes are a second opinion, and the cards'
    sharp outlines a third."""
    found = find_cards(img)
    try:
        return _named(img, found, any_order)
    except CalibrationError as first:
        from vision.infer.recognize import recognize_array

        boxes = [np.array(c.quad, np.float32) for c in recognize_array(img, base).cards]
        tries = [first]
        if boxes:
            try:
                return _named(img, Found([Blob(q, float(cv2.contourArea(q)), "card") for q in boxes], [], 0.0), any_order)
            except CalibrationError as other:  # said first where as many things are wrong: the finder takes a patterned
                tries.insert(0, other)  # cloth's squares for things that are not cards, the detector does not
        try:  # the last resort: the cards' outlines (a table as light and cloudy as their paper)
            return _named(img, find_cards(img, outlines=True), any_order)
        except CalibrationError as other:
            tries.append(other)
        raise min(tries, key=lambda e: len(e.said)) from None  # the reading with fewest things wrong says what is


def _named(img: np.ndarray, found: Found, any_order: bool) -> tuple[list[Face], np.ndarray, list[str]]:
    rows, said, marked = check_layout(found)
    faces = with_heads(img, name_by_place(found, rows)) if rows and (any_order or not said) else []
    notes: list[str] = []
    if faces and any_order:
        faces, more = name_by_heads(faces)
        said = [s for s in said if getattr(s, "key", "") not in ("calib_row", "calib_count")] + more
    elif faces:
        notes = disagreements(faces)
    flagged = {k for k, f in enumerate(faces) if f.head and f.head != f.code and f.head_p >= SURE_HEAD}
    unnamed = [Face("", order_long_axis_vertical(b.quad), 0, 0) for b in found.cards]
    pic = picture(img, faces or unnamed, marked, flagged)
    if not faces and not said:
        said = [Msg("no_cards", "No cards were found in the photo.")]
    if said:
        raise CalibrationError(" ".join(said), pic, said)
    return faces, pic, notes


def faces_from_photo(img: np.ndarray, any_order: bool = False,
                     base: str | Path | None = None) -> tuple[list[tuple[str, np.ndarray]], np.ndarray, list[str]]:
    """Each card of a calibration photo as (code, face upright at the renderer's face size), the picture, notes."""
    faces, pic, notes = name_faces(img, any_order, base)
    return [(f.code, clean_face(rectify(img, inset(f.quad), (FACE_W, FACE_H), ordered=True))) for f in faces], pic, notes


def faces_from_folder(folder: Path) -> list[tuple[str, np.ndarray]]:
    from vision.synth.faces import load_face_folder

    got = load_face_folder(folder)
    missing = [c for c in CODES[:30] if c not in got]
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


def save_faces(faces: list[tuple[str, np.ndarray]], out: Path) -> Path:
    """The faces as a face folder (OUT/faces/<code>/face.png), as synth --faces reads them."""
    root = out / "faces"
    for code, face in faces:
        d = root / code
        d.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(d / "face.png"), face)
    return root


def write_model_folder(out: Path, base: ModelInfo, classifier: Path, faces: list[tuple[str, np.ndarray]],
                       names: list[str], calibration: dict[str, Any], no_extras: bool = False) -> None:
    """A complete model folder: the calibrated classifier, the base's detector and box nets, and a model.json that
    says what it was calibrated from and, with ``no_extras`` (the player says the deck has no 福禄寿禧财), the extras
    the photo lacks, never read (docs/calibration.md). Without it, extras left out of the photo are read as the base
    reads them: a player may leave them out of a deck that has them."""
    if classifier.resolve() != (out / "classifier.onnx").resolve():
        shutil.copy(classifier, out / "classifier.onnx")
    shutil.copy(base.path / "detector.onnx", out / "detector.onnx")
    for net in BOX_NETS:  # they judge boxes, not faces: they carry over
        if (base.path / net).is_file():
            shutil.copy(base.path / net, out / net)
    meta = json.loads((base.path / "model.json").read_text())
    meta["names"] = names
    meta["calibrated_from"] = str(base.path)
    meta["absent"] = [c for c in EXTRAS if c not in {code for code, _ in faces}] if no_extras else []
    meta["calibration"] = calibration
    meta.pop("second", None)  # the fitted classifier reads alone: the base's second opinion was not fitted to the deck
    meta.pop("adapt", None)  # ... and is fitted to the deck: no second reading with the photo's statistics
    (out / "model.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False))


def mine_deck_hands(faces_root: Path, data: Path, base: Path, n: int, seed: int, least_show: float | None = None,
                    workers: int = 2, progress: bool = False, negatives: bool = False, kind: str = "hands") -> int:
    """``n`` winning hands laid out with the deck's faces (``least_show``: laid that tight), cut where the ``base`` model
    boxes them into the crop folder ``data`` (vision.eval.mine), with ``negatives`` the boxes that show no card too;
    the scenes are deleted after. Returns the crops of cards cut. Both fits take their half-covered cards from here."""
    from vision.eval.mine import mine, mine_negatives
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run

    scenes = data.parent / f"synth-{kind}-{seed}"
    synth_run(Job(str(scenes), kind, seed, n, ("classic",), str(faces_root), 0.0, 1280, 960, least_show=least_show),
              workers=workers, force=True, progress=progress)
    cut = mine(scenes, data, base, progress=progress)
    if negatives:
        mine_negatives(scenes, data, base, progress=progress)
    shutil.rmtree(scenes, ignore_errors=True)
    return cut


# winning hands laid out tight with the deck's faces, this share of the fit's scenes, cut where the base model boxes
# them (vision.eval.mine): the fast fit then also sees the deck's cards half covered (0: whole faces only). Chosen on
# val decks (docs/calibration.md): as many tight hands as whole-face scenes read their tight hands better than 0.4 did
FAST_TIGHT_SHARE = 1.0
FAST_TIGHT_SHOW = 0.3  # the least share of a card's width showing in those stairs and fans


def check_detector_minutes(fit: str, detector_minutes: float) -> None:
    """CalibrationError in one sentence for a detector fine-tune asked of the fast fit, which has none (it needs
    PyTorch and minutes): refused before anything is made, not ignored."""
    if fit == "fast" and detector_minutes > 0:
        raise CalibrationError("The detector is fine-tuned only with the full fit: add --fit full to --detector-minutes.")


def fast_fit(faces: list[tuple[str, np.ndarray]], out: Path, base: ModelInfo, scenes: int = FAST_SCENES,
             workers: int = 2, progress: bool = True, settings: F.FitSettings = F.FIT,
             tight_share: float = FAST_TIGHT_SHARE, no_extras: bool = False) -> dict[str, Any]:
    """The fast fit (vision.deck.fit) of ``base``'s classifier to ``faces``, written as the model folder ``out``: the
    crops are ``scenes`` scenes of whole faces, and ``tight_share`` as many winning hands laid tight, cut where the
    base boxes them."""
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run

    t0 = time.perf_counter()
    faces_root = save_faces(faces, out)
    data = out / "synth"
    synth_run(Job(str(data), "classify", 4242, scenes, ("classic",), str(faces_root), 0.0, 1280, 960), workers=workers,
              force=True, progress=progress)
    tight_scenes = round(scenes * tight_share)
    tight_crops = mine_deck_hands(faces_root, data, base.path, tight_scenes, 4343, FAST_TIGHT_SHOW, workers,
                                  progress) if tight_scenes else 0
    names = list(base.names)
    crops, y = F.training_set(data, names)
    session, w0, b0 = F.embedder(base.path / "classifier.onnx")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(crops), desc="fast fit: features", unit="crop")
    x = F.features(session, crops, (lambda k: bar.update(k - bar.n)) if bar else None)
    if bar:
        bar.close()
    rows = np.zeros(len(names), bool)
    rows[np.unique(y)] = True
    w, b, figures = F.refit(x, y, w0, b0, rows, settings)
    F.write_classifier(base.path / "classifier.onnx", out / "classifier.onnx", w, b)
    shutil.rmtree(data, ignore_errors=True)
    cal = {"fit": "fast", "faces": len(faces), "scenes": scenes, "tight_scenes": tight_scenes, "tight_crops": tight_crops,
           "crops": len(crops), **figures,
           "minutes": round((time.perf_counter() - t0) / 60, 2)}
    write_model_folder(out, base, out / "classifier.onnx", faces, names, cal, no_extras)
    fitted, released = check_on_scenes([out, base.path], faces_root, workers)
    cal["deck_check"] = fitted | {"released": released}
    if fitted["codes_right"] < released["codes_right"]:  # a deck the released classifier already reads better
        shutil.copy(base.path / "classifier.onnx", out / "classifier.onnx")
        cal["deck_check"] = released | {"kept": "released"}
    cal["minutes"] = round((time.perf_counter() - t0) / 60, 2)
    meta = json.loads((out / "model.json").read_text())  # the folder is complete: only what the check found is added
    (out / "model.json").write_text(json.dumps(meta | {"calibration": cal}, indent=1, ensure_ascii=False))
    return cal


CHECK_SCENES = 8  # winning hands rendered with the deck's faces, read with the calibrated model and the released one


def check_on_scenes(models: list[Path], faces_root: Path, workers: int = 2, n: int = CHECK_SCENES) -> list[dict[str, Any]]:
    """How each model reads the deck: ``n`` winning hands laid out with the deck's faces (rendered, so their cards
    are known), read as photos are: the share of cards found (the detector, which the fast fit does not change) and
    of found cards read right. The fast fit keeps the released classifier where it reads these better, and a low
    share tells the player before a game, not during it."""
    from vision.eval.evaluate import evaluate
    from vision.synth.write import Job
    from vision.synth.write import run as synth_run

    scenes = models[0] / "check-scenes"
    synth_run(Job(str(scenes), "hands", 9191, n, ("classic",), str(faces_root), 0.0, 1280, 960), workers=workers,
              force=True, progress=False)
    out = []
    for m in models:
        r = evaluate(scenes, m, progress=False)
        out.append({"scenes": n, "recall": r["recall"], "codes_right": r["classification_accuracy"], "precision": r["precision"]})
    shutil.rmtree(scenes, ignore_errors=True)
    return out


def calibrate_fast(photos: list[str], out: str | Path, base: str | Path | None = None, faces_dir: str | None = None,
                   any_order: bool = False, confirm=None, scenes: int = FAST_SCENES, workers: int = 2,
                   progress: bool = True, no_extras: bool = False) -> dict[str, Any]:
    """Faces from the photo (or a face folder), the check sheet confirmed, the fast fit: a model folder ``out``."""
    faces, sheet = collect_faces(photos, Path(out), faces_dir, any_order, confirm, base)
    cal = fast_fit(faces, Path(out), model_info(base), scenes, workers, progress, no_extras=no_extras)
    return {"out": str(out), "check": str(sheet), **cal}


def collect_faces(photos: list[str], out: Path, faces_dir: str | None, any_order: bool, confirm=None,
                  base: str | Path | None = None, say=print) -> tuple[list[tuple[str, np.ndarray]], Path]:
    """The deck's faces (the first photo's; later photos add kinds not seen yet), written with the check sheet and
    the photo's picture into ``out``, and confirmed by ``confirm(sheet)`` when given. What the player should look at
    on the sheet (a face whose head gainsays its name) goes to ``say`` before the confirmation is asked."""
    out.mkdir(parents=True, exist_ok=True)
    if faces_dir:
        faces = faces_from_folder(Path(faces_dir))
    else:
        if not photos:
            raise CalibrationError("Give a calibration photo (or --faces DIR).")
        faces = []
        notes: list[str] = []
        for k, p in enumerate(photos):
            try:
                got, pic, more = faces_from_photo(load_image(p), any_order, base)
                notes += more
            except CalibrationError as e:
                if e.picture is not None:
                    where = out / (f"photo_{k + 1}.png" if len(photos) > 1 else "photo.png")
                    cv2.imwrite(str(where), e.picture)
                    raise CalibrationError(f"{e} (see {where})", e.picture, e.said) from None
                raise
            cv2.imwrite(str(out / (f"photo_{k + 1}.png" if len(photos) > 1 else "photo.png")), pic)
            seen = {c for c, _ in faces}
            faces += [(c, f) for c, f in got if c not in seen]
    sheet = out / "check.png"
    cv2.imwrite(str(sheet), check_sheet(faces))
    if faces_dir:
        notes = []
    for n in notes:
        say(f"check: {n}")
    if confirm is not None and not confirm(sheet):
        raise CalibrationError(f"Not confirmed: look at {sheet}, lay the cards in the documented order and try again.")
    return faces, sheet
