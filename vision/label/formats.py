"""The label formats a labelling job writes: YOLO-OBB lines, a COCO document, Label Studio tasks and their
labelling config, and the review page that shows the flagged cards first."""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path
from typing import Any
from urllib.parse import quote

import cv2
import numpy as np

from scoring.cards import CODES, NAMES_ZH
from vision.infer.imageio import load_image
from vision.label.records import LabelledPhoto


def yolo_lines(photo: LabelledPhoto) -> str:
    w, h = photo.recognition.width, photo.recognition.height
    lines = []
    for c in photo.cards:
        q = np.array(c.quad, np.float64)
        q[:, 0] /= w
        q[:, 1] /= h
        q = q.clip(0, 1)
        lines.append(f"{CODES.index(c.code)} " + " ".join(f"{v:.6f}" for v in q.reshape(-1)))
    return "\n".join(lines) + ("\n" if lines else "")


def coco_document(photos: list[LabelledPhoto], min_conf: float = 0.8) -> dict[str, Any]:
    """COCO with each rotated card as a segmentation polygon (COCO has no rotation field); cards read with less
    than ``min_conf`` are flagged."""
    images, anns = [], []
    for i, r in enumerate(photos, 1):
        images.append({"id": i, "file_name": r.image_name, "width": r.recognition.width, "height": r.recognition.height})
        for c, flagged in zip(r.cards, r.flagged(min_conf), strict=True):
            q = np.array(c.quad, np.float64)
            x0, y0 = q.min(0)
            x1, y1 = q.max(0)
            area = float(abs(cv2.contourArea(q.astype(np.float32))))
            anns.append({"id": len(anns) + 1, "image_id": i, "category_id": CODES.index(c.code) + 1,
                         "bbox": [round(x0, 2), round(y0, 2), round(x1 - x0, 2), round(y1 - y0, 2)],
                         "segmentation": [[round(v, 2) for v in q.reshape(-1)]], "area": round(area, 2), "iscrowd": 0,
                         "score": round(c.confidence, 4),
                         "attributes": {"alternatives": [[a, round(p, 4)] for a, p in c.alternatives], "flagged": flagged}})
    cats = [{"id": k + 1, "name": code, "name_zh": NAMES_ZH[code], "supercategory": "card"} for k, code in enumerate(CODES)]
    return {"info": {"description": "changpai auto-labels"}, "images": images, "annotations": anns, "categories": cats}


def quad_to_ls(q: np.ndarray, w: int, h: int) -> dict[str, float]:
    """Label Studio rectangle: x, y of the top-left corner before rotation, percent; rotation in degrees
    clockwise about that corner."""
    tl, tr, bl = q[0], q[1], q[3]
    width = float(np.linalg.norm(tr - tl))
    height = float(np.linalg.norm(bl - tl))
    rot = math.degrees(math.atan2(tr[1] - tl[1], tr[0] - tl[0])) % 360
    return {"x": tl[0] / w * 100, "y": tl[1] / h * 100, "width": width / w * 100, "height": height / h * 100, "rotation": rot}


def ls_to_quad(v: dict[str, float], w: int, h: int) -> np.ndarray:
    x, y = v["x"] / 100 * w, v["y"] / 100 * h
    ww, hh = v["width"] / 100 * w, v["height"] / 100 * h
    a = math.radians(v["rotation"])
    ux, uy = math.cos(a), math.sin(a)
    vx, vy = -math.sin(a), math.cos(a)
    return np.array([[x, y], [x + ww * ux, y + ww * uy], [x + ww * ux + hh * vx, y + ww * uy + hh * vy], [x + hh * vx, y + hh * vy]])


def label_studio_tasks(photos: list[LabelledPhoto], image_prefix: str = "/data/local-files/?d=") -> list[dict[str, Any]]:
    tasks = []
    for r in photos:
        results = []
        w, h = r.recognition.width, r.recognition.height
        for j, c in enumerate(r.cards):
            v = quad_to_ls(np.array(c.quad, np.float64), w, h)
            v["rectanglelabels"] = [c.code]
            results.append({"id": f"c{j}", "type": "rectanglelabels", "from_name": "label", "to_name": "image",
                            "original_width": w, "original_height": h, "image_rotation": 0,
                            "value": {k: (round(x, 4) if isinstance(x, float) else x) for k, x in v.items()},
                            "score": round(c.confidence, 4)})
        score = float(np.mean([c.confidence for c in r.cards])) if r.cards else 0.0
        # Label Studio reads the path from the query string (Django's QueryDict: '+' is a space, '&' ends the value,
        # '#' ends the URL), so it goes percent-encoded
        tasks.append({"data": {"image": image_prefix + quote(r.image_name, safe="/")},
                      "predictions": [{"model_version": r.recognition.model or "changpai", "score": round(score, 4),
                                       "result": results}]})
    return tasks


LABEL_STUDIO_CONFIG = """<View>
  <Image name="image" value="$image"/>
  <RectangleLabels name="label" toName="image" canRotate="true">
""" + "\n".join(f'    <Label value="{c}" hint="{NAMES_ZH[c]}"/>' for c in CODES) + """
  </RectangleLabels>
</View>
"""


# ----------------------------------------------------------------------------------------------
# review page


def review_page(photos: list[LabelledPhoto], root: Path, min_conf: float, max_cards: int = 400) -> str:
    """HTML page: flagged cards first (crop, code, confidence, alternatives), then a per-image list."""
    from vision.infer.geometry import rectify

    flagged = [(r, c) for r in photos for c in r.cards if c.confidence < min_conf]
    flagged.sort(key=lambda rc: rc[1].confidence)
    cells = []
    cache: dict[str, np.ndarray] = {}
    for r, c in flagged[:max_cards]:
        img = cache.get(r.rel)
        if img is None:
            img = load_image(root / r.rel)
            cache = {r.rel: img}
        crop = rectify(img, np.array(c.quad, np.float32), (64, 256), ordered=True)
        ok, buf = cv2.imencode(".jpg", crop, [cv2.IMWRITE_JPEG_QUALITY, 80])
        b64 = base64.b64encode(buf.tobytes()).decode()
        alts = ", ".join(f"{html.escape(a)} {p:.2f}" for a, p in c.alternatives[1:4])
        cells.append(f"<figure><img src='data:image/jpeg;base64,{b64}'><figcaption><b>{c.code} {NAMES_ZH[c.code]}</b> "
                     f"{c.confidence:.2f}<br><small>{html.escape(r.rel)}<br>or {alts}</small></figcaption></figure>")
    rows = "".join(f"<tr><td>{html.escape(r.rel)}</td><td>{len(r.cards)}</td>"
                   f"<td>{sum(r.flagged(min_conf))}</td></tr>" for r in photos)
    return f"""<!doctype html><html lang="zh"><meta charset="utf-8"><title>changpai review</title>
<style>body{{font-family:sans-serif;margin:1em}}figure{{display:inline-block;margin:4px;width:150px;vertical-align:top}}
img{{height:180px}}figcaption{{font-size:12px}}table{{border-collapse:collapse}}td{{border:1px solid #ccc;padding:2px 6px}}</style>
<h1>Review: {len(flagged)} flagged card(s) (confidence &lt; {min_conf})</h1>
<p>Flagged cards first, least confident first. Correct them in your labelling tool, then train with <code>changpai train</code>.</p>
{''.join(cells) or '<p>Nothing flagged.</p>'}
<h2>Images</h2><table><tr><th>image</th><th>cards</th><th>flagged</th></tr>{rows}</table></html>"""
