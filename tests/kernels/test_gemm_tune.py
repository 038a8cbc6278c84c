"""cutemma.tune's cache: shape classes, keys, the JSON file, and gemm's look-up (no GPU: a fake
timer stands in for the CUDA events)."""

from __future__ import annotations

import json

import pytest

from cutemma.errors import LaunchError
from cutemma.kernels import BUILTIN_CONFIGS, GemmConfig, tuned
from cutemma.kernels import tune as tuning


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private cache folder; the loaded table is forgotten before and after."""
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    tuned.reload()
    yield tmp_path
    tuned.reload()


def test_shape_class_rounds_up_to_powers_of_two():
    assert tuned.shape_class(1, 2, 3) == (1, 2, 4)
    assert tuned.shape_class(1000, 1024, 1025) == (1024, 1024, 2048)
    assert tuned.shape_class(4097, 14336, 16384) == (8192, 16384, 16384)


def test_key_names_device_class_dtype_and_majors():
    key = tuned.entry_key("GPU X", 3000, 100, 4096, "e4m3_e5m2", "K", "K")
    assert key == "GPU X|m4096,n128,k4096|e4m3_e5m2|KK"


def test_dtype_and_major_normalisation():
    assert tuned.kernel_dtype("float8_e5m2") == "e5m2"
    assert tuned.kernel_dtype("torch.bfloat16") == "bf16"
    assert tuned.kernel_majors("bf16", "M", "N") == ("M", "N")
    assert tuned.kernel_majors("s8", "M", "N") == ("K", "K")  # 8-bit: read K-major
    with pytest.raises(LaunchError, match="dtype 'float64'; give a torch dtype"):
        tuned.kernel_dtype("float64")
    with pytest.raises(LaunchError, match="a_major 'N' is 'K' or 'M'"):
        tuned.kernel_majors("bf16", "N", "K")


def test_tune_keeps_the_fastest_and_gemm_finds_it(cache):
    fast = GemmConfig(128, 128, 64, (2, 2), 3)
    times = {fast.name: 1.0}
    timed = []

    def timer(cfg):
        timed.append(cfg.name)
        return times.get(cfg.name, 2.0)

    best = tuning.tune(4000, 4096, 3000, "bfloat16", "K", "N", timer=timer, device_name_="GPU X")
    assert best == fast
    assert len(timed) == len(tuning.default_candidates("bf16", "K", "N")) and fast.name in timed
    entry = json.loads((cache / tuned.FILE_NAME).read_text())["entries"]
    (key,) = entry
    assert key == "GPU X|m4096,n4096,k4096|bf16|KN"
    assert entry[key]["timings"][fast.name] == 1.0 and entry[key]["config"]["block_k"] == 64
    # in this process and, after a reload, from the file: any shape of the class hits
    for _ in range(2):
        assert tuned.lookup("GPU X", 2049, 4096, 4096, "bf16", "K", "N") == fast
        assert tuned.lookup("GPU X", 2048, 4096, 4096, "bf16", "K", "N") is None  # other class
        assert tuned.lookup("GPU X", 4096, 4096, 4096, "bf16", "K", "K") is None  # other majors
        assert tuned.lookup("GPU Y", 4096, 4096, 4096, "bf16", "K", "N") is None  # other GPU
        tuned.reload()


def test_entries_merge_and_candidates_that_fail_are_skipped(cache):
    small = BUILTIN_CONFIGS["small"]

    def timer(cfg):
        if cfg.name != small.name:
            raise LaunchError("does not launch")
        return 0.5

    assert tuning.tune(64, 64, 64, "int8", timer=timer, device_name_="G") == small
    tuning.tune(64, 64, 64, "float8_e4m3fn", timer=lambda c: 1.0, device_name_="G")
    entries = json.loads((cache / tuned.FILE_NAME).read_text())["entries"]
    assert sorted(entries) == ["G|m64,n64,k64|e4m3|KK", "G|m64,n64,k64|s8|KK"]
    with pytest.raises(LaunchError, match="every candidate failed for 8x8x8 bf16"):
        tuning.tune(8, 8, 8, "bf16", timer=timer, candidates=[BUILTIN_CONFIGS["large"]],
                    device_name_="G")  # fmt: skip


def test_the_look_up_is_free_while_nothing_is_tuned(cache, monkeypatch):
    """No file: gemm's look-up never asks for the device's name (no torch, no driver)."""
    monkeypatch.setattr(tuned, "device_name", lambda d: pytest.fail("device name asked"))
    assert tuned.lookup_device(0, 4096, 4096, 4096, "bf16", "K", "N") is None


def test_gemm_look_up_by_device_index(cache, monkeypatch):
    tuning.tune(512, 512, 512, "f16", timer=lambda c: c.block_m, device_name_="GPU Z")
    monkeypatch.setattr(tuned, "device_name", lambda d: "GPU Z")
    got = tuned.lookup_device(0, 300, 500, 257, "f16", "K", "K")
    assert got is not None and got.block_m == 32  # the fake timer favours small tiles


def test_damaged_cache_is_a_miss_not_an_error(cache):
    (cache / tuned.FILE_NAME).write_text("{not json")
    assert tuned.table() == {}
    tuned.reload()
    bad = {"format": 1, "entries": {"G|m1,n1,k1|bf16|KK": {"config": {"block_m": 3}}, "x": {}}}
    (cache / tuned.FILE_NAME).write_text(json.dumps(bad))
    assert tuned.table() == {}


def test_no_gpu_is_a_clear_error(cache):
    if tuning._no_gpu_reason(0) is None:
        pytest.skip("a GPU is present")
    with pytest.raises(LaunchError, match="tune: .*tune times kernels on the GPU"):
        tuning.tune(64, 64, 64, "bfloat16")


def test_default_candidates_build_for_each_dtype():
    for dtype in ("f16", "tf32", "s8", "e5m2"):
        cands = tuning.default_candidates(dtype)
        assert cands and all(c.block_k % (32 if dtype in ("s8", "e5m2") else 8) == 0 for c in cands)


_STORE_CHILD = """
import sys
from cutemma.kernels import tuned
from cutemma.kernels.sm80.config import GemmConfig
i = int(sys.argv[1])
cfg = GemmConfig(128, 128, 64, (2, 2), 3)
for j in range(6):
    m = 2 ** (i + 1) * 1000 + j  # a shape class of this process's own
    tuned.store("some GPU", m, 64 << j, 64, "bf16", "K", "N", cfg, {cfg.name: 1e-4})
"""


def test_processes_storing_at_once_lose_no_entry(cache):
    """Issue 33: the tuning cache is safe across processes as well as threads: 6 processes
    each store 6 winners of their own classes at once; the file then holds all 36 (each
    store reads, merges and writes under the file's lock)."""
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", _STORE_CHILD, str(i)]) for i in range(6)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    entries = json.loads(tuned.cache_path().read_text())["entries"]
    assert len(entries) == 36
