"""The repeated-call path without a GPU (sm90's prepared launch; test_fastpath_sm80.py
has the sm80 one): which repeated calls may reuse a prepared launch
(every change of an operand's dtype, device, shape, strides or pointer, in place or not,
must miss), which argument boxes a hit rewrites, and the argument layout of the ctypes
cuLaunchKernel call (checked through a C callback with cuLaunchKernel's signature).

Real tensors (CPU) where torch is installed, for both guards (torch's C++ TensorGuards
and the Python MetaGuard); stand-in tensors otherwise. Expected values come from the
tensors' own metadata and from the driver API's signature of cuLaunchKernel.
"""

from __future__ import annotations

import ctypes

import pytest

from cutemma.kernels import dispatch as dsp
from cutemma.kernels.runtime import fastpath as fp
from cutemma.kernels.sm90 import launch as fp90


class Plan:
    tma_store = False  # the register epilogue: no D map (encoding one needs the driver)
    stream_k = None  # not a stream-K kernel (no workspace boxes)


def prepared(shape=(4, 6)):
    sizes = [fp._I32(v) for v in (4, 6, 8)]
    return fp90.PreparedLaunch(None, 0, 132, (fp._I32(), fp._I32()), sizes, Plan, "x", shape)


@pytest.fixture
def fast(monkeypatch):
    """An empty FAST, no torch stream query, launches counted instead of made."""
    table = {}  # the runtime keeps it, the dispatcher looks it up: one dict
    monkeypatch.setattr(fp, "FAST", table)
    monkeypatch.setattr(dsp, "FAST", table)
    monkeypatch.setattr(fp, "_stream_getter", lambda: None)
    launched = []
    monkeypatch.setattr(fp.BoxedLaunch, "launch", lambda self: launched.append(self))
    return launched


@pytest.fixture(params=["torch", "python"])
def torch_guard(request, monkeypatch):
    """torch, with the guard kind of the parameter (the C++ one skipped where absent)."""
    torch = pytest.importorskip("torch")
    if request.param == "torch":
        if fp._tensor_guards() is None:
            pytest.skip("this torch has no usable TensorGuards")
    else:
        monkeypatch.setattr(fp, "_TENSOR_GUARDS", False)
    return torch


def operands(torch):
    A = torch.randn(4, 8, dtype=torch.bfloat16)
    B = torch.randn(8, 6, dtype=torch.bfloat16)
    out = torch.empty(4, 6, dtype=torch.bfloat16)
    return A, B, out


def test_hit_reuses_and_writes_only_what_moved(fast, torch_guard):
    torch = torch_guard
    A, B, out = operands(torch)
    p = prepared()
    fp.remember(A, B, out, True, None, p)
    assert dsp.try_fast(A, B, out, 2.0, None) is out and fast == [p]
    assert (p.c.value, p.d.value) == (out.data_ptr(),) * 2
    assert (p.ldd_m.value, p.ldd_n.value, p.ldc_m.value, p.alpha.value) == (6, 1, 6, 2.0)
    p.d.value = 12345  # a stand-in for "already written": an unmoved out writes no box
    assert dsp.try_fast(A, B, out, 1.0, None) is out and p.d.value == 12345
    assert p.alpha.value == 1.0  # alpha is written on every call
    out2 = torch.empty(4, 6, dtype=torch.bfloat16)
    assert dsp.try_fast(A, B, out2, 1.0, None) is out2 and p.d.value == out2.data_ptr()
    p.set_operands(A, out, 1.0, 0.5)  # the checked path wrote C and beta: a hit rewrites
    assert dsp.try_fast(A, B, out, 1.0, None) is out
    assert (p.c.value, p.beta.value) == (out.data_ptr(), 0.0)
    assert len(fast) == 4


def test_new_output_per_call(fast, torch_guard):
    torch = torch_guard
    A, B, out = operands(torch)
    p = prepared()
    fp.remember(A, B, out, False, None, p)  # out: the new output the first call made
    assert dsp.try_fast(A, B, out, 1.0, None) is None  # entries of given outs are others
    D = dsp.try_fast(A, B, None, 1.0, None)
    assert D.shape == out.shape and D.dtype == out.dtype and D.stride() == out.stride()
    assert p.d.value == D.data_ptr() and D.data_ptr() != out.data_ptr()


RESTRIDES = {
    "t_": lambda t: t.t_(),
    "transpose_": lambda t: t.transpose_(0, 1),
    "as_strided_ (same sizes)": lambda t: t.as_strided_((4, 8), (1, 4)),
    "as_strided_ (offset)": lambda t: t.as_strided_((3, 8), (8, 1), 8),
    "resize_ (smaller)": lambda t: t.resize_(4, 4),
    "resize_ (larger)": lambda t: t.resize_(64, 64),
    "unsqueeze_": lambda t: t.unsqueeze_(0),
    "set_ (same storage, other view)": lambda t: t.set_(t.untyped_storage(), 0, (8, 4), (4, 1)),
    "set_ (other storage)": lambda t: t.set_(torch_mod().zeros(4, 8, dtype=t.dtype)),
    ".data = other": lambda t: setattr(t, "data", torch_mod().zeros(4, 8, dtype=t.dtype)),
}


def torch_mod():
    import torch

    return torch


@pytest.mark.parametrize("change", RESTRIDES, ids=str)
@pytest.mark.parametrize("which", ["A", "B", "out"])
def test_in_place_metadata_change_misses(fast, torch_guard, change, which):
    """The tensor object is the same; its metadata changed in place: no stale launch (an
    out that only moved is a hit that writes its new address)."""
    torch = torch_guard
    A = torch.randn(4, 8, dtype=torch.bfloat16)
    B = torch.randn(4, 8, dtype=torch.bfloat16).t()  # (8, 4), column-major
    out = torch.empty(4, 4, dtype=torch.bfloat16)
    if which == "B":  # give B A's layout so the same changes apply
        B = torch.randn(4, 8, dtype=torch.bfloat16)
    t = {"A": A, "B": B, "out": out}[which]
    if which == "out":
        t.resize_(4, 8)
    p = prepared((4, 4))
    fp.remember(A, B, out, True, None, p)
    assert dsp.try_fast(A, B, out, 1.0, None) is out  # the unchanged call hits
    before = (t.data_ptr(), tuple(t.shape), t.stride())
    RESTRIDES[change](t)
    assert (t.data_ptr(), tuple(t.shape), t.stride()) != before  # it did change
    if which == "out" and (tuple(t.shape), t.stride()) == before[1:]:
        # out moved, same layout: a hit that points D at the new address
        assert dsp.try_fast(A, B, out, 1.0, None) is out and p.d.value == out.data_ptr()
        assert len(fast) == 2
    else:
        assert dsp.try_fast(A, B, out, 1.0, None) is None
        assert len(fast) == 1


@pytest.mark.parametrize("which", ["A", "B", "out"])
def test_other_tensor_same_pointer_misses(fast, torch_guard, which):
    """Views at the same address with another dtype, shape or strides, a tensor that
    requires grad or of another device kind: none reuses the launch."""
    torch = torch_guard
    base = {w: torch.randn(8, 8, dtype=torch.bfloat16) for w in ("A", "B", "out")}
    p = prepared((8, 8))
    fp.remember(base["A"], base["B"], base["out"], True, None, p)
    t = base[which]
    others = [t.view(torch.float16), t.t(), t[:, :4], t[:4], t.view(4, 16),
              t.as_strided((8, 8), (1, 8))]  # fmt: skip
    for o in others:
        assert o.data_ptr() == t.data_ptr()
        args = dict(base, **{which: o})
        assert dsp.try_fast(args["A"], args["B"], args["out"], 1.0, None) is None, o.stride()
    assert dsp.try_fast(base["A"], base["B"], base["out"], 1.0, None) is base["out"]
    assert len(fast) == 1


def test_guards_agree(torch_guard):
    """TensorGuards and MetaGuard accept and refuse the same tensors."""
    torch = torch_guard
    if fp._tensor_guards() is None:
        pytest.skip("one guard kind only")
    t = torch.randn(6, 8, dtype=torch.float16)
    cases = [t, t.clone(), t.t(), t.float(), t[:, :4], t.view(8, 6), t.unsqueeze(0),
             torch.randn(6, 16, dtype=torch.float16)[:, :8]]  # fmt: skip
    tg = fp.make_guard(t)
    mg = fp.MetaGuard((t,)).check
    assert type(tg.__self__).__name__ == "TensorGuards"
    assert [tg(c) for c in cases] == [mg(c) for c in cases] == [True, True] + [False] * 6


def test_keys_and_eviction(fast, torch_guard, monkeypatch):
    torch = torch_guard
    A, B, out = operands(torch)
    p, q = prepared(), prepared()
    fp.remember(A, B, out, True, None, p)
    assert fp.find(A, B, out, "cfg") is None  # another config asked for
    assert fp.find(B.t(), A.t(), out, None) is None  # other pointers
    monkeypatch.setattr(fp, "FAST_PER_KEY", 2)
    outs = [torch.empty(4, 6, dtype=d) for d in (torch.float16, torch.float32, torch.int8)]
    for o in outs:  # three entries under one key: the oldest two are dropped
        fp.remember(A, B, o, True, None, q)
    assert [fp.find(A, B, o, None) is not None for o in (out, *outs)] == [0, 0, 1, 1]
    monkeypatch.setattr(fp, "FAST_MAX", 2)
    fp.remember(B.t(), A.t(), out.t(), True, None, p)
    fp.remember(B, B, out, True, None, p)
    assert len(fp.FAST) == 2 and fp.find(A, B, outs[-1], None) is None  # oldest key gone


def test_declines_what_it_cannot_take(fast, torch_guard):
    torch = torch_guard
    A, B, out = operands(torch)
    p = prepared()
    fp.remember(A, B, out, True, None, p)
    assert dsp.try_fast(A, B, out, "2", None) is None  # alpha not a number
    assert dsp.try_fast(A, B, object(), 1.0, None) is None  # out not a tensor
    assert dsp.try_fast(object(), B, out, 1.0, None) is None
    assert fast == []


def test_stand_in_tensors_use_the_python_guard(fast):
    """Without torch tensors (CI has no torch) the Python guard decides."""

    class T:
        def __init__(self, shape, stride, ptr):
            self.shape, self._st, self._ptr, self.dtype = shape, stride, ptr, "bf16"
            self.device = "cuda:0"

        def stride(self):
            return self._st

        def data_ptr(self):
            return self._ptr

        def get_device(self):
            return 0

    A, B, out = T((4, 8), (8, 1), 1 << 40), T((8, 6), (6, 1), 2 << 40), T((4, 6), (6, 1), 0)
    p = prepared()
    fp.remember(A, B, out, True, None, p)
    assert type(fp.find(A, B, out, None).check.__self__) is fp.MetaGuard
    assert dsp.try_fast(A, B, out, 1.0, None) is out
    A._st = (1, 4)  # restrided in place
    assert dsp.try_fast(A, B, out, 1.0, None) is None
    assert len(fast) == 1


def test_a_hit_writes_and_launches_under_the_lock(monkeypatch):
    """The boxes of a prepared launch are shared by every caller (and thread): a hit holds
    LAUNCH_LOCK from writing them until cuLaunchKernel has copied them."""

    class T:
        shape, dtype, device = (4, 6), "bf16", "cuda:0"

        def __init__(self, ptr):
            self._ptr = ptr

        def stride(self):
            return (6, 1)

        def data_ptr(self):
            return self._ptr

        def get_device(self):
            return 0

    table = {}
    monkeypatch.setattr(fp, "FAST", table)
    monkeypatch.setattr(dsp, "FAST", table)
    held = []
    monkeypatch.setattr(fp.BoxedLaunch, "launch", lambda self: held.append(fp.LAUNCH_LOCK.locked()))
    writes = []
    monkeypatch.setattr(
        fp90.PreparedLaunch, "write_out", lambda self, *a: writes.append(fp.LAUNCH_LOCK.locked())
    )
    A, B, out = T(1 << 40), T(2 << 40), T(3 << 40)
    fp.remember(A, B, out, True, None, prepared())
    assert dsp.try_fast(A, B, out, 1.0, None) is out
    assert dsp.try_fast(A, B, T(4 << 40), 1.0, None) is not None  # out moved: boxes rewritten
    assert held == [True, True] and writes and all(writes)
    assert not fp.LAUNCH_LOCK.locked()


CU_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                             *[ctypes.c_void_p] * 3)  # fmt: skip


def test_launch_arguments_reach_cuLaunchKernel(monkeypatch):
    """The argtypes-free ctypes call delivers cuLaunchKernel(CUfunction f, unsigned
    gridDimX..Z, blockDimX..Z, sharedMemBytes, CUstream, void **params, void **extra)
    intact: a C callback of that signature receives exactly these values (a stream
    address above 4 GiB: no pointer cut to 32 bits)."""
    seen = []

    @CU_LAUNCH
    def fake_launch(*args):
        seen.append(args)
        return 0

    class NoArgtypes(ctypes._CFuncPtr):  # what a CDLL attribute is, argtypes unset
        _flags_ = ctypes._FUNCFLAG_CDECL
        _restype_ = ctypes.c_int

    class Kern:
        threads, shared, name = 384, 200 * 1024, "k"

        def handle(self, device):
            return ctypes.c_void_p(0x7F12_3456_7890)

    stream = 0x7FAB_CDEF_0123
    monkeypatch.setattr(
        fp, "_launcher", lambda: NoArgtypes(ctypes.cast(fake_launch, ctypes.c_void_p).value)
    )
    monkeypatch.setattr(fp, "_stream_getter", lambda: lambda device: stream)
    p = fp90.PreparedLaunch(
        Kern(), 0, 132, (fp._I32(), fp._I32()), [fp._I32(4)] * 3, Plan, "x", (4, 4)
    )
    p.launch()
    p.launch()
    assert len(seen) == 2 and seen[0] == seen[1]
    ptrs = ctypes.addressof(p.ptrs)
    assert seen[0] == (0x7F12_3456_7890, 132, 1, 1, 384, 1, 1, 200 * 1024, stream, ptrs, None)


def test_entries_keep_no_operand_alive(fast, torch_guard):
    """FAST outlives the calls: its guards and entries hold metadata, never the tensors
    (a kept tensor would pin its memory for as long as the entry lives)."""
    torch = torch_guard
    from torch.multiprocessing.reductions import StorageWeakRef

    A, B, out = operands(torch)
    refs = [StorageWeakRef(t.untyped_storage()) for t in (A, B, out)]
    fp.remember(A, B, out, True, None, prepared())
    fp.remember(A, B, out, False, None, prepared())
    del A, B, out
    assert [r.expired() for r in refs] == [True] * 3


def test_run_keeps_the_launch_before_it_launches(fast, torch_guard, monkeypatch):
    """The runtime's last stage: the call's launch is in the repeats' table when the kernel
    is launched (nothing of the call is left to do after the launch), and a repeat takes it."""
    torch = torch_guard
    A, B, out = operands(torch)
    p = prepared()
    at_launch = []
    monkeypatch.setattr(
        fp.BoxedLaunch, "launch", lambda self: at_launch.append(fp.find(A, B, out, None))
    )
    fp.run(p, out, out, 1.0, 0.0, None, (A, B, out, True, None))
    assert len(at_launch) == 1 and at_launch[0] is not None and at_launch[0].prepared is p
    assert dsp.try_fast(A, B, out, 1.0, None) is out and len(at_launch) == 2
    fp.run(p, out, out, 1.0, 0.0, None, None)  # a call that may not be repeated keeps nothing
    assert len(fp.FAST) == 1


def test_the_runtime_writes_a_launchs_workspace_on_its_stream(monkeypatch):
    """A launch that carries a WorkspaceArgs gets the launch stream's workspace and a new
    epoch in its boxes before cuLaunchKernel (here the checked launch of a stand-in kernel)."""
    from cutemma.kernels.runtime import workspace as wsm

    asked = []

    class Space:  # a stream's workspace: what the runtime asks of it
        def pointers(self, grid, slot, stream):
            asked.append((grid, slot, stream))
            return 0x2000, 0x1000

        def next_epoch(self):
            return 7

    monkeypatch.setattr(wsm, "workspace", lambda device, stream: Space())
    launched = []

    class Kern:
        def launch_checked(self, device, grid, grid_y, stream, params):
            launched.append((w.ws.value, w.flags.value, w.epoch.value, stream))

    b = fp.BoxedLaunch(Kern(), 0, 132)
    b.set_args([])
    b.cu, b.stream_of = False, lambda device: 5  # no libcuda entry: the checked launch
    w = b.work = wsm.WorkspaceArgs(132, 128 * 128)
    b.launch()
    assert asked == [(132, 128 * 128, 5)] and launched == [(0x2000, 0x1000, 7, 5)]
