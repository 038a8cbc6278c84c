"""The sm90 GEMM's prepared launch: its argument boxes (A's and B's tensor maps, D's map
swapped when ``out`` moves), reused by the repeated-call path (:mod:`.fastpath`).

>>> PreparedLaunch.__mro__[1].__name__
'BoxedLaunch'
"""

from __future__ import annotations

import ctypes
from typing import Any

from cutemma.errors import LaunchError
from cutemma.kernels.runtime.fastpath import _F32, _I32, _I64, _U64, BoxedLaunch, put_bounded
from cutemma.kernels.runtime.workspace import WorkspaceArgs
from cutemma.kernels.sm90.tma_maps import NO_MAP, output_map


class StreamKArgs:
    """A stream-K launch's extra argument boxes: the runtime's workspace boxes (partials,
    flags, epoch: :class:`~cutemma.kernels.runtime.workspace.WorkspaceArgs`, written at
    each launch) around the shared tile and sharing CTA counts (``work``: the policy's
    :func:`~cutemma.kernels.sm90.streamk.sk_split` of the call)."""

    __slots__ = ("boxes", "workspace")

    def __init__(self, block: tuple, grid: int, work: tuple[int, int]) -> None:
        (bm, bn, _), (sk_tiles, sk_ctas) = block, work
        w = self.workspace = WorkspaceArgs(grid, bm * bn)
        self.boxes = [w.ws, w.flags, _I32(sk_tiles), _I32(sk_ctas), w.epoch]


class PreparedLaunch(BoxedLaunch):
    """Argument boxes, the function handle and the grid of one sm90 GEMM signature.

    ``maps`` are the tensor-map boxes of A and B; with the TMA-store epilogue the third
    argument slot holds D's map, swapped per call (``out`` may move). ``batch`` (a batched
    kernel): ``(L, bat)``, the problem count and which operands have rank-3 maps; C's and
    D's batch strides are then written per call beside their row strides. The persistent
    grid is one-dimensional (the batch lives in the tile scheduler).
    """

    __slots__ = ("shape", "out_dtype", "tma_store", "plan", "c", "d", "ldc_m", "ldc_n",
                 "ldd_m", "ldd_n", "beta", "tma_d", "map_d", "d_maps", "batched", "ldc_l",
                 "ldd_l", "sk")  # fmt: skip

    def __init__(
        self,
        kern: Any,
        device: int,
        grid: int,
        maps: tuple,
        sizes: list,
        plan: Any,
        out_dtype: Any,
        shape: tuple,
        batch: tuple[int, int] | None = None,
        work: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(kern, device, grid)
        self.plan, self.shape, self.out_dtype = plan, shape, out_dtype
        self.tma_store = plan.tma_store
        self.c, self.d = _U64(), _U64()
        self.ldc_m, self.ldc_n, self.ldd_m, self.ldd_n = _I64(), _I64(), _I64(), _I64()
        self.beta, self.tma_d = _F32(), _I32()
        self.map_d = None
        self.d_maps: dict[tuple, Any] = {}  # (D pointer, strides) -> map box or None
        args = [*maps]
        if self.tma_store:
            args.append(NO_MAP)
        args += [self.c, self.d, *sizes, self.ldc_m, self.ldc_n, self.ldd_m, self.ldd_n]
        args += [self.alpha, self.beta] + ([self.tma_d] if self.tma_store else [])
        self.sk = None
        if plan.stream_k:  # the workspace's boxes, written by the runtime per launch
            if work is None:
                raise LaunchError(
                    "a stream-K launch needs its work: (tiles shared, CTAs sharing them), "
                    "the policy's sk_split of the call (Choice.work)"
                )
            self.sk = StreamKArgs(plan.stream_k, grid, work)
            self.work = self.sk.workspace
            args += self.sk.boxes
        self.batched = batch is not None
        self.ldc_l, self.ldd_l = _I64(), _I64()
        if self.batched:  # the batched kernel's extra arguments (gemm_sm90.params_sm90)
            args += [_I32(batch[0]), self.ldc_l, self.ldd_l, _I32(batch[1])]
        self.set_args(args)

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
            m = output_map(self.plan, out) if beta == 0 else None
            self.map_d = NO_MAP if m is None else m  # keep the box alive while it is used
            self.ptrs[2] = ctypes.addressof(self.map_d)
            self.tma_d.value = 0 if m is None else 1

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
                m = put_bounded(self.d_maps, key, output_map(self.plan, out), 65)
            if m is None:
                m = NO_MAP
                self.tma_d.value = 0
            else:
                self.tma_d.value = 1
            if m is not self.map_d:
                self.map_d = m
                self.ptrs[2] = ctypes.addressof(m)


class SwapLaunch:
    """The fast path's launch of a swapped call: ``write_out`` hands the inner (swapped)
    prepared launch D^T (strides exchanged); the record of what the boxes hold (``at``,
    ``ptr``) is the inner launch's own, which other calls of the swapped signature share.

    >>> class Inner:
    ...     alpha, at, ptr = "box", None, None
    ...     def write_out(self, ptr, st, out): self.got = (ptr, st, out)
    >>> class Out:
    ...     def t(self): return "D^T"
    >>> s = SwapLaunch(Inner()); s.write_out(0x100, (4096, 1), Out())
    >>> s.inner.got, s.alpha
    ((256, (1, 4096), 'D^T'), 'box')
    """

    __slots__ = ("inner", "alpha")

    def __init__(self, inner: Any) -> None:
        self.inner, self.alpha = inner, inner.alpha

    # what the boxes hold is the inner launch's record (other calls may write its boxes)
    at = property(lambda s: s.inner.at, lambda s, v: setattr(s.inner, "at", v))
    ptr = property(lambda s: s.inner.ptr, lambda s, v: setattr(s.inner, "ptr", v))

    def write_out(self, ptr: int, st: tuple, out: Any) -> None:
        """D = ``out`` at ``ptr`` with strides ``st``: the kernel writes D^T."""
        self.inner.write_out(ptr, (st[1], st[0]), out.t())

    def set_operands(self, C: Any, out: Any, alpha: float, beta: float) -> None:
        """C and D of the unswapped call: the kernel reads C^T and writes D^T."""
        self.inner.set_operands(C.t(), out.t(), alpha, beta)

    # the fused chain's boxes are the inner launch's (the chain as D^T's: epilogue.transposed)
    epi = property(lambda s: s.inner.epi)

    def set_epilogue(self, values: tuple) -> None:
        self.inner.set_epilogue(values)

    def launch(self) -> None:
        self.inner.launch()
