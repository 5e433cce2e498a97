"""A second opinion on the boxes NMS dropped: in a tight stair or fan a card's own box overlaps its
neighbour's so much that NMS removes it, yet the detector did propose it. The rescue network looks at
each such proposal in its context (the photo around it and the outlines of the boxes kept) and says
whether it is a card no kept box covers. Trained on synthetic scenes, where every card is known
(scripts in vision.recover_train)."""

from __future__ import annotations

import cv2
import numpy as np

from .geometry import axes, order_long_axis_vertical, quad_iou

VIEW_W, VIEW_H = 64, 128  # the network's input: a proposal's surroundings, upright, in pixels
ACROSS, ALONG = 3.0, 1.2  # ... covering this many card widths across and card lengths along
CHANNELS = 5  # B, G, R, how many kept boxes cover the pixel, outlines of the kept boxes


def view(img: np.ndarray, quad: np.ndarray, kept: list[np.ndarray]) -> np.ndarray:
    """The proposal ``quad`` in context: a VIEW_H × VIEW_W × CHANNELS uint8 array, the proposal upright in its
    middle, with the kept boxes ``kept`` drawn as coverage and outlines."""
    q = order_long_axis_vertical(quad)
    length, width = axes(q)
    c = q.mean(0)
    u = length / 2 * ALONG
    v = width / 2 * ACROSS
    src = np.array([c - u - v, c - u + v, c + u + v, c + u - v], np.float32)
    dst = np.array([[0, 0], [VIEW_W - 1, 0], [VIEW_W - 1, VIEW_H - 1], [0, VIEW_H - 1]], np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    out = np.zeros((VIEW_H, VIEW_W, CHANNELS), np.uint8)
    out[:, :, :3] = cv2.warpPerspective(img, m, (VIEW_W, VIEW_H), flags=cv2.INTER_AREA,
                                        borderMode=cv2.BORDER_CONSTANT, borderValue=(114, 114, 114))
    cover = np.zeros((VIEW_H, VIEW_W), np.uint8)
    lines = np.zeros((VIEW_H, VIEW_W), np.uint8)
    for k in kept:
        p = cv2.perspectiveTransform(np.asarray(k, np.float32).reshape(1, 4, 2), m)[0]
        if (p[:, 0].max() < 0 or p[:, 0].min() >= VIEW_W or p[:, 1].max() < 0 or p[:, 1].min() >= VIEW_H):
            continue
        one = np.zeros_like(cover)
        cv2.fillConvexPoly(one, np.round(p).astype(np.int32), 1)
        cover += one
        cv2.polylines(lines, [np.round(p).astype(np.int32)], True, 255, 1)
    out[:, :, 3] = np.minimum(cover.astype(np.int32) * 100, 255)
    out[:, :, 4] = lines
    return out


SAME = 0.9  # a proposal overlapping a kept box by this quad IoU is that box again: not judged
APART = 0.5  # two recovered boxes overlapping by this much are one card: the likelier is taken


def inputs(img: np.ndarray, candidates: list[tuple[np.ndarray, float]],
           kept: list[np.ndarray]) -> tuple[list[int], np.ndarray, np.ndarray]:
    """What the net sees of the candidates (quad, detector score) that repeat no kept box: their indices, their
    views (N × VIEW_H × VIEW_W × CHANNELS, uint8) and (detector score, IoU with the nearest kept box) each.
    The same for judging and for collecting training views (vision.recover_train)."""
    todo, views, extra = [], [], []
    for i, (q, s) in enumerate(candidates):
        near = max((quad_iou(q, k) for k in kept), default=0.0)
        if near < SAME:
            todo.append(i)
            views.append(view(img, q, kept))
            extra.append((s, near))
    return (todo, np.array(views, np.uint8).reshape(-1, VIEW_H, VIEW_W, CHANNELS),
            np.array(extra, np.float32).reshape(-1, 2))


def judge(session, img: np.ndarray, candidates: list[tuple[np.ndarray, float]], kept: list[np.ndarray]) -> np.ndarray:
    """The probability that each candidate (quad, detector score) is a card none of the ``kept`` quads covers."""
    probs = np.zeros(len(candidates), np.float32)
    todo, views, extra = inputs(img, candidates, kept)
    if todo:
        x = views.transpose(0, 3, 1, 2).astype(np.float32) / 255
        logit = session.run(None, {"view": x, "extra": extra})[0].reshape(-1)
        probs[todo] = 1 / (1 + np.exp(-logit))
    return probs


def choose(candidates: list[tuple[np.ndarray, float]], probs: np.ndarray, threshold: float) -> list[int]:
    """The candidates judged cards (probability ≥ ``threshold``), likeliest first, one per card."""
    out: list[int] = []
    for i in np.argsort(-probs):
        if probs[i] < threshold:
            break
        if all(quad_iou(candidates[i][0], candidates[j][0]) < APART for j in out):
            out.append(int(i))
    return out
