"""Synthetic datasets (`changpai synth`): detection scenes, classifier crops, winning-hand scenes.

Each image i is drawn from ``random.Random(f"{seed}:{i}")`` alone, so the same seed gives the same
files whatever the number of workers, and an interrupted run resumes by skipping the images whose
ground-truth JSON (written last, atomically) already exists.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter, OrderedDict
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scoring.cards import CODES, EXTRAS, N_PLAIN
from scoring.random_hands import random_winning_hand
from scoring.rulesets import RULESETS
from vision.infer.geometry import fold, jitter_quad, rectify
from vision.synth.decks import ALL_FAMILIES, DeckSpec, deck_style
from vision.synth.faces import TRAIN_FAMILIES, FaceSource
from vision.synth.names import MORE_EXTRA_WAYS, draw_names
from vision.synth.scene import LAYOUTS, SceneSpec, compose, random_cards
from vision.synth.tables import ALL_TABLES
from vision.types import MIN_LABEL_VISIBLE

KINDS = ("detect", "classify", "hands")
META = ".changpai-synth.json"
VERSION = 1


class SynthError(ValueError):
    """Bad arguments or an output folder that must not be touched."""


@dataclass(frozen=True)
class Job:
    out: str
    kind: str
    seed: int
    n: int
    styles: tuple[str, ...]
    faces: str | None
    val_frac: float
    width: int
    height: int
    quality: tuple[int, int] = (60, 95)
    rulesets: tuple[str, ...] = ()  # hands: drawn among these (rugao with 0–2 wild cards; XI_ER); () nantong, 3 double to 1 single
    tables: tuple[str, ...] = ()  # the tables drawn among; () the five of tables.TABLES
    least_show: float | None = None  # stairs and fans: the least share of a card's width left showing (None: 0.45 / 0.5)
    turn: str = "upright"  # how the layouts lie to the camera (SceneSpec.turn)
    named_ways: bool = False  # every deck family draws its named cards and extras the printer's way (as medley does)
    extras_weight: int = 1  # detect / classify: each extra drawn as if the deck held this many (a deck holds one)

    def scene_knobs(self) -> dict[str, Any]:
        """The SceneSpec fields this job sets (none by default, so a seed renders as it always did)."""
        return ({"tables": self.tables} if self.tables else {}) | (
            {"least_show": self.least_show} if self.least_show is not None else {}) | (
            {"turn": self.turn} if self.turn != "upright" else {})

    def meta(self) -> dict[str, Any]:
        """What a synth run's folder records of its job beyond the scenes' knobs (only what differs from the default)."""
        return ({"named_ways": True} if self.named_ways else {}) | (
            {"extras_weight": self.extras_weight} if self.extras_weight != 1 else {})


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _split(i: int, val_frac: float) -> str:
    if val_frac <= 0:
        return "train"
    every = max(2, round(1 / val_frac))
    return "val" if i % every == every - 1 else "train"


_FACE_CACHE: OrderedDict[tuple, FaceSource] = OrderedDict()


def _faces(job: Job, style_idx: int) -> FaceSource:
    key = (job.seed, style_idx, job.styles, job.faces, job.named_ways)
    fs = _FACE_CACHE.get(key)
    if fs is None:
        fam = job.styles[style_idx % len(job.styles)]
        style = deck_style(random.Random(f"{job.seed}:style:{style_idx}"), fam)
        if job.named_ways and isinstance(style, DeckSpec) and not style.names:  # drawn apart: the deck stays as it was
            style = replace(style, names=draw_names(random.Random(f"{job.seed}:names:{style_idx}"), MORE_EXTRA_WAYS))
        fs = FaceSource(style, job.faces, seed=style_idx)
        _FACE_CACHE[key] = fs
        while len(_FACE_CACHE) > 24:
            _FACE_CACHE.popitem(last=False)
    _FACE_CACHE.move_to_end(key)
    return fs


def _pool_size(n: int) -> int:
    return max(8, n // 6)


XI_ER = "xi_er"  # --rulesets nantong-single+xi_er: hands with R7's 喜儿 option, holding 0–2 extras as bonus cards


def _laid_groups(melds: list, concealed: list[str]) -> list[list[str]]:
    """The concealed cards as the groups of a reading (scoring Meld, in order) hold them. A group a wild card completes
    lists the kind it stands for (3w 4w 5w for 3w 福 5w): there the hand's own cards are taken and the wild laid in
    the place of the one it stands for, after the groups without wilds have taken theirs."""
    left = Counter(c for c in concealed if c not in EXTRAS)
    wild = [c for c in concealed if c in EXTRAS]
    out: list[list[str] | None] = [None] * len(melds)
    for k in sorted(range(len(melds)), key=lambda k: melds[k].wilds > 0):  # the groups without wilds first
        group, own = [], len(melds[k].cards) - melds[k].wilds  # own: the hand's cards the group holds
        for c in melds[k].cards:
            if own and left[c] > 0:
                left[c] -= 1
                own -= 1
                group.append(c)
            else:
                group.append(wild.pop())
        out[k] = group
    if wild or +left:
        raise RuntimeError(f"the reading's groups do not hold the hand's cards: {wild} {dict(+left)} left")
    return out  # type: ignore[return-value]


def _scene_spec(job: Job, rng: random.Random) -> tuple[SceneSpec, dict[str, Any] | None]:
    portrait = rng.random() < 0.35
    w, h = (job.height, job.width) if portrait else (job.width, job.height)
    frac = 1 / rng.uniform(15, 40)
    if job.kind == "classify":
        frac = 1 / rng.uniform(10, 26)
    if job.kind == "hands":
        ruleset, _, option = rng.choice(list(job.rulesets) or ["nantong-double"] * 3 + ["nantong-single"]).partition("+")
        wilds = rng.choice([0, 1, 1, 2]) if ruleset == "rugao" else 0
        bonus = rng.choice([0, 1, 1, 2]) if option == XI_ER else None
        d = random_winning_hand(rng, ruleset, p_seq=rng.choice([0.2, 0.5, 0.8]), wilds=wilds, xi_er=bonus)
        from scoring import score_dict

        res = score_dict(d)
        # the concealed hand laid in the order of its best reading, groups in a random order; a group a wild card
        # completes lists the kind it stands for, so the wild is laid in its place
        melds = [m for m in res.best.melds if m.how == "concealed"]
        rng.shuffle(melds)
        held = [c for c in d["concealed"] if c in EXTRAS] if bonus else []  # 喜儿: bonus cards, in no group
        groups = _laid_groups(melds, [c for c in d["concealed"] if c not in held])
        if held:  # the 喜儿 held lie together among the groups
            groups.insert(rng.randrange(len(groups) + 1), held)
        cards = [c for g in groups for c in g]
        declared = [g["cards"] for g in d["declared"]]
        spec = SceneSpec(w, h, rng.choice(["row", "stair", "stair", "fan"]), cards, declared, list(d["jiang"]), frac,
                         distractors=rng.choice([0, 0, 1, 2]), face_down=0, **job.scene_knobs())
        d["expected_total"] = res.total
        return spec, d
    # detect / classify: random cards from a real deck
    if job.kind == "detect" and rng.random() < 0.08:  # hard negative: no cards at all
        return SceneSpec(w, h, "row", [], [], [], frac, distractors=rng.randint(1, 5), face_down=rng.randint(0, 3),
                         **job.scene_knobs()), None
    layout = rng.choice(LAYOUTS)
    jiang = random_cards(rng, 2, [], False) if rng.random() < 0.7 else []
    n = rng.randint(20, 35)
    # the five extras (one card each, in some decks) are rare on a table; the classifier sees them more often
    cards = random_cards(rng, n + 8, jiang, extras=rng.random() < (0.6 if job.kind == "classify" else 0.15),
                         extra_copies=job.extras_weight)
    melds: list[list[str]] = []
    if layout == "groups":
        counts = {c: cards.count(c) for c in dict.fromkeys(cards)}  # first-seen order: a seed draws the same scene in every run
        for code in sorted(counts, key=lambda c: -counts[c]):
            if len(melds) >= rng.randint(1, 3):
                break
            k = 4 - jiang.count(code)
            size = min(k, rng.choice([3, 3, 4]))
            if size >= 3 and CODES.index(code) < N_PLAIN:
                melds.append([code] * size)
        used = sum(len(m) for m in melds)
        for m in melds:
            for c in m:
                if c in cards:
                    cards.remove(c)
        cards = cards[:max(8, n - used)]
    else:
        cards = cards[:n]
    spec = SceneSpec(w, h, layout, cards, melds, jiang if rng.random() < 0.8 else [], frac,
                     distractors=rng.choice([0, 0, 1, 2, 3]), face_down=rng.choice([0, 0, 0, 1, 2]), **job.scene_knobs())
    return spec, None


def _encode(img: np.ndarray, rng: random.Random, job: Job) -> bytes:
    q = rng.randint(*job.quality)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    assert ok
    return buf.tobytes()


def yolo_obb_line(cls: int, quad: list[list[float]], w: int, h: int) -> str:
    coords = []
    for x, y in quad:
        coords += [min(max(x / w, 0.0), 1.0), min(max(y / h, 0.0), 1.0)]
    return f"{cls} " + " ".join(f"{v:.6f}" for v in coords)




def render_one(job: Job, i: int) -> int:
    """Render image i of the job; returns the number of files written (0 when already done)."""
    out = Path(job.out)
    name = f"{i:06d}"
    gt_path = out / "gt" / f"{name}.json"
    if gt_path.exists():
        return 0
    rng = random.Random(f"{job.seed}:{i}")
    style_idx = rng.randrange(_pool_size(job.n))
    faces = _faces(job, style_idx)
    spec, hand = _scene_spec(job, rng)
    img, gt = compose(spec, faces, rng)
    split = _split(i, job.val_frac)
    gt.update({"image": None, "split": split, "style": faces.style.to_dict() if faces.style else None,
               "style_index": style_idx, "seed": job.seed, "index": i})
    written = 0
    if job.kind in ("detect", "hands"):
        img_path = out / "images" / split / f"{name}.jpg"  # hands too: their scenes train the detector as well
        lab_path = out / "labels" / split / f"{name}.txt"
        lines = [yolo_obb_line(CODES.index(c["code"]), c["quad"], gt["width"], gt["height"])
                 for c in gt["cards"] if c["visible"] >= MIN_LABEL_VISIBLE]
        _atomic_write(img_path, _encode(img, rng, job))
        _atomic_write(lab_path, ("\n".join(lines) + ("\n" if lines else "")).encode())
        gt["image"] = str(img_path.relative_to(out))
        written += 2
        if hand is not None:
            gt["hand"] = {k: v for k, v in hand.items() if k != "expected_total"}
            gt["expected_total"] = hand["expected_total"]
    else:  # classify: rectified, folded crops of every card visible enough
        # crops are cut from the photo as it will be seen: JPEG-compressed first
        img = cv2.imdecode(np.frombuffer(_encode(img, rng, job), np.uint8), cv2.IMREAD_COLOR)
        crops = []
        for j, c in enumerate(gt["cards"]):
            if c["visible"] < MIN_LABEL_VISIBLE:  # every card the detector is taught to find
                continue
            # boxes off the card the way the detector's are (geometry.BOX_ERROR), a few exact ones
            scale = 0.0 if rng.random() < 0.15 else 1.0
            q = jitter_quad(np.array(c["quad"], np.float32), np.random.default_rng(rng.getrandbits(32)), scale)
            crop = fold(rectify(img, q, ordered=True))
            p = out / split / c["code"] / f"{name}_{j:02d}.jpg"
            ok, buf = cv2.imencode(".jpg", crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
            _atomic_write(p, buf.tobytes())
            crops.append(str(p.relative_to(out)))
        gt["crops"] = crops
        written += len(crops)
    _atomic_write(gt_path, json.dumps(gt, ensure_ascii=False).encode())
    return written + 1


def _worker(args: tuple[Job, list[int]]) -> list[int]:
    job, idx = args
    cv2.setNumThreads(1)
    return [render_one(job, i) for i in idx]


def prepare(job: Job, force: bool = False) -> None:
    """Check arguments and the output folder; create folders and the meta file."""
    if job.kind not in KINDS:
        raise SynthError(f"--kind must be one of {', '.join(KINDS)}, not {job.kind!r}.")
    if job.n < 1:
        raise SynthError("--n must be at least 1.")
    for t in job.tables:
        if t not in ALL_TABLES:
            raise SynthError(f"Unknown table {t!r}; tables are {', '.join(ALL_TABLES)}.")
    if job.least_show is not None and not 0.15 <= job.least_show <= 0.7:
        raise SynthError("--least-show is a share of a card's width between 0.15 and 0.7.")
    for s in job.styles:
        if s not in ALL_FAMILIES:
            raise SynthError(f"Unknown style {s!r}; styles are {', '.join(ALL_FAMILIES)}.")
    if job.faces is not None:
        from vision.synth.faces import load_face_folder

        try:
            load_face_folder(job.faces)
        except ValueError as e:
            raise SynthError(str(e)) from None
    out = Path(job.out)
    if job.rulesets and job.kind != "hands":
        raise SynthError("--rulesets is for --kind hands.")
    if not 1 <= job.extras_weight <= 20:
        raise SynthError("--extras-weight is how many of each extra the drawn deck holds, from 1 to 20.")
    if job.extras_weight != 1 and job.kind == "hands":
        raise SynthError("--extras-weight is for --kind detect and classify: a hand's extras come from its ruleset (--rulesets).")
    for r in job.rulesets:
        name, plus, option = r.partition("+")
        if name not in RULESETS:
            raise SynthError(f"Unknown ruleset {name!r}; rulesets are {', '.join(RULESETS)}.")
        if plus and (name, option) != ("nantong-single", XI_ER):
            raise SynthError(f"{r!r}: the one option a drawn hand can have is nantong-single's 喜儿, "
                             f"'nantong-single+{XI_ER}'.")
    meta = {"kind": job.kind, "seed": job.seed, "styles": list(job.styles), "faces": job.faces, "version": VERSION,
            "width": job.width, "height": job.height, "val_frac": job.val_frac} | (
        {"rulesets": list(job.rulesets)} if job.rulesets else {}) | {
        k: list(v) if isinstance(v, tuple) else v for k, v in job.scene_knobs().items()} | job.meta()
    if out.exists() and not out.is_dir():
        raise SynthError(f"{out} exists and is not a folder.")
    if out.is_dir() and any(out.iterdir()):
        mp = out / META
        if not mp.exists():
            if not force:
                raise SynthError(f"{out} is not empty and was not made by changpai synth; use --force to write there anyway.")
        else:
            old = json.loads(mp.read_text())
            diff = [k for k in ("kind", "seed", "styles", "faces", "width", "height", "val_frac", "rulesets", "tables",
                                "least_show", "turn", "named_ways", "extras_weight")
                    if old.get(k) != meta.get(k)]
            if diff and not force:
                raise SynthError(f"{out} holds a synth run with other settings ({', '.join(diff)}: {old.get(diff[0])!r}); "
                                 "choose another --out, or --force.")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gt").mkdir(exist_ok=True)
    if job.kind in ("detect", "hands"):
        for s in ("train", "val"):
            (out / "images" / s).mkdir(parents=True, exist_ok=True)
            (out / "labels" / s).mkdir(parents=True, exist_ok=True)
    else:
        for s in ("train", "val"):
            for c in CODES:
                (out / s / c).mkdir(parents=True, exist_ok=True)
    (out / META).write_text(json.dumps(meta, indent=1))
    if job.kind in ("detect", "hands"):
        write_dataset_yaml(out)


def write_dataset_yaml(out: Path) -> Path:
    """Ultralytics dataset YAML; no 'path' key, so paths resolve next to the YAML."""
    lines = ["# changpai synthetic long-card scenes, YOLO OBB labels (class x1 y1 ... x4 y4, normalized)"]
    lines += ["train: images/train", "val: images/val"]
    lines.append("names:")
    lines += [f"  {i}: {c}" for i, c in enumerate(CODES)]
    p = out / "dataset.yaml"
    p.write_text("\n".join(lines) + "\n")
    return p


def run(job: Job, workers: int = 2, force: bool = False, progress: bool = True) -> dict[str, Any]:
    prepare(job, force)
    todo = [i for i in range(job.n) if not (Path(job.out) / "gt" / f"{i:06d}.json").exists()]
    chunks = [todo[k:k + 4] for k in range(0, len(todo), 4)]
    from tqdm import tqdm

    bar = tqdm(total=job.n, initial=job.n - len(todo), desc=f"synth {job.kind}", unit="img", disable=not progress)
    files = 0
    if workers <= 1:
        for ch in chunks:
            files += sum(_worker((job, ch)))
            bar.update(len(ch))
    else:
        ctx = get_context("spawn")  # fork after onnxruntime or OpenCV threads started can deadlock
        with ctx.Pool(workers) as pool:
            for res in pool.imap_unordered(_worker, [(job, ch) for ch in chunks]):
                files += sum(res)
                bar.update(len(res))
    bar.close()
    return {"images": job.n, "rendered": len(todo), "skipped": job.n - len(todo), "files": files, "out": job.out}


def default_styles() -> tuple[str, ...]:
    return TRAIN_FAMILIES
