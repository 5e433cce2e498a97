"""`changpai mix`: a detector training list drawn from synth folders, the same for the same arguments."""

import json
from pathlib import Path

import pytest
import yaml

from app.cli import main
from scoring.cards import CODES
from vision.synth.write import Job, prepare, render_one


def _synth(root: Path, kind: str, n: int, seed: int, val_frac: float) -> Path:
    job = Job(str(root), kind, seed, n, ("classic",), None, val_frac, 480, 360)
    prepare(job)
    for i in range(n):
        render_one(job, i)
    return root


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("mix")
    return _synth(base / "hands", "hands", 14, 5, 0.0), _synth(base / "loose", "detect", 3, 6, 0.0), \
        _synth(base / "val", "hands", 4, 7, 0.5)


def test_mix_takes_every_fan_and_stair_some_rows_and_every_loose_scene(folders, tmp_path, capsys):
    hands, loose, val = folders
    layouts = {g.stem: json.loads(g.read_text())["layout"] for g in (hands / "gt").glob("*.json")}
    rows = [k for k, v in layouts.items() if v == "row"]
    assert rows and len(rows) < len(layouts)
    out = tmp_path / "m"
    assert main(["mix", str(out), "--hands", str(hands), "--others", "1", "--detect", str(loose), "--val", str(val),
                 "--seed", "3"]) == 0
    train = (out / "train.txt").read_text().split()
    stems = [Path(p).stem for p in train if "/hands/" in p]
    assert sorted(s for s in stems if layouts[s] != "row") == sorted(k for k, v in layouts.items() if v != "row")
    assert sum(layouts[s] == "row" for s in stems) == 1
    assert sum("/loose/" in p for p in train) == 3 and all(Path(p).is_absolute() and Path(p).is_file() for p in train)
    vals = (out / "val.txt").read_text().split()
    assert vals and all("/images/val/" in p for p in vals)
    d = yaml.safe_load((out / "dataset.yaml").read_text())
    assert d["train"] == "train.txt" and d["val"] == "val.txt" and list(d["names"].values()) == list(CODES)
    # same arguments, same list; another seed, another order
    again = tmp_path / "again"
    main(["mix", str(again), "--hands", str(hands), "--others", "1", "--detect", str(loose), "--val", str(val), "--seed", "3"])
    assert (again / "train.txt").read_text() == (out / "train.txt").read_text()
    other = tmp_path / "other"
    main(["mix", str(other), "--hands", str(hands), "--others", "1", "--detect", str(loose), "--val", str(val), "--seed", "4"])
    assert (other / "train.txt").read_text() != (out / "train.txt").read_text()
    capsys.readouterr()


def test_mix_takes_the_layouts_of_several_folders_loose_ones_too(folders, tmp_path, capsys):
    hands, loose, val = folders
    layouts = {}
    for f in (hands, loose):
        layouts |= {str((f / "images" / "train" / (g.stem + ".jpg")).absolute()): json.loads(g.read_text())["layout"]
                    for g in (f / "gt").glob("*.json")}
    picked = {p for p, lay in layouts.items() if lay in ("fan", "stair")}
    out = tmp_path / "m2"
    assert main(["mix", str(out), "--hands", str(hands), "--hands", str(loose), "--others", "2", "--val", str(val),
                 "--seed", "3"]) == 0
    train = (out / "train.txt").read_text().split()
    assert picked <= set(train) and len(train) == len(picked) + 2 and len(set(train)) == len(train)
    assert "2 others" in (out / "dataset.yaml").read_text() and "loose" in (out / "dataset.yaml").read_text()
    # one folder: the list it always gave
    one = tmp_path / "one"
    main(["mix", str(one), "--hands", str(hands), "--others", "1", "--val", str(val), "--seed", "3"])
    from vision.synth.mix import make_mix
    again = tmp_path / "again"
    make_mix(again, hands, val, others=1, seed=3)
    assert (again / "train.txt").read_text() == (one / "train.txt").read_text()
    capsys.readouterr()


@pytest.mark.parametrize("args,needle", [
    (["--hands", "{tmp}/nothing"], "no training scenes"),
    (["--others", "999"], "fewer than the 999"),
    (["--others", "-1"], "cannot be negative"),
])
def test_mix_bad_arguments_are_one_sentence(folders, tmp_path, capsys, args, needle):
    hands, _, val = folders
    base = ["mix", str(tmp_path / "m"), "--hands", str(hands), "--val", str(val)]
    assert main(base + [a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
