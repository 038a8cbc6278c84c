"""The sm90 GEMM's host side without a GPU: the launch record beside the cubin, the index
that lets a new process skip plan, source and NVRTC, and the fast path's refusals."""

from __future__ import annotations

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


def test_the_built_in_pick_is_the_cheapest_candidate_of_the_space():
    """builtin_sm90_config is the cost model's cheapest kernel of the space, whatever the
    shape: every other candidate is predicted no faster (an independent min over predict)."""
    from cutemma.kernels.cost import predict
    from cutemma.kernels.pick import builtin_sm90_config
    from cutemma.kernels.space import candidates

    for m, n, k, dtype in [(1024, 1024, 1024, "bf16"), (300, 28672, 4096, "e4m3"),
                           (16, 8192, 8192, "bf16"), (5000, 3000, 700, "tf32")]:  # fmt: skip
        cfg = builtin_sm90_config(m, n, k, dtype, swap=True)
        t = predict(cfg, m, n, k, dtype)
        assert all(predict(c, m, n, k, dtype) >= t for c in candidates(m, n, k, dtype))


def test_the_narrow_16_bit_tile_is_64x128_of_one_warpgroup():
    """Wherever the built-in pick takes 64-row tiles of an unswapped 16-bit kernel, they are
    64x128 or 64x256 of one consumer warpgroup; 128-row tiles have two."""
    from cutemma.kernels.pick import builtin_sm90_config

    for m in (128, 256, 512, 768, 1024, 2048, 4096):
        for n in (512, 1024, 2048, 4096, 8192):
            for k in (1024, 8192):
                for dtype in ("bf16", "f16"):
                    cfg = builtin_sm90_config(m, n, k, dtype)
                    assert cfg.consumers == (1 if cfg.block_m == 64 else 2), cfg.name
    assert builtin_sm90_config(1024, 1024, 1024, dtype="tf32").block_n in (128, 256)


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
        "cutemma.kernels.sm80.source", "cutemma.cuda.launch",
        "cutemma.cuda.sass", "cutemma.cuda.codegen", "cutemma.cuda.probe",
    }  # fmt: skip
    assert "cutemma.kernels.sm90.host" in loaded
    assert loaded & generators == set()


def test_wide_16_is_16_bit_and_never_stream_k():
    """space.WIDE_16 (128x320, m64n256 + m64n64): the space offers it for 16-bit types only,
    and never as stream-K (its stream-K kernel spills); the pick may take it."""
    from cutemma.kernels.pick import builtin_sm90_config
    from cutemma.kernels.space import candidates

    for dtype in ("bf16", "f16", "tf32", "e4m3"):
        wide = [c for c in candidates(4096, 10240, 8192, dtype) if c.block_n == 320]
        assert bool(wide) == (dtype in ("bf16", "f16")) and not any(c.stream_k for c in wide)
    for m in (128, 1024, 8192):
        for n in (4096, 10240, 57344):
            cfg = builtin_sm90_config(m, n, 8192, "bf16")
            assert cfg.block_n != 320 or not cfg.stream_k, cfg.name
