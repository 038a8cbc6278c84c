"""How the sm90 kernel reads a call's operands, and whether it can: each operand's view
(a shared batch as its one matrix), major and leading stride, under TMA's rules.

The rules: a 2-D or batched 3-D call on an sm_90a device, A and B of one sm90 dtype, 16-bit
types in either major and others K-major (A row-major, B column-major), what TMA reads
16-byte aligned (base pointers; leading strides and the batch stride of an operand with a
batch: the driver's numbers, ``TMA_RULES``, read here as plain ints; the tensor maps' own
argument checks are :func:`cutemma.copy.tma_map.stride_refusal`).

>>> class T:  # a (K, N) = (200, 1) column vector with contiguous rows, bf16
...     shape, element_size = (200, 1), staticmethod(lambda: 2)
...     def stride(self): return (1, 1)
>>> tma_major(T(), "B")[1:]
('K', 200)
"""

from __future__ import annotations

from typing import Any, NamedTuple

from cutemma.copy.tma_map import TMA_RULES
from cutemma.kernels.common.majors import NAMES, major
from cutemma.kernels.sm90.config import ATOMS_SM90


class Views(NamedTuple):
    """The operands as the sm90 kernel reads them: (tensor, major, leading stride) each;
    ``copied``: an operand had to be copied (neither of its modes contiguous, or not the
    major a design fixes), so a repeat of the call cannot reuse the launch (it would read
    the copy)."""

    A: Any
    a_major: str
    lda: int
    B: Any
    b_major: str
    ldb: int
    copied: bool = False


def shared_operand(t: Any) -> Any:
    """A 3-D operand every problem shares (a batch of 1 or a batch stride of 0) as its one
    matrix (a view); anything else unchanged. Its tensor map is then rank 2: a TMA stride
    cannot be 0."""
    return t[0] if t.dim() == 3 and (t.shape[0] <= 1 or t.stride(0) == 0) else t


def tma_major(t: Any, what: str) -> tuple[Any, str, int]:
    """(tensor, major, leading stride) as :func:`~cutemma.kernels.common.majors.major`
    reads them, except for a matrix with
    one row or one column whose other mode is contiguous: its mode of extent 1 has no stride
    that matters (TMA never steps along it), so that mode is the outer one and the leading
    stride is the contiguous extent rounded up to 16 bytes. A column vector B (N = 1) is
    then K-major, as float8 and tf32 need."""
    return tma_majors([(t, what)])[0]


def tma_majors(operands: list[tuple[Any, str]]) -> list[tuple[Any, str, int]]:
    """:func:`tma_major` of each (tensor, 'A' or 'B'), in order (the checked path asks for
    every operand of the call and of its swapped problem at once)."""
    read = []
    for t, what in operands:
        r, c = t.shape[-2:]
        s0, s1 = t.stride()[-2:]
        v = TMA_RULES.stride_multiple // t.element_size()
        inner, outer = NAMES[what]
        if c == 1 and r > 1 and s0 == 1:  # the rows' mode is contiguous
            read.append((t, (outer if what == "A" else inner), -(-r // v) * v))
        elif r == 1 and c > 1 and s1 == 1:  # the columns' mode is contiguous
            read.append((t, (inner if what == "A" else outer), -(-c // v) * v))
        else:
            read.append(major(t, what))
    return read


def to_major(t: Any, what: str, want: str, force: bool = False) -> Any:
    """``t`` with its last two modes in major ``want`` ('K', or 'M' for A / 'N' for B): the
    tensor itself where its strides already are (unless ``force``), else a copy whose
    leading stride is padded to TMA's 16-byte multiple (a view of the copy's first columns)."""
    rows_contiguous = (want == "K") == (what == "A")  # A K-major, B N-major: rows contiguous
    if not force and rows_contiguous and (t.stride(-1) == 1 or t.shape[-1] == 1):
        return t
    if not force and not rows_contiguous and (t.stride(-2) == 1 or t.shape[-2] == 1):
        return t
    s = t if rows_contiguous else t.transpose(-1, -2)  # the copy's rows are s's rows
    v = TMA_RULES.stride_multiple // t.element_size()
    cols = s.shape[-1]
    buf = s.new_empty((*s.shape[:-1], -(-cols // v) * v))[..., :cols]
    buf.copy_(s)
    return buf if rows_contiguous else buf.transpose(-1, -2)


def views(
    A: Any,
    B: Any,
    dtype: str,
    arch: str,
    want: tuple[str | None, str | None] = (None, None),
    pad: bool = False,
) -> Views | str:
    """The sm90 kernel's :class:`Views` of (A, B) (``dtype`` the kernel's element type), or
    why it cannot read them (a sentence). ``want``: the majors a design's GMMA atom fixes
    (:meth:`cutemma.kernels.GemmDesign.major`), None where the operand's own decides; an
    operand in another major is copied into it. ``pad``: an operand whose base or strides
    are not 16-byte aligned is copied into rows padded to 16 bytes rather than refused
    (what a design's call takes: its kernel is fixed).

    >>> views(None, None, "s8", "sm_90a")
    'dtypes of kernel type s8 (the sm90 kernel takes f16, bf16, tf32 and fp8)'
    """
    return operand_views(A, B, dtype, arch, want, pad)[0]


def _padded(t: Any, what: str) -> Any:
    """A copy of ``t`` in its own major (rows, where neither mode is contiguous) with rows
    padded to 16 bytes: what TMA reads whatever ``t``'s base and strides were."""
    rows = t.stride(-1) == 1 or t.stride(-2) != 1
    inner, outer = NAMES[what]
    own = (inner if what == "A" else outer) if rows else (outer if what == "A" else inner)
    return to_major(t, what, own, force=True)


def operand_views(
    A: Any,
    B: Any,
    dtype: str,
    arch: str,
    want: tuple[str | None, str | None] = (None, None),
    fixed: bool = False,
    swaps: bool = False,
) -> tuple[Views | str, Views | str | None]:
    """What the policy asks of the sm90 kernel, in one step: its :func:`views` of (A, B)
    (``fixed``: a design's kernel, which copies operands TMA cannot read into padded rows
    rather than refuse them), and, where ``swaps`` (a call that may run as D^T = B^T A^T),
    its views of (B^T, A^T), else None. The rules: the module doc; the majors are read once
    for all four operands (:func:`tma_majors`).

    >>> operand_views(None, None, "s8", "sm_90a")[1] is None
    True
    """
    if dtype not in ATOMS_SM90:
        why = f"dtypes of kernel type {dtype} (the sm90 kernel takes f16, bf16, tf32 and fp8)"
        return why, (why if swaps else None)
    if arch != "sm_90a":
        return "the device is not sm_90", ("the device is not sm_90" if swaps else None)
    problems = [(A, B, want, fixed)] + ([(B.t(), A.t(), (None, None), False)] if swaps else [])
    given = [_inputs(*p) for p in problems]
    read = tma_majors([(t, w) for *_, a_in, b_in in given for t, w in ((a_in, "A"), (b_in, "B"))])
    answers: list[Views | str] = []
    rules = TMA_RULES
    top = rules.max_stride.bit_length() - 1
    for i, (a_sh, b_sh, _, _) in enumerate(given):
        (a_t, a_major, lda), (b_t, b_major, ldb) = read[2 * i], read[2 * i + 1]
        why = None
        if not ATOMS_SM90[dtype][2] and (a_major, b_major) != ("K", "K"):
            why = "an 8- or 32-bit operand that is not K-major"
        eb = a_t.element_size()
        for which, t, ld in (("A", a_t, lda), ("B", b_t, ldb)):
            if why is None and t.data_ptr() % rules.global_align:
                why = (
                    f"operand {which} TMA cannot read: its base address is not "
                    f"{rules.global_align}-byte aligned"
                )
            # (a shared batch is a 2-D view by now: a 3-D operand's batch stride is a stride)
            strides = (("leading", ld, 1),) + ((("batch", t.stride(0), 2),) if t.dim() == 3 else ())
            for what, st, d in strides:  # the driver's stride rule, on TMA_RULES' numbers
                ok = st * eb % rules.stride_multiple == 0 and 0 < st * eb < rules.max_stride
                if why is None and not ok:
                    why = (
                        f"operand {which} TMA cannot read: its {what} stride {st} elements = "
                        f"{st * eb} bytes of dim {d} is not a positive multiple of "
                        f"{rules.stride_multiple} bytes below 2^{top}"
                    )
        copied = a_t is not a_sh or b_t is not b_sh
        answers.append(why or Views(a_t, a_major, lda, b_t, b_major, ldb, copied))
    return answers[0], (answers[1] if swaps else None)


def _inputs(A: Any, B: Any, want: tuple, pad: bool) -> tuple[Any, Any, Any, Any]:
    """(A, B as their shared matrices, A, B in the majors ``want`` fixes, padded where
    ``pad`` and TMA could not read them as they are)."""
    a_sh, b_sh = shared_operand(A), shared_operand(B)
    a_in = a_sh if want[0] is None else to_major(a_sh, "A", want[0])
    b_in = b_sh if want[1] is None else to_major(b_sh, "B", want[1])
    if pad:
        a_in, b_in = _aligned(a_in, "A"), _aligned(b_in, "B")
    return a_sh, b_sh, a_in, b_in


def _aligned(t: Any, what: str) -> Any:
    """``t``, or its copy with rows padded to 16 bytes where its base or a stride of a mode
    it steps along is not a 16-byte multiple."""
    eb, align = t.element_size(), TMA_RULES.stride_multiple
    steps = [s for s, n in zip(t.stride(), t.shape) if s != 1 and n > 1]
    if t.data_ptr() % TMA_RULES.global_align or any(s * eb % align for s in steps):
        return _padded(t, what)
    return t
