"""The sm80 family's repeated-call path without a GPU: ``cutemma.gemm``'s sm80 branch run on
CPU torch tensors (the device check, the arch query and the compiled kernel stood in), every
launch's argument values recorded.

The reference for each launch is the checked path's own prepared launch of the same call
(made anew with no remembered launch to find): a prepared launch, whether new or reused,
must hand the kernel exactly those values. A call must be a hit only when nothing it decided from can
differ, and never when an operand was copied (K-major or major copies).
"""

from __future__ import annotations

import ctypes
import types

import pytest

from cutemma.errors import LaunchError
from cutemma.kernels import call as call_mod
from cutemma.kernels import dispatch as dsp
from cutemma.kernels.runtime import fastpath as fp
from cutemma.kernels.sm80 import host as h80
from cutemma.kernels.sm80.launch import Sm80Launch
from cutemma.kernels.sm80.plan import GemmConfig

try:
    import torch
except ImportError:  # CI without torch: the stand-in test below runs alone
    torch = None

CFG = GemmConfig(64, 64, 32, (2, 2), 4)


class Proxy:
    """A CPU tensor that answers ``device.type`` as a CUDA one (for ``_check`` only)."""

    def __init__(self, t):
        self._t = t
        self.device = types.SimpleNamespace(type="cuda", index=0)

    def __getattr__(self, name):
        return getattr(self._t, name)


class Kern:
    """compiled_kernel's stand-in (a DriverKernel's sizes)."""

    shared, threads, name, pdl = 32768, 128, "k", False

    def __init__(self, key):
        self.key = key


def set_arch(monkeypatch, arch):
    """The call record reads the device's compile target from ``arch``."""
    monkeypatch.setattr(call_mod, "device_arch", lambda device: arch)


@pytest.fixture
def sm80(monkeypatch, tmp_path):
    """gemm's sm80 branch on CPU tensors; returns the launch log."""
    if torch is None:
        pytest.skip("no torch")
    from cutemma.kernels import tuned as tune

    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))  # nothing tuned
    tune.reload()
    log = []
    orig_check = call_mod._operands
    monkeypatch.setattr(call_mod, "_operands", lambda A, B: orig_check(Proxy(A), Proxy(B)))
    set_arch(monkeypatch, "sm_89")  # fp8 mma.sync, no sm90
    monkeypatch.setattr(call_mod, "sm_count", lambda device: 132)
    monkeypatch.setattr(call_mod, "gpu_name", lambda device: "NVIDIA H100")
    keys = []
    monkeypatch.setattr(h80, "compiled_kernel", lambda key, arch: keys.append(key) or Kern(key))
    table = {}  # the runtime keeps it, the dispatcher looks it up: one dict
    monkeypatch.setattr(fp, "FAST", table)
    monkeypatch.setattr(dsp, "FAST", table)

    def launch(self):
        log.append(("boxes", None, [a.value for a in self.args], (self.grid, self.grid_y)))

    monkeypatch.setattr(fp.BoxedLaunch, "launch", launch)
    hits = []
    orig_try = dsp.try_fast

    def try_fast(*a):
        r = orig_try(*a)
        hits.append(r is not None)
        return r

    monkeypatch.setattr(dsp, "try_fast", try_fast)
    yield types.SimpleNamespace(log=log, hits=hits, keys=keys)
    tune.reload()


def reference(A, B, out=None, **kw):
    """The checked path's launch of this call (no prepared launch to find), and its
    output."""
    kept, fp.FAST = fp.FAST, {}
    dsp.FAST = fp.FAST
    try:
        D = dsp.gemm(A, B, out=out, **kw)
    finally:
        fp.FAST = dsp.FAST = kept
    return D


def call(env, A, B, out=None, **kw):
    """(D, hit, the launch's argument values, grid), checked against the reference launch
    of the same operands (and of the output the call wrote)."""
    n = len(env.log)
    D = dsp.gemm(A, B, out=out, **kw)
    hit = env.hits[-1]
    kind, _, vals, grid = env.log[n]
    assert kind == "boxes" and len(env.log) == n + 1
    kw2 = {k: v for k, v in kw.items() if k != "config"}
    reference(A, B, out=D, config=kw.get("config"), **kw2)
    kind, _, ref, ref_grid = env.log[-1]
    assert kind == "boxes" and not env.hits[-1]
    assert vals == ref and grid == ref_grid, (vals, ref)
    return D, hit


def bf16(*shape):
    return torch.randn(*shape, dtype=torch.bfloat16)


CASES = {
    "bf16 K,N": lambda: (bf16(64, 32), bf16(32, 48)),
    "bf16 M,K": lambda: (bf16(32, 64).t(), bf16(48, 32).t()),
    "f16 K,K": lambda: (bf16(64, 32).half(), bf16(48, 32).half().t()),
    "tf32 K,K": lambda: (torch.randn(64, 32), torch.randn(48, 32).t()),
    "int8 K,K": lambda: (torch.randint(-8, 8, (64, 32), dtype=torch.int8),
                         torch.randint(-8, 8, (48, 32), dtype=torch.int8).t()),
    "e4m3 x e5m2": lambda: (bf16(64, 32).to(torch.float8_e4m3fn),
                            bf16(48, 32).to(torch.float8_e5m2).t()),
    "batched A, shared B": lambda: (bf16(3, 64, 32), bf16(32, 48)),
    "batched both": lambda: (bf16(3, 64, 32), bf16(3, 32, 48)),
    "batch of one": lambda: (bf16(1, 64, 32), bf16(32, 48)),
    "K = 1": lambda: (bf16(64, 1), bf16(1, 48)),
}  # fmt: skip


@pytest.mark.parametrize("config", [None, CFG], ids=["config None", "config given"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_repeats_hit_with_the_checked_arguments(sm80, case, config):
    """First call: a miss; repeats with out given, moved, alternating and new outputs:
    hits; every launch hands the kernel the checked launcher's values."""
    A, B = CASES[case]()
    kw = {"config": config}
    D, hit = call(sm80, A, B, **kw)
    assert not hit
    if case == "batch of one":  # run as its 2-D problem: a repeat takes the checked path
        assert not call(sm80, A, B, **kw)[1] and not call(sm80, A, B, out=D, **kw)[1]
        assert fp.FAST == {}
        return
    D2, hit = call(sm80, A, B, **kw)  # a new output each call
    assert hit and D2.data_ptr() != D.data_ptr() and D2.shape == D.shape
    D3, hit = call(sm80, A, B, out=D, **kw)
    assert not hit and D3 is D  # out given: another key
    for o in (D, D2, D, D2):  # out alternating: hits that move D
        D4, hit = call(sm80, A, B, out=o, alpha=2.0, **kw)
        assert hit and D4 is o
    assert len(fp.FAST) == 2


def test_int8_alpha_stays_whole(sm80):
    A, B = CASES["int8 K,K"]()
    out = torch.empty(64, 48, dtype=torch.int32)
    call(sm80, A, B, out=out, alpha=3)
    assert call(sm80, A, B, out=out, alpha=2)[1]
    with pytest.raises(LaunchError, match="whole-number"):
        dsp.gemm(A, B, out=out, alpha=0.5)
    assert call(sm80, A, B, out=out, alpha=1)[1]  # the box still takes whole numbers


COPIES = {
    "tf32, B row-major": lambda: (torch.randn(64, 32), torch.randn(32, 48)),
    "int8, A column-major": lambda: (torch.randint(-8, 8, (32, 64), dtype=torch.int8).t(),
                                     torch.randint(-8, 8, (48, 32), dtype=torch.int8).t()),
    "e4m3, B row-major": lambda: (bf16(64, 32).to(torch.float8_e4m3fn),
                                  bf16(32, 48).to(torch.float8_e4m3fn)),
    "bf16, neither mode contiguous": lambda: (bf16(64, 64)[:, ::2], bf16(32, 48)),
    "bf16 batched, neither mode contiguous": lambda: (bf16(2, 64, 64)[:, :, ::2], bf16(32, 48)),
}  # fmt: skip


@pytest.mark.parametrize("case", COPIES, ids=str)
def test_copied_operand_never_remembered(sm80, case):
    """An operand the checked path copied (to K-major, or neither mode contiguous) is
    not the tensor the kernel read: its calls are never remembered, and never hit."""
    A, B = COPIES[case]()
    out = dsp.gemm(A, B)
    for _ in range(2):
        dsp.gemm(A, B)
        dsp.gemm(A, B, out=out)
    assert fp.FAST == {} and not any(sm80.hits)


def test_what_is_not_remembered(sm80):
    """C given, K == 0, an empty output, float8 scales, out_dtype given: the checked path."""
    A, B = bf16(64, 32), bf16(32, 48)
    C = bf16(64, 48)
    for _ in range(2):
        dsp.gemm(A, B, C, beta=1.0)
        dsp.gemm(bf16(64, 0), bf16(0, 48))
        dsp.gemm(bf16(0, 32), B)
        dsp.gemm(A, B, out_dtype=torch.float32)
        f8 = bf16(64, 32).to(torch.float8_e4m3fn), bf16(48, 32).to(torch.float8_e4m3fn).t()
        dsp.gemm(*f8, scale_a=0.5)
    assert fp.FAST == {} and not any(sm80.hits)


RESTRIDES = {
    "t_": lambda t: t.t_(),
    "as_strided_ (column-major)": lambda t: t.as_strided_((64, 64), (1, 64)),
    "as_strided_ (padded rows)": lambda t: t.set_(bf16(64, 72).untyped_storage(), 0, (64, 64), (72, 1)),
    "set_ (other storage)": lambda t: t.set_(bf16(64, 64)),
    ".data = other": lambda t: setattr(t, "data", bf16(64, 64)),
    "resize_ (other shape)": lambda t: t.resize_(32, 64),
    "unsqueeze_": lambda t: t.unsqueeze_(0),
    "dtype view at the same address": None,
}  # fmt: skip


@pytest.mark.parametrize("change", RESTRIDES, ids=str)
@pytest.mark.parametrize("which", ["A", "B", "out"])
def test_in_place_change_misses(sm80, change, which):
    """Same tensor objects, metadata changed in place: the next call is a miss (or a named
    error, or, for an out that only moved, a hit pointing D at its new address) and
    launches the checked launcher's values for the changed operands."""
    ops = {"A": bf16(64, 64), "B": bf16(64, 64), "out": bf16(64, 64)}
    hits = [call(sm80, ops["A"], ops["B"], out=ops["out"])[1] for _ in range(2)]
    assert hits == [False, True]
    t = ops[which]
    before = (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)
    if RESTRIDES[change] is None:
        ops[which] = t = t.view(torch.float16)
    else:
        RESTRIDES[change](t)
    now = (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)
    assert now != before
    try:
        _, hit = call(sm80, ops["A"], ops["B"], out=ops["out"])
    except LaunchError:  # the call is no longer valid (shapes, dtypes): a miss that the
        assert not sm80.hits[-1]  # checked path names
        return
    moved_only = which == "out" and now[1:] == before[1:]
    assert hit == moved_only


def test_stand_in_boxes_without_torch_queries(monkeypatch):
    """Sm80Launch's write_out (what a hit writes) against the checked path's rule for a
    batched output: C's batch stride is D's unless the batch is one problem."""
    p = Sm80Launch(None, 0, 6, 3, (0x100, 0x200), (64, 48, 32, 32, 32), (2048, 0),
                   batched=True)  # fmt: skip
    p.write_out(0x4000, (64 * 48 + 16, 48, 1), None)
    vals = [a.value for a in p.args]
    assert vals[2] == vals[3] == 0x4000 and vals[9:13] == [48, 1, 48, 1]
    assert vals[14] == 0.0 and vals[15:] == [2048, 0, 64 * 48 + 16, 64 * 48 + 16]
    one = Sm80Launch(None, 0, 6, 1, (0x100, 0x200), (64, 48, 32, 32, 32), (0, 0), batched=True)
    one.write_out(0x4000, (64 * 48, 48, 1), None)
    assert [a.value for a in one.args][17:] == [0, 64 * 48]
    assert (p.grid, p.grid_y, one.grid_y) == (6, 3, 1)
    assert len(p.args) == 19 and all(isinstance(a, ctypes._SimpleCData) for a in p.args)
    # a hit through try_fast with stand-in tensors (the Python guard): out moved
    table = {}
    monkeypatch.setattr(fp, "FAST", table)
    monkeypatch.setattr(dsp, "FAST", table)
    monkeypatch.setattr(fp.BoxedLaunch, "launch", lambda self: None)

    class T:
        def __init__(self, ptr, shape, stride):
            self.ptr, self.shape, self.st, self.dtype, self.device = ptr, shape, stride, "bf16", 0

        def data_ptr(self):
            return self.ptr

        def stride(self):
            return self.st

        def get_device(self):
            return 0

    A, B = T(0x100, (3, 64, 32), (2048, 32, 1)), T(0x200, (32, 48), (1, 32))
    out = T(0x4000, (3, 64, 48), (64 * 48 + 16, 48, 1))
    fp.remember(A, B, out, True, None, p)
    moved = T(0x8000, (3, 64, 48), (64 * 48 + 16, 48, 1))
    assert dsp.try_fast(A, B, moved, 2.0, None) is moved
    assert [a.value for a in p.args] == [*vals[:2], 0x8000, 0x8000, *vals[4:13], 2.0, *vals[14:]]
    moved.st = (64 * 48, 48, 1)  # restrided in place: a miss
    assert dsp.try_fast(A, B, moved, 2.0, None) is None


H100_SM80 = {  # what an sm_90a device runs on the sm80 family (config None unless given)
    "int8": lambda: (torch.randint(-8, 8, (64, 32), dtype=torch.int8),
                     torch.randint(-8, 8, (48, 32), dtype=torch.int8).t(), None),
    "bf16, leading stride not 16-byte aligned": lambda: (bf16(64, 33)[:, :32], bf16(32, 48), None),
    "bf16, GemmConfig given": lambda: (bf16(64, 32), bf16(32, 48), CFG),
    "tf32 M-major A": lambda: (torch.randn(32, 64).t(), torch.randn(48, 32).t(), None),
}  # fmt: skip


@pytest.mark.parametrize("case", H100_SM80, ids=str)
def test_sm90_device_sm80_calls(sm80, monkeypatch, case):
    """On an sm_90a device: int8, unaligned operands and an explicit GemmConfig run sm80,
    and their repeats hit with the checked launcher's values (a copied operand: never)."""
    set_arch(monkeypatch, "sm_90a")
    A, B, cfg = H100_SM80[case]()
    copied = case.startswith("tf32")  # tf32 reads A K-major: a copy
    for i in range(3):
        if copied:
            dsp.gemm(A, B, config=cfg)
        else:
            assert call(sm80, A, B, config=cfg)[1] == (i > 0)
    assert (fp.FAST == {}) == copied


def test_calls_keep_no_operand_alive(sm80):
    """Remembered sm80 launches and the tuned-config lookup hold no tensor: a dropped
    operand's memory is freed (a cache keyed by the tensors once kept every one alive)."""
    from torch.multiprocessing.reductions import StorageWeakRef

    A, B = bf16(64, 32), bf16(32, 48)
    out = dsp.gemm(A, B)
    dsp.gemm(A, B, out=out, config=CFG)
    refs = [StorageWeakRef(t.untyped_storage()) for t in (A, B, out)]
    assert len(fp.FAST) == 2
    del A, B, out
    assert [r.expired() for r in refs] == [True] * 3


def test_designs_run_their_own_kernel_and_repeat(sm80):
    """A custom design (the seeds' kind of M permutation) takes the sm80 path with its own
    kernel (the compile key holds the design), its repeats hit as a config's do, and
    tiled_mma= is the same design."""
    from cutemma.kernels import GemmDesign
    from cutemma.layout import Layout
    from cutemma.tiled import make_tiled_mma

    perm = Layout((8, 2, 2), (1, 16, 8))
    tiled = make_tiled_mma("SM80_16x8x16_F32BF16BF16F32_TN", (2, 2, 1), (perm, None, None))
    d = GemmDesign(tiled, (64, 64, 32))
    A, B = bf16(64, 32), bf16(32, 48)
    assert [call(sm80, A, B, design=d)[1] for _ in range(3)] == [False, True, True]
    keys = sm80.keys
    assert keys and all(k.design == d for k in keys)
    out = dsp.gemm(A, B, tiled_mma=tiled)  # GemmDesign(tiled): the default tile
    assert out.shape == (64, 48) and sm80.log[-1][0] == "boxes"
