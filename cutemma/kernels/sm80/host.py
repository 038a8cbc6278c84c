"""The sm80 family's host side: a checked call and its :class:`~cutemma.kernels.policy.Choice`
become a prepared launch (:func:`prepare`: the kernel, whose text the runtime compiles at its
first launch, the operands read in the majors ldmatrix and the design need, the grid);
:func:`precompile` fills the disk cache.

>>> from cutemma.kernels.sm80.config import GemmConfig
>>> kernel_key(GemmConfig(), "bf16", "K", "N", "bf16", "bf16", True, True).name
'cutemma_gemm_sm80_bf16_KN_b128x128x32_w2x2_s4_obf16_cbf16_v8v8'
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

from cutemma.kernels.common.key import KernelKey
from cutemma.kernels.common.majors import major
from cutemma.kernels.common.types import ELEM_BYTES
from cutemma.kernels.epilogue import NO_EPILOGUE
from cutemma.kernels.runtime.driver import DriverKernel
from cutemma.kernels.sm80.config import GemmConfig
from cutemma.kernels.sm80.launch import Sm80Launch


def kernel_key(
    config: GemmConfig,
    dtype: str,
    a_major: str,
    b_major: str,
    out: str,
    c_type: str,
    vec_a: bool,
    vec_b: bool,
    design: Any = None,
    epilogue: Any = NO_EPILOGUE,
) -> KernelKey:
    """The :class:`~cutemma.kernels.common.key.KernelKey` of one sm80 variant (named by
    :func:`~cutemma.kernels.sm80.source.kernel_name`)."""
    from cutemma.kernels.sm80.source import kernel_name

    key = KernelKey("sm80", config, dtype, a_major, b_major, out, c_type, epilogue=epilogue,
                    vec_a=vec_a, vec_b=vec_b, design=design)  # fmt: skip
    return replace(key, name=kernel_name(*key.args()))


@cache
def compiled_kernel(key: KernelKey, arch: str) -> DriverKernel:
    """The kernel of one variant, made once per process: its plan's sizes and kernel text,
    which the runtime compiles (disk-cached by the text) at the kernel's first load.

    The default config takes 64 KiB of shared memory and 128 threads:

    >>> key = kernel_key(GemmConfig(), "bf16", "K", "N", "bf16", "bf16", True, True)
    >>> kern = compiled_kernel(key, "sm_90a")
    >>> kern.shared, kern.threads, kern.cubin is None
    (65536, 128, True)
    """
    from cutemma.kernels.sm80.plan import GemmPlan  # the generator: loaded when it compiles
    from cutemma.kernels.sm80.source import gemm_source

    plan = GemmPlan(key.config, key.dtype, key.a_major, key.b_major, key.design)
    text = gemm_source(*key.args())
    return DriverKernel(None, key.name, plan.shared_bytes, plan.threads, source=text, arch=arch)


def prepare(call: Any, choice: Any) -> tuple[Sm80Launch, bool]:
    """(the prepared launch of ``call`` with ``choice``'s config and design, whether a repeat
    may reuse it). Operands are read K-major for 8- and 32-bit types (ldmatrix), in the
    major a design's layouts fix, else as given (copied where neither mode is contiguous).

    >>> prepare.__name__
    'prepare'
    """
    A, B, M, N, K, batch = call.A, call.B, call.M, call.N, call.K, call.batch
    if ELEM_BYTES[call.dtype] != 2:  # ldmatrix reads 32/8-bit elements only K-major
        A, B, lda, ldb = _k_major(A, B, M, N, K)
        a_major = b_major = "K"
    else:
        A, a_major, lda = major(A, "A")
        B, b_major, ldb = major(B, "B")
    design = choice.design
    if call.design is not None:  # a design's layouts fix its operands' majors: copy to them
        A, a_major, lda = _to_major(A, "A", a_major, lda, call.design.major("A"))
        B, b_major, ldb = _to_major(B, "B", b_major, ldb, call.design.major("B"))
    sa, sb = (_batch_stride(A), _batch_stride(B)) if batch is not None else (0, 0)
    vec_a = _aligned(A, lda, M if a_major == "K" else K, sa)
    vec_b = _aligned(B, ldb, N if b_major == "K" else K, sb)
    epi = NO_EPILOGUE if call.epilogue is None else call.epilogue.epilogue
    config = choice.config
    kern = compiled_kernel(
        kernel_key(config, call.dtype, a_major, b_major, call.out_type, call.c_type, vec_a,
                   vec_b, design, epi),
        call.arch,
    )  # fmt: skip
    tiles = -(-M // config.block_m) * -(-N // config.block_n)
    p = Sm80Launch(kern, call.device, tiles, batch or 1, (A.data_ptr(), B.data_ptr()),
                   (M, N, K, lda, ldb), (sa, sb), call.dtype == "s8", batch is not None)  # fmt: skip
    if epi:
        p.add_epilogue(epi.params())
    keep = call.remember and call.C is None and A is call.A and B is call.B
    return p, keep


def _batch_stride(t: Any) -> int:
    """Elements between the problems of a 3-D operand; 0 (shared) for 2-D or a batch of 1."""
    return t.stride(0) if t.dim() == 3 and t.shape[0] > 1 else 0


def _k_major(A: Any, B: Any, M: int, N: int, K: int) -> tuple[Any, Any, int, int]:
    """A row-major, B column-major (copies where not): how ldmatrix reads 8- and 32-bit types."""
    A = A if A.stride(-1) == 1 or K == 1 else A.contiguous()
    B = B if B.stride(-2) == 1 or K == 1 else B.transpose(-1, -2).contiguous().transpose(-1, -2)
    return A, B, (A.stride(-2) if M > 1 else K), (B.stride(-1) if N > 1 else K)


def _aligned(t: Any, ld: int, extent_outer: int, batch_stride: int = 0) -> bool:
    """16-byte cp.async chunks stay aligned: pointer, leading and batch strides allow it."""
    vec = 16 // t.element_size()
    return (
        t.data_ptr() % 16 == 0 and (ld % vec == 0 or extent_outer == 1) and batch_stride % vec == 0
    )


def _compile_variant(key: tuple) -> str:
    from cutemma.cuda import compile
    from cutemma.kernels.sm80.source import gemm_source, kernel_name

    config, dtype, a_major, b_major, out, c_type, vec_a, vec_b, arch = key
    compile(gemm_source(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b), arch)
    return kernel_name(config, dtype, a_major, b_major, out, c_type, vec_a, vec_b)


def precompile(
    arch: str,
    configs: tuple[GemmConfig, ...],
    dtypes: tuple[str, ...] = ("f16", "bf16"),
    outs: tuple[str, ...] = ("same", "f32"),
    processes: int | None = None,
) -> int:
    """Fill the disk cache with every variant (majors, alignments, outputs) of ``configs``.

    Compiles in ``processes`` forked workers (call it before the process touches CUDA);
    returns the number of variants. Later ``gemm`` calls then only load cubins.

    One config and dtype: 4 major pairs x 4 alignments x 1 output (16 NVRTC compiles):

    >>> small = (GemmConfig(64, 64, 32),)
    >>> precompile("sm_90a", small, dtypes=("bf16",), outs=("same",))  # doctest: +SKIP
    16
    """
    import multiprocessing as mp
    from itertools import product

    keys = []
    for cfg, dt, (am, bm), (va, vb), out in product(
        configs,
        dtypes,
        [("K", "K"), ("K", "N"), ("M", "K"), ("M", "N")],
        [(True, True), (True, False), (False, True), (False, False)],
        outs,
    ):
        o = dt if out == "same" else out
        keys.append((cfg, dt, am, bm, o, o, va, vb, arch))
    with mp.get_context("fork").Pool(processes) as pool:
        pool.map(_compile_variant, keys, chunksize=1)
    return len(keys)


def _to_major(t: Any, which: str, major: str, ld: int, want: str | None) -> tuple:
    """(tensor, major, leading stride) with ``t`` read ``want``-major (copied when its
    strides do not allow it); a mode of extent 1 takes any stride (never stepped along).
    ``want`` None: as given."""
    if want is None:
        return t, major, ld
    row_major = (want == "K") == (which == "A")  # A K-major, B N-major: rows contiguous
    rows, cols = t.shape[-2:]
    s0, s1 = t.stride()[-2:]
    if not ((s1 == 1 or cols == 1) if row_major else (s0 == 1 or rows == 1)):
        t = t.contiguous() if row_major else t.transpose(-1, -2).contiguous().transpose(-1, -2)
        s0, s1 = t.stride()[-2:]
    if row_major:
        return t, want, s0 if rows > 1 else max(cols, 1)
    return t, want, s1 if cols > 1 else max(rows, 1)
