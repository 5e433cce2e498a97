"""The cards of a calibration photo, found by what any card is rather than by a detector that knows the deck.

A calibration photo is the easy case: cards lying apart, face up, on one surface. Whatever is printed on them,
their paper stands out from the table: the table's colour is read from the photo's border, every pixel's distance
from it is split in two (Otsu, and at higher levels: a table with light patches as bright as paper, or cards a hair
apart, part only above Otsu's level), and each blob that is a long strip (a minimum-area rectangle 3 : 1 to 7 : 1,
filled by the blob) is a card. The reading that shows the most strips of one size is taken, and cards that other
readings show inside a blob it took for something else (a card merged there with a patch of table or with its
neighbour) replace that blob. Two pieces that together make one card's rectangle (a dark line or a thin shadow across
a card cuts its blob in two) are that card. Blobs of the wrong shape are reported, not guessed at: two cards touching
make one wide blob, and an object that is not a card has the wrong proportions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.infer.geometry import quad_overlap

WORK_SIDE = 1000  # the photo is searched at this long side
BORDER = 0.04  # the share of each side read as the table
ASPECTS = (3.0, 7.0)  # length : width of a card's rectangle
FILL = 0.8  # a card's blob fills this much of its rectangle at least (the cards that set a card's size)
FILL_NOTCHED = 0.65  # ... and a card's size with a notch (a shadow or the table's line across a corner) this much
TOUCHING = 1.6  # a blob this many cards' areas or more, of card width, is cards touching
ERODE_PX = (0, 2, 4, 7)  # erosions tried (pixels at WORK_SIDE)
PIECE = 0.9  # a blob under this share of a card's area may be a piece of a card cut in two
SPECK = 0.2  # blobs under this share of a card's area are specks (dust, a stain), not reported
LEVELS = (0.0, 0.25, 0.5)  # each cue split at Otsu's level and this share of the way from it to the brightest
EDGES = ((40, 120), (80, 240))  # Canny's thresholds of the outline cue (find_cards(outlines=True))
INNER = 0.85  # of readings showing as many strips, those whose cards are this much smaller are frames inside them
ADD_SIZE = (0.8, 1.25)  # a card another reading adds: its area and width this near the taken reading's card's


@dataclass(frozen=True)
class Blob:
    """A shape that stands out from the table: its outline as a rotated rectangle (corners in the photo's pixels,
    clockwise), its area, and what it is taken for: ``card``, ``touching`` (two or more cards that touch) or
    ``object`` (something of another shape)."""

    quad: np.ndarray
    area: float
    kind: str

    @property
    def centre(self) -> np.ndarray:
        return self.quad.mean(0)

    @property
    def length(self) -> float:
        """The rectangle's long side."""
        return float(max(np.linalg.norm(self.quad[1] - self.quad[0]), np.linalg.norm(self.quad[2] - self.quad[1])))


@dataclass
class Found:
    """What a calibration photo holds: the cards, and every other blob with what it was taken for."""

    cards: list[Blob]
    others: list[Blob] = field(default_factory=list)
    card_area: float = 0.0


def _masks(img: np.ndarray, outlines: bool = False) -> list[np.ndarray]:
    """Candidate masks of what lies on the table (255), by four cues: far in colour from the table (the border's
    median colour), far in hue alone, brighter than the table, and paper-like (bright, little colour) against its
    surroundings; with ``outlines``, also inside a closed sharp outline (the last resort: a blurred photo's outlines
    take in a margin of table, and a card's shadow)."""
    blur = cv2.GaussianBlur(img, (5, 5), 0)
    lab = cv2.cvtColor(blur, cv2.COLOR_BGR2LAB).astype(np.float32)
    h, w = lab.shape[:2]
    b = max(2, int(BORDER * min(h, w)))
    ring = np.concatenate([lab[:b].reshape(-1, 3), lab[-b:].reshape(-1, 3), lab[:, :b].reshape(-1, 3), lab[:, -b:].reshape(-1, 3)])
    table = np.median(ring, axis=0)
    d = np.linalg.norm(lab - table, axis=2)
    hue = np.linalg.norm(lab[..., 1:] - table[1:], axis=2)  # colour alone: a table of light and dark patches
    light = lab[..., 0]
    hsv = cv2.cvtColor(blur, cv2.COLOR_BGR2HSV).astype(np.float32)
    paper = light - 0.5 * hsv[..., 1]
    big = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (w // 8 | 1, w // 8 | 1))
    paper = paper - cv2.morphologyEx(paper, cv2.MORPH_OPEN, big)  # white top-hat: paper against what is around it
    out = []
    k3 = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    for cue in (d, hue, light, paper):
        lo, hi = np.percentile(cue, (0.5, 99.5))
        c8 = np.clip((cue - lo) * (255.0 / max(hi - lo, 1e-6)), 0, 255).astype(np.uint8)
        otsu, _ = cv2.threshold(c8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        for level in LEVELS:
            m = np.where(c8 > otsu + level * (255 - otsu), 255, 0).astype(np.uint8)
            m = cv2.morphologyEx(m, cv2.MORPH_OPEN, k3)
            out.append(_filled(cv2.morphologyEx(m, cv2.MORPH_CLOSE, k3)))
    if outlines:  # a card's edge is sharp where a cloudy table's patches are soft: the filled closed edges
        grey = cv2.cvtColor(cv2.GaussianBlur(img, (3, 3), 0), cv2.COLOR_BGR2GRAY)
        for lo, hi in EDGES:
            out.append(_filled(cv2.dilate(cv2.Canny(grey, lo, hi), cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))))
    return out


def _filled(mask: np.ndarray) -> np.ndarray:
    """Each blob with its holes filled (a card's dark drawing is part of the card)."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 255, cv2.FILLED)
    return out


def _shapes(mask: np.ndarray, grow: float) -> list[tuple[np.ndarray, float, float, float, float]]:
    """Each blob's rectangle grown by ``grow`` pixels a side (what an erosion took), area, long and short sides, fill."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    shapes = []
    for c in contours:
        area = float(cv2.contourArea(c))
        if area < 30:
            continue
        (cx, cy), (w, h), ang = cv2.minAreaRect(c)
        fill = area / max(w * h, 1.0)
        w, h = w + 2 * grow, h + 2 * grow
        quad = cv2.boxPoints(((cx, cy), (w, h), ang)).astype(np.float32)
        shapes.append((quad, w * h * min(fill, 1.0), max(w, h), min(w, h), fill))
    return shapes


def _strips(shapes: list) -> list:
    strips = [s for s in shapes if ASPECTS[0] <= s[2] / max(s[3], 1e-6) <= ASPECTS[1] and s[4] >= FILL]
    if not strips:
        return []
    med = float(np.median([s[1] for s in strips]))
    return [s for s in strips if 0.6 * med <= s[1] <= 1.5 * med]


def find_cards(img: np.ndarray, outlines: bool = False) -> Found:
    """The card-shaped blobs of a photo of cards lying apart (``img`` BGR, any size), and the other blobs.

    Each cue's mask is read as it is and eroded a little (cards a hair apart, or joined by their shadows, part
    where the erosion cuts the thin bridge; each rectangle is then grown back): the reading that shows the most
    strips of one size is kept (of those showing as many, not one whose strips are much smaller than another's: a
    frame printed inside each card; then the one with fewer other blobs once pieces are joined, then the one whose
    cards differ less in length: a card whose dark head merged with the table is shorter), and the other readings'
    cards replace a blob it took for something else (_added)."""
    scale = min(1.0, WORK_SIDE / max(img.shape[:2]))
    small = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else img
    readings = []
    for mask in _masks(small, outlines):
        for r in ERODE_PX:
            m = cv2.erode(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))) if r else mask
            shapes = [(q / scale, a / scale**2, long / scale, short / scale, fill) for q, a, long, short, fill in _shapes(m, r)]
            strips = _strips(shapes)
            readings.append((shapes, strips, _read(shapes, strips)))
    most = max(len(x[1]) for x in readings)
    tied = [x for x in readings if len(x[1]) == most]
    size = max(x[2][2] for x in tied)  # a card's area in the reading whose cards are largest
    tied = [x for x in tied if x[2][2] >= INNER * size]  # not a frame printed inside the cards
    best = max(tied, key=lambda x: (-len(x[2][1]), -_spread(x[2][0])))
    shapes, strips, (cards, others, card_area, width) = best
    if not strips:
        big = 0.002 * img.shape[0] * img.shape[1]
        return Found([], [Blob(q, a, "object") for q, a, *_ in shapes if a > big])
    return Found(*_added(cards, others, [x[1] for x in readings if x is not best], card_area, width), card_area)


def _read(shapes: list, strips: list) -> tuple[list[Blob], list[Blob], float, float]:
    """A reading's cards (its strips, the notched cards of their size, pieces joined) and other blobs, with the
    cards' area and width."""
    if not strips:
        return [], [], 0.0, 0.0
    card_area = float(np.median([s[1] for s in strips]))
    width = float(np.median([s[3] for s in strips]))
    cards, others, specks = [], [], []
    for q, a, long, short, fill in shapes:
        if a < SPECK * card_area:
            specks.append(Blob(q, a, "speck"))
            continue
        if any(q is s[0] for s in strips) or (ASPECTS[0] <= long / max(short, 1e-6) <= ASPECTS[1]
                                              and 0.6 * card_area <= a <= 1.5 * card_area and fill >= FILL_NOTCHED):
            cards.append(Blob(q, a, "card"))
        elif a >= TOUCHING * card_area and short >= 0.8 * width:  # cards side by side or end to end
            others.append(Blob(q, a, "touching"))
        else:
            others.append(Blob(q, a, "object"))
    cards, others = _joined(cards, others, specks, card_area, width)
    return cards, others, card_area, width


def _spread(cards: list[Blob]) -> float:
    """How much the cards differ in length (coefficient of variation of their rectangles' long sides)."""
    longs = np.array([c.length for c in cards])
    return float(longs.std() / longs.mean()) if len(longs) > 1 else 0.0


def _added(cards: list[Blob], others: list[Blob], readings: list[list], card_area: float,
           width: float) -> tuple[list[Blob], list[Blob]]:
    """The cards of the other readings (``readings``: their strips, best first) of the found cards' size that lie where
    no card was found but in a blob taken for something else (a card merged with a patch of table, two cards
    touching): that blob gives way to them. A strip on the bare table is not added: a patch of table can be a strip."""
    lo, hi = ADD_SIZE
    added: list[Blob] = []
    for strips in readings:
        for q, a, _long, short, _fill in strips:
            if not (lo * card_area <= a <= hi * card_area and lo * width <= short <= hi * width):
                continue
            if any(quad_overlap(q, c.quad) > 0.05 * card_area for c in cards + added):
                continue
            if not any(quad_overlap(q, o.quad) > 0.8 * a for o in others):  # on the table, not in a blob taken for another thing
                continue
            added.append(Blob(q, a, "card"))
    if not added:
        return cards, others
    kept = [o for o in others if not any(quad_overlap(o.quad, c.quad) > 0.3 * c.area for c in added)]
    return cards + added, kept


def _joined(cards: list[Blob], others: list[Blob], specks: list[Blob], card_area: float,
            width: float) -> tuple[list[Blob], list[Blob]]:
    """Pieces of one card joined: two blobs under a card's area (a head cut off is a speck's size) whose common
    rectangle is a card's (its width, its proportions, its area give or take a fifth) and which fill it as a notched
    card does. A card and a piece of something lying at its end make a rectangle longer than any card, so they stay
    apart; specks no card takes are dropped."""
    pool = [b for b in cards + others + specks if 0.03 * card_area <= b.area < PIECE * card_area and b.kind != "touching"]
    pairs = []
    for i, a in enumerate(pool):
        for b in pool[i + 1:]:
            (cx, cy), (w, h), ang = cv2.minAreaRect(np.concatenate([a.quad, b.quad]).astype(np.float32))
            long, short, rect = max(w, h), min(w, h), w * h
            fill = (a.area + b.area) / max(rect, 1.0)
            if (0.8 * card_area <= rect <= 1.25 * card_area and 0.8 * width <= short <= 1.25 * width
                    and ASPECTS[0] <= long / max(short, 1e-6) <= ASPECTS[1] and fill >= FILL_NOTCHED):
                pairs.append((fill, a, b, cv2.boxPoints(((cx, cy), (w, h), ang)).astype(np.float32), rect))
    used: list[Blob] = []
    joined = []
    for _, a, b, quad, rect in sorted(pairs, key=lambda p: -p[0]):
        if any(x is a or x is b for x in used):
            continue
        used += [a, b]
        joined.append(Blob(quad, rect, "card"))
    if not joined:
        return cards, others
    return ([c for c in cards if not any(c is u for u in used)] + joined,
            [o for o in others if not any(o is u for u in used)])


def cards_touching(blob: Blob, card_area: float) -> int:
    """How many cards a ``touching`` blob holds, by its area."""
    return max(2, int(round(blob.area / max(card_area, 1.0))))
