"""`changpai train detect|classify|recover|prune|refine`: train the recognizer's models on CPU (or a CUDA device), resumable."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from ..cli import UserError, comma_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", choices=["detect", "classify", "recover", "prune", "refine"], help="which network to train")
    p.add_argument("--data", action="append", help="detect: dataset.yaml of `changpai synth --kind detect`; classify: a crops "
                   "folder (repeat --data to train on several); recover: scenes of `changpai synth --kind hands` (repeatable); "
                   "prune: photos (folders of `changpai synth`) the --model reads while its prune net's answers are kept (with --truth: "
                   "labelled scenes); refine: "
                   "labelled scenes of `changpai synth` (repeatable)")
    p.add_argument("--val", action="append", help="recover, prune, refine: scenes to measure on after every epoch (repeatable)")
    p.add_argument("--model", default=None, help="recover: the model whose dropped boxes are judged; prune: the model whose "
                   "prune net teaches a slimmer one; refine: the model whose kept boxes the net learns to refine (default: the "
                   "released one)")
    p.add_argument("--threshold", type=float, default=0.9, help="recover: the net's probability that makes a card (--release)")
    p.add_argument("--prune", type=float, default=0.0, help="recover: kept boxes the net, judging each as if NMS had "
                   "dropped it, gives less than this are left out (--release; 0: never)")
    p.add_argument("--keep-prune-net", action="store_true", help="recover: the new net only recovers dropped boxes; "
                   "pruning and the spares keep the --model's net, released as prune.onnx (--release)")
    p.add_argument("--readings", action="store_true", help="recover: the net reads what the classifier reads in each "
                   "dropped box too (how sure, whether it repeats the code of a kept box it overlaps); it only recovers, "
                   "so its release needs --keep-prune-net")
    p.add_argument("--truth", action="store_true", help="prune: teach the new net the ground truth of labelled scenes "
                   "(`changpai synth` folders with gt/) on the boxes the --model keeps, instead of its prune net's answers: "
                   "for a model whose boxes lie otherwise than those its prune net learned")
    p.add_argument("--settling-views", action="store_true", help="refine: also views of the boxes a settling model "
                   "moves before NMS (up to 24 a scene: duplicates and boxes on mostly covered cards), not only those NMS keeps")
    p.add_argument("--repeat", default="", help="classify: codes whose training crops count several times, e.g. fu,lu,shou,xi,cai=4")
    p.add_argument("--epochs", type=int, default=None, help="epochs (default: detect 10, classify 15, recover 12, prune and refine 8)")
    p.add_argument("--imgsz", type=int, default=None, help="detect, classify: input size in pixels (default 640, 128)")
    p.add_argument("--batch", type=int, default=None, help="batch size (default: detect 8, classify 64, recover and prune 128, refine 256)")
    p.add_argument("--name", default=None, help="run name under runs/ (default: detect or classify)")
    p.add_argument("--resume", action="store_true", help="continue the run's last checkpoint")
    p.add_argument("--weights", help="start from these weights (e.g. models/changpai-v5/detector.pt) instead of the model YAML")
    p.add_argument("--lr0", type=float, help="initial learning rate (fine-tuning from --weights defaults to 0.001)")
    p.add_argument("--lrf", type=float, help="final learning rate as a fraction of --lr0 (default 0.01)")
    p.add_argument("--warmup", type=float, help="warm-up epochs (fine-tuning defaults to 0.3)")
    p.add_argument("--no-mosaic", action="store_true", help="detect: no mosaic augmentation in any epoch (by default "
                   "it stops 2 epochs before the end)")
    p.add_argument("--minutes", type=float, help="detect, classify: end by then, the run cut to the epochs that fit (judged "
                   "by those done) and its learning rate planned again over them: a run on a lent GPU machine held to its time")
    p.add_argument("--keep", type=float, default=0.0, help="classify, with --weights: pull the fine-tune toward the start's "
                   "readings on the crops it reads right, this weight beside the labels' loss (e.g. 1; 0: off): teach a "
                   "new deck family without forgetting the decks the start reads")
    p.add_argument("--device", default="cpu", help="cpu, or a CUDA device index such as 0")
    p.add_argument("--workers", type=int, default=2, help="data-loading workers")
    p.add_argument("--release", metavar="NAME", help="after training, export ONNX and write models/NAME with a model card")


def run(args: argparse.Namespace) -> int:
    if args.minutes is not None and args.what not in ("detect", "classify"):
        raise UserError(f"--minutes is for detect and classify, not {args.what}.")
    if args.what == "recover":
        return _recover(args)
    if args.what == "prune":
        return _prune(args)
    if args.what == "refine":
        return _refine(args)
    # ultralytics' own progress bars and per-epoch figures (vision.train.ultra keeps it quiet elsewhere): a long job shows
    # where it is
    os.environ.setdefault("YOLO_VERBOSE", "True")
    import vision.train.yolo as train

    name = args.name or args.what
    if args.weights and not Path(args.weights).is_file():
        raise UserError(f"No weights at {args.weights}.")
    data = None
    if not args.resume:
        if not args.data:
            raise UserError("--data is needed (or --resume to continue a run).")
        for d in args.data:
            if not Path(d).exists():
                raise UserError(f"No dataset at {d}.")
        if len(args.data) > 1 and args.what == "detect":
            raise UserError("detect takes one --data (a dataset.yaml can list several image folders).")
        data = args.data[0]
        if args.what == "classify" and (len(args.data) > 1 or args.repeat):
            repeat = _parse_repeat(args.repeat)
            try:
                data = str(train.combine_crops(args.data, train.RUNS / f"{name}_data", repeat))
            except FileNotFoundError as e:
                raise UserError(str(e)) from None
    kw = {k: v for k, v in dict(epochs=args.epochs, imgsz=args.imgsz, batch=args.batch).items() if v is not None}
    if args.weights:
        kw["model"] = args.weights
    if args.keep:
        if args.what != "classify" or not args.weights or args.resume or args.keep < 0:
            raise UserError("--keep is for a new classify run from --weights, with a positive weight.")
        kw["keep"] = args.keep
    extra = {k: v for k, v in dict(lr0=args.lr0, lrf=args.lrf, warmup_epochs=args.warmup).items() if v is not None}
    if args.no_mosaic:
        if args.what != "detect":
            raise UserError("--no-mosaic is for detect (the classifier trains on single crops).")
        extra["mosaic"] = 0.0
    if extra:
        kw["extra"] = extra
    if args.minutes is not None:
        if args.minutes <= 0:
            raise UserError(f"--minutes takes a positive number, not {args.minutes}.")
        if args.resume:
            raise UserError("--minutes is for a new run (a resumed run keeps its own epochs).")
        kw["deadline"] = time.time() + 60 * args.minutes
    fit = train.train_detect if args.what == "detect" else train.train_classify
    try:
        run_dir = fit(data, name=name, resume=args.resume, device=args.device, workers=args.workers, **kw)
    except FileNotFoundError as e:
        raise UserError(str(e)) from None
    print(f"trained: {run_dir}/weights/best.pt")
    if args.release:
        from vision.train.release import release

        out = release(args.what, run_dir, args.release)
        print(f"released: {out}")
    return 0


def _parse_repeat(text: str) -> dict[str, int]:
    """"fu,lu,shou,xi,cai=4" → {"fu": 4, …}; several such groups separated by ';'."""
    from scoring.cards import CODES

    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        codes, _, times = part.partition("=")
        if not times.strip().isdigit() or int(times) < 1:
            raise UserError(f"--repeat takes CODES=N, e.g. fu,lu,shou,xi,cai=4, not {part!r}.")
        for c in comma_list(codes):
            if c not in CODES:
                raise UserError(f"--repeat: {c!r} is not a card code.")
            out[c] = int(times)
    return out


def _recover(args: argparse.Namespace) -> int:
    """Views of the boxes the model's NMS drops (cached under runs/NAME), then the net, then optionally a release."""
    import vision.train.recover_train as recover_train
    from vision.infer.model import ModelError, model_info
    from vision.train.yolo import RUNS

    run_dir = RUNS / (args.name or "recover")
    try:
        base = model_info(args.model).path
    except ModelError as e:
        raise UserError(str(e)) from None
    def collect(roots: list[str], path: Path) -> str:
        got = recover_train.collect(roots, base, path, workers=max(1, args.workers))
        return f"{got['candidates']} boxes NMS dropped on {got['scenes']} scenes, {got['cards']} of them cards"

    views = _views(args, run_dir, "views", "scenes of `changpai synth --kind hands`", collect)
    try:
        res = recover_train.fit([views["train"]], [views["val"]], run_dir, epochs=args.epochs or 12, resume=args.resume,
                                batch=args.batch or 128, with_readings=args.readings)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    print(f"trained: {run_dir}/recover.onnx {res['last']}")
    if args.release:
        from vision.train.release import release_recover

        try:
            dest = release_recover(run_dir, base, args.release, args.threshold, prune=args.prune,
                                   keep_prune_net=args.keep_prune_net)
        except (FileNotFoundError, ValueError) as e:
            raise UserError(str(e)) from None
        print(f"released: {dest}")
    return 0


def _prune(args: argparse.Namespace) -> int:
    """What the --model's prune net answers on the photos (cached under runs/NAME), a slimmer net taught it, then
    optionally a release with the model's other files and thresholds."""
    import vision.train.prune_distil as prune_distil
    import vision.train.prune_truth as prune_truth
    from vision.infer.model import PRUNE_NET
    from vision.train.yolo import RUNS

    run_dir = RUNS / (args.name or "prune")
    base = _base_model(args, "the new prune net", "it is taught by")
    if not (base / PRUNE_NET).is_file():
        raise UserError(f"The model at {base} has no {PRUNE_NET} to {'replace' if args.truth else 'teach a slimmer one'}.")

    def collect(roots: list[str], path: Path) -> str:
        if args.truth:
            got = prune_truth.collect(roots, base, path)
            return f"{got['views']} views of kept boxes ({got['cards']} of them cards of their own) on {got['scenes']} scenes"
        got = prune_distil.collect(roots, base, path)
        return f"{got['views']} judged by the prune net on {got['photos']} photos"

    from vision.train.release import release_prune

    def release(run_dir: Path, base: Path, name: str) -> Path:
        return release_prune(run_dir, base, name, truth=args.truth)

    return _box_net(args, run_dir, base, "prune", "labelled scenes of `changpai synth`" if args.truth else
                    "folders of `changpai synth`", collect, prune_truth.fit if args.truth else prune_distil.fit, 128,
                    release, PRUNE_NET)


def _refine(args: argparse.Namespace) -> int:
    """Views around the boxes the --model keeps on labelled scenes (cached under runs/NAME), the refine net trained on
    them, then optionally a release: the model with the net."""
    import vision.train.refine_train as refine_train
    from vision.infer.model import REFINE_NET
    from vision.train.yolo import RUNS

    run_dir = RUNS / (args.name or "refine")
    base = _base_model(args, "the refine net", "it is trained with")

    def collect(roots: list[str], path: Path) -> str:
        got = refine_train.collect(roots, base, path, settling=args.settling_views)
        before = f", {got['before_nms']} boxes before NMS" if args.settling_views else ""
        return f"{got['views']} views ({got['jittered']} of them jittered boxes{before}) of {got['photos']} scenes"

    from vision.train.release import release_refine

    return _box_net(args, run_dir, base, "refine", "labelled scenes of `changpai synth`", collect, refine_train.fit, 256,
                    release_refine, REFINE_NET)


def _base_model(args: argparse.Namespace, net_words: str, how: str) -> Path:
    """The --model's folder; with --release, a name other than its own (one sentence otherwise)."""
    from vision.infer.model import ModelError, model_info

    try:
        base = model_info(args.model).path
    except ModelError as e:
        raise UserError(str(e)) from None
    if args.release:
        from vision.train.release import MODELS_DIR

        if (MODELS_DIR / args.release).resolve() == base.resolve():
            raise UserError(f"Release {net_words} under a new name: the model {how} ({base}) stays as it is.")
    return base


def _box_net(args: argparse.Namespace, run_dir: Path, base: Path, prefix: str, wanted: str, collect, fit, batch: int,
             release, net_file: str) -> int:
    """A box net trained the way the prune and refine nets are: their views (_views), ``fit`` on them (``batch`` by
    default, 8 epochs), then with --release, ``release(run_dir, base, NAME)``."""
    views = _views(args, run_dir, prefix, wanted, collect)
    try:
        res = fit(views["train"], views["val"], run_dir, epochs=args.epochs or 8, batch=args.batch or batch, resume=args.resume)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    print(f"trained: {run_dir}/{net_file} {res['last']}")
    if args.release:
        try:
            dest = release(run_dir, base, args.release)
        except (FileNotFoundError, ValueError) as e:
            raise UserError(str(e)) from None
        print(f"released: {dest}")
    return 0


def _views(args: argparse.Namespace, run_dir: Path, prefix: str, wanted: str, collect) -> dict[str, Path]:
    """The box-net views of --data and --val as run_dir/PREFIX_train.npz and PREFIX_val.npz: kept from before, or
    made by ``collect(roots, path)``, which says what it made; ``wanted``: what --data and --val name."""
    views = {}
    for split, roots in (("train", args.data), ("val", args.val)):
        views[split] = run_dir / f"{prefix}_{split}.npz"
        if views[split].is_file():
            print(f"{split} views: {views[split]} (made before; delete it to collect again)")
            continue
        if not roots:
            raise UserError(f"--{'data' if split == 'train' else 'val'} is needed ({wanted}).")
        try:
            print(f"{split} views: {collect(roots, views[split])}")
        except FileNotFoundError as e:
            raise UserError(str(e)) from None
    return views
