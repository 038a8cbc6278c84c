"""The sm90 GEMM's host side without a GPU: the launch record beside the cubin, the index
that lets a new process skip plan, source and NVRTC, and the fast path's refusals."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cutemma.kernels.dispatch import try_fast
from cutemma.kernels.runtime.fastpath import FAST
from cutemma.kernels.sm90 import host as d
from cutemma.kernels.sm90 import tma_maps
from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan


@pytest.mark.parametrize("out", ["bf16", "f32"])
def test_launch_record_round_trips(out):
    plan = Sm90Plan(Sm90Config(128, 256), "bf16", "K", "N", out)
    rec = tma_maps.Sm90Launch.of(plan)
    assert tma_maps.Sm90Launch.from_json(rec.to_json()) == rec
    assert rec.tma_store == (out == "bf16") and rec.shared_bytes == plan.shared_bytes
    assert rec.tma["A"] == plan.tma["A"] and rec.tma["B"] == plan.tma["B"]


def test_index_hit_builds_nothing(tmp_path, monkeypatch):
    """Second process (here: the in-process cache cleared): the kernel comes from the index
    with no plan, no source and no NVRTC."""
    import cutemma.cuda as cuda_pkg

    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    import sys

    comp = sys.modules["cutemma.cuda.compile"]  # the module (the package exports a function)
    monkeypatch.setattr(comp, "nvrtc_version_hint", lambda: (13, 0))

    class FakeCubin:
        data = b"\x7fELF-not-a-real-cubin"

    monkeypatch.setattr(cuda_pkg, "compile", lambda src, arch: FakeCubin())
    d.compiled_sm90.cache_clear()
    args = (d.kernel_key(Sm90Config(128, 128), "bf16", "K", "K", "bf16", "bf16"), "sm_90a")
    k1, rec1 = d.compiled_sm90(*args)
    assert k1.cubin is None  # the runtime compiles at the kernel's first load
    assert k1.image() == FakeCubin.data  # that load's build: compiled, the index written
    d.compiled_sm90.cache_clear()

    def boom(*a, **k):
        raise AssertionError("the index hit rebuilt the plan or the source")

    from cutemma.kernels.sm90 import plan as sm90_plan
    from cutemma.kernels.sm90 import source as sm90_source

    monkeypatch.setattr(sm90_plan, "Sm90Plan", boom)  # host imports them when it compiles
    monkeypatch.setattr(sm90_source, "gemm_sm90_source", boom)
    monkeypatch.setattr(cuda_pkg, "compile", boom)
    k2, rec2 = d.compiled_sm90(*args)
    d.compiled_sm90.cache_clear()
    assert k2.cubin == k1.cubin == FakeCubin.data and rec2 == rec1
    assert k2.shared == k1.shared and k2.name == k1.name


def test_a_new_variant_is_compiled_by_the_runtime_at_its_first_load(tmp_path, monkeypatch):
    """The family hands the runtime the kernel text: nothing compiles until the kernel's first
    load asks for its cubin, and then once; the launch record is the plan's own (witness:
    ``Sm90Launch.of`` of the plan, built here, not by the host)."""
    import sys

    import cutemma.cuda as cuda_pkg
    from cutemma.kernels.sm90 import index as sm90_index

    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    comp = sys.modules["cutemma.cuda.compile"]
    monkeypatch.setattr(comp, "nvrtc_version_hint", lambda: (13, 0))
    compiled = []

    class FakeCubin:
        data = b"\x7fELF-compiled"

    monkeypatch.setattr(cuda_pkg, "compile", lambda src, arch: compiled.append(arch) or FakeCubin())
    d.compiled_sm90.cache_clear()
    cfg = Sm90Config(128, 256)
    key = d.kernel_key(cfg, "bf16", "K", "N", "bf16", "bf16")
    kern, launch = d.compiled_sm90(key, "sm_90a")
    d.compiled_sm90.cache_clear()
    assert compiled == [] and kern.cubin is None and list(tmp_path.glob("*.sm90")) == []
    assert key.name in kern.source
    assert launch == tma_maps.Sm90Launch.of(Sm90Plan(cfg, "bf16", "K", "N", "bf16"))
    assert kern.shared == launch.shared_bytes and kern.threads == cfg.threads
    assert kern.image() == kern.image() == FakeCubin.data and compiled == ["sm_90a"]
    (entry,) = tmp_path.glob("*.sm90")
    assert sm90_index.read(entry, key) == (FakeCubin.data, sm90_index.plan_record(key))


def test_nvrtc_hint_matches_the_library():
    from cutemma.cuda.compile import nvrtc_version, nvrtc_version_hint

    hint = nvrtc_version_hint()
    if hint is None:
        pytest.skip("no nvidia-cuda-nvrtc pip package")
    assert hint == nvrtc_version()


def test_fast_path_declines_unknown_calls():
    FAST.clear()
    assert try_fast(object(), object(), None, 1.0, None) is None  # not tensors
    torch = pytest.importorskip("torch")
    a = torch.zeros(8, 8)
    assert try_fast(a, a, None, 1.0, None) is None  # no prepared launch for this signature


def test_built_in_16bit_tile_is_the_fastest_measured():
    """At each square size where one 128-row tile width was clearly (>= 2%) the fastest on
    the H100 (raw/sm90-tiles16-run29.json, measured against cuBLAS in one process), the
    built-in pick is that width (the narrow 128x64's output as pick.NARROW_16's 64x128)."""
    import json
    from pathlib import Path

    from cutemma.kernels.pick import builtin_sm90_config

    raw = Path(__file__).parents[2] / "bench/results/raw/sm90-tiles16-run29.json"
    rows = json.loads(raw.read_text())["rows"]
    checked = 0
    for row in rows:
        speeds = sorted(((v, k) for k, v in row["median"].items() if k != "matmul"), reverse=True)
        (best, name), (second, _) = speeds[:2]
        if best >= 1.02 * second:
            s = row["size"]
            cfg = builtin_sm90_config(s, s)
            assert cfg.block_m * cfg.block_n // 128 == int(name.split("x")[1]), (s, speeds)
            checked += 1
    assert checked >= 5


def test_partly_empty_tiles_do_not_take_the_narrow_tile():
    """M = 16 x 4096 x 4096 ran 128x64 at 0.679x cuBLAS (raw/gemm-h100-run30.json) against
    128x128's 0.757x (the run before): with fewer than 128 valid rows a 128x64 tile loads
    mostly zero-filled A; M = 128 keeps the narrow tile (0.832x there against 0.766x)."""
    from cutemma.kernels.pick import NARROW_16, builtin_sm90_config

    assert builtin_sm90_config(16, 4096).block_n == 128
    assert builtin_sm90_config(128, 4096) == NARROW_16


def test_the_narrow_16_bit_tile_is_64x128_of_one_warpgroup_never_stream_k():
    """Wherever the picker's costs choose width 64, it runs 64x128 of one consumer
    (raw/tile-64x128-run7.json: faster than 128x64 on all 12 shapes timed), never stream-K,
    and with evict-first B where B streams; other widths keep 128-row tiles."""
    from cutemma.kernels.pick import NARROW_16, builtin_sm90_config

    narrow = 0
    for m in (128, 256, 512, 768, 1024, 2048, 4096):
        for n in (512, 1024, 2048, 4096, 8192):
            for k in (1024, 8192):
                for dtype in ("bf16", "f16"):
                    cfg = builtin_sm90_config(m, n, 132, dtype, 1, k)
                    if cfg.block_m == 64:
                        narrow += 1
                        assert replace(cfg, evict_first="") == NARROW_16, cfg.name
                    else:
                        assert cfg.block_m == 128 and cfg.consumers == 2, cfg.name
    assert narrow >= 20  # e.g. (1024, 1024), (128, 4096), (2048, 512)
    assert builtin_sm90_config(128, 4096, k=8192).evict_first == "B"  # B streamed
    assert builtin_sm90_config(1024, 1024, dtype="tf32").block_m == 128  # tf32: no narrow tile


@pytest.mark.parametrize(
    ("m", "n", "k", "width"),
    [
        (128, 8192, 28672, 64),  # 128 tiles of 128x64, one wave like 64 of 128x128
        (128, 4096, 4096, 64),
        (80, 4096, 14336, 64),
        (128, 10240, 8192, 128),  # 160 tiles of 128x64: two waves, 80 of 128x128 one
        (256, 8192, 8192, 128),  # two tile rows: compute, not one stream of B
        (1024, 1024, 1024, 128),
    ],
)
def test_fp8_one_tile_row_takes_128x64_where_its_waves_allow(m, n, k, width):
    """pick.FP8_ONE_ROW (raw/fp8-one-row-run18.json): twice the CTAs stream B when the
    narrower tiles take no more waves."""
    from cutemma.kernels.pick import builtin_sm90_config

    cfg = builtin_sm90_config(m, n, 132, "e4m3", 1, k)
    assert cfg.block_n == width, cfg.name
    if width == 64:
        assert cfg.promote == "overlap" and -(-n // 64) <= 132


def test_a_pick_leaves_the_speed_table_alone():
    """A pick for fewer than 128 rows over a whole wave of tiles drops the 64-wide tile
    from its own candidates, not from TILE_SPEEDS_16: the next pick still has it."""
    from cutemma.kernels.pick import NARROW_16, TILE_SPEEDS_16, builtin_sm90_config

    before = dict(TILE_SPEEDS_16)
    assert builtin_sm90_config(1, 14336, batch=8).block_m == 128
    assert TILE_SPEEDS_16 == before
    assert builtin_sm90_config(1024, 1024) == NARROW_16


def test_a_call_path_imports_no_generator():
    """A new process that imports cutemma.gemm's host side (the first call of a kernel in
    the disk cache runs no more) loads no kernel generator, plan or SASS reader: each of
    those modules is imported only where a kernel is compiled (issue 21, cold start)."""
    import subprocess
    import sys

    code = (
        "import sys, cutemma.kernels.dispatch, cutemma.kernels.sm90.host, "
        "cutemma.kernels.sm80.host; print(' '.join(sorted(sys.modules)))"
    )
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout.split())  # fmt: skip
    generators = {
        "cutemma.kernels.sm90.plan", "cutemma.kernels.sm90.source", "cutemma.kernels.sm90.mainloop",
        "cutemma.kernels.sm90.epilogue", "cutemma.kernels.sm90.batched", "cutemma.kernels.sm80.plan",
        "cutemma.kernels.sm80.source", "cutemma.kernels.common.template", "cutemma.cuda.launch",
        "cutemma.cuda.sass", "cutemma.cuda.codegen", "cutemma.cuda.probe",
    }  # fmt: skip
    assert "cutemma.kernels.sm90.host" in loaded
    assert loaded & generators == set()


def test_wide_16_where_its_tiles_fill_whole_waves():
    """pick.WIDE_16 (128x320, m64n256 + m64n64): at each bf16 row of
    raw/wide-mixed-s12-run6.json where its k-32 kernel ran >= 2% faster than the other
    tiles timed (the built-in pick of then, 128x256), the picker takes it; where it ran
    >= 2% slower than the best kernel timed, it does not. It is never stream-K, and
    it never runs for tf32 or fp8, or short of a wave of its tiles."""
    import json
    from pathlib import Path

    from cutemma.kernels.pick import WIDE_16, builtin_sm90_config

    raw = Path(__file__).parents[2] / "bench/results/raw/wide-mixed-s12-run6.json"
    took = left = 0
    for row in json.loads(raw.read_text())["data"]:
        r = {k: v for k, v in row["ratio"].items() if k != "peer"}
        wide = r.pop(WIDE_16.name)
        cfg = builtin_sm90_config(row["m"], row["n"], 132, "bf16", 1, row["k"])
        if wide >= 1.02 * max(v for k, v in r.items() if "x320" not in k):
            assert replace(cfg, evict_first="") == WIDE_16, (row["m"], row["n"], cfg.name)
            took += 1
        if wide * 1.02 <= max(r.values()):
            assert cfg.block_n != 320, (row["m"], row["n"], cfg.name)
            left += 1
    assert took == 2 and left >= 4  # (512 | 1024, 10240, 8192); 4096^3, 2048^3, ...
    for m in (128, 256, 512, 1024, 2048, 4096, 8192):
        for n in (4096, 5120, 10240, 14336, 28672, 57344):
            for dtype in ("bf16", "f16", "tf32", "e4m3"):
                cfg = builtin_sm90_config(m, n, 132, dtype, 1, 8192)
                if cfg.block_n == 320:
                    assert dtype in ("bf16", "f16") and not cfg.stream_k, cfg.name
                    assert -(-m // 128) * -(-n // 320) >= 0.95 * 132, (m, n)
