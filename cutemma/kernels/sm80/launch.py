"""The sm80 (``mma.sync``) GEMM's prepared launch: its 19 argument boxes in the order of
:func:`cutemma.kernels.sm80.source.params`, built once by the checked path and reused by the
repeated-call path (:mod:`.fastpath`), which rewrites only C's and D's pointers and strides
when ``out`` moved, and alpha.

>>> class T:  # a stand-in tensor: pointer and strides
...     def __init__(self, ptr): self.ptr = ptr
...     def data_ptr(self): return self.ptr
...     def stride(self, i=None): return (32, 1)
>>> p = Sm80Launch(None, 0, 4, 1, (0x100, 0x200), (64, 32, 16, 16, 16), (0, 0))
>>> p.set_operands(T(0x300), T(0x400), 2.0, 0.5)
>>> [a.value for a in p.args][:4], p.alpha.value, p.beta.value
([256, 512, 768, 1024], 2.0, 0.5)
"""

from __future__ import annotations

from typing import Any

from cutemma.kernels.runtime.fastpath import _F32, _I32, _I64, _U64, BoxedLaunch


class WholeAlpha(_F32):
    """alpha's box for int8 inputs: the checked path takes only whole numbers there, so a
    repeat may not write another value (a TypeError: :func:`.fastpath.try_fast` then
    declines, and the checked path names the error).

    >>> a = WholeAlpha(); a.value = 3; a.value
    3.0
    >>> a.value = 0.5
    Traceback (most recent call last):
    ...
    TypeError: int8 GEMM: alpha 0.5 is not a whole number
    """

    __slots__ = ()

    @property
    def value(self) -> float:
        return _F32.value.__get__(self)

    @value.setter
    def value(self, v: Any) -> None:
        try:
            whole = float(v) == int(v)
        except (ValueError, OverflowError):  # NaN, infinities
            whole = False
        if not whole:
            raise TypeError(f"int8 GEMM: alpha {v} is not a whole number")
        _F32.value.__set__(self, v)


class Sm80Launch(BoxedLaunch):
    """The sm80 kernel's parameters of one call signature, boxed: A, B, C, D pointers, M,
    N, K, lda, ldb, C's and D's strides, alpha, beta, and the four batch strides (grid y
    walks the ``problems``; a 2-D call has one problem and zero batch strides).

    ``ab``: A's and B's pointers; ``sizes``: (M, N, K, lda, ldb); ``batch_ab``: A's and B's
    batch strides (0 for a shared operand); ``whole_alpha``: int8 (alpha must stay whole).
    """

    __slots__ = ("problems", "c", "d", "ldc_m", "ldc_n", "ldd_m", "ldd_n", "beta",
                 "batch_c", "batch_d")  # fmt: skip

    def __init__(
        self,
        kern: Any,
        device: int,
        tiles: int,
        problems: int,
        ab: tuple[int, int],
        sizes: tuple[int, int, int, int, int],
        batch_ab: tuple[int, int],
        whole_alpha: bool = False,
        batched: bool = False,
    ) -> None:
        super().__init__(kern, device, tiles, problems)
        self.problems = problems if batched else None
        if whole_alpha:
            self.alpha = WholeAlpha()
        M, N, K, lda, ldb = sizes
        self.c, self.d = _U64(), _U64()
        self.ldc_m, self.ldc_n, self.ldd_m, self.ldd_n = _I64(), _I64(), _I64(), _I64()
        self.beta, self.batch_c, self.batch_d = _F32(), _I64(), _I64()
        self.set_args(
            [_U64(ab[0]), _U64(ab[1]), self.c, self.d, _I32(M), _I32(N), _I32(K), _I64(lda),
             _I64(ldb), self.ldc_m, self.ldc_n, self.ldd_m, self.ldd_n, self.alpha, self.beta,
             _I64(batch_ab[0]), _I64(batch_ab[1]), self.batch_c, self.batch_d]
        )  # fmt: skip

    def set_operands(self, C: Any, D: Any, alpha: float, beta: float) -> None:
        """Write C's and D's pointers, last two strides and batch strides (a batched call's C
        of batch 1, or broadcast, has batch stride 0), and the scalars."""
        self.at = None  # the fast path's record of what the boxes hold is void
        self.c.value, self.d.value = C.data_ptr(), D.data_ptr()
        self.ldc_m.value, self.ldc_n.value = C.stride()[-2:]
        self.ldd_m.value, self.ldd_n.value = D.stride()[-2:]
        self.alpha.value, self.beta.value = alpha, beta
        if self.problems is not None:
            self.batch_c.value = C.stride(0) if C.dim() == 3 and C.shape[0] > 1 else 0
            self.batch_d.value = D.stride(0)

    def write_out(self, ptr: int, st: tuple, out: Any) -> None:
        """C = D = ``out`` (at ``ptr``, element strides ``st``): what the checked path passes
        then (C's batch stride is D's, or 0 for a batch of one: dispatch's
        ``_batch_stride``). beta is 0 already: only calls without C are remembered, and
        each checked call boxes its own launch."""
        self.c.value = self.d.value = ptr
        if self.problems is not None:
            self.batch_d.value = st[0]
            self.batch_c.value = st[0] if self.problems > 1 else 0
            st = st[1:]
        self.ldc_m.value, self.ldc_n.value = self.ldd_m.value, self.ldd_n.value = st
