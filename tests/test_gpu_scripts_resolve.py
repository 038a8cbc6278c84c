"""The GPU scripts (tests/kernels/gpu_*.py, bench/*.py) run only on the device, so a rename
in the package can leave one calling a name that no longer exists until the next GPU
session trips on it (session 11: gpu_tune_sm90.py called ``tune.reload``, moved to
``tuned``; gpu_sm90_cluster.py patched ``host.gemm_sm90_source``, which host no longer
holds). Here every cutemma name such a script imports, and every attribute it reads or
patches on a cutemma module it holds, must exist: checked on CPU from the scripts' syntax,
without running them."""

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[1]
SCRIPTS = sorted(ROOT.glob("tests/kernels/gpu_*.py")) + sorted(ROOT.glob("bench/*.py"))
SCRIPTS += sorted(ROOT.glob("bench/experiments/*.py"))


def _module(name: str) -> ModuleType | None:
    """The cutemma module ``name``, or None where it needs a package this machine lacks
    (torch, triton: CI's CPU venv); a cutemma module that is missing is an error."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "cutemma":
            raise
        return None


def _has(module: ModuleType, attr: str) -> bool:
    """Whether ``module.attr`` exists, as an attribute or a submodule (one that needs a
    package this machine lacks counts: it exists)."""
    if hasattr(module, attr):
        return True
    try:
        importlib.import_module(f"{module.__name__}.{attr}")
    except ModuleNotFoundError as exc:
        return (exc.name or "").split(".")[0] != "cutemma"
    return True


def unresolved(path: Path) -> list[str]:
    """``line: name`` for each cutemma name ``path`` uses that does not exist."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    held: dict[str, ModuleType] = {}  # local name -> the cutemma module it is
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cutemma"):
            module = _module(node.module)
            for alias in node.names if module is not None else []:
                if not _has(module, alias.name):
                    missing.append(f"{node.lineno}: from {node.module} import {alias.name}")
                    continue
                value = getattr(module, alias.name, None)
                if value is None:
                    value = _module(f"{node.module}.{alias.name}")
                if isinstance(value, ModuleType):
                    held[alias.asname or alias.name] = value
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("cutemma") and alias.asname:
                    module = _module(alias.name)
                    if module is not None:
                        held[alias.asname] = module
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in held
            and not _has(held[node.value.id], node.attr)
        ):
            missing.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return missing


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cutemma_name_a_gpu_script_uses_exists(path):
    assert unresolved(path) == []


def test_a_stale_name_is_found(tmp_path):
    """The check itself: the two stale uses of session 11, as they were."""
    script = tmp_path / "gpu_old.py"
    script.write_text(
        "import cutemma.kernels.sm90.host as ds\n"
        "from cutemma.kernels import tune\n"
        "real = ds.gemm_sm90_source\n"
        "tune.reload()\n"
        "ds.compiled_sm90.cache_clear()\n"
    )
    assert unresolved(script) == ["3: ds.gemm_sm90_source", "4: tune.reload"]
