"""A detector training set drawn from several `changpai synth` folders: every scene of the layouts where
cards are missed (fans and stairs of `--kind hands`), a sample of the others (rows), and whole folders of
loose `--kind detect` scenes, listed in `train.txt` (ultralytics reads lists of image paths) with a
`dataset.yaml` naming the cards. Same arguments, same files."""

from __future__ import annotations

import json
import random
from pathlib import Path

from scoring.cards import CODES


class MixError(ValueError):
    """A folder or a count that cannot make the mix, said in one sentence."""


def _scenes(folder: Path) -> list[tuple[str, str]]:
    """(layout, absolute image path) of a synth folder's training scenes, in the order of their gt files."""
    out = []
    for g in sorted((folder / "gt").glob("*.json")):
        d = json.loads(g.read_text())
        if d.get("split", "train") != "train":
            continue
        img = folder / "images" / "train" / (g.stem + Path(d.get("image", ".jpg")).suffix)
        out.append((d.get("layout", ""), str(img.absolute())))
    if not out:
        raise MixError(f"{folder} holds no training scenes (gt/*.json of `changpai synth`).")
    return out


def _images(folder: Path, split: str) -> list[str]:
    imgs = sorted(str(p.absolute()) for p in (folder / "images" / split).glob("*.jpg"))
    if not imgs:
        raise MixError(f"{folder}/images/{split} holds no photos.")
    return imgs


def make_mix(out: str | Path, hands: str | Path | tuple[str | Path, ...], val: str | Path,
             layouts: tuple[str, ...] = ("fan", "stair"), others: int = 250, detect: tuple[str | Path, ...] = (),
             seed: int = 0) -> dict[str, int]:
    """Write ``out``/train.txt, val.txt and dataset.yaml. Training: every scene of the ``hands`` folders (one or
    several, of any kind) in ``layouts``, ``others`` of their other scenes (random.Random(seed).sample, in folder
    then gt order), then every training photo of the ``detect`` folders; shuffled with the same generator.
    Validation: the val photos of ``val``."""
    folders = (hands,) if isinstance(hands, (str, Path)) else tuple(hands)
    scenes = [s for f in folders for s in _scenes(Path(f))]
    rest = [p for lay, p in scenes if lay not in layouts]
    if others > len(rest):
        where = " + ".join(str(f) for f in folders)
        raise MixError(f"{where} has {len(rest)} scenes outside {', '.join(layouts)}, fewer than the {others} asked for.")
    rng = random.Random(seed)
    train = [p for lay, p in scenes if lay in layouts] + rng.sample(rest, others)
    n_picked = len(train)
    for d in detect:
        train += _images(Path(d), "train")
    rng.shuffle(train)
    val_imgs = _images(Path(val), "val")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.txt").write_text("\n".join(train) + "\n")
    (out / "val.txt").write_text("\n".join(val_imgs) + "\n")
    names = "".join(f"  {i}: {c}\n" for i, c in enumerate(CODES))
    what = f"{' + '.join(Path(f).name for f in folders)} {' + '.join(layouts)} + {others} others"
    what += "".join(f" + {Path(d).name}" for d in detect)
    (out / "dataset.yaml").write_text(f"# {what}; val: {Path(val).name} val\ntrain: train.txt\nval: val.txt\nnames:\n{names}")
    return {"train": len(train), "by_layout": n_picked, "from_detect": len(train) - n_picked, "val": len(val_imgs)}
