"""One module talks to the CUDA driver (issue 32): every module of cutemma read with ast; only
``cutemma/libcuda.py`` may import ``cuda.bindings.driver`` or ``cuda.core``, or name a driver
entry point (an attribute named ``cu`` + an upper-case letter: ``cu.cuLaunchKernel(...)``,
``driver.cuInit(0)``, the bound function ``lib.cuLaunchKernel`` handed on uncalled). Everyone else asks libcuda's functions, so a driver call's error
naming, context handling and import cost live in one place.

Run as a script to list every offence: ``python tests/test_one_driver.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cutemma

ROOT = Path(cutemma.__file__).parent
THE_DRIVER_MODULE = ROOT / "libcuda.py"
_ENTRY_POINT = re.compile(r"cu[A-Z]")
_FORBIDDEN_IMPORTS = ("cuda.bindings.driver", "cuda.core")


def _forbidden(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in _FORBIDDEN_IMPORTS)


def offences(source: str, where: str = "<source>") -> list[str]:
    """Each driver import or driver entry point named in ``source``, as 'where:line what'.

    >>> offences("from cuda.bindings import driver\\nx = driver.cuInit(0)")
    ['<source>:1 imports cuda.bindings.driver', '<source>:2 names cuInit']
    >>> offences("from cuda.bindings import nvrtc\\nf = libcuda.launcher()\\nf(1)")
    []
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Attribute) and _ENTRY_POINT.match(node.attr):
            found.append(f"{where}:{node.lineno} names {node.attr}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "__import__" or node.func.id == "import_module":
                names = [a.value for a in node.args[:1] if isinstance(a, ast.Constant)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
        ):
            names = [a.value for a in node.args[:1] if isinstance(a, ast.Constant)]
        bad = sorted({n for n in names if isinstance(n, str) and _forbidden(n)})
        found += [f"{where}:{node.lineno} imports {n}" for n in bad[:1]]
    return found


def all_offences() -> list[str]:
    """Every offence in every module of cutemma but libcuda itself."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path != THE_DRIVER_MODULE:
            found += offences(path.read_text(), str(path.relative_to(ROOT.parent)))
    return found


def test_only_libcuda_talks_to_the_driver():
    found = all_offences()
    assert not found, (
        "only cutemma/libcuda.py may import cuda.bindings.driver / cuda.core or name a driver "
        "entry point; move these behind a libcuda function:\n" + "\n".join(found)
    )


def test_the_check_sees_each_form():
    forms = {
        "import cuda.core": "imports cuda.core",
        "import cuda.core.experimental as c": "imports cuda.core.experimental",
        "from cuda.core.utils import StridedMemoryView": "imports cuda.core.utils",
        "from cuda.bindings import driver": "imports cuda.bindings.driver",
        "from cuda.bindings.driver import cuInit": "imports cuda.bindings.driver",
        "importlib.import_module('cuda.core')": "imports cuda.core",
        "libcuda.lib().cuCtxSetCurrent(ctx)": "names cuCtxSetCurrent",
        "def f():\n    return cu.cuModuleLoadData(m, d)": "names cuModuleLoadData",
        "f = lib.cuLaunchKernel": "names cuLaunchKernel",
    }
    for source, what in forms.items():
        assert [o.split(" ", 1)[1] for o in offences(source)] == [what], source
    harmless = [
        "from cuda.bindings import nvrtc",  # the compiler, not the driver
        "import cutemma.libcuda as libcuda\nlibcuda.launcher()",
        "x.cuda()",  # torch's method, not an entry point
        "s = 'cuLaunchKernel'",  # a name in text
    ]
    assert [o for s in harmless for o in offences(s)] == []


def test_libcuda_is_where_the_driver_is_called():
    # the exemption is not vacuous: the driver calls are there, under this path
    assert any("names cuLaunchKernel" in o for o in offences(THE_DRIVER_MODULE.read_text()))


if __name__ == "__main__":
    print("\n".join(all_offences()) or "only cutemma/libcuda.py talks to the driver")
