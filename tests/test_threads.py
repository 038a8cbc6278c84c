"""Lazily built tables under threads (issue 22): the first use of a catalog, of the
"did you mean" name list and of the compile cache, from many threads at once, in fresh
processes (a table built once per process is only ever "first" in a new one).

Each process lines its threads up on a barrier so that they make their first call together;
before the fix, every process of the catalog check refused valid names
("no copy families for sm80; copy atoms exist for archs []").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from cutemma.mma.registry import Family, FamilyRegistry

THREADS = 8
PROCESSES = 4

# A fresh process: THREADS threads wait on a barrier, then each runs work(i); the script prints
# one JSON line: the errors and each thread's answer.
_HARNESS = """
import json, sys, threading
N = {threads}
barrier = threading.Barrier(N)
answers, errors = [None] * N, []
{work}
def run(i):
    barrier.wait()
    try:
        answers[i] = work(i)
    except Exception as e:
        errors.append(f"{{type(e).__name__}}: {{e}}"[:300])
ts = [threading.Thread(target=run, args=(i,)) for i in range(N)]
[t.start() for t in ts]
[t.join() for t in ts]
print(json.dumps({{"errors": errors, "answers": answers}}))
"""


def _fresh(work: str, env: dict | None = None) -> dict:
    """Run ``work`` (Python defining ``work(i)`` returning JSON-able data) in THREADS threads of
    a new process."""
    script = _HARNESS.format(threads=THREADS, work=textwrap.dedent(work))
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    full_env.update(env or {})
    res = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard only
        env=full_env,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _fresh_many(work: str, env: dict | None = None) -> list[dict]:
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda _: _fresh(work, env), range(PROCESSES)))


_FIRST_ATOMS = """
from cutemma.mma.catalog import make_mma_atom
from cutemma.copy.catalog import make_copy_atom
NAMES = [
    ("mma", "SM70_8x8x4_F32F16F16F32_NT"),
    ("copy", "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>"),
    ("mma", "SM80_16x8x16_F32BF16BF16F32_TN"),
    ("copy", "SM75_U32x4_LDSM_N"),
]
def work(i):
    kind, name = NAMES[i % len(NAMES)]
    atom = make_mma_atom(name) if kind == "mma" else make_copy_atom(name, 16)
    return [name, str(atom.layout_dst_tv if kind == "copy" else atom.tv_layout_C)]
"""


def test_first_atoms_from_many_threads_in_fresh_processes():
    for run in _fresh_many(_FIRST_ATOMS):
        assert run["errors"] == []
        by_name: dict[str, set] = {}
        for name, text in run["answers"]:
            by_name.setdefault(name, set()).add(text)
        assert len(by_name) == 4 and all(len(v) == 1 for v in by_name.values()), by_name


_NAME_LIST = """
from cutemma.errors import AtomError
from cutemma.mma import catalog
def work(i):
    try:
        catalog.make_mma_atom("SM80_16x8x16_F32BF16BF16F32_TM")  # majors TM: a typo of TN
    except AtomError as e:
        return [str(e), len(catalog._NAMES)]
    return None
"""


def test_did_you_mean_names_are_whole_after_a_race():
    expected = None
    for run in _fresh_many(_NAME_LIST):
        assert run["errors"] == []
        messages = {m for m, _ in run["answers"]}
        counts = {n for _, n in run["answers"]}
        assert len(messages) == 1 and len(counts) == 1, run["answers"]
        (message,) = messages
        assert "did you mean" in message and "SM80_16x8x16_F32BF16BF16F32_TN" in message
        if expected is None:
            from cutemma.mma import catalog

            expected = sum(len(list(f.members())) for f in catalog.families())
        assert counts == {expected}  # the list of a lone thread: every family's members


_COMPILE_ONCE = """
import hashlib
import importlib
cmod = importlib.import_module("cutemma.cuda.compile")
calls = []
real = cmod._run_nvrtc
def counting(*a, **k):
    calls.append(1)
    return real(*a, **k)
cmod._run_nvrtc = counting
SRC = 'extern "C" __global__ void threads_once(int* x) { x[threadIdx.x] = %d; }'
def work(i):
    c = cmod.compile(SRC % 7, "sm_80")
    return [hashlib.sha256(c.data).hexdigest(), len(calls)]
"""


def test_one_compile_when_threads_ask_for_one_kernel(tmp_path):
    from cutemma.cuda.compile import unavailable_reason

    if unavailable_reason():
        pytest.skip(unavailable_reason())
    for n in range(2):  # each in an empty cache of its own
        env = {"CUTEMMA_CACHE_DIR": str(tmp_path / f"c{n}")}
        run = _fresh(_COMPILE_ONCE, env)
        assert run["errors"] == []
        digests = {d for d, _ in run["answers"]}
        assert len(digests) == 1, "threads got different cubins"
        assert max(c for _, c in run["answers"]) == 1, "NVRTC ran more than once"
        assert len(list((tmp_path / f"c{n}").glob("*.cubin"))) == 1


def test_registry_is_not_seen_half_loaded(tmp_path, monkeypatch):
    # a package of two arch modules, the first slow to import: a second thread asking while
    # the first thread imports must wait for both families, not see the first alone
    pkg = tmp_path / "slowarch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from cutemma.errors import AtomError\n"
        "from cutemma.mma.registry import FamilyRegistry\n"
        "import threading\n"
        "REG = FamilyRegistry('MMA', __name__, AtomError)\n"
        "STARTED = threading.Event()\n"
        "GO = threading.Event()\n"
    )
    fam = "from cutemma.mma.registry import Family\nimport slowarch\n"
    fam += "slowarch.REG.register(Family('sm{a}.x', {a}, '', lambda n: False, None, list))\n"
    (pkg / "a1.py").write_text(fam.format(a=1) + "slowarch.STARTED.set()\nslowarch.GO.wait(5)\n")
    (pkg / "a2.py").write_text(fam.format(a=2))
    monkeypatch.syspath_prepend(str(tmp_path))
    import slowarch

    seen: list = []
    first = threading.Thread(target=lambda: slowarch.REG.families())
    first.start()
    assert slowarch.STARTED.wait(5)
    second = threading.Thread(target=lambda: seen.append([f.arch for f in slowarch.REG.families()]))
    second.start()
    second.join(0.3)  # it must be waiting: the load is not finished
    waited = second.is_alive()
    slowarch.GO.set()
    first.join(5)
    second.join(5)
    assert waited and seen == [[1, 2]]


def test_registry_retries_a_failed_load():
    # an import that fails leaves the registry unloaded (not loaded and empty for good)
    reg = FamilyRegistry("MMA", "cutemma_no_such_arch_package", Exception)
    for _ in range(2):
        with pytest.raises(ModuleNotFoundError):
            reg.families()
    assert not reg._loaded and isinstance(Family, type)
