"""Contact sheets (JPEG): every face in several styles, and scenes across the layouts."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import numpy as np

from scoring.cards import CODES
from vision.synth.decks import deck_style
from vision.synth.faces import FACE_H, FACE_W, FAMILIES, FaceSource
from vision.synth.scene import LAYOUTS, SceneSpec, compose, random_cards


def face_sheet(styles: list[str], seed: int = 0, faces_dir: str | None = None) -> np.ndarray:
    rows = []
    for si, fam in enumerate(styles):
        src = FaceSource(deck_style(random.Random(f"{seed}:{si}"), fam), faces_dir, seed=si)
        tiles = []
        for code in CODES:
            face, alpha = src.face(code)
            bg = np.full_like(face, 70)
            a = alpha[..., None].astype(np.float32) / 255
            tiles.append(np.pad((face * a + bg * (1 - a)).astype(np.uint8), ((6, 6), (3, 3), (0, 0)), constant_values=70))
        row = np.hstack(tiles)
        label = np.full((28, row.shape[1], 3), 40, np.uint8)
        cv2.putText(label, f"style: {fam}", (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (230, 230, 230), 1, cv2.LINE_AA)
        rows.append(np.vstack([label, row]))
    head = np.full((22, rows[0].shape[1], 3), 40, np.uint8)
    x = 3
    for code in CODES:
        cv2.putText(head, code, (x + 20, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (230, 230, 230), 1, cv2.LINE_AA)
        x += FACE_W + 6
    sheet = np.vstack([head] + rows)
    assert sheet.shape[0] > FACE_H
    return sheet


def scene_sheet(n: int = 12, seed: int = 0, styles: tuple[str, ...] = FAMILIES[:4], tile: int = 480) -> np.ndarray:
    tiles = []
    for i in range(n):
        rng = random.Random(f"preview:{seed}:{i}")
        lay = LAYOUTS[i % len(LAYOUTS)]
        src = FaceSource(deck_style(rng, styles[i % len(styles)]))
        jiang = random_cards(rng, 2, [], False)
        cards = random_cards(rng, rng.randint(20, 30), jiang, False)
        melds = []
        if lay == "groups":
            melds = [[cards.pop()] * 3, [cards.pop()] * 3]
            melds = [[m[0]] * min(3, 4 - jiang.count(m[0]) - cards.count(m[0])) for m in melds]
            melds = [m for m in melds if len(m) == 3]
        portrait = i % 3 == 2
        spec = SceneSpec(960 if portrait else 1280, 1280 if portrait else 960, lay, cards, melds, jiang, 1 / rng.uniform(15, 40),
                         distractors=rng.choice([0, 1, 2]), face_down=rng.choice([0, 1]))
        img, gt = compose(spec, src, rng)
        h, w = img.shape[:2]
        s = tile / max(h, w)
        small = cv2.resize(img, (int(w * s), int(h * s)), interpolation=cv2.INTER_AREA)
        canvas = np.full((tile, tile, 3), 30, np.uint8)
        y0, x0 = (tile - small.shape[0]) // 2, (tile - small.shape[1]) // 2
        canvas[y0:y0 + small.shape[0], x0:x0 + small.shape[1]] = small
        cv2.putText(canvas, f"{lay} · {len(gt['cards'])} cards", (8, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 2, cv2.LINE_AA)
        tiles.append(canvas)
    cols = 4
    rows = [np.hstack(tiles[r * cols:(r + 1) * cols]) for r in range(int(np.ceil(n / cols)))]
    width = max(r.shape[1] for r in rows)
    rows = [np.pad(r, ((0, 0), (0, width - r.shape[1]), (0, 0))) for r in rows]
    return np.vstack(rows)


def write_previews(out: str | Path, styles: list[str], seed: int = 0, faces_dir: str | None = None, scenes: int = 12) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    p1 = out / "faces.jpg"
    sheet = face_sheet(styles, seed, faces_dir)
    sheet = cv2.resize(sheet, None, fx=0.7, fy=0.7, interpolation=cv2.INTER_AREA)
    cv2.imwrite(str(p1), sheet, [cv2.IMWRITE_JPEG_QUALITY, 88])
    p2 = out / "scenes.jpg"
    cv2.imwrite(str(p2), scene_sheet(scenes, seed), [cv2.IMWRITE_JPEG_QUALITY, 85])
    return [p1, p2]
