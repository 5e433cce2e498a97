"""`changpai label`: formats checked by real consumers, resume, no-overwrite, bad files, Dask local mode."""

import json
import shutil

import numpy as np
import pytest

from tests.conftest import requires_model
from vision.label.formats import ls_to_quad, quad_to_ls
from vision.label.labelling import find_images, label
from vision.label.records import LabelledPhoto
from vision.types import Recognition

pytestmark = requires_model


@pytest.fixture(scope="module")
def photos(tmp_path_factory, sample_scenes):
    root = tmp_path_factory.mktemp("photos")
    (root / "sub").mkdir()
    for i, p in enumerate(sample_scenes[:3]):
        dest = root / ("sub" if i == 2 else ".") / (f"IMG_{i}.JPG" if i == 1 else f"img_{i}.jpg")
        shutil.copy(p, dest)
    (root / "broken.jpg").write_bytes(b"\xff\xd8\xff not really a jpeg")
    (root / "notes.txt").write_text("not an image")
    return root


def test_finds_images_any_case(photos):
    names = sorted(p.name for p in find_images(photos))
    assert names == ["IMG_1.JPG", "broken.jpg", "img_0.jpg", "img_2.jpg"]


def test_yolo_obb_checked_by_ultralytics(photos, tmp_path):
    out = tmp_path / "y"
    s = label(photos, out, "yolo-obb", workers=1, progress=False)
    assert s.labelled == 3 and [f for f, _ in s.skipped] == ["broken.jpg"]
    from vision.train.ultra import offline_ultralytics

    offline_ultralytics()
    from ultralytics.data.utils import check_det_dataset, verify_image_label

    data = check_det_dataset(str(out / "dataset.yaml"))
    assert data["nc"] == 35
    for lab in (out / "labels").rglob("*.txt"):
        img = out / "images" / lab.relative_to(out / "labels").with_suffix(".jpg")
        img = img if img.exists() else img.with_suffix(".JPG")
        res = verify_image_label((str(img), str(lab), "", False, 35, 0, 2, False))
        n_found, n_corrupt = res[6], res[8]
        assert n_found == 1 and n_corrupt == 0, res[-1]
    assert (out / "review.html").read_text().startswith("<!doctype html>")


def test_coco_checked_by_pycocotools_and_supervision(photos, tmp_path):
    out = tmp_path / "c"
    s = label(photos, out, "coco", workers=1, progress=False)
    from pycocotools.coco import COCO

    coco = COCO(str(out / "annotations.json"))
    assert len(coco.getImgIds()) == 3 and len(coco.getAnnIds()) == s.cards
    import supervision as sv

    ds = sv.DetectionDataset.from_coco(images_directory_path=str(photos), annotations_path=str(out / "annotations.json"),
                                       force_masks=False)
    assert len(ds) == 3
    # rotated boxes survive as polygons: 8 numbers each
    ann = json.loads((out / "annotations.json").read_text())["annotations"][0]
    assert len(ann["segmentation"][0]) == 8


def test_iphone_heic_photos_are_labelled_and_exported_as_jpeg_copies(sample_scenes, tmp_path):
    """A HEIC photo held upright (EXIF 6): labelled as seen, and every export names an upright JPEG copy of it
    (OUT/images/<path>.jpg) that ultralytics and supervision read with its labels."""
    heif = pytest.importorskip("pillow_heif")
    from PIL import Image

    root = tmp_path / "phone"
    (root / "day1").mkdir(parents=True)
    shutil.copy(sample_scenes[0], root / "day1" / "IMG_0001.JPG")
    im = Image.open(sample_scenes[1])
    ex = Image.Exif()
    ex[0x0112] = 6
    heif.from_pillow(im.transpose(Image.Transpose.ROTATE_90)).save(root / "day1" / "IMG_0002.HEIC", exif=ex.tobytes(), quality=92)
    assert sorted(p.name for p in find_images(root)) == ["IMG_0001.JPG", "IMG_0002.HEIC"]

    y = label(root, tmp_path / "y", "yolo-obb", workers=1, progress=False)
    assert y.labelled == 2 and not y.skipped
    copy = tmp_path / "y" / "images" / "day1" / "IMG_0002.HEIC.jpg"
    assert Image.open(copy).size == im.size  # upright, as the photo is seen
    from vision.train.ultra import offline_ultralytics

    offline_ultralytics()
    from ultralytics.data.utils import img2label_paths, verify_image_label

    lab = img2label_paths([str(copy)])[0]
    res = verify_image_label((str(copy), lab, "", False, 35, 0, 2, False))
    assert res[6] == 1 and res[8] == 0 and len(res[1]) > 5, res[-1]
    copy.unlink()  # a copy gone since: made again when the run resumes, the recognition not redone
    again = label(root, tmp_path / "y", "yolo-obb", workers=1, progress=False)
    assert again.resumed == 2 and again.labelled == 0 and Image.open(copy).size == im.size

    c = label(root, None, "coco", workers=1, progress=False)  # the output inside the photos' folder, as by default
    import supervision as sv

    ds = sv.DetectionDataset.from_coco(images_directory_path=str(root), force_masks=False,
                                       annotations_path=str(root / "labels-changpai" / "annotations.json"))
    assert len(ds) == 2 and c.cards == sum(len(d) for _, _, d in ds)
    names = {i["file_name"] for i in json.loads((root / "labels-changpai" / "annotations.json").read_text())["images"]}
    assert names == {"day1/IMG_0001.JPG", "labels-changpai/images/day1/IMG_0002.HEIC.jpg"}


def test_photos_sharing_a_name_but_not_the_extension_keep_their_own_yolo_labels(sample_scenes, tmp_path):
    import cv2

    root = tmp_path / "mixed"
    root.mkdir()
    shutil.copy(sample_scenes[0], root / "IMG_1.jpg")
    cv2.imwrite(str(root / "IMG_1.png"), cv2.imread(str(sample_scenes[1])))  # another hand, the same name
    shutil.copy(sample_scenes[2], root / "IMG_2.jpg")
    out = tmp_path / "y"
    assert label(root, out, "yolo-obb", workers=1, progress=False).labelled == 3
    images = sorted(p.name for p in (out / "images").iterdir())
    assert images == ["IMG_1_jpg.jpg", "IMG_1_png.png", "IMG_2.jpg"]  # a lone name stays as it was
    from vision.label.labelling import STATE_DIR

    for photo, lab in (("IMG_1.jpg", "IMG_1_jpg.txt"), ("IMG_1.png", "IMG_1_png.txt"), ("IMG_2.jpg", "IMG_2.txt")):
        rec = LabelledPhoto.from_record(json.loads((out / STATE_DIR / "recognitions" / f"{photo}.json").read_text()))
        lines = (out / "labels" / lab).read_text().splitlines()
        assert len(lines) == len(rec.cards) > 0
    assert (out / "labels" / "IMG_1_jpg.txt").read_text() != (out / "labels" / "IMG_1_png.txt").read_text()


def test_label_studio_tasks(photos, tmp_path):
    out = tmp_path / "ls"
    label(photos, out, "label-studio", workers=1, progress=False)
    tasks = json.loads((out / "tasks.json").read_text())
    assert len(tasks) == 3
    for task in tasks:
        assert set(task) == {"data", "predictions"} and "image" in task["data"]
        for r in task["predictions"][0]["result"]:
            assert r["type"] == "rectanglelabels" and r["from_name"] == "label" and r["to_name"] == "image"
            v = r["value"]
            assert set(v) == {"x", "y", "width", "height", "rotation", "rectanglelabels"}
            assert 0 <= v["rotation"] < 360 and v["rectanglelabels"][0] in json.dumps(list(__import__("scoring").CODES))
    assert "<RectangleLabels" in (out / "label_config.xml").read_text()


def test_label_studio_geometry_round_trip():
    q = np.array([[100, 50], [140, 60], [110, 250], [70, 240]], np.float64)
    q[2] = q[1] + (q[3] - q[0])  # a true rectangle-ish parallelogram
    back = ls_to_quad(quad_to_ls(q, 400, 300), 400, 300)
    assert np.allclose(back[:2], q[:2], atol=1e-6)


def test_resume_and_never_overwrite_edits(photos, tmp_path):
    out = tmp_path / "r"
    label(photos, out, "yolo-obb", workers=1, progress=False)
    lab = next((out / "labels").rglob("*.txt"))
    lab.write_text("0 0.1 0.1 0.2 0.1 0.2 0.9 0.1 0.9\n")  # a person's correction
    s2 = label(photos, out, "yolo-obb", workers=1, progress=False)
    assert s2.resumed == 3 and s2.labelled == 0
    assert lab.read_text() == "0 0.1 0.1 0.2 0.1 0.2 0.9 0.1 0.9\n"
    assert any(lab.name in k for k in s2.kept_edited)
    label(photos, out, "yolo-obb", workers=1, progress=False, overwrite=True)
    assert lab.read_text() != "0 0.1 0.1 0.2 0.1 0.2 0.9 0.1 0.9\n"


def test_dask_local_mode(photos, tmp_path):
    from vision.label.labelling import dask_mapper

    s = label(photos, tmp_path / "d", "yolo-obb", progress=False, mapper=dask_mapper(None))
    assert s.labelled == 3 and len(s.skipped) == 1


def test_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        label(tmp_path / "nope", progress=False)


def test_one_photo_that_fails_never_ends_the_batch_and_is_remembered(sample_scenes, tmp_path):
    import cv2

    root = tmp_path / "p"
    root.mkdir()
    shutil.copy(sample_scenes[0], root / "a.jpg")
    cv2.imwrite(str(root / "thin.png"), np.full((32, 100_000, 3), 200, np.uint8))  # once a crash of the whole run
    s = label(root, tmp_path / "out", "yolo-obb", progress=False)
    assert s.labelled == 1 and [f for f, _ in s.skipped] == ["thin.png"] and "too long and thin" in s.skipped[0][1]
    again = label(root, tmp_path / "out", "yolo-obb", progress=False)
    assert again.labelled == 0 and again.resumed == 1 and [f for f, _ in again.skipped] == ["thin.png"]


def _labelled_once(sample_scenes, tmp_path):
    """A folder of one photo (a.jpg), labelled once into tmp_path/out: (photos, out)."""
    root = tmp_path / "p"
    root.mkdir()
    shutil.copy(sample_scenes[0], root / "a.jpg")
    out = tmp_path / "out"
    label(root, out, "yolo-obb", progress=False)
    return root, out


def test_a_photo_replaced_under_its_name_is_labelled_again(sample_scenes, tmp_path):
    root, out = _labelled_once(sample_scenes, tmp_path)
    first = (out / "labels" / "a.txt").read_text()
    shutil.copy(sample_scenes[1], root / "a.jpg")
    s = label(root, out, "yolo-obb", progress=False)
    assert s.labelled == 1 and s.resumed == 0 and (out / "labels" / "a.txt").read_text() != first


def test_a_run_killed_before_its_manifest_was_saved_keeps_its_files_its_own(sample_scenes, tmp_path):
    root, out = _labelled_once(sample_scenes, tmp_path)
    (out / ".changpai-label" / "manifest.json").unlink()  # killed after the labels, before the manifest
    s = label(root, out, "yolo-obb", progress=False)
    assert s.kept_edited == []
    (out / "labels" / "a.txt").write_text("0 0.1 0.1 0.2 0.1 0.2 0.2 0.1 0.2\n")  # a person's edit is still kept
    s = label(root, out, "yolo-obb", progress=False, overwrite=False)
    assert s.kept_edited == ["labels/a.txt"]


def test_out_must_be_a_folder_other_than_the_photos(photos, tmp_path):
    with pytest.raises(ValueError, match="is the photo folder itself"):
        label(photos, photos, "yolo-obb", progress=False)
    f = tmp_path / "a-file"
    f.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        label(photos, f, "yolo-obb", progress=False)


@pytest.mark.parametrize("name", ["a#1.jpg", "b&c.jpg", "d+e f.jpg", "中文 名.jpg"])
def test_label_studio_paths_read_back_as_django_parses_them(name):
    from urllib.parse import parse_qs, urlsplit

    from vision.label.formats import label_studio_tasks

    rec = LabelledPhoto(f"sub/{name}", Recognition(100, 100))
    url = label_studio_tasks([rec])[0]["data"]["image"]
    parts = urlsplit("http://host" + url)
    assert not parts.fragment and parse_qs(parts.query) == {"d": [f"sub/{name}"]}  # Label Studio's QueryDict alike


def test_a_labelling_record_round_trips_and_an_older_one_is_read():
    from vision.types import Card, RecordError

    card = Card("3t", 0.91, [("3t", 0.91), ("2t", 0.05)], [[0, 0], [10, 0], [10, 50], [0, 50]], 0.7)
    photo = LabelledPhoto("a/b.jpg", Recognition(640, 480, [card], model="changpai-v18"), "abc")
    back = LabelledPhoto.from_record(json.loads(json.dumps(photo.to_record())))
    assert back.rel == "a/b.jpg" and back.sha == "abc" and back.cards[0].code == "3t" and back.recognition.model == "changpai-v18"
    assert back.flagged(0.95) == [True] and back.flagged(0.9) == [False]
    older = {"file": "/x/a/b.jpg", "width": 640, "height": 480, "cards": [card.to_dict()], "rel": "a/b.jpg", "sha": "abc"}
    assert LabelledPhoto.from_record(older).cards[0].quad == card.quad  # a folder labelled by an earlier version resumes
    skipped = LabelledPhoto.from_record({"rel": "c.png", "sha": "s", "error": "too thin"})
    assert skipped.error == "too thin" and skipped.cards == []
    with pytest.raises(RecordError):
        LabelledPhoto.from_record({"sha": "s"})
