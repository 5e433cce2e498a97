"""Bad image files give one sentence; EXIF orientation is applied."""

import io

import numpy as np
import pytest
from PIL import Image

from vision.infer.imageio import ImageError, load_image


@pytest.mark.parametrize("data,needle", [
    (b"", "is empty"),
    (b"this is not an image at all", "not an image"),
    (b"\xff\xd8\xff\xe0" + b"\x00" * 50, "not an image"),
])
def test_bad_image_bytes(data, needle):
    with pytest.raises(ImageError, match=needle):
        load_image(data)


def test_truncated_jpeg():
    b = io.BytesIO()
    Image.fromarray((np.random.rand(200, 300, 3) * 255).astype(np.uint8)).save(b, "JPEG")
    data = b.getvalue()[:600]
    with pytest.raises(ImageError):
        load_image(data)


def test_decompression_bomb_refused():
    b = io.BytesIO()
    Image.new("L", (10000, 10000)).save(b, "PNG")  # 100 MP of zeros: a few KB on disk
    with pytest.raises(ImageError, match="megapixels"):
        load_image(b.getvalue())


def test_tiny_image_refused():
    b = io.BytesIO()
    Image.new("RGB", (8, 8)).save(b, "PNG")
    with pytest.raises(ImageError, match="too small"):
        load_image(b.getvalue())


def test_missing_file(tmp_path):
    with pytest.raises(ImageError, match="No file"):
        load_image(tmp_path / "nope.jpg")


def test_exif_orientation_applied():
    arr = np.zeros((40, 60, 3), np.uint8)
    arr[:10, :20] = 255
    im = Image.fromarray(arr)
    ex = im.getexif()
    ex[0x0112] = 6
    b = io.BytesIO()
    im.save(b, "JPEG", exif=ex.tobytes(), quality=95)
    out = load_image(b.getvalue())
    assert out.shape[:2] == (60, 40)
    assert out[:10, -10:].mean() > 200  # the white corner turned to the top right
