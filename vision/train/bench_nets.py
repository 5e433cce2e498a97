"""What a larger network would cost per photo on this machine: each YOLO11 size built from its model YAML (weights
do not matter for speed), exported to ONNX as `changpai train --release` exports, and run with the recognizer's
onnxruntime session options on one photo's worth of input (a batch of card crops for the classifier, one letterboxed
photo for the detector). Prints the median milliseconds and writes them as JSON.

    python -m vision.train.bench_nets --json docs/eval/avx2/nets_latency.json
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from vision.infer.model import ModelError, _session, model_info
from vision.train.release import export_onnx
from vision.train.ultra import offline_ultralytics

# (model YAML, classes, input size, batch): the released model's sizes (classifier 128 px, 38 crops: a 30-card
# photo's crops with a quarter read both ways round; detector 832 px)
NETS = {
    "classifier n": ("yolo11n-cls.yaml", 36, 128, 38),
    "classifier s": ("yolo11s-cls.yaml", 36, 128, 38),
    "detector n": ("yolo11n-obb.yaml", 1, 832, 1),
    "detector s": ("yolo11s-obb.yaml", 1, 832, 1),
}


def _built(yaml_name: str, nc: int, folder: Path) -> Path:
    """The network of ``yaml_name`` with ``nc`` classes, saved untrained as a checkpoint export_onnx takes."""
    offline_ultralytics()
    import yaml
    from ultralytics import YOLO
    from ultralytics.nn.tasks import yaml_model_load

    cfg = yaml_model_load(yaml_name)  # the size (n, s, ...) is read from the name, kept below
    cfg["nc"] = nc
    cfg_path = folder / yaml_name
    cfg_path.write_text(yaml.safe_dump(cfg))
    out = folder / yaml_name.replace(".yaml", ".pt")
    YOLO(str(cfg_path)).save(str(out))
    return out


def time_net(onnx_path: Path, imgsz: int, batch: int, repeat: int) -> float:
    """Median milliseconds of one run of ``batch`` inputs of ``imgsz``² pixels (after two warm-up runs)."""
    session = _session(onnx_path)
    x = np.random.default_rng(0).random((batch, 3, imgsz, imgsz), dtype=np.float32)
    feed = {session.get_inputs()[0].name: x}
    for _ in range(2):
        session.run(None, feed)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        session.run(None, feed)
        times.append((time.perf_counter() - t) * 1000)
    return float(np.median(times))


def bench(names: list[str], repeat: int = 15, model: str | None = None) -> dict[str, dict]:
    """Each of ``names`` (NETS), and first, when ``model`` is given, that model folder's own two networks at the
    same sizes (its figures should match the n rows: the released networks are YOLO11n)."""
    out = {}
    if model is not None:
        folder = model_info(model).path
        for net, (file, like) in {"classifier": ("classifier.onnx", "classifier n"), "detector": ("detector.onnx", "detector n")}.items():
            _, _, imgsz, batch = NETS[like]
            out[f"{folder.name} {net}"] = {"yaml": file, "imgsz": imgsz, "batch": batch,
                                           "ms_p50": round(time_net(folder / file, imgsz, batch, repeat), 1)}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            yaml_name, nc, imgsz, batch = NETS[name]
            onnx = export_onnx(_built(yaml_name, nc, Path(tmp)), imgsz, dynamic=True)
            out[name] = {"yaml": yaml_name, "imgsz": imgsz, "batch": batch, "ms_p50": round(time_net(onnx, imgsz, batch, repeat), 1)}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.train.bench_nets", description=__doc__.split("\n\n")[0])
    p.add_argument("--nets", default=",".join(NETS), help=f"comma-separated, of: {', '.join(NETS)}")
    p.add_argument("--repeat", type=int, default=15, help="timed runs per net; the median is reported (default 15)")
    p.add_argument("--model", help="also time this model folder's networks (default: the released model)")
    p.add_argument("--json", metavar="OUT", help="also write the figures to this JSON file")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.nets.split(",") if n.strip()]
    unknown = [n for n in names if n not in NETS]
    if unknown:
        p.error(f"unknown net {unknown[0]!r}; the nets are: {', '.join(NETS)}")
    try:
        res = bench(names, args.repeat, args.model or "")
    except ModelError as e:
        p.error(str(e))
    for name, r in res.items():
        print(f"{name:24s} {r['yaml']:18s} {r['batch']:>3d} × {r['imgsz']} px  {r['ms_p50']:7.1f} ms median")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": platform.processor() or platform.machine(), "nets": res}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
