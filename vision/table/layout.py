"""Where the cards lie: the concealed hand, declared groups (separate clusters of 3–4 equal cards) and
the flipped 将 cards set apart, from the recognized cards' positions."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

import numpy as np

from vision.table.knobs import TABLE
from vision.types import Card, meld_role


@dataclass
class TableLayout:
    hand: list[int] = field(default_factory=list)  # indices into the recognition's cards
    melds: list[list[int]] = field(default_factory=list)
    jiang: list[int] = field(default_factory=list)
    clusters: list[list[int]] = field(default_factory=list)
    apart: list[list[int]] = field(default_factory=list)  # the small clusters lying apart from the hand
    ignored: list[int] = field(default_factory=list)  # objects apart taken for something other than cards

    def role(self, i: int) -> str:
        """Card ``i``'s role as the page's corrections table names it (hand_score.layout_from_roles reads them back)."""
        if i in self.jiang:
            return "jiang"
        if i in self.ignored:
            return "ignored"
        for m, g in enumerate(self.melds):
            if i in g:
                return meld_role(m)
        return "hand"


def edge_distances(quads: np.ndarray) -> np.ndarray:
    """(n, n) edge-to-edge distances of n quads (n × 4 × 2) as the nearest corner of one to an edge of the
    other, either way round; quads that overlap without a corner near the other's edge (two cards crossing)
    are not told apart here (``clusters`` checks those)."""
    n = len(quads)
    i, j = np.indices((n, n)).reshape(2, -1)
    return pair_distances(quads, i, j).reshape(n, n)


def pair_distances(quads: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The edge-to-edge distance (edge_distances) of each pair (i[k], j[k]) of ``quads`` alone: what ``clusters``
    needs of the pairs lying near each other, without the n × n work."""
    q = np.asarray(quads, np.float64)
    a, b = q[i], q[j]

    def corner_to_edge(p: np.ndarray, e: np.ndarray) -> np.ndarray:  # corners of p to the edges of e, per pair
        start, ab = e, np.roll(e, -1, axis=1) - e  # (m, 4, 2)
        ap = p[:, :, None, :] - start[:, None, :, :]  # (m, 4 corners, 4 edges, 2)
        t = np.clip((ap * ab[:, None]).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-9)[:, None], 0, 1)
        return np.linalg.norm(ap - t[..., None] * ab[:, None], axis=-1).min(axis=(1, 2))

    return np.minimum(corner_to_edge(a, b), corner_to_edge(b, a))


def quad_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Edge-to-edge distance of two convex quads (0 when they overlap)."""
    import cv2

    inter, _ = cv2.intersectConvexConvex(np.asarray(a, np.float32), np.asarray(b, np.float32))
    return 0.0 if inter > 0 else float(edge_distances(np.stack([a, b]))[0, 1])


def clusters(cards: list[Card], gap: float = 0.45) -> list[list[int]]:
    """Groups of cards whose edges are closer than ``gap`` card widths (connected components)."""
    import cv2

    n = len(cards)
    if n == 0:
        return []
    quads = np.array([c.quad for c in cards], np.float32)
    width = float(np.median(np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1)))
    length = float(np.median(np.linalg.norm(quads[:, 3] - quads[:, 0], axis=1)))
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    ctr = quads.mean(1)
    near = np.linalg.norm(ctr[:, None] - ctr[None], axis=-1) <= length + width * (1 + gap)
    ii, jj = np.nonzero(np.triu(near, 1))
    close = pair_distances(quads, ii, jj) <= gap * width
    for i, j, c in zip(ii, jj, close, strict=True):
        if c or cv2.intersectConvexConvex(quads[i], quads[j])[0] > 0:
            parent[find(int(i))] = find(int(j))
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: (-len(g), min(g)))


def equal_runs(cards: list[Card], g: list[int]) -> list[list[int]]:
    """The cluster's cards along its main axis, cut into runs of equal codes."""
    ctr = np.array([np.mean(cards[i].quad, axis=0) for i in g])
    axis = np.linalg.svd(ctr - ctr.mean(0))[2][0] if len(g) > 1 else np.array([1.0, 0.0])
    order = [g[k] for k in np.argsort(ctr @ axis)]
    runs: list[list[int]] = []
    for i in order:
        if runs and cards[runs[-1][-1]].code == cards[i].code:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs




def groups_laid(cards: list[Card], g: list[int]) -> list[list[int]] | None:
    """The cluster ``g`` cut into its runs of equal cards when it is several groups laid close together (each run 3–4
    cards, at most TABLE.most_grouped cards in all); None otherwise."""
    runs = equal_runs(cards, g) if len(g) <= TABLE.most_grouped else []
    return runs if runs and all(len(r) in (3, 4) for r in runs) else None




def evenly_laid(cards: list[Card], g: list[int]) -> bool:
    """Whether the cluster ``g`` of several runs of equal cards lies evenly along its axis, as a row of a hand laid
    down: the centres of the cards on either side of a run's end are no further apart than TABLE.even_row card widths more
    than the median step inside the runs. Declared groups laid close together keep a gap between them
    (scene.layout_melds lays the next group 1 to 2 card widths past the last card of the one before)."""
    runs = equal_runs(cards, g)
    if len(runs) < 2 or all(len(r) < 2 for r in runs):
        return False
    order = [i for r in runs for i in r]
    ctr = np.array([np.mean(cards[i].quad, axis=0) for i in order])
    width = float(np.median([np.linalg.norm(np.subtract(cards[i].quad[1], cards[i].quad[0])) for i in order]))
    steps = np.linalg.norm(np.diff(ctr, axis=0), axis=1) / max(width, 1e-9)
    ends = np.cumsum([len(r) for r in runs])[:-1] - 1  # the step from a run's last card to the next run's first
    inside = np.delete(steps, ends)
    return bool(steps[ends].max() <= np.median(inside) + TABLE.even_row)




def apart_from_spacing(cards: list[Card], g: list[int]) -> bool:
    """Whether the cards ``g`` lie apart from the other ``cards`` by more than those are spaced: the gap between them
    exceeds the 90th percentile of the other cards' gaps to their nearest neighbour by TABLE.spaced card widths. A hand
    laid with a space between every card (test hands 12 MP 000037: nearest gaps 0.25 widths, 0.31 at the 90th
    percentile) has 3 equal cards 0.36 widths from the rest as part of a row; groups declared close to a hand laid
    card against card lie 0.39–0.43 widths from it while its own gaps are 0.10–0.16 at most (val_hands3 000515,
    val_hands4 000076)."""
    inside = set(g)
    rest = [k for k in range(len(cards)) if k not in inside]
    if not rest or not g:
        return False
    quads = np.array([c.quad for c in cards], np.float64)
    width = max(float(np.median(np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1))), 1e-9)
    d = edge_distances(quads) / width
    np.fill_diagonal(d, np.inf)
    return bool(d[np.ix_(g, rest)].min() > np.percentile(d[rest].min(1), 90) + TABLE.spaced)


def split_table(cards: list[Card], n_jiang: int) -> TableLayout:
    """The largest cluster(s) form the hand; small clusters of 3–4 equal cards are declared groups;
    clusters of 1–2 cards lying apart are the flipped 将 cards (up to ``n_jiang``)."""
    cl = clusters(cards)
    out = TableLayout(clusters=cl)
    if not cl:
        return out
    rest = []
    for g in cl:
        codes = {cards[i].code for i in g}
        runs = groups_laid(cards, g) if len(cl) > 1 and len(g) < len(cl[0]) else None
        if len(g) in (3, 4) and len(codes) == 1 and len(cl) > 1 and len(g) < len(cl[0]):
            out.melds.append(sorted(g, key=lambda i: np.mean([p[0] for p in cards[i].quad])))
        elif runs:  # groups laid close together: split by card
            out.melds.extend(runs)
        elif len(g) <= 2 and len(cl) > 1 and len(g) < len(cl[0]):
            rest.append(g)
        else:
            out.hand.extend(g)
    # apart cards: the flipped 将 when their number fits, otherwise part of the hand
    out.apart = rest
    apart = [i for g in rest for i in g]
    if 0 < len(apart) <= n_jiang:
        out.jiang = apart
    else:
        out.hand.extend(apart)
    out.hand.sort()
    return out




def apart_readings(lay: TableLayout, n_jiang: int) -> list[TableLayout]:
    """Other readings of the small clusters lying apart, for when the first reading makes no hand: each
    cluster is part of the 将, part of the hand, or an object that is not a card (a coin, a lighter, a
    mis-detection) and is left out. Readings whose 将 do not number ``n_jiang`` (or none) are skipped;
    the caller keeps the legal win with the fewest repairs, then the fewest objects left out."""
    rest = lay.apart[:TABLE.max_apart]
    if not rest:
        return []
    base_hand = [i for i in lay.hand if not any(i in g for g in rest)]
    out = []
    for choice in itertools.product(("jiang", "hand", "ignored"), repeat=len(rest)):
        jiang = [i for g, c in zip(rest, choice, strict=True) if c == "jiang" for i in g]
        if len(jiang) not in (0, n_jiang):
            continue
        hand = base_hand + [i for g, c in zip(rest, choice, strict=True) if c == "hand" for i in g]
        ignored = [i for g, c in zip(rest, choice, strict=True) if c == "ignored" for i in g]
        out.append(replace(lay, hand=sorted(hand), jiang=jiang, ignored=ignored, melds=[list(m) for m in lay.melds]))
    return out
