"""Batch auto-labelling of card photos (`changpai label`): recognize every image under a folder and write
labels a person reviews, then trains on.

Never loses a person's work: every file written is recorded with its hash; a label that differs from
what this tool last wrote was edited by someone and is left alone (unless overwrite). Writes are
atomic; per-image results are cached so an interrupted run resumes; unreadable files are skipped and
listed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scoring.cards import CODES
from vision.infer.imageio import IMAGE_EXTS, load_image
from vision.label.formats import LABEL_STUDIO_CONFIG, coco_document, label_studio_tasks, review_page, yolo_lines
from vision.label.records import LabelledPhoto
from vision.types import Recognition

FORMATS = ("yolo-obb", "coco", "label-studio")
# photos that training tools, Label Studio and browsers mostly cannot open: the exports name a JPEG copy of each,
# upright, written once to OUT/images/<path>.jpg (labels of IMG_1.HEIC: images/IMG_1.HEIC.jpg, labels/IMG_1.HEIC.txt)
CONVERTED = {".heic", ".heif"}
STATE_DIR = ".changpai-label"


def find_images(root: Path) -> list[Path]:
    """Every image under root, recursively; extensions matched case-insensitively (.JPG too)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if Path(f).suffix.lower() in IMAGE_EXTS:
                out.append(Path(dirpath) / f)
    return out


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@dataclass
class Summary:
    images: int = 0
    labelled: int = 0
    resumed: int = 0
    cards: int = 0
    flagged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why)
    kept_edited: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"images": self.images, "labelled": self.labelled, "resumed": self.resumed, "cards": self.cards,
                "flagged": self.flagged, "skipped": [{"file": f, "why": w} for f, w in self.skipped],
                "kept_edited": self.kept_edited}


def recognize_file(args: tuple[str, str | None] | tuple[str, str | None, str | None]) -> dict[str, Any]:
    """Worker: one image → its recognition as a dict, or an error sentence. Runs in any process. A third item
    names where to write the photo's JPEG copy (a CONVERTED photo: ``jpeg_copy``), in the same pass."""
    path, model, copy_to = (*args, None)[:3]
    from vision.infer.imageio import READ_SIDE, ImageError, shrink
    from vision.infer.model import ModelError
    from vision.infer.recognize import recognize, recognize_array

    try:
        if copy_to:  # decoded once for both (a HEIC has no smaller decode): the copy at full size, read as recognize reads it
            full = load_image(path)
            jpeg_copy(full, Path(copy_to))
            small = shrink(full, READ_SIDE)
            rec = recognize_array(small, model)
            rec = rec.scaled(full.shape[1] / small.shape[1]) if small is not full else rec
        else:
            rec = recognize(path, model)
    except (ImageError, ModelError) as e:
        return {"file": path, "error": str(e)}
    except Exception as e:  # noqa: BLE001 — one photo's failure, whatever it is, skips that photo only
        return {"file": path, "error": f"{Path(path).name} could not be read ({type(e).__name__}: {str(e)[:120]})."}
    return {"file": path, "width": rec.width, "height": rec.height, "model": rec.model, "cards": [c.to_dict() for c in rec.cards]}


class Manifest:
    """Hashes of the files this tool wrote, to tell them from files a person edited."""

    def __init__(self, out: Path):
        self.path = out / STATE_DIR / "manifest.json"
        self.data: dict[str, str] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def is_ours(self, p: Path, out: Path) -> bool:
        """True when p is missing or still exactly what we last wrote."""
        if not p.exists():
            return True
        return self.data.get(str(p.relative_to(out))) == _sha(p.read_bytes())

    def write(self, p: Path, out: Path, data: bytes) -> None:
        atomic_write(p, data)
        self.data[str(p.relative_to(out))] = _sha(data)

    def save(self) -> None:
        atomic_write(self.path, json.dumps(self.data, indent=0).encode())


# ----------------------------------------------------------------------------------------------
# the job


def label(root: str | Path, out: str | Path | None = None, fmt: str = "yolo-obb", workers: int = 1, min_conf: float = 0.8,
          model: str | None = None, overwrite: bool = False, progress: bool = True, mapper=None) -> Summary:
    """Label every image under root. ``mapper(fn, items)`` may run the recognitions elsewhere
    (e.g. on a Dask cluster); by default a local process pool."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"No folder at {root}.")
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}.")
    out = Path(out).resolve() if out else root / "labels-changpai"
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; name a folder for the labels.")
    if out == root:
        raise ValueError(f"--out {out} is the photo folder itself; name another folder (by default PHOTOS/labels-changpai).")
    out.mkdir(parents=True, exist_ok=True)
    state = out / STATE_DIR / "recognitions"
    images = [p for p in find_images(root) if out not in p.parents]  # never the output tree, when it lies among the photos
    summary = Summary(images=len(images))
    manifest = Manifest(out)
    todo = []
    for p in images:
        rel = p.relative_to(root).as_posix()
        done = _done(state / (rel + ".json"), p) if not overwrite else None
        if done is None:
            todo.append(p)
        elif done.error:  # skipped before, and the photo is the same: skipped again with its reason, not retried
            summary.skipped.append((rel, done.error))
        else:
            summary.resumed += 1
    from tqdm import tqdm

    bar = tqdm(total=len(images), initial=summary.resumed, desc=f"label {fmt}", unit="img", disable=not progress)
    items = [(str(p), model, str(out / "images" / _copy_name(p.relative_to(root).as_posix())) if _converted(p) else None)
             for p in todo]
    if mapper is not None:
        results: Iterable[dict[str, Any]] = mapper(recognize_file, items)
    elif workers > 1 and len(items) > 1:
        from multiprocessing import get_context

        os.environ.setdefault("OMP_NUM_THREADS", "1")
        pool = get_context("spawn").Pool(workers)
        results = pool.imap(recognize_file, items, chunksize=2)
    else:
        pool = None
        results = map(recognize_file, items)
    try:
        for res in results:
            rel = Path(res["file"]).relative_to(root).as_posix()
            # the photo these labels are of (its bytes' hash): a photo replaced under its name is labelled again
            photo = LabelledPhoto(rel, None, _photo_sha(root / rel), res["error"]) if "error" in res else \
                LabelledPhoto(rel, Recognition.from_dict(res), _photo_sha(root / rel))
            atomic_write(state / (rel + ".json"), json.dumps(photo.to_record(), ensure_ascii=False).encode())
            if photo.error:
                summary.skipped.append((rel, photo.error))
            else:
                summary.labelled += 1
            bar.update(1)
    finally:
        if mapper is None and workers > 1 and len(items) > 1:
            pool.close()
            pool.join()
    bar.close()
    recs: list[LabelledPhoto] = []
    for p in images:
        photo = _done(state / (p.relative_to(root).as_posix() + ".json"), p)
        if photo is not None and not photo.error:
            recs.append(photo)
    summary.cards = sum(len(r.cards) for r in recs)
    summary.flagged = sum(sum(r.flagged(min_conf)) for r in recs)
    for r in recs:
        if _converted(Path(r.rel)):
            r.copy = _copy_name(r.rel)
            jpeg_copy(root / r.rel, out / "images" / r.copy)  # made with the recognition unless it was gone
            r.file_name = Path(os.path.relpath(out / "images" / r.copy, root)).as_posix()  # as the photos' paths are
    _write_format(recs, root, out, fmt, manifest, overwrite, summary, min_conf)
    page = review_page(recs, root, min_conf)
    manifest.write(out / "review.html", out, page.encode())
    manifest.save()
    atomic_write(out / "summary.json", json.dumps(summary.to_dict(), indent=1, ensure_ascii=False).encode())
    return summary


def _photo_sha(p: Path) -> str:
    try:
        return _sha(p.read_bytes())
    except OSError:
        return ""


def _done(record: Path, photo: Path) -> LabelledPhoto | None:
    """The kept labels (or skip) of ``photo`` when they are of the photo as it is now; None when it must be done
    (again): no record, a damaged one, or a photo whose bytes changed since."""
    try:
        r = LabelledPhoto.from_record(json.loads(record.read_text()))
    except (OSError, ValueError):  # RecordError is a ValueError
        return None
    return r if r.sha == _photo_sha(photo) else None


def _guarded_write(p: Path, data: bytes, out: Path, manifest: Manifest, overwrite: bool, summary: Summary) -> None:
    # a file that already holds exactly these bytes is ours whatever the manifest says (a run killed between
    # writing labels and saving the manifest must not leave its own files looking like a person's edits)
    if not overwrite and not manifest.is_ours(p, out) and p.read_bytes() != data:
        summary.kept_edited.append(p.relative_to(out).as_posix())
        return
    if p.exists() and p.read_bytes() == data:
        manifest.data[p.relative_to(out).as_posix()] = _sha(data)
        return
    manifest.write(p, out, data)


def _converted(p: Path) -> bool:
    return p.suffix.lower() in CONVERTED


def _copy_name(rel: str) -> str:
    """Where a CONVERTED photo's JPEG copy lies under OUT/images."""
    return rel + ".jpg"


def jpeg_copy(photo: Path | np.ndarray, dest: Path) -> None:
    """``photo`` (one of CONVERTED, or its image as load_image gives it) written to ``dest`` as a JPEG, as the user
    sees it (its rotation applied), unless it is there already."""
    if not dest.exists():
        img = photo if isinstance(photo, np.ndarray) else load_image(photo)
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
        atomic_write(dest, buf.tobytes())


def yolo_names(recs: list[LabelledPhoto]) -> list[str]:
    """Each photo's name under OUT/images, its YOLO labels under OUT/labels by the same stem (ultralytics' pairing):
    the photo's path, or its JPEG copy's (CONVERTED). Photos of one folder that share a stem (IMG_1.jpg and
    IMG_1.png) would share a label file: they take their extension into the name (IMG_1_jpg.jpg, IMG_1_png.png)."""
    names = [r.copy or r.rel for r in recs]
    stems = Counter(Path(n).with_suffix("").as_posix() for n in names)
    return [n if r.copy or stems[Path(n).with_suffix("").as_posix()] == 1
            else Path(n).with_name(f"{Path(n).stem}_{Path(n).suffix[1:]}{Path(n).suffix}").as_posix()
            for r, n in zip(recs, names, strict=True)]


def _write_format(recs: list[LabelledPhoto], root: Path, out: Path, fmt: str, manifest: Manifest, overwrite: bool,
                  summary: Summary, min_conf: float) -> None:
    if fmt == "yolo-obb":
        for r, name in zip(recs, yolo_names(recs), strict=True):  # a converted photo's JPEG copy is already there
            stem = Path(name).with_suffix("")
            img_link = out / "images" / name
            if not img_link.exists():
                img_link.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.symlink(root / r.rel, img_link)
                except OSError:
                    import shutil

                    shutil.copy2(root / r.rel, img_link)
            _guarded_write(out / "labels" / (stem.as_posix() + ".txt"), yolo_lines(r).encode(), out, manifest, overwrite, summary)
        yaml = ["# changpai auto-labels: review, correct, then `changpai train detect --data` this file",
                "train: images", "val: images", "names:"] + [f"  {i}: {c}" for i, c in enumerate(CODES)]
        _guarded_write(out / "dataset.yaml", ("\n".join(yaml) + "\n").encode(), out, manifest, overwrite, summary)
    elif fmt == "coco":
        doc = coco_document(recs, min_conf)
        _guarded_write(out / "annotations.json", json.dumps(doc, ensure_ascii=False).encode(), out, manifest, overwrite, summary)
    else:
        tasks = label_studio_tasks(recs)
        _guarded_write(out / "tasks.json", json.dumps(tasks, ensure_ascii=False, indent=1).encode(), out, manifest, overwrite, summary)
        _guarded_write(out / "label_config.xml", LABEL_STUDIO_CONFIG.encode(), out, manifest, overwrite, summary)


def dask_mapper(scheduler: str | None = None):
    """A mapper running recognitions on a Dask cluster (``scheduler`` address), or a local one."""
    from dask.distributed import Client, LocalCluster

    def mapper(fn, items):
        if scheduler:
            client = Client(scheduler)
            cluster = None
        else:
            cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
            client = Client(cluster)
        try:
            futures = client.map(fn, items, pure=False)
            for f in futures:
                yield f.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    return mapper


def bench(synth_dir: str | Path, n: int = 60, workers: int = 2, model: str | None = None) -> dict[str, Any]:
    """Throughput of `label` on n photos of a `changpai synth` folder, and the labels' accuracy against
    its ground truth (cards found, and their codes right)."""
    import shutil
    import tempfile
    import time

    from vision.eval.tally import MIN_VISIBLE, match

    synth_dir = Path(synth_dir)
    gts = sorted((synth_dir / "gt").glob("*.json"))[:n]
    with tempfile.TemporaryDirectory() as tmp:
        photos = Path(tmp) / "photos"
        photos.mkdir()
        truth = {}
        for p in gts:
            gt = json.loads(p.read_text())
            name = Path(gt["image"]).name
            shutil.copy(synth_dir / gt["image"], photos / name)
            truth[name] = gt
        t = time.perf_counter()
        s = label(photos, Path(tmp) / "out", "yolo-obb", workers=workers, model=model, progress=False)
        dt = time.perf_counter() - t
        tp = fp = fn = right = 0
        for rel, gt in truth.items():
            rec = LabelledPhoto.from_record(json.loads((Path(tmp) / "out" / STATE_DIR / "recognitions" / (rel + ".json")).read_text()))
            g = [c for c in gt["cards"] if c["visible"] >= MIN_VISIBLE]
            m = match([np.array(c.quad, np.float32) for c in rec.cards], [np.array(c["quad"], np.float32) for c in g])
            tp += len(m)
            fp += len(rec.cards) - len(m)
            fn += len(g) - len(m)
            right += sum(rec.cards[i].code == g[j]["code"] for i, j in m)
    return {"images": len(gts), "workers": workers, "seconds": round(dt, 1), "images_per_s": round(len(gts) / dt, 2),
            "cards_labelled": s.cards, "flagged": s.flagged, "precision": round(tp / max(1, tp + fp), 4),
            "recall": round(tp / max(1, tp + fn), 4), "code_accuracy_of_found": round(right / max(1, tp), 4),
            "labels_fully_right": round(right / max(1, tp + fn + fp), 4)}
