"""Scene composer: phone-like photos of long cards on a table, with exact ground truth.

Layouts (DESIGN.md "Scenes"): ``row`` (one or two rows side by side), ``stair`` (overlapped as a hand
is laid down), ``groups`` (declared melds in clusters beside the hand), ``fan``, each with the flipped
将 cards set apart when the scene has them. The table plane is seen through a tilted camera (a
rotation homography, up to ~25°), lit unevenly, blurred, noised and JPEG-compressed by the writer.
Quadrilaterals are amodal: the whole card, even where another card covers it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from scoring.cards import CODES, N_PLAIN
from vision.synth.faces import FACE_H, FACE_W, FaceSource, render_back
from vision.synth.tables import DISTRACTORS, TABLES, camera_noise, distractor, lighting, table
from vision.types import meld_role

LAYOUTS = ("row", "stair", "groups", "fan")
ASPECT = FACE_H / FACE_W


@dataclass
class Placement:
    code: str  # card code, or "back" for a face-down card
    cx: float
    cy: float
    angle: float  # degrees, 0 = long axis vertical
    flip: bool  # turned 180° on the table
    group: str  # hand | meld:N | jiang | loose


@dataclass
class SceneSpec:
    width: int = 1280
    height: int = 960
    layout: str = "row"
    cards: list[str] = field(default_factory=list)
    melds: list[list[str]] = field(default_factory=list)
    jiang: list[str] = field(default_factory=list)
    card_frac: float = 1 / 25  # card width / image width
    distractors: int = 0
    face_down: int = 0
    tables: tuple[str, ...] = TABLES  # the table is drawn among these
    least_show: float | None = None  # stairs and fans: the least share of a card's width left showing (None: 0.45 / 0.5)
    # how the layout lies: upright (0° or 180° ± 20°, a quarter turn in one scene of ten) | any: at any angle, and each
    # declared group turned on its own as well (layout_melds)
    turn: str = "upright"


def random_cards(rng: random.Random, n: int, jiang: list[str], extras: bool, extra_copies: int = 1) -> list[str]:
    """n cards from a real deck: ≤ 4 per kind less the flipped copies, extras ≤ 1 each (``extra_copies`` each when
    the extras are drawn more often than a deck holds them, to teach the rare cards)."""
    pool: list[str] = []
    for k in range(N_PLAIN):
        pool.extend([CODES[k]] * (4 - jiang.count(CODES[k])))
    if extras:
        pool.extend(CODES[N_PLAIN:] * extra_copies)
    rng.shuffle(pool)
    return pool[:n]


# --------------------------------------------------------------------------------------------
# layouts in table units: card width 1, height ASPECT


def _line(codes: list[str], x0: float, y0: float, step: float, group: str, rng: random.Random,
          jitter: float = 0.03, max_angle: float = 2.0) -> list[Placement]:
    return [Placement(c, x0 + i * step + rng.uniform(-jitter, jitter), y0 + rng.uniform(-jitter, jitter) * 3,
                      rng.uniform(-max_angle, max_angle), rng.random() < 0.5, group) for i, c in enumerate(codes)]


def _rows(codes: list[str], step: float, group: str, rng: random.Random, y0: float = 0.0) -> list[Placement]:
    n = len(codes)
    nrows = 2 if (n > 16 and rng.random() < 0.6) or n * step > 28 else 1
    per = math.ceil(n / nrows)
    out = []
    gap = ASPECT * rng.uniform(1.04, 1.25)
    for r in range(nrows):
        part = codes[r * per:(r + 1) * per]
        out.extend(_line(part, rng.uniform(-0.3, 0.3), y0 + r * gap, step, group, rng))
    return out


def layout_row(codes: list[str], rng: random.Random, group: str = "hand") -> list[Placement]:
    return _rows(codes, 1 + rng.uniform(0.02, 0.3), group, rng)


def layout_stair(codes: list[str], rng: random.Random, group: str = "hand", least: float = 0.45) -> list[Placement]:
    """Cards overlapped along a row, each showing ``least`` to 0.72 of its width."""
    return _rows(codes, rng.uniform(least, 0.72), group, rng)


def layout_fan(codes: list[str], rng: random.Random, group: str = "hand", least: float = 0.5) -> list[Placement]:
    """Cards turned about a point below them, ``least`` to 0.75 of a width apart at their centres."""
    n = len(codes)
    radius = ASPECT * rng.uniform(0.9, 1.6)
    step = rng.uniform(least, 0.75) / radius  # radians between neighbours at the card centre
    span = step * (n - 1)
    if span > math.radians(170):
        step = math.radians(170) / max(1, n - 1)
    out = []
    for i, c in enumerate(codes):
        a = -step * (n - 1) / 2 + i * step
        out.append(Placement(c, radius * math.sin(a), -radius * math.cos(a), math.degrees(a), rng.random() < 0.5, group))
    return out


def layout_grid(codes: list[str], rng: random.Random, per_row: int = 9, aspect: float = ASPECT) -> list[Placement]:
    """Rows of ``per_row`` cards, upright, a little apart (a quarter to most of a card's width, as docs/calibration.md
    asks): how a player lays out one card of each kind."""
    step = 1 + rng.uniform(0.25, 0.7)
    gap = aspect * rng.uniform(1.15, 1.4)
    return [Placement(c, (i % per_row) * step + rng.uniform(-0.04, 0.04), (i // per_row) * gap + rng.uniform(-0.08, 0.08),
                      rng.uniform(-2, 2), False, "grid") for i, c in enumerate(codes)]


GROUP_TURN = 60.0  # SceneSpec.turn "any": each declared group also turned up to this many degrees about its centre


def layout_melds(melds: list[list[str]], rng: random.Random, y: float, x0: float, turned: int = 0,
                 aspect: float = ASPECT) -> list[Placement]:
    """Clusters of 3–4 equal cards, side by side or slightly overlapped, apart from each other. ``turned`` (-1: the
    row of groups lies above the hand, 1: below; 0: not turned) turns each group as a whole about its centre, up to
    GROUP_TURN degrees, as players lay their groups at any angle, and keeps it clear of its neighbours and the hand."""
    out = []
    x = x0
    for mi, meld in enumerate(melds):
        step = rng.choice([1 + rng.uniform(0.02, 0.15), rng.uniform(0.5, 0.7)])
        ang = rng.uniform(-8, 8)
        group = _line(meld, x, y + rng.uniform(-0.3, 0.3), step, meld_role(mi), rng, max_angle=1.5)
        for p in group:
            p.angle += ang
        if turned:  # drawn after the usual draws, so groups not turned render as before
            x = _turn_group(group, rng.uniform(-GROUP_TURN, GROUP_TURN), x, y, turned, aspect) + rng.uniform(1.0, 2.0)
        else:
            x += step * len(meld) + rng.uniform(1.0, 2.0)
        out.extend(group)
    return out


def _turn_group(group: list[Placement], degrees: float, x: float, y: float, side: int, aspect: float) -> float:
    """Turn ``group`` about its centre by ``degrees``, then move it to start at ``x`` and to keep to its side of the
    row's centre line ``y`` (side -1: no lower than a card lying upright on it would reach; 1: no higher); the right
    end of the group it leaves."""
    cx, cy = float(np.mean([p.cx for p in group])), float(np.mean([p.cy for p in group]))
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    for p in group:
        dx, dy = p.cx - cx, p.cy - cy
        p.cx, p.cy, p.angle = cx + c * dx - s * dy, cy + s * dx + c * dy, p.angle + degrees
    pts = np.vstack([card_corners(p, aspect) for p in group])
    shift_x = x - pts[:, 0].min()
    shift_y = (y + aspect / 2 - pts[:, 1].max()) if side < 0 else (y - aspect / 2 - pts[:, 1].min())
    for p in group:
        p.cx += shift_x
        p.cy += shift_y
    return float(pts[:, 0].max() + shift_x)


def arrange(spec: SceneSpec, rng: random.Random, aspect: float = ASPECT) -> list[Placement]:
    """Place the hand, the melds and the jiang cards on the table (table units; ``aspect``: the deck's cards'
    length : width)."""
    lay = spec.layout
    hand = list(spec.cards)
    if lay == "grid":  # the calibration layout: rows of 9 side by side, in the documented order
        return layout_grid(hand, rng, aspect=aspect)
    tight = {} if spec.least_show is None else {"least": spec.least_show}
    if lay == "fan":
        places = layout_fan(hand, rng, **tight)
    elif lay == "stair":
        places = layout_stair(hand, rng, **tight)
    else:
        places = layout_row(hand, rng) if rng.random() < 0.6 or lay == "row" else layout_stair(hand, rng, **tight)
    if not places and not spec.melds and not spec.jiang:
        return []
    xs = [p.cx for p in places] or [0.0]
    ys = [p.cy for p in places] or [0.0]
    if spec.melds:
        above = rng.random() < 0.5
        y = (min(ys) - ASPECT * rng.uniform(1.15, 1.5)) if above else (max(ys) + ASPECT * rng.uniform(1.15, 1.5))
        places += layout_melds(spec.melds, rng, y, min(xs) + rng.uniform(-0.5, 1.5),
                               turned=(-1 if above else 1) if spec.turn == "any" else 0, aspect=aspect)
    if spec.jiang:
        side = rng.choice(["left", "right"])
        lying = rng.random() < 0.4
        pts = np.vstack([card_corners(p) for p in places]) if places else np.zeros((1, 2))
        half = ASPECT / 2 if lying else 0.5  # half the jiang card's horizontal extent
        gap = rng.uniform(1.5, 3.0)
        x = pts[:, 0].min() - gap - half if side == "left" else pts[:, 0].max() + gap + half
        y = rng.uniform(pts[:, 1].min() + 1, max(pts[:, 1].min() + 1, pts[:, 1].max() - 1))
        sign = 1 if side == "right" else -1
        for i, c in enumerate(spec.jiang):
            if lying:
                places.append(Placement(c, x, y + i * 1.2, 90 + rng.uniform(-4, 4), rng.random() < 0.5, "jiang"))
            else:
                places.append(Placement(c, x + sign * i * 1.2, y, rng.uniform(-5, 5), rng.random() < 0.5, "jiang"))
    return places


def card_corners(p: Placement, aspect: float = ASPECT) -> np.ndarray:
    """Corners TL, TR, BR, BL of the face (its own top first), table units; ``aspect``: the deck's length : width."""
    w, h = 1.0, aspect
    pts = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]], np.float64)
    if p.flip:
        pts = pts[[2, 3, 0, 1]]
    a = math.radians(p.angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return pts @ rot.T + np.array([p.cx, p.cy])


# --------------------------------------------------------------------------------------------
# camera


def camera_homography(w: int, h: int, rng: random.Random, max_tilt: float = 25.0) -> np.ndarray:
    """Homography of a camera rotated away from looking straight down: K·R·K⁻¹."""
    f = max(w, h) * rng.uniform(0.8, 1.4)
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    tilt = math.radians(rng.uniform(0, max_tilt))
    direction = rng.uniform(0, 2 * math.pi)
    ax = np.array([math.cos(direction), math.sin(direction), 0.0])
    rvec = ax * tilt
    r, _ = cv2.Rodrigues(rvec)
    return k @ r @ np.linalg.inv(k)


def _apply(hm: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.hstack([pts, np.ones((len(pts), 1))]) @ hm.T
    return p[:, :2] / p[:, 2:3]


def _paste(img, occ, idx, face, alpha, quad, shadow, rng):
    h, w = img.shape[:2]
    x0, y0 = np.floor(quad.min(0)).astype(int) - 12
    x1, y1 = np.ceil(quad.max(0)).astype(int) + 12
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return 0
    fw = np.linalg.norm(quad[1] - quad[0])
    if fw < FACE_W * 0.7:  # shrink first: warpPerspective does not area-average
        sc = max(fw, 8) / FACE_W
        size = (max(4, int(FACE_W * sc)), max(8, int(FACE_H * sc)))
        face = cv2.resize(face, size, interpolation=cv2.INTER_AREA)
        alpha = cv2.resize(alpha, size, interpolation=cv2.INTER_AREA)
    fh_, fw_ = face.shape[:2]
    src = np.array([[0, 0], [fw_ - 1, 0], [fw_ - 1, fh_ - 1], [0, fh_ - 1]], np.float32)
    dst = (quad - [x0, y0]).astype(np.float32)
    # the printed card is not perfectly flat: its face wobbles a little inside the label
    dst_face = dst + np.array([[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(4)], np.float32) * fw * 0.012
    m = cv2.getPerspectiveTransform(src, dst_face.astype(np.float32))
    size = (x1 - x0, y1 - y0)
    wf = cv2.warpPerspective(face, m, size, flags=cv2.INTER_LINEAR)
    wa = cv2.warpPerspective(alpha, m, size, flags=cv2.INTER_LINEAR).astype(np.float32) / 255
    roi = img[y0:y1, x0:x1].astype(np.float32)
    if shadow is not None:
        dx, dy, blur, strength = shadow
        ms = cv2.warpAffine(wa, np.float32([[1, 0, dx], [0, 1, dy]]), size)
        ms = cv2.GaussianBlur(ms, (0, 0), blur)
        roi *= (1 - strength * ms)[..., None]
    if rng.random() < 0.5:  # curvature: light falls off across the card
        g = np.linspace(rng.uniform(0.85, 1.0), rng.uniform(1.0, 1.1), size[0], dtype=np.float32)[None, :, None]
        wf = np.clip(wf.astype(np.float32) * g, 0, 255)
    roi = roi * (1 - wa[..., None]) + wf.astype(np.float32) * wa[..., None]
    img[y0:y1, x0:x1] = np.clip(roi, 0, 255).astype(np.uint8)
    sub = occ[y0:y1, x0:x1]
    mask = wa > 0.5
    sub[mask] = idx
    return int(mask.sum())


def compose(spec: SceneSpec, faces: FaceSource, rng: random.Random) -> tuple[np.ndarray, dict[str, Any]]:
    """Render one scene; returns (BGR image, ground truth dict)."""
    W, H = spec.width, spec.height
    nrng = np.random.default_rng(rng.getrandbits(32))
    img = table(rng.choice(spec.tables), W, H, nrng)
    places = arrange(spec, rng, getattr(faces.style, "aspect", ASPECT))
    # face-down cards as hard negatives, scattered
    for _ in range(spec.face_down):
        places.append(Placement("back", 0, 0, rng.uniform(0, 180), False, "back"))
    hm = camera_homography(W, H, rng)
    yaw = rng.choice([0, 0, 0, 180]) + rng.uniform(-20, 20) + (90 if rng.random() < 0.1 else 0)
    if spec.turn == "any":  # a hand laid at any angle to the camera (drawn after, so upright seeds render as before)
        yaw = rng.uniform(0, 360)
    ya = math.radians(yaw)
    rot = np.array([[math.cos(ya), -math.sin(ya)], [math.sin(ya), math.cos(ya)]])
    hand_places = [p for p in places if p.code != "back"]
    aspect = getattr(faces.style, "aspect", ASPECT)  # a deck family may print longer or squatter cards
    corners = [card_corners(p, aspect) @ rot.T for p in hand_places]
    gt_cards: list[dict[str, Any]] = []
    distractor_gt: list[dict[str, Any]] = []
    quads: list[np.ndarray] = []
    if corners:
        allc = np.vstack(corners)
        ctr = allc.mean(0)
        # scale so a card is spec.card_frac of the width, then shrink to fit the frame
        scale = spec.card_frac * W
        for _ in range(8):
            pts = [_apply(hm, (c - ctr) * scale + [W / 2, H / 2]) for c in corners]
            allp = np.vstack(pts)
            margin = min(W, H) * rng.uniform(0.005, 0.08)
            bw, bh = np.ptp(allp[:, 0]), np.ptp(allp[:, 1])
            fit = min((W - 2 * margin) / max(bw, 1), (H - 2 * margin) / max(bh, 1))
            if fit >= 1:
                break
            scale *= fit * 0.98
        # shift so the whole layout is inside the frame, anywhere in the free room
        lo, hi = allp.min(0), allp.max(0)
        sx = rng.uniform(margin - lo[0], max(margin - lo[0], W - margin - hi[0]))
        sy = rng.uniform(margin - lo[1], max(margin - lo[1], H - margin - hi[1]))
        quads = [p + [sx, sy] for p in pts]
    card_px = spec.card_frac * W if not quads else float(np.median([np.linalg.norm(q[1] - q[0]) for q in quads]))
    # distractors and face-down cards away from the hand
    occupied = np.zeros((H, W), np.uint8)
    for q in quads:
        cv2.fillConvexPoly(occupied, q.astype(np.int32), 1)
    for _ in range(spec.distractors):
        for _try in range(10):
            cx, cy = rng.uniform(0, W), rng.uniform(0, H)
            size = card_px * rng.uniform(2.0, 4.5)
            r = int(size * 0.6)
            ys, xs = slice(max(0, int(cy) - r), int(cy) + r), slice(max(0, int(cx) - r), int(cx) + r)
            if occupied[ys, xs].any() and quads:
                continue
            distractor_gt.append(distractor(img, rng.choice(DISTRACTORS), cx, cy, size, rng))
            occupied[ys, xs] = 1
            break
    occ = np.full((H, W), -1, np.int16)
    light_dir = rng.uniform(0, 2 * math.pi)
    sdist = card_px * rng.uniform(0.03, 0.12)
    shadow = (math.cos(light_dir) * sdist, math.sin(light_dir) * sdist, max(1.0, card_px * 0.08), rng.uniform(0.15, 0.45))
    backs = [p for p in places if p.code == "back"]
    for _b in backs:
        for _try in range(10):
            cx, cy = rng.uniform(card_px, W - card_px), rng.uniform(card_px * 2, H - card_px * 2)
            p = Placement("back", 0, 0, rng.uniform(0, 180), False, "back")
            q = (card_corners(p) * card_px) + [cx, cy]
            if q.min() < 0 or q[:, 0].max() >= W or q[:, 1].max() >= H:
                continue
            m = np.zeros_like(occupied)
            cv2.fillConvexPoly(m, q.astype(np.int32), 1)
            if (m & occupied).any():
                continue
            face, alpha = render_back(rng)
            _paste(img, occ, -2, face, alpha, q, shadow, rng)
            occupied |= m
            distractor_gt.append({"kind": "face_down", "quad": np.round(q, 1).tolist()})
            break
    areas = []
    for i, (p, q) in enumerate(zip(hand_places, quads, strict=True)):
        face, alpha = faces.face(p.code, rng)
        areas.append(_paste(img, occ, i, face, alpha, q, shadow, rng))
    counts = np.bincount(occ[occ >= 0].ravel(), minlength=len(quads)) if quads else np.zeros(0)
    for i, (p, q) in enumerate(zip(hand_places, quads, strict=True)):
        vis = float(counts[i] / areas[i]) if areas[i] else 0.0
        gt_cards.append({"code": p.code, "quad": np.round(q, 2).tolist(), "visible": round(vis, 3), "group": p.group,
                         "flip": p.flip})
    img = lighting(img, nrng)
    img = camera_noise(img, nrng)
    gt = {"width": W, "height": H, "layout": spec.layout, "cards": gt_cards, "distractors": distractor_gt,
          "card_px": round(card_px, 1)}
    return img, gt
