"""The repeated-call path of the sm90 GEMM: one prepared launch per argument signature.

A call of ``cutemma.gemm`` that ran the sm90 kernel leaves behind a :class:`PreparedLaunch`
and a :class:`FastEntry` that says when a later call may reuse it. The entry is found by
``(A's pointer, B's pointer, whether out was given, config)`` and accepted only when its
guard says that A, B (and ``out``, when given) still have the dtype, device, shape and
strides they had: a tensor restrided, resized or re-pointed in place, or a new tensor at a
freed one's address, is checked like any other. A hit skips the checks, the dispatch, the
plan and the tensor-map encoding: it writes what may change (alpha; C and D's pointer and
D's map when ``out`` moved) into argument boxes that already exist and calls
``cuLaunchKernel`` of libcuda directly (ctypes), on torch's current stream. Tensor maps
depend only on (pointer, dims, strides, box), all pinned by the key and the guard.

The guard is torch's own C++ tensor check (``torch._C._dynamo.guards.TensorGuards``: one
call compares dtype, device, sizes and strides of every tensor, ~3x cheaper than asking
each tensor from Python) when this torch has one that passes a self-test, else
:class:`MetaGuard` (the same comparisons from Python).

>>> fast_key_fields()
('A.data_ptr', 'B.data_ptr', 'out given', 'config')
>>> guard_fields()
('dtype', 'device', 'shape', 'stride')
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

_I32, _I64, _F32, _U64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_float, ctypes.c_uint64
FAST: dict[tuple, tuple[FastEntry, ...]] = {}  # fast_key -> entries, newest first
FAST_MAX = 256  # keys kept (oldest dropped)
FAST_PER_KEY = 4  # entries per key: e.g. views of one buffer with different shapes
_CUDA_ERROR_INVALID_CONTEXT = 201
_libcuda: Any = None
_TENSOR_GUARDS: Any = None  # torch's TensorGuards once it passed its self-test, or False
_empty: Any = None  # torch.empty, bound once torch is in use (a hit makes new outputs)


def fast_key_fields() -> tuple[str, ...]:
    """What the key of a prepared launch holds (documentation and a test's check)."""
    return ("A.data_ptr", "B.data_ptr", "out given", "config")


def guard_fields() -> tuple[str, ...]:
    """What a guard compares per tensor (A, B, and out when given), beside the key."""
    return ("dtype", "device", "shape", "stride")


def _launcher():
    """libcuda's cuLaunchKernel through ctypes with no argtypes: the caller passes the
    pointers as c_void_p boxes and the unsigned ints as small Python ints (C int in the
    platform's calling convention), which converts in about half the time of declared
    argtypes (ctypes' from_param per argument)."""
    global _libcuda
    if _libcuda is None:
        try:
            f = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
            f.restype = ctypes.c_int
            _libcuda = f
        except (OSError, AttributeError):
            _libcuda = False
    return _libcuda


def _stream_getter():
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device: torch.cuda.current_stream(device).cuda_stream


class MetaGuard:
    """``check(*tensors)``: True while each tensor has the dtype, device, shape and strides
    the tensors given at construction had (tensor queries from Python: the fallback where
    torch's C++ check is missing, and what a test's stand-in tensors get).

    >>> class T:  # a stand-in with the four queries
    ...     def __init__(self, shape, stride): self.shape, self._st = shape, stride
    ...     def stride(self): return self._st
    ...     dtype = "bfloat16"
    ...     def get_device(self): return 0
    >>> g = MetaGuard((T((4, 6), (6, 1)),))
    >>> g.check(T((4, 6), (6, 1))), g.check(T((4, 6), (8, 1))), g.check(T((6, 4), (6, 1)))
    (True, False, False)
    """

    __slots__ = ("sig", "n")

    def __init__(self, tensors: tuple) -> None:
        self.n = len(tensors)
        self.sig = sum(((t.dtype, t.get_device(), tuple(t.shape), t.stride()) for t in tensors), ())

    def check(self, *tensors: Any) -> bool:
        """Whether ``tensors`` match the signature (one per tensor of the construction).
        One flat tuple compared at once: the two- and three-tensor calls of the fast path
        are spelled out (a loop costs more than the queries)."""
        if len(tensors) != self.n:
            return False
        if self.n == 3:
            a, b, c = tensors
            return (a.dtype, a.get_device(), a.shape, a.stride(), b.dtype, b.get_device(),
                    b.shape, b.stride(), c.dtype, c.get_device(), c.shape,
                    c.stride()) == self.sig  # fmt: skip
        if self.n == 2:
            a, b = tensors
            return (a.dtype, a.get_device(), a.shape, a.stride(), b.dtype, b.get_device(),
                    b.shape, b.stride()) == self.sig  # fmt: skip
        got = ((t.dtype, t.get_device(), t.shape, t.stride()) for t in tensors)
        return sum(got, ()) == self.sig


def _tensor_guards() -> Any:
    """torch's C++ TensorGuards class when it exists and behaves as this module needs
    (checked once per process on CPU tensors: equal metadata passes; another shape,
    strides only, dtype, a transposed view, a restrided one, a count mismatch fail),
    else None. It is internal to torch (dynamo's guards), hence the self-test."""
    global _TENSOR_GUARDS
    if _TENSOR_GUARDS is None:
        _TENSOR_GUARDS = False
        try:
            import torch

            tg = torch._C._dynamo.guards.TensorGuards
            a = torch.zeros(4, 6)
            g = tg(a, dynamic_dims_sizes=None, dynamic_dims_strides=None)
            wrong = (torch.zeros(4, 7), torch.zeros(4, 8)[:, :6], torch.zeros(4, 6).double(),
                     torch.zeros(6, 4).t(), torch.zeros(24).as_strided((4, 6), (1, 4)),
                     torch.zeros(1, 4, 6))  # fmt: skip
            if g.check(torch.zeros(4, 6)) and not any(g.check(w) for w in wrong):
                _TENSOR_GUARDS = tg
        except Exception:  # no dynamo in this torch, another signature: the Python guard
            pass
    return _TENSOR_GUARDS or None


def make_guard(*tensors: Any) -> Callable[..., bool]:
    """The cheapest check(*tensors) -> bool available for these tensors: True while each
    has the dtype, device, shape and strides it has now (never on other tensor counts).

    >>> import torch                                                  # doctest: +SKIP
    >>> a = torch.zeros(4, 6); check = make_guard(a)                  # doctest: +SKIP
    >>> check(a), check(a.t()), check(torch.zeros(4, 6))              # doctest: +SKIP
    (True, False, True)
    """
    tg = _tensor_guards()
    if tg is not None:
        try:
            g = tg(*tensors, dynamic_dims_sizes=None, dynamic_dims_strides=None)
            if g.check(*tensors):
                return g.check
        except Exception:  # a tensor kind it does not take: the Python guard
            pass
    return MetaGuard(tensors).check


class FastEntry:
    """When a call may reuse ``prepared``: ``check`` (the guard of A, B and a given out),
    and what a hit needs of the output without asking it: its strides (pinned by the
    guard, or those of a new output) and, for new outputs, shape, dtype and device."""

    __slots__ = ("check", "prepared", "strides", "shape", "dtype", "device")

    def __init__(self, check: Callable[..., bool], prepared: PreparedLaunch, out: Any):
        self.check, self.prepared = check, prepared
        self.strides, self.shape = out.stride(), tuple(out.shape)
        self.dtype, self.device = out.dtype, out.device


class PreparedLaunch:
    """Argument boxes, the function handle and the grid of one sm90 GEMM signature.

    ``maps`` are the tensor-map boxes of A and B; with the TMA-store epilogue the third
    argument slot holds D's map, swapped per call (``out`` may move). ``batch`` (a batched
    kernel): ``(L, bat)``, the problem count and which operands have rank-3 maps; C's and
    D's batch strides are then written per call beside their row strides. ``at`` and
    ``ptr``: the fast-path entry and output pointer the boxes were last written for (None
    after any other write), so a repeated call writes only alpha.
    """

    __slots__ = ("kern", "device", "grid", "shape", "out_dtype", "tma_store", "plan", "args",
                 "ptrs", "c", "d", "ldc_m", "ldc_n", "ldd_m", "ldd_n", "alpha", "beta",
                 "tma_d", "map_d", "fn", "stream_of", "launch_ptrs", "d_maps", "batched",
                 "ldc_l", "ldd_l", "at", "ptr", "cu", "stream", "stream_box", "threads",
                 "shared")  # fmt: skip

    def __init__(self, kern, device, grid, maps, sizes, plan, out_dtype, shape, batch=None):
        self.kern, self.device, self.grid, self.plan = kern, device, grid, plan
        self.shape, self.out_dtype, self.tma_store = shape, out_dtype, plan.tma_store
        self.c, self.d = _U64(), _U64()
        self.ldc_m, self.ldc_n, self.ldd_m, self.ldd_n = _I64(), _I64(), _I64(), _I64()
        self.alpha, self.beta, self.tma_d = _F32(), _F32(), _I32()
        self.map_d = None
        self.d_maps: dict[tuple, Any] = {}  # (D pointer, strides) -> map box or None
        args = [*maps]
        if self.tma_store:
            from cutemma.kernels.dispatch_sm90 import NO_MAP

            args.append(NO_MAP)
        args += [self.c, self.d, *sizes, self.ldc_m, self.ldc_n, self.ldd_m, self.ldd_n]
        args += [self.alpha, self.beta] + ([self.tma_d] if self.tma_store else [])
        self.batched = batch is not None
        self.ldc_l, self.ldd_l = _I64(), _I64()
        if self.batched:  # the batched kernel's extra arguments (gemm_sm90.params_sm90)
            args += [_I32(batch[0]), self.ldc_l, self.ldd_l, _I32(batch[1])]
        self.args = args
        self.ptrs = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        self.launch_ptrs = ctypes.c_void_p(ctypes.addressof(self.ptrs))
        self.fn = self.cu = None
        self.stream, self.stream_box = None, None
        self.stream_of = _stream_getter()
        self.at, self.ptr = None, None

    def set_operands(self, C: Any, out: Any, alpha: float, beta: float) -> None:
        """Write C, D, their strides, the scalars and D's map (or the register path)."""
        self.at = None  # the fast path's record of what the boxes hold is void
        self.c.value, self.d.value = C.data_ptr(), out.data_ptr()
        sc, sd = C.stride(), out.stride()
        if self.batched:
            self.ldc_l.value, self.ldd_l.value = sc[0], sd[0]
            sc, sd = sc[1:], sd[1:]
        self.ldc_m.value, self.ldc_n.value = sc
        self.ldd_m.value, self.ldd_n.value = sd
        self.alpha.value, self.beta.value = alpha, beta
        if self.tma_store:
            from cutemma.kernels.dispatch_sm90 import NO_MAP, output_map

            m = output_map(self.plan, out) if beta == 0 else None
            self.map_d = NO_MAP if m is None else m  # keep the box alive while it is used
            self.ptrs[2] = ctypes.addressof(self.map_d)
            self.tma_d.value = 0 if m is None else 1

    def set_out(self, out: Any, alpha: float) -> None:
        """``set_operands(out, out, alpha, 0)`` with fewer tensor queries."""
        st = out.stride()
        if self.batched and st[0] == 0:
            raise ValueError("an output with batch stride 0")  # the checked path names it
        self.write_out(out.data_ptr(), st, out)
        self.at = None
        self.alpha.value = alpha

    def write_out(self, ptr: int, st: tuple, out: Any) -> None:
        """C = D = ``out`` (at ``ptr``, element strides ``st``), beta 0, D's map."""
        self.c.value = self.d.value = ptr
        if self.batched:
            self.ldc_l.value = self.ldd_l.value = st[0]
            st = st[1:]
        self.ldc_m.value, self.ldc_n.value = self.ldd_m.value, self.ldd_n.value = st
        self.beta.value = 0.0
        if self.tma_store:
            key = (ptr, st)
            m = self.d_maps.get(key, self)
            if m is self:  # first time at this address: encode (or refuse) its map
                from cutemma.kernels.dispatch_sm90 import output_map

                m = self.d_maps[key] = output_map(self.plan, out)
                if len(self.d_maps) > 64:
                    self.d_maps.pop(next(iter(self.d_maps)))
            if m is None:
                from cutemma.kernels.dispatch_sm90 import NO_MAP

                m = NO_MAP
                self.tma_d.value = 0
            else:
                self.tma_d.value = 1
            if m is not self.map_d:
                self.map_d = m
                self.ptrs[2] = ctypes.addressof(m)

    def launch(self) -> None:
        """``cuLaunchKernel`` on torch's current stream of the device."""
        stream = self.stream_of(self.device)
        if stream != self.stream:  # the pointer argument boxed once per stream
            self.stream, self.stream_box = stream, ctypes.c_void_p(stream)
        f = self.cu
        if f is None:
            f = self._resolve()
        if f:
            status = f(self.fn, self.grid, 1, 1, self.threads, 1, 1, self.shared,
                       self.stream_box, self.launch_ptrs, None)  # fmt: skip
            if status == 0:
                return
            if status != _CUDA_ERROR_INVALID_CONTEXT:
                from cutemma.errors import LaunchError

                raise LaunchError(f"launching {self.kern.name}: cuLaunchKernel returned {status}")
        # no current context on this thread (or no libcuda via ctypes): the checked path
        self.kern.launch(self.device, self.grid, stream, self.args)

    def _resolve(self) -> Any:
        """The first launch: the function handle (module loaded) and libcuda's entry."""
        f = _launcher()
        _, _, _, fn = self.kern._function(self.device)
        self.fn = ctypes.c_void_p(int(fn)) if f else fn
        self.grid, self.threads, self.shared = (
            int(self.grid),
            int(self.kern.threads),
            int(self.kern.shared),
        )
        self.cu = f
        return f


def fast_key(A: Any, B: Any, given: bool, config: Any) -> tuple:
    """The key under which a call's entries are kept: the operands' pointers, whether
    ``out`` was given, the config asked for (None: the built-in or tuned one).

    >>> class T:  # a stand-in: the key asks only for the pointer
    ...     def __init__(self, ptr): self.ptr = ptr
    ...     def data_ptr(self): return self.ptr
    >>> fast_key(T(0x100), T(0x200), True, None)
    (256, 512, True, None)
    """
    return (A.data_ptr(), B.data_ptr(), given, config)


def remember(A: Any, B: Any, out: Any, given: bool, config: Any, prepared: PreparedLaunch):
    """Keep ``prepared`` for later calls of ``cutemma.gemm(A, B, out=out if given, config=
    config)`` whose operands (and given out) match these in dtype, device, shape and
    strides. ``out`` is the call's output (a new one when not given): a hit makes new
    outputs like it. Example: :func:`find`."""
    global _empty
    if _empty is None and type(out).__module__.startswith("torch"):
        import torch

        _empty = torch.empty
    key = fast_key(A, B, given, config)
    entry = FastEntry(make_guard(A, B, out) if given else make_guard(A, B), prepared, out)
    old = FAST.pop(key, ())
    if len(FAST) >= FAST_MAX:
        FAST.pop(next(iter(FAST)))
    FAST[key] = (entry, *old[: FAST_PER_KEY - 1])


def find(A: Any, B: Any, out: Any, config: Any) -> FastEntry | None:
    """The entry a call ``gemm(A, B, out=out, config=config)`` would reuse, or None (what
    :func:`try_fast` looks up, for benchmarks and tests).

    >>> class T:  # a stand-in tensor: what the key and the guard ask
    ...     def __init__(self, ptr, shape, stride):
    ...         self.ptr, self.shape, self.st, self.dtype, self.device = ptr, shape, stride, "bf16", "cuda:0"
    ...     def data_ptr(self): return self.ptr
    ...     def stride(self): return self.st
    ...     def get_device(self): return 0
    >>> A, B, D = T(1 << 40, (64, 32), (32, 1)), T(2 << 40, (32, 16), (16, 1)), T(0, (64, 16), (16, 1))
    >>> remember(A, B, D, True, None, "a prepared launch")
    >>> find(A, B, D, None).prepared
    'a prepared launch'
    >>> A.st = (1, 64)  # restrided in place: the guard refuses it
    >>> find(A, B, D, None) is None
    True
    >>> _ = FAST.clear()
    """
    try:
        for e in FAST.get(fast_key(A, B, out is not None, config), ()):
            if e.check(A, B) if out is None else e.check(A, B, out):
                return e
    except (AttributeError, TypeError):
        pass
    return None


def try_fast(A: Any, B: Any, out: Any, alpha: float, config: Any) -> Any:
    """D = alpha * A @ B through a prepared launch, or None when this signature has none
    (the caller takes the checked path, which prepares one). Written flat: every line
    here is host time of each repeated call.

    >>> try_fast(object(), object(), None, 1.0, None) is None  # not tensors: not here
    True
    """
    try:
        entries = FAST.get((A.data_ptr(), B.data_ptr(), out is not None, config))
        if entries is None:
            return None
        if out is None:
            for e in entries:
                if e.check(A, B):
                    break
            else:
                return None
            out = _empty(e.shape, dtype=e.dtype, device=e.device)
        else:
            for e in entries:
                if e.check(A, B, out):
                    break
            else:
                return None
        ptr = out.data_ptr()
    except (AttributeError, TypeError):  # not tensors: the checked path names the error
        return None
    p = e.prepared
    if p.at is not e or p.ptr != ptr:  # out moved (or the boxes hold another call's)
        p.write_out(ptr, e.strides, out)
        p.at, p.ptr = e, ptr
    try:
        p.alpha.value = alpha
    except TypeError:  # e.g. alpha not a number: the checked path names it
        return None
    p.launch()
    return out
