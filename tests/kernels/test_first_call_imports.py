"""A new process's first cutemma.gemm call with its kernel in the disk cache (issue 21, item 5)
imports only the host side it runs: no layout algebra, atoms, catalogs, shared-memory
descriptors, code text, plans or cuda.bindings (each of those cost milliseconds of import,
and where Python has no bytecode cache, of compiling, on the H100's host:
bench/results/first-call-h100.json).

The index entry's launch record is still checked against the one its kernel's plan derives
(issue 34: a plausible but wrong record, shared_bytes=1 or a TMA box of 32 rows where the
plan has 64, is refused before the launch), by arithmetic on the config
(:func:`cutemma.kernels.sm90.index.launch_record`, equal to the plan's record over the whole
kernel space: tests/kernels/test_sm90_launch_record.py), not by building the plan.

Held by what is NOT imported, in a fresh process that runs every step of such a call a CPU
can run: the call path's modules, gemm's option checks, the kernel's entry read back from a
disk index, the launch record, the tensor-map arguments, the module load and the map
encoding (both refused here by name: no driver). Timings live in bench/first_call.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# what a cached kernel's call must not load (a module or any of its submodules)
HEAVY = (
    "cutemma.layout", "cutemma.mma", "cutemma.smem", "cutemma.tiled", "cutemma.tensor",
    "cutemma.copy.atom", "cutemma.copy.catalog", "cutemma.copy.traits", "cutemma.copy.tma",
    "cutemma.cuda.source", "cutemma.cuda.launch", "cutemma.kernels.sm80.plan",
    "cutemma.kernels.sm90.plan", "cutemma.kernels.sm90.source", "cutemma.kernels.design",
    "cutemma.kernels.common.partition", "cutemma.kernels.torch_op", "ml_dtypes",
    "cuda.bindings", "cuda.core",
)  # fmt: skip

CALL_STEPS = """
import json, sys
from pathlib import Path
import cutemma
from cutemma.errors import LaunchError, TmaError
from cutemma.kernels import dispatch, policy
from cutemma.kernels.runtime import capture
from cutemma.kernels.call import check_scalar
from cutemma.kernels.pick import builtin_sm90_config
from cutemma.kernels.sm90 import host, index
from cutemma.kernels.sm90.tma_maps import Sm90Launch, operand_map_args, output_map_args
from cutemma.copy.tma_map import encode_tensor_map

check_scalar("alpha", 1.0)
builtin_sm90_config(16, 768, 1024, "bf16", swap=True)  # a decode call's pick (swap-AB)
cfg = builtin_sm90_config(512, 768, 1024, "bf16")
key = host.kernel_key(cfg, "bf16", "K", "N", "bf16", "bf16")
name = key.name
host._package_fingerprint()
host._index_path(name, "sm_90a")
path = Path(sys.argv[1])  # the entry an earlier process wrote (the plan's own record)
cubin, record = index.read(path, key)
launch = Sm90Launch.from_json(json.dumps(record))
args = operand_map_args(launch.tma["A"], "A", 0x7F0000000000, 512, 1024, "K", 1024)
output_map_args(launch.tma_D, 0x7F0000000000, (512, 768), (768, 1))
kern = host.DriverKernel(cubin, name, launch.shared_bytes, cfg.threads)
try:
    kern.handle(0)  # the module load: no driver here (or no such kernel in this cubin)
except LaunchError:
    pass
try:
    encode_tensor_map(args)
except TmaError:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(code: str, *args: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=True
    ).stdout.splitlines()[-1]
    return json.loads(out)


def _heavy(mods: list[str]) -> list[str]:
    return sorted(m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_a_cached_kernels_call_loads_none_of_the_heavy_modules(tmp_path):
    from cutemma.kernels.pick import builtin_sm90_config
    from cutemma.kernels.sm90 import host, index

    key = host.kernel_key(builtin_sm90_config(512, 768, 1024, "bf16"), "bf16", "K", "N", "bf16",
                          "bf16")  # fmt: skip
    path = tmp_path / "k.sm90"
    index.write(path, b"\x7fELF", index.plan_record(key))
    mods = _loaded(CALL_STEPS, str(path))
    assert "cutemma.kernels.sm90.index" in mods and "cutemma.copy.tma_map" in mods
    assert "cutemma.kernels.sm90.plan" not in mods  # the record checked by arithmetic
    assert _heavy(mods) == []


def test_the_heavy_modules_are_what_the_generator_loads():
    """The list above names modules the library really loads elsewhere: generating the
    same kernel's source and plan loads the algebra, the atoms and the code text (so the
    test above would fail if the call path imported the generator again)."""
    code = (
        "import json, sys\n"
        "from cutemma.kernels.sm90.source import gemm_sm90_source\n"
        "from cutemma.kernels.sm90.config import Sm90Config\n"
        "gemm_sm90_source(Sm90Config(), 'bf16', 'K', 'N', 'bf16')\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    heavy = _heavy(_loaded(code))
    for name in ("cutemma.cuda.source", "cutemma.kernels.sm90.source"):
        assert name in heavy


def test_the_copy_package_loads_its_names_on_first_use():
    """cutemma.copy is lazy (the call path imports cutemma.copy.tma_map through it): its
    names and submodules still load when asked for."""
    code = (
        "import json, sys\n"
        "import cutemma.copy as c\n"
        "assert 'cutemma.copy.atom' not in sys.modules\n"
        "assert c.make_copy_atom('SM75_U32x4_LDSM_N', 'f16').num_val_src == 8\n"
        "assert c.catalog.__name__ == 'cutemma.copy.catalog'\n"
        "assert set(c.__all__) <= set(dir(c))\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    assert "cutemma.copy.atom" in _loaded(code)


def test_the_index_key_fingerprint_is_the_relative_paths_sizes_and_mtimes():
    """The disk index's source fingerprint (read by every new process's first call) names
    each source by its path relative to the package, as os.walk + os.path.relpath spell it:
    a faster walk keeps every existing index entry's key."""
    import hashlib

    import cutemma
    from cutemma.kernels.sm90.host import _package_fingerprint

    root = Path(cutemma.__file__).resolve().parent
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                st = os.stat(path)
                entries.append(f"{os.path.relpath(path, root)}:{st.st_size}:{st.st_mtime_ns};")
    want = hashlib.sha256("".join(sorted(entries)).encode()).hexdigest()
    assert _package_fingerprint() == want
