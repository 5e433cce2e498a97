"""The shape of the code: vision/ by role with arrows only pointing down, infer/ free of training libraries,
scoring/ pure Python, modules of a readable size."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# vision's roles, lowest first: a module may import vision modules of its own role or of a lower rank only.
# The core (vision/*.py: model name, config, core types, fonts) is below every role.
RANK = {"core": 0, "infer": 1, "table": 2, "synth": 2, "eval": 3, "deck": 4, "label": 4, "train": 5}
# what vision/infer may import from outside the standard library and the project
INFER_THIRD_PARTY = {"numpy", "cv2", "onnxruntime", "PIL", "pillow_heif", "scipy"}  # scipy: deck_count's assignment
MAX_LINES = 450


def _role(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "vision":
        return None
    return parts[1] if len(parts) > 2 and parts[1] in RANK else "core"


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function (relative imports resolved)."""
    here = _module_of(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)  # `from vision.x import module`
    return out


def _py(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_vision_arrows_point_down():
    known = {_module_of(p) for p in _py("vision")}
    wrong = []
    for p in _py("vision"):
        me = _module_of(p)
        mine = _role(me)
        for imp in _imports(p):
            if imp not in known:
                continue
            theirs = _role(imp)
            if theirs != mine and RANK[theirs] >= RANK[mine]:
                wrong.append(f"{me} ({mine}) imports {imp} ({theirs})")
    assert not wrong, "\n".join(wrong)


def test_infer_needs_no_training_or_page_library():
    outside = []
    for p in _py("vision/infer"):
        for imp in _imports(p):
            top = imp.split(".")[0]
            if top in ("vision", "scoring", "__future__") or top in sys.stdlib_module_names:
                continue
            if top not in INFER_THIRD_PARTY:
                outside.append(f"{_module_of(p)} imports {imp}")
    assert not outside, "\n".join(outside)
    # and importing it loads none of them (ultralytics or torch pulled in by a dependency would show here)
    code = ("import sys, vision.infer.recognize, vision.table.pipeline; "
            "print(sorted(m for m in ('torch', 'ultralytics', 'streamlit', 'supervision') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_scoring_is_pure_python_and_independent():
    allowed = {"scoring", "__future__"}
    for p in _py("scoring"):
        for imp in _imports(p):
            top = imp.split(".")[0]
            assert top in allowed or top in sys.stdlib_module_names, f"{_module_of(p)} imports {imp}"


def test_modules_stay_readable():
    long = [f"{p.relative_to(ROOT)}: {n} lines" for d in ("vision", "scoring", "app") for p in _py(d)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, "\n".join(long)
