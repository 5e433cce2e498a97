"""Reading photos safely: EXIF orientation applied, bombs and broken files refused in one sentence."""

from __future__ import annotations

import io
import warnings
from functools import cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from scoring.messages import Msg

IMAGE_EXTS = {".jpg", ".jpeg", ".heic", ".heif", ".png", ".webp", ".bmp", ".tif", ".tiff"}  # photos looked for in folders
MAX_PIXELS = 60_000_000  # a 48-MP phone photo fits; a decompression bomb does not
MAX_BYTES = 80 * 1024 * 1024
MAX_ASPECT = 8  # a photo's long side at most this many times its short side (a phone's panorama is about 4:1)


@cache
def _heif():
    """pillow_heif, imported and registered with Pillow the first time a HEIC/HEIF photo comes (not at every start
    of a command or worker); None when it is not installed: a HEIC is then refused as unreadable, in one sentence.
    libheif applies the photo's own rotation and sets its EXIF orientation to 1, so it is not applied twice."""
    try:
        import pillow_heif
    except ImportError:
        return None
    pillow_heif.options.THUMBNAILS = pillow_heif.options.DEPTH_IMAGES = pillow_heif.options.AUX_IMAGES = False  # the photo only
    pillow_heif.register_heif_opener()
    return pillow_heif


def _looks_heif(data: bytes) -> bool:
    """An ISO media file (HEIC/HEIF; its 'ftyp' box first), which Pillow opens only with pillow_heif registered."""
    return data[4:8] == b"ftyp"


class ImageError(ValueError):
    """A file that cannot be used as a photo; the message is one sentence."""


# a recognizer reads a large JPEG decoded at 1/2, 1/4 or 1/8 (libjpeg scales while decoding, in half the time of a
# full decode of 12 MP) as long as its long side stays at least this: cards then have as many pixels as in the
# 1280×960 scenes the models learned on
READ_SIDE = 1600
REDUCED = ((8, cv2.IMREAD_REDUCED_COLOR_8), (4, cv2.IMREAD_REDUCED_COLOR_4), (2, cv2.IMREAD_REDUCED_COLOR_2))


def load_image(src: str | Path | bytes, name: str | None = None) -> np.ndarray:
    """Decode a photo to BGR uint8 as the user sees it (EXIF orientation applied)."""
    return read_photo(src, name)[0]


def read_photo(src: str | Path | bytes, name: str | None = None, min_side: int | None = None) -> tuple[np.ndarray, float]:
    """load_image; with ``min_side``, a photo whose long side is at least twice that is read smaller (by 2, 4 or
    8, its long side staying ≥ min_side: a JPEG decoded so, another format shrunk after decoding). Returns the
    image and the scale back to the photo's pixels."""
    label = name or (str(src) if not isinstance(src, bytes) else "the upload")
    if isinstance(src, bytes):
        data = src
    else:
        p = Path(src)
        if not p.exists():
            raise ImageError(f"No file at {p}.")
        if not p.is_file():
            raise ImageError(f"{p} is not a file.")
        if p.stat().st_size > MAX_BYTES:
            raise ImageError(Msg("image_too_large", f"{label} is larger than {MAX_BYTES // 2**20} MB.", label=label, mb=MAX_BYTES // 2**20))
        data = p.read_bytes()
    if not data:
        raise ImageError(Msg("image_empty", f"{label} is empty.", label=label))
    if len(data) > MAX_BYTES:
        raise ImageError(Msg("image_too_large", f"{label} is larger than {MAX_BYTES // 2**20} MB.", label=label, mb=MAX_BYTES // 2**20))
    if _looks_heif(data):
        _heif()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                w, h = im.size
                if w * h > MAX_PIXELS:
                    raise ImageError(Msg("image_too_many_pixels", f"{label} is {w}×{h} pixels, more than the {MAX_PIXELS // 10**6} "
                                         "megapixels accepted.", label=label, w=w, h=h, mp=MAX_PIXELS // 10**6))
                orientation = im.getexif().get(0x0112, 1)
                fmt = im.format
    except ImageError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageError(Msg("image_bomb", f"{label} has more than the {MAX_PIXELS // 10**6} megapixels accepted.",
                             label=label, mp=MAX_PIXELS // 10**6)) from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, ImportError):
        # ImportError: a plug-in that patches Image.open (e.g. for HEIF) may fail to import while trying
        raise ImageError(Msg("image_unreadable",
                             f"{label} is not an image that can be read (JPEG, HEIC, PNG, WebP, BMP or TIFF).", label=label)) from None
    if w < 32 or h < 32:
        raise ImageError(Msg("image_too_small", f"{label} is only {w}×{h} pixels: too small to show cards.", label=label, w=w, h=h))
    if max(w, h) > MAX_ASPECT * min(w, h):
        raise ImageError(Msg("image_too_thin", f"{label} is {w}×{h} pixels: too long and thin to be a photo of cards.",
                             label=label, w=w, h=h))
    img = None
    flag = cv2.IMREAD_COLOR
    if fmt == "JPEG" and min_side:  # the largest reduction that keeps the long side ≥ min_side
        flag = next((fl for f, fl in REDUCED if max(w, h) >= f * min_side), flag)
    if fmt in ("JPEG", "PNG", "BMP", "WEBP", "TIFF"):
        img = cv2.imdecode(np.frombuffer(data, np.uint8), flag | cv2.IMREAD_IGNORE_ORIENTATION)
    elif fmt == "HEIF":  # Pillow opened it: pillow_heif is there
        img = _heif_bgr(data)
    if img is None:  # formats or files OpenCV will not take: let PIL decode
        try:
            with Image.open(io.BytesIO(data)) as im:
                im.load()
                img = cv2.cvtColor(np.asarray(im.convert("RGB")), cv2.COLOR_RGB2BGR)
        except (OSError, ValueError, SyntaxError, ImportError):
            raise ImageError(_damaged(label)) from None
    if img is None or img.size == 0:
        raise ImageError(_damaged(label))
    if min_side and flag == cv2.IMREAD_COLOR:  # decoded whole (not a JPEG, e.g. HEIC or PNG): made smaller the same way
        img = shrink(img, min_side)
    return apply_orientation(img, orientation), w / img.shape[1]


def shrink(img: np.ndarray, min_side: int) -> np.ndarray:
    """``img`` made smaller by 2, 4 or 8 as read_photo reads a large photo, its long side staying ≥ ``min_side``
    (itself when it is not twice that)."""
    f = next((f for f, _ in REDUCED if max(img.shape[:2]) >= f * min_side), 1)
    return cv2.resize(img, (img.shape[1] // f, img.shape[0] // f), interpolation=cv2.INTER_AREA) if f > 1 else img


def _heif_bgr(data: bytes) -> np.ndarray | None:
    """A HEIC decoded by libheif straight to BGR, its own rotation applied (without Pillow's RGB copy and the
    conversion after it: 0.17 s less for 12 MP); None when that fails, for Pillow to try and say why."""
    try:
        a = np.asarray(_heif().open_heif(io.BytesIO(data), convert_hdr_to_8bit=True, bgr_mode=True))
    except Exception:  # noqa: BLE001 - libheif's errors have no common type; Pillow's decode reports them
        return None
    return cv2.cvtColor(a, cv2.COLOR_GRAY2BGR) if a.ndim == 2 else np.ascontiguousarray(a[:, :, :3])


def _damaged(label: str) -> Msg:
    return Msg("image_damaged", f"{label} is damaged or truncated and cannot be decoded.", label=label)


def apply_orientation(img: np.ndarray, orientation: int) -> np.ndarray:
    """EXIF orientation tag 1–8 to the upright image."""
    ops = {2: [lambda i: cv2.flip(i, 1)], 3: [lambda i: cv2.rotate(i, cv2.ROTATE_180)],
           4: [lambda i: cv2.flip(i, 0)], 5: [lambda i: cv2.transpose(i)],
           6: [lambda i: cv2.rotate(i, cv2.ROTATE_90_CLOCKWISE)],
           7: [lambda i: cv2.rotate(cv2.transpose(i), cv2.ROTATE_180)],
           8: [lambda i: cv2.rotate(i, cv2.ROTATE_90_COUNTERCLOCKWISE)]}.get(orientation, [])
    for op in ops:
        img = op(img)
    return img


__all__ = ["ImageError", "IMAGE_EXTS", "load_image", "read_photo", "shrink", "READ_SIDE", "ImageOps"]
