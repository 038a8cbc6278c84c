"""The repeated-call path of the sm90 GEMM: one prepared launch per argument signature.

A call of ``cutemma.gemm`` that ran the sm90 kernel leaves behind a :class:`PreparedLaunch`
keyed by what decided every choice of that call (the operands' pointers, shapes, strides
and dtypes, the output dtype, the config). A later call with the same key skips the checks,
the dispatch, the plan and the tensor-map encoding: it writes the pointers and scalars that
may change (C, D, their strides, alpha, beta, D's tensor map) into argument boxes that
already exist and calls ``cuLaunchKernel`` of libcuda directly (ctypes), on torch's current
stream. Tensor maps depend only on (pointer, dims, strides, box), all in the key, so a new
tensor at a freed tensor's address reuses its map correctly.

>>> fast_key_fields()
('A.data_ptr', 'B.data_ptr', 'A.shape', 'B.shape', 'A.stride', 'B.stride', 'A.dtype', 'B.dtype', 'out.dtype', 'config')
"""

from __future__ import annotations

import ctypes
from typing import Any

_I32, _I64, _F32, _U64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_float, ctypes.c_uint64
FAST: dict[tuple, PreparedLaunch] = {}
FAST_MAX = 256
_CUDA_ERROR_INVALID_CONTEXT = 201
_libcuda: Any = None


def fast_key_fields() -> tuple[str, ...]:
    """What the key of a prepared launch holds (documentation and a test's check)."""
    return ("A.data_ptr", "B.data_ptr", "A.shape", "B.shape", "A.stride", "B.stride",
            "A.dtype", "B.dtype", "out.dtype", "config")  # fmt: skip


def _launcher():
    """libcuda's cuLaunchKernel through ctypes (about 1 us less per call than the bindings)."""
    global _libcuda
    if _libcuda is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            f = lib.cuLaunchKernel
            f.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
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


class PreparedLaunch:
    """Argument boxes, the function handle and the grid of one sm90 GEMM signature.

    ``maps`` are the tensor-map boxes of A and B; with the TMA-store epilogue the third
    argument slot holds D's map, swapped per call (``out`` may move). ``batch`` (a batched
    kernel): ``(L, bat)``, the problem count and which operands have rank-3 maps; C's and
    D's batch strides are then written per call beside their row strides.
    """

    __slots__ = ("kern", "device", "grid", "shape", "out_dtype", "tma_store", "plan", "args",
                 "ptrs", "c", "d", "ldc_m", "ldc_n", "ldd_m", "ldd_n", "alpha", "beta",
                 "tma_d", "map_d", "fn", "stream_of", "launch_ptrs", "d_maps", "batched",
                 "ldc_l", "ldd_l")  # fmt: skip

    def __init__(self, kern, device, grid, maps, sizes, plan, out_dtype, shape, batch=None):
        self.kern, self.device, self.grid, self.plan = kern, device, grid, plan
        self.shape, self.out_dtype, self.tma_store = shape, out_dtype, plan.tma_store
        self.c, self.d = _U64(), _U64()
        self.ldc_m, self.ldc_n, self.ldd_m, self.ldd_n = _I64(), _I64(), _I64(), _I64()
        self.alpha, self.beta, self.tma_d = _F32(), _F32(), _I32()
        self.map_d = None
        self.d_maps: dict[tuple, Any] = {}  # (D pointer, row stride) -> map box or None
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
        self.launch_ptrs = ctypes.addressof(self.ptrs)
        self.fn = None
        self.stream_of = _stream_getter()

    def set_operands(self, C: Any, out: Any, alpha: float, beta: float) -> None:
        """Write C, D, their strides, the scalars and D's map (or the register path)."""
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
        """``set_operands(out, out, alpha, 0)`` with fewer tensor queries (the fast path)."""
        ptr, st = out.data_ptr(), out.stride()
        self.c.value = self.d.value = ptr
        if self.batched:
            self.ldc_l.value = self.ldd_l.value = st[0]
            if st[0] == 0:
                raise ValueError("an output with batch stride 0")  # the checked path names it
            self.ldc_m.value, self.ldc_n.value = self.ldd_m.value, self.ldd_n.value = st[1:]
        else:
            self.ldc_m.value, self.ldc_n.value = self.ldd_m.value, self.ldd_n.value = st
        self.alpha.value, self.beta.value = alpha, 0.0
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
        f = _launcher()
        if self.fn is None:
            driver, _, _, fn = self.kern._function(self.device)
            self.fn = int(fn) if f else fn
        if f:
            k = self.kern
            status = f(self.fn, self.grid, 1, 1, k.threads, 1, 1, k.shared, stream,
                       self.launch_ptrs, None)  # fmt: skip
            if status == 0:
                return
            if status != _CUDA_ERROR_INVALID_CONTEXT:
                from cutemma.errors import LaunchError

                raise LaunchError(f"launching {k.name}: cuLaunchKernel returned {status}")
        # no current context on this thread (or no libcuda via ctypes): the checked path
        self.kern.launch(self.device, self.grid, stream, self.args)


def remember(key: tuple, prepared: PreparedLaunch) -> None:
    """Keep ``prepared`` for later calls with ``key`` (oldest dropped past FAST_MAX)."""
    if len(FAST) >= FAST_MAX:
        FAST.pop(next(iter(FAST)))
    FAST[key] = prepared


def fast_key(A: Any, B: Any, out_dtype: Any, config: Any) -> tuple:
    return (A.data_ptr(), B.data_ptr(), A.shape, B.shape, A.stride(), B.stride(), A.dtype,
            B.dtype, out_dtype, config)  # fmt: skip


def try_fast(A: Any, B: Any, out: Any, alpha: float, config: Any) -> Any:
    """D = alpha * A @ B through a prepared launch, or None when this signature has none
    (the caller takes the checked path, which prepares one)."""
    try:
        key = fast_key(A, B, None if out is None else out.dtype, config)
        hit = FAST.get(key)
    except (AttributeError, TypeError):  # not tensors: the checked path names the error
        return None
    if hit is None:
        return None
    if out is None:
        import torch

        out = torch.empty(hit.shape, dtype=hit.out_dtype, device=A.device)
    elif out.shape != hit.shape or out.get_device() != hit.device:
        return None  # the checked path names what is wrong (out's dtype is in the key)
    try:
        hit.set_out(out, alpha)
    except (TypeError, ValueError):  # e.g. alpha not a number: the checked path names it
        return None
    hit.launch()
    return out
