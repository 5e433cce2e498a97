"""Procedural tables (wood, cloth, felt, patterned cloth, stone; printed tablecloths: dots, stripes, tiles, plaid),
light, camera noise, and distractor objects."""

from __future__ import annotations

import random

import cv2
import numpy as np

TABLES = ("wood", "cloth", "felt", "pattern", "stone")
# printed cloths whose regular marks are the size of a card's pips, bars or border: a detector that has only seen the
# five kinds above boxes rows of dots as cards and loses cards against stripes (`changpai synth --tables all`)
PRINTED = ("dots", "stripes", "tiles", "plaid")
ALL_TABLES = TABLES + PRINTED


def _noise(rng: np.random.Generator, h: int, w: int, cell: int) -> np.ndarray:
    small = rng.normal(0, 1, (h // cell + 2, w // cell + 2)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def table(kind: str, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    """A table-top texture, BGR uint8 (drawn at half size and upsampled: table texture is soft in photos)."""
    small = _table(kind, w // 2 + 1, h // 2 + 1, rng)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _table(kind: str, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "wood":
        base = np.array(rng.choice([[40, 80, 140], [30, 60, 110], [70, 120, 170], [50, 70, 90], [90, 140, 190]]), np.float32)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, np.pi)
        u = xx * np.cos(ang) + yy * np.sin(ang)
        warp = _noise(rng, h, w, 64) * rng.uniform(10, 30)
        grain = np.sin((u + warp) / rng.uniform(3, 9)) * 0.5 + 0.5
        rings = np.sin((u + warp * 3) / rng.uniform(30, 80)) * 0.5 + 0.5
        v = 0.75 + 0.15 * grain + 0.12 * rings + 0.05 * _noise(rng, h, w, 4)
        img = base[None, None, :] * v[..., None]
        if rng.random() < 0.4:  # planks
            step = int(rng.uniform(120, 300))
            for x in range(int(rng.uniform(0, step)), w + h, step):
                cv2.line(img, (x, 0), (x - int(h * np.tan(ang - np.pi / 2) if abs(np.cos(ang)) > 0.2 else 0), h),
                         (base * 0.5).tolist(), 2)
    elif kind == "cloth":
        base = np.array(rng.choice([[160, 60, 30], [40, 40, 150], [60, 110, 60], [150, 150, 150], [30, 30, 30], [190, 190, 200]]),
                        np.float32)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        p = rng.uniform(2.5, 5)
        weave = (np.sin(xx / p * np.pi) * np.sin(yy / p * np.pi)) * 0.06
        v = 0.85 + weave + 0.08 * _noise(rng, h, w, 48) + 0.04 * rng.normal(0, 1, (h, w)).astype(np.float32)
        img = base[None, None, :] * v[..., None]
    elif kind == "felt":
        base = np.array(rng.choice([[40, 110, 30], [110, 60, 20], [30, 30, 120], [70, 90, 60]]), np.float32)
        v = 0.85 + 0.07 * _noise(rng, h, w, 32) + 0.06 * rng.normal(0, 1, (h, w)).astype(np.float32)
        img = base[None, None, :] * v[..., None]
    elif kind == "pattern":
        c1 = np.array(rng.integers(60, 230, 3), np.float32)
        c2 = np.array(rng.integers(20, 200, 3), np.float32)
        img = np.empty((h, w, 3), np.float32)
        img[:] = c1
        s = int(rng.uniform(25, 70))
        if rng.random() < 0.5:  # checks
            yy, xx = np.mgrid[0:h, 0:w]
            m = ((xx // s + yy // s) % 2 == 0)
            img[m] = img[m] * 0.5 + c2 * 0.5
        else:  # scattered flowers
            for _ in range(int(w * h / (s * s) * 0.6)):
                x, y = int(rng.uniform(0, w)), int(rng.uniform(0, h))
                r = int(rng.uniform(s * 0.15, s * 0.35))
                for k in range(5):
                    a = k * 2 * np.pi / 5
                    cv2.circle(img, (int(x + np.cos(a) * r), int(y + np.sin(a) * r)), max(2, r // 2), c2.tolist(), -1)
        img *= (0.9 + 0.06 * _noise(rng, h, w, 40))[..., None]
    elif kind in PRINTED:
        img = _printed(kind, w, h, rng)
    elif kind == "stone":
        base = np.array(rng.choice([[200, 200, 200], [120, 120, 125], [220, 215, 205], [60, 60, 60]]), np.float32)
        v = 0.85 + 0.1 * _noise(rng, h, w, 24) + 0.05 * _noise(rng, h, w, 6)
        img = base[None, None, :] * v[..., None]
    else:
        raise ValueError(f"Unknown table {kind!r}")
    return np.clip(img, 0, 255).astype(np.uint8)


def _printed(kind: str, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    """A printed tablecloth: a ground with regular marks in one or two other colours, turned at any angle."""
    ground = np.array(rng.integers(120, 250, 3), np.float32)
    ink = np.array(rng.integers(10, 220, 3), np.float32)
    ink2 = np.array(rng.integers(10, 220, 3), np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ang = rng.uniform(0, np.pi)
    u = xx * np.cos(ang) + yy * np.sin(ang)
    v = -xx * np.sin(ang) + yy * np.cos(ang)
    s = rng.uniform(8, 40)  # pitch, half-size pixels (the table is drawn at half size)
    img = np.empty((h, w, 3), np.float32)
    img[:] = ground
    if kind == "dots":  # polka dots on a square or staggered grid
        stagger = rng.random() < 0.5
        row = np.floor(v / s)
        uu = u + (row % 2) * s / 2 if stagger else u
        du = (uu / s - np.round(uu / s)) * s
        dv = (v / s - np.round(v / s)) * s
        m = np.sqrt(du ** 2 + dv ** 2) < s * rng.uniform(0.15, 0.4)
        img[m] = ink
    elif kind == "stripes":  # bands of one or two inks
        width = rng.uniform(0.2, 0.6)
        phase = (u / (2 * s)) % 1
        img[phase < width] = ink
        if rng.random() < 0.5:
            img[(phase > 0.6) & (phase < 0.6 + width / 3)] = ink2
    elif kind == "tiles":  # square tiles with grout lines, each tile's tone a little different
        n = rng.uniform(2, 5) * s
        ti, tj = np.floor(u / n), np.floor(v / n)
        tone = 0.85 + 0.15 * ((ti * 7 + tj * 13) % 5) / 4
        img *= tone[..., None]
        grout = (np.abs(u / n - np.round(u / n)) * n < 1.2) | (np.abs(v / n - np.round(v / n)) * n < 1.2)
        img[grout] = ink * 0.6 + ground * 0.4
    else:  # plaid: crossing translucent bands of two inks
        a = ((u / (2 * s)) % 1) < rng.uniform(0.2, 0.5)
        b = ((v / (2 * s)) % 1) < rng.uniform(0.2, 0.5)
        img[a] = img[a] * 0.5 + ink * 0.5
        img[b] = img[b] * 0.5 + ink2 * 0.5
        thin = (np.abs((u / (2 * s)) % 1 - 0.75) < 0.03) | (np.abs((v / (2 * s)) % 1 - 0.75) < 0.03)
        img[thin] = ink * 0.7
    img *= (0.9 + 0.06 * _noise(rng, h, w, 40))[..., None]
    return img


def lighting(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uneven light: a gradient, a soft spot, a colour cast; vignetting. The light field is smooth, so it
    is computed on a coarse grid and upsampled."""
    h, w = img.shape[:2]
    gh, gw = h // 8 + 1, w // 8 + 1
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    yy *= h / gh
    xx *= w / gw
    ang = rng.uniform(0, 2 * np.pi)
    grad = ((xx - w / 2) * np.cos(ang) + (yy - h / 2) * np.sin(ang)) / max(w, h)
    field = 1 + grad * rng.uniform(0, 0.6)
    sx, sy = rng.uniform(0, w), rng.uniform(0, h)
    spot = np.exp(-(((xx - sx) ** 2 + (yy - sy) ** 2) / (2 * (rng.uniform(0.2, 0.6) * max(w, h)) ** 2)))
    field *= 0.8 + rng.uniform(0.1, 0.45) * spot
    r = np.sqrt(((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2)
    field *= 1 - rng.uniform(0, 0.35) * r ** 2
    field *= rng.uniform(0.75, 1.2)
    cast = (rng.uniform(0.85, 1.1), rng.uniform(0.92, 1.05), rng.uniform(0.85, 1.15))
    field3 = cv2.resize(cv2.merge([field * c for c in cast]), (w, h), interpolation=cv2.INTER_LINEAR)
    return cv2.multiply(img, field3, dtype=cv2.CV_8U)


def camera_noise(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Focus or motion blur and sensor noise (JPEG artefacts come from the encoder)."""
    r = rng.random()
    if r < 0.4:
        s = rng.uniform(0.3, 1.4)
        img = cv2.GaussianBlur(img, (0, 0), s)
    elif r < 0.55:
        k = int(rng.integers(3, 8))
        ker = np.zeros((k, k), np.float32)
        ker[k // 2, :] = 1 / k
        m = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1)
        ker = cv2.warpAffine(ker, m, (k, k))
        ker /= max(ker.sum(), 1e-6)
        img = cv2.filter2D(img, -1, ker)
    sigma = rng.uniform(0, 8)
    if sigma > 1:
        noise = (rng.standard_normal(img.shape[:2], dtype=np.float32) * sigma).astype(np.int16)
        img = cv2.add(img.astype(np.int16), cv2.merge([noise] * 3)).clip(0, 255).astype(np.uint8)
    return img


# ---------------------------------------------------------------------------------------------
# distractors: drawn on the table before the cards


def _rot_rect(cx, cy, w, h, ang):
    return cv2.boxPoints(((cx, cy), (w, h), ang)).astype(np.int32)


def distractor(img: np.ndarray, kind: str, cx: float, cy: float, size: float, rng: random.Random) -> dict:
    """Draw one non-card object; returns its description for the ground truth."""
    ang = rng.uniform(0, 180)
    if kind == "coin":
        r = int(size * rng.uniform(0.12, 0.2))
        col = rng.choice([(60, 140, 190), (170, 170, 175), (80, 110, 150)])
        cv2.circle(img, (int(cx), int(cy)), r, col, -1, cv2.LINE_AA)
        cv2.circle(img, (int(cx), int(cy)), int(r * 0.8), tuple(int(c * 0.8) for c in col), 2, cv2.LINE_AA)
        if rng.random() < 0.5:
            h = int(r * 0.3)
            cv2.rectangle(img, (int(cx) - h, int(cy) - h), (int(cx) + h, int(cy) + h), (30, 30, 30), -1)
    elif kind == "phone":
        pts = _rot_rect(cx, cy, size * 0.5, size * 1.0, ang)
        cv2.fillPoly(img, [pts], (20, 20, 25), cv2.LINE_AA)
        inner = _rot_rect(cx, cy, size * 0.44, size * 0.9, ang)
        cv2.fillPoly(img, [inner], tuple(rng.randint(40, 140) for _ in range(3)), cv2.LINE_AA)
    elif kind == "mahjong":
        for i in range(rng.randint(1, 4)):
            ox = cx + i * size * 0.3 * np.cos(np.radians(ang))
            oy = cy + i * size * 0.3 * np.sin(np.radians(ang))
            pts = _rot_rect(ox, oy, size * 0.28, size * 0.38, ang)
            cv2.fillPoly(img, [pts], (60, 130, 40), cv2.LINE_AA)
            pts2 = _rot_rect(ox, oy - 3, size * 0.26, size * 0.34, ang)
            cv2.fillPoly(img, [pts2], (225, 235, 238), cv2.LINE_AA)
            cv2.circle(img, (int(ox), int(oy - 3)), int(size * 0.06), rng.choice([(30, 30, 180), (40, 120, 40), (120, 60, 20)]), 2)
    elif kind == "playing_card":
        pts = _rot_rect(cx, cy, size * 0.63, size * 0.88, ang)
        cv2.fillPoly(img, [pts], (245, 245, 245), cv2.LINE_AA)
        col = rng.choice([(20, 20, 200), (20, 20, 20)])
        cv2.circle(img, (int(cx), int(cy)), int(size * 0.12), col, -1)
        cv2.putText(img, rng.choice("AKQJ23456789"), tuple(pts[1] + np.array([4, 14])), cv2.FONT_HERSHEY_SIMPLEX, 0.5, col, 1)
    elif kind == "paper":
        w, h = size * rng.uniform(0.8, 1.6), size * rng.uniform(1.0, 1.8)
        pts = _rot_rect(cx, cy, w, h, ang)
        col = rng.choice([(245, 245, 245), (200, 235, 245), (230, 230, 220)])
        cv2.fillPoly(img, [pts], col, cv2.LINE_AA)
        for k in range(rng.randint(3, 9)):
            t = (k + 1) / 11
            a, b = pts[0] + (pts[3] - pts[0]) * t, pts[1] + (pts[2] - pts[1]) * t
            cv2.line(img, tuple(a.astype(int) + 6), tuple(b.astype(int) - 6), (90, 90, 90), 1, cv2.LINE_AA)
    else:
        raise ValueError(kind)
    return {"kind": kind, "center": [round(cx, 1), round(cy, 1)], "size": round(size, 1)}


DISTRACTORS = ("coin", "phone", "mahjong", "playing_card", "paper")
