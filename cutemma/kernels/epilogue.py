"""Fused GEMM epilogues as data, shared by both kernel families (sm80 mma.sync, sm90 wgmma).

An epilogue is a short list of op names applied, in order, to each f32 accumulator value
after alpha and C and before the output cast::

    D = cast(op_k(... op_1(alpha * acc + beta * C) ...))

so ``cutemma.gemm(A, B, epilogue=("bias", "gelu"), bias=b)`` is ``gelu(A @ B + b)`` (b one
value per column, torch.nn.Linear's bias). Scales come first (fp8 dequantisation scales the
product), a bias before the activation, at most one activation; a residual may stand
before or after the activation (``relu(x + r)`` and ``r + relu(x)`` are both layers
people build); ``cast`` (the output cast, always applied) may only be last.

Each op is one row of :data:`OPS`: its name, the call keyword of the tensor it needs and
that tensor's shape rule (a vector of M or N values, or an (M, N) matrix), its CUDA C++
per-element expression (``{x}`` the f32 value, ``{v}`` the tensor's value at the
element's (m, n), in f32) and its torch reference. :func:`validate_ops` checks a list of
names (what a design's ``epilogue`` field holds); :func:`bind` checks a call's tensors
against it and gives the :class:`Epilogue` a family renders (its kernel parameters,
device helpers and the expression of one element at coordinates the family's own
partition_C gives) and the values to launch with.

>>> validate_ops(("scale_row", "scale_col", "bias", "gelu_tanh"))
('scale_row', 'scale_col', 'bias', 'gelu_tanh')
>>> Epilogue(("bias", "relu"), ("bf16", "")).apply("v", "m", "n")
'fmaxf((v) + bf16_to_f32(__ldg(&epl_bias[n])), 0.f)'
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cutemma.errors import DesignError, LaunchError
from cutemma.kernels.common.types import OUT_BYTES, OUT_TYPES

if TYPE_CHECKING:  # the code text (cuda.source) loads where a kernel is generated, not with a
    # cached kernel's call
    from cutemma.cuda.source import Param

# the tensor dtypes an epilogue argument may have (torch name -> kernel element type)
ARG_DTYPES = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}
# an epilogue tensor's element types: the output types that are floats
_C_TYPES = {d: OUT_TYPES[d] for d in ("f32", "bf16", "f16")}
_ORDER = ("scale", "bias", "activation")  # kinds that must come in this order


def _torch() -> Any:
    import torch

    return torch


def _gelu_erf(x: Any, _: Any) -> Any:
    return _torch().nn.functional.gelu(x)


def _gelu_tanh(x: Any, _: Any) -> Any:
    return _torch().nn.functional.gelu(x, approximate="tanh")


@dataclass(frozen=True)
class EpilogueOp:
    """One epilogue op: ``kind`` orders it (scale, bias, activation, residual, cast),
    ``arg`` is the keyword of the tensor it reads (None: none) and ``shape`` that tensor's
    rule ('M': one value per row, 'N': per column, 'MN': a matrix like D); ``cuda`` the
    f32 expression of one element, ``{x}`` the value so far and ``{v}`` the tensor's
    value at the element's (m, n); ``ref`` the torch reference of (value, tensor)."""

    name: str
    kind: str
    arg: str | None
    shape: str | None
    cuda: str
    ref: Callable[[Any, Any], Any]
    doc: str


OPS: dict[str, EpilogueOp] = {
    op.name: op
    for op in (
        EpilogueOp("scale_row", "scale", "scale_row", "M", "({x}) * {v}", lambda x, s: x * s[:, None],
                   "x * scale_row[m] (per-row dequantisation, e.g. fp8 A's row scales)"),
        EpilogueOp("scale_col", "scale", "scale_col", "N", "({x}) * {v}", lambda x, s: x * s[None, :],
                   "x * scale_col[n] (per-column dequantisation, e.g. fp8 B's column scales)"),
        EpilogueOp("bias", "bias", "bias", "N", "({x}) + {v}", lambda x, b: x + b[None, :],
                   "x + bias[n] (one value per output column: torch.nn.Linear's bias)"),
        EpilogueOp("bias_row", "bias", "bias_row", "M", "({x}) + {v}", lambda x, b: x + b[:, None],
                   "x + bias_row[m] (one value per output row)"),
        EpilogueOp("relu", "activation", None, None, "fmaxf({x}, 0.f)", lambda x, _: x.clamp_min(0),
                   "max(x, 0)"),
        EpilogueOp("gelu", "activation", None, None, "epi_gelu_erf({x})", _gelu_erf,
                   "x * Phi(x), Phi through erf (torch.nn.functional.gelu's default)"),
        EpilogueOp("gelu_tanh", "activation", None, None, "epi_gelu_tanh({x})", _gelu_tanh,
                   "GELU's tanh approximation (gelu(approximate='tanh'), cuBLASLt's GELU)"),
        EpilogueOp("silu", "activation", None, None, "epi_silu({x})", lambda x, _: x * x.sigmoid(),
                   "x * sigmoid(x)"),
        EpilogueOp("residual", "residual", "residual", "MN", "({x}) + {v}", lambda x, r: x + r,
                   "x + residual[m, n] (shaped like D; rows not contiguous are copied first)"),
        EpilogueOp("cast", "cast", None, None, "{x}", lambda x, _: x,
                   "the output cast (always applied last; naming it is optional)"),
    )
}  # fmt: skip

# device functions of the activations (NVRTC provides erff/__expf/__frcp_rn without headers);
# constants: sqrt(1/2) and sqrt(2/pi) (GELU, Hendrycks & Gimpel 2016). gelu_tanh and silu use
# the hardware approximations (PTX ISA tanh.approx.f32, ex2.approx behind __expf): their
# errors (~2^-11 relative) are far below a bf16 output's rounding; precise tanhf made the
# fused bias + gelu_tanh epilogue cost ~10% of a 4096^2 x 4096 GEMM (run 1)
_HELPERS = {
    "gelu": "__device__ __forceinline__ float epi_gelu_erf(float x) "
    "{ return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }",
    # u = sqrt(2/pi) (x + 0.044715 x^3) as x (a + b x^2), and 0.5 x (1 + t) as h + h t with
    # h = x / 2: 6 instructions a value against 8 (the epilogue is most of a short-K call)
    "gelu_tanh": "__device__ __forceinline__ float epi_gelu_tanh(float x) {\n"
    "  float t, u = x * fmaf(0.035677408136300125f, x * x, 0.79788456080286536f), h = 0.5f * x;\n"
    '  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));  // MUFU.TANH: rel. error 2^-11\n'
    "  return fmaf(h, t, h);\n}",
    # x / (1 + e^-x) with the fast exponential and the hardware reciprocal (PTX ISA
    # rcp.approx.ftz.f32, MUFU.RCP: 1 ulp; rcp(+inf) = +0, so -0 for x << 0). The IEEE
    # reciprocal (__frcp_rn) called a slow-path subroutine per value: a fused
    # scale_col + bias + silu ran 2-3.8x the plain call at short K
    # (bench/results/raw/epilogue-cost-h200.json)
    "silu": "__device__ __forceinline__ float epi_silu(float x) {\n"
    "  float r;\n"
    '  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.f + __expf(-x)));  // MUFU.RCP\n'
    "  return x * r;\n}",
}
# the call keywords of every op's tensor, in OPS order (what cutemma.gemm accepts)
ARGS = tuple(dict.fromkeys(op.arg for op in OPS.values() if op.arg))


def _unknown(name: Any) -> DesignError:
    near = difflib.get_close_matches(str(name), OPS, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return DesignError(f"epilogue: unknown op {name!r}{hint}; the ops are {', '.join(OPS)}")


_VALID: dict[tuple, tuple] = {}  # op lists already checked (a call's host cost)


def validate_ops(names: Any) -> tuple[str, ...]:
    """The epilogue's op names as a tuple, checked: known ops, each at most once, scales
    before a bias before the activation, at most one activation, ``cast`` only last.
    A single name is a list of one; None or () is no epilogue. Raises DesignError.

    >>> validate_ops("relu"), validate_ops(None)
    (('relu',), ())
    >>> validate_ops(("gelu", "bias"))
    Traceback (most recent call last):
    ...
    cutemma.errors.DesignError: epilogue ('gelu', 'bias'): bias 'bias' after the activation 'gelu'; put scales first, then the bias, then the activation, e.g. ('bias', 'gelu')
    """
    if names is None:
        return ()
    if isinstance(names, str):
        names = (names,)
    if isinstance(names, set | frozenset | dict):  # no order of their own
        raise DesignError(
            f"epilogue: a {type(names).__name__} of ops has no order (the ops apply in order, "
            "and a set's follows the process's hash seed); give a tuple or list, e.g. "
            "('bias', 'gelu')"
        )
    try:
        done = _VALID.get(names)
    except TypeError:  # unhashable: checked below
        done = None
    if done is not None:
        return done
    try:
        names = tuple(names)
    except TypeError:
        raise DesignError(
            f"epilogue: {names!r} is not a list of op names; give e.g. ('bias', 'gelu')"
        ) from None
    for n in names:
        if not isinstance(n, str) or n not in OPS:
            raise _unknown(n)
    where = f"epilogue {names}"
    seen: dict[str, str] = {}  # kind -> the first op of that kind
    for i, n in enumerate(names):
        op = OPS[n]
        if n in names[:i]:
            raise DesignError(f"{where}: {n!r} appears twice; each op at most once")
        if op.kind == "cast" and i != len(names) - 1:
            raise DesignError(f"{where}: 'cast' must be last (it writes the output type)")
        if op.kind == "activation" and "activation" in seen:
            raise DesignError(
                f"{where}: two activations ({seen['activation']!r}, {n!r}); at most one"
            )
        if op.kind in _ORDER:
            later = [k for k in _ORDER[_ORDER.index(op.kind) + 1 :] if k in seen]
            if later or (op.kind == "scale" and "residual" in seen):
                other = seen[later[0]] if later else seen["residual"]
                kind = later[0] if later else "residual"
                raise DesignError(
                    f"{where}: {op.kind} {n!r} after the {kind} {other!r}; put scales first, "
                    "then the bias, then the activation, e.g. ('bias', 'gelu')"
                )
        seen.setdefault(op.kind, n)
    if isinstance(names, tuple) and len(_VALID) < 4096:
        _VALID[names] = names
    return names


def design_check(names: Any, family: str = "") -> str | None:
    """Why a design's ``epilogue`` field cannot run, or None: the rule :func:`validate_ops`
    applies, as the one-line refusal a design's validation reports (both families, sm80 and
    sm90, render every op; ``family`` is accepted for the design's rule table). The design
    module imports this (this module imports of the kernels only the leaf table of element
    types: no circle).

    >>> design_check(("bias", "gelu")) is None, design_check(("gelu", "gelu"), "sm90")
    (True, "epilogue ('gelu', 'gelu'): 'gelu' appears twice; each op at most once")
    """
    try:
        validate_ops(names)
    except DesignError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class Epilogue:
    """A validated op chain with its tensors' element types (``dtypes[i]``: 'f32', 'bf16'
    or 'f16' for an op with a tensor, '' without): what a family renders. Hashable (a
    kernel cache key); false when empty, and then a family's source is what it was
    without epilogues.

    >>> e = Epilogue(("scale_row", "bias", "silu"), ("f32", "bf16", ""))
    >>> e.suffix
    '_ep_scale_rowf32_biasbf16_silu'
    >>> [p.declaration for p in e.params()]
    ['const float* __restrict__ ep_scale_row', 'const uint16_t* __restrict__ ep_bias']
    """

    ops: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for what, v in (("ops", self.ops), ("dtypes", self.dtypes)):
            if not isinstance(v, tuple) or not all(isinstance(x, str) for x in v):
                raise DesignError(
                    f"Epilogue: {what}={v!r} must be a tuple of strings (it is a cache key); "
                    "e.g. Epilogue(('bias', 'gelu'), ('f32', ''))"
                )
        validate_ops(self.ops)
        want = tuple(bool(OPS[n].arg) for n in self.ops)
        got = tuple(bool(d) for d in self.dtypes)
        if want != got or any(d and d not in _C_TYPES for d in self.dtypes):
            raise DesignError(
                f"Epilogue{self.ops}: dtypes {self.dtypes} must give one of "
                f"{', '.join(_C_TYPES)} for each op with a tensor and '' for the others"
            )

    def __bool__(self) -> bool:
        return bool(self.ops)

    @property
    def suffix(self) -> str:
        """What the op chain adds to a kernel's name ('' for none)."""
        chain = "".join(f"_{n}{d}" for n, d in zip(self.ops, self.dtypes))
        return "_ep" + chain if chain else ""

    def params(self) -> list[Param]:
        """The extra kernel parameters, after the family's own: a pointer per tensor
        (vectors ``__restrict__``: read-only; a residual may be D itself), and a
        residual's row stride (its rows contiguous: a general n stride made ptxas keep a
        64-bit product per column of the tile in registers, and spill)."""
        from cutemma.cuda.source import Param

        out = []
        for n, d in zip(self.ops, self.dtypes):
            op = OPS[n]
            if op.arg is None:
                continue
            out.append(Param(f"const {_C_TYPES[d]}*", f"ep_{op.arg}", restrict=op.shape != "MN"))
            if op.shape == "MN":
                out.append(Param("long long", f"ep_{op.arg}_ld"))
        return out

    def setup(self) -> str:
        """Lines a family puts at the start of each tile's epilogue: per-tile copies of the
        tensor pointers and strides (``epl_...``) that :meth:`apply` reads, passed through an
        empty asm so the compiler cannot hoist address arithmetic out of a persistent
        kernel's tile loop (it kept one 64-bit address per row of the tile live across the
        mainloop and spilled them).

        >>> print(Epilogue(("residual",), ("f32",)).setup())
        const float* epl_residual = ep_residual; asm volatile("" : "+l"(epl_residual));
        long long epl_residual_ld = ep_residual_ld; asm volatile("" : "+l"(epl_residual_ld));
        """
        lines = []
        for p in self.params():
            local = "epl_" + p.name[3:]
            lines.append(f'{p.ctype} {local} = {p.name}; asm volatile("" : "+l"({local}));')
        return "\n".join(lines)

    @property
    def reads_vectors(self) -> bool:
        """Whether an op reads a row or column vector (``shape`` 'M' or 'N').

        >>> Epilogue(("bias", "relu"), ("f32", "")).reads_vectors, Epilogue(("relu",), ("",)).reads_vectors
        (True, False)
        """
        return bool(self._vectors())

    def _vectors(self) -> list[tuple[str, str, str]]:
        """(tensor keyword, element type, 'M' or 'N') of each row or column vector."""
        return [(OPS[n].arg, d, OPS[n].shape) for n, d in zip(self.ops, self.dtypes)
                if OPS[n].shape in ("M", "N")]  # fmt: skip

    def prefetch(self, m: str, n: str, rows: int, cols: int, tid: str) -> str:
        """Lines a family puts at the start of a tile's mainloop: threads ``tid`` < the
        128-byte lines a vector spans over the tile (``rows`` x ``cols`` from row ``m``,
        column ``n``) each ask L1 for one, clamped into the vector, so that the epilogue's
        reads after the mainloop find them there. A column vector cost 10-30% of a short-K
        call, a row vector 1-4% (raw/epilogue-cost-h200.json); with this alone the epilogue
        sweep's cooperative fused calls ran 1.053 of the plain call against 1.063
        (raw/epilogue-sweep-h200-2581065801-prefetch.json).

        >>> print(Epilogue(("bias",), ("bf16",)).prefetch("m0", "n0", 128, 256, "tid"))
        if (tid < 5) prefetch_l1(ep_bias + min(n0 + tid * 64, N - 1));
        """
        lines = []
        for arg, d, shape in self._vectors():
            first, extent, count = (m, "M", rows) if shape == "M" else (n, "N", cols)
            per_line = 128 // OUT_BYTES[d]
            lines.append(
                f"if ({tid} < {-(-count // per_line) + 1}) prefetch_l1(ep_{arg} + "
                f"min({first} + {tid} * {per_line}, {extent} - 1));"
            )
        return "\n".join(lines)

    def helpers(self) -> str:
        """Device functions the chain's activations call (file scope, before the kernel)."""
        return "".join(_HELPERS[n] + "\n" for n in self.ops if n in _HELPERS)

    def apply(self, x: str, m: str, n: str, read: dict[str, str] | None = None) -> str:
        """The f32 expression of one element: value ``x`` through every op, the tensors
        read at (``m``, ``n``), C expressions of the element's coordinates that the family
        takes from its partition_C, the tensors through the locals of :meth:`setup`.
        Vectors are read through the read-only cache (``__ldg``): a warp's lanes read a
        handful of neighbouring values, which the cache serves once. ``read``: a vector's
        value as an f32 expression the family computed, by tensor keyword.

        >>> Epilogue(("residual", "gelu_tanh"), ("f32", "")).apply("a", "m", "n")
        'epi_gelu_tanh((a) + epl_residual[(long long)(m) * epl_residual_ld + (n)])'
        >>> Epilogue(("bias",), ("bf16",)).apply("a", "m", "n", {"bias": "b0"})
        '(a) + b0'
        """
        from cutemma.cuda.source import TO_F32

        for name, d in zip(self.ops, self.dtypes):
            op = OPS[name]
            v = ""
            if op.shape == "MN":
                a = op.arg
                v = f"epl_{a}[(long long)({m}) * epl_{a}_ld + ({n})]"
                v = TO_F32[d].format(x=v)
            elif read and op.arg in read:
                v = read[op.arg]
            elif op.shape:
                v = TO_F32[d].format(x=f"__ldg(&epl_{op.arg}[{m if op.shape == 'M' else n}])")
            x = op.cuda.format(x=x, v=v)
        return x

    def column_pairs(self) -> list[tuple[str, str]]:
        """(tensor keyword, element type) of each 16-bit column vector: a family may read two
        neighbouring columns' values as one 32-bit word (:meth:`pair_reads`).

        >>> Epilogue(("scale_col", "bias"), ("f32", "bf16")).column_pairs()
        [('bias', 'bf16')]
        """
        return [(arg, d) for arg, d, shape in self._vectors() if shape == "N" and d != "f32"]

    def pairs_flag(self) -> str:
        """A kernel line that sets ``epi_pairs``: whether every :meth:`column_pairs` vector
        may be read a word (two columns) at a time, its address 4-byte aligned and N even
        (a word at an even column then never crosses the vector's end).

        >>> print(Epilogue(("bias",), ("bf16",)).pairs_flag())
        const bool epi_pairs = N % 2 == 0 && (((unsigned long long)epl_bias) & 3) == 0;
        """
        ptrs = " | ".join(f"(unsigned long long)epl_{arg}" for arg, _ in self.column_pairs())
        return f"const bool epi_pairs = N % 2 == 0 && (({ptrs}) & 3) == 0;"

    def pair_reads(self, col: str, named: set[str], tag: str) -> tuple[list[str], dict, dict]:
        """For the values at columns ``col`` (even: :meth:`pairs_flag` holds) and ``col`` + 1:
        the lines that read each :meth:`column_pairs` vector's word there once (declared
        under ``tag``, kept in ``named``; clamped to the last word, a word past N read for
        values never stored), and :meth:`apply`'s ``read`` of each of the two columns.

        >>> lines, lo, hi = Epilogue(("bias",), ("bf16",)).pair_reads("n0 + 8", set(), "8")
        >>> lines[0]
        'const uint32_t epw_bias_8 = __ldg(reinterpret_cast<const uint32_t*>(epl_bias + min(n0 + 8, N - 2)));'
        >>> lo, hi
        ({'bias': 'bf16_to_f32((uint16_t)(epw_bias_8))'}, {'bias': 'bf16_to_f32((uint16_t)(epw_bias_8 >> 16))'})
        """
        from cutemma.cuda.source import TO_F32

        lines, lo, hi = [], {}, {}
        for arg, d in self.column_pairs():
            word = f"epw_{arg}_{tag}"
            if word not in named:
                named.add(word)
                lines.append(
                    f"const uint32_t {word} = __ldg(reinterpret_cast<const uint32_t*>"
                    f"(epl_{arg} + min({col}, N - 2)));"
                )
            lo[arg] = TO_F32[d].format(x=f"(uint16_t)({word})")
            hi[arg] = TO_F32[d].format(x=f"(uint16_t)({word} >> 16)")
        return lines, lo, hi


NO_EPILOGUE = Epilogue()


def _shape_of(op: EpilogueOp, M: int, N: int) -> tuple[int, ...]:
    return {"M": (M,), "N": (N,), "MN": (M, N)}[op.shape]


@dataclass(frozen=True)
class FastRecord:
    """What the repeated-call path keeps of an epilogue call (kernels/runtime/fastpath.py):
    the op list as given (part of the key), which of the call's tensor keywords (in
    :data:`ARGS` order) were None, the given tensors in that order (for the guard), and
    per pointer parameter of :meth:`Epilogue.params` ``(its index, its tensor's index)``."""

    names: Any
    absent: tuple[bool, ...]
    tensors: tuple
    slots: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Bound:
    """An epilogue bound to one call: the :class:`Epilogue` to compile and, per kernel
    parameter of :meth:`Epilogue.params` (``params``), the tensor (kept alive until the
    launch) or row stride to launch with (``args``); ``values`` the same as integers
    (pointers); ``twin``: the chain as a swapped kernel runs it (:func:`transposed`), bound
    with the call, None where it has none (a residual, a batch)."""

    epilogue: Epilogue
    args: tuple
    fast: FastRecord | None = None
    params: tuple = ()  # the kernel parameters of Epilogue.params(), computed here once
    twin: Bound | None = None

    @property
    def tensors(self) -> tuple:
        """The tensors the kernel reads, in parameter order."""
        return tuple(a for a in self.args if not isinstance(a, int))

    @property
    def named(self) -> dict[str, Any]:
        """The tensors by call keyword (what :func:`reference` takes)."""
        return dict(zip((OPS[n].arg for n in self.epilogue.ops if OPS[n].arg), self.tensors))

    @property
    def values(self) -> tuple[int, ...]:
        """The launch values: each tensor's data pointer, each stride as it is."""
        return tuple(a if isinstance(a, int) else a.data_ptr() for a in self.args)


def check_call(names: Any, tensors: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The checks of a call's epilogue that need no operands (``cutemma.gemm`` makes them
    before it looks at A and B): the op list, and every tensor an op reads given, none
    other, each a tensor. Returns the ops and the given tensors.

    >>> check_call(("bias",), {"bias": [0.0] * 8})
    Traceback (most recent call last):
    ...
    cutemma.errors.LaunchError: gemm epilogue: bias=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0] is a list; give a torch tensor on the operands' device
    """
    ops = validate_ops(names)
    if not isinstance(tensors, dict) or not all(isinstance(k, str) for k in tensors):
        raise LaunchError(
            f"gemm epilogue: tensors={tensors!r:.80} must be a dict of keyword -> tensor, its "
            f"keywords among {', '.join(ARGS)}"
        )
    given = {k: v for k, v in tensors.items() if v is not None}
    needed = {OPS[n].arg: n for n in ops if OPS[n].arg}
    unknown = sorted(set(given) - set(ARGS))
    if unknown:
        raise LaunchError(
            f"gemm epilogue: {', '.join(unknown)} is no epilogue tensor; the ops read "
            f"{', '.join(ARGS)}"
        )
    extra = sorted(set(given) - set(needed))
    if extra:
        ops_of = {op.arg: name for name, op in OPS.items() if op.arg}
        raise LaunchError(
            f"gemm epilogue: {', '.join(extra)} given but no op of epilogue={ops} reads it; "
            f"add its op ({', '.join(ops_of[a] for a in extra)}) to the epilogue or drop the "
            "argument"
        )
    missing = [f"{a}= (op {n!r})" for a, n in needed.items() if a not in given]
    if missing:
        raise LaunchError(f"gemm epilogue: missing {', '.join(missing)}; pass the tensor")
    for k, t in given.items():
        if not hasattr(t, "data_ptr"):
            raise LaunchError(
                f"gemm epilogue: {k}={t!r} is a {type(t).__name__}; give a torch tensor on the "
                "operands' device"
            )
    return ops, given


def bind(
    names: Any,
    tensors: dict[str, Any],
    M: int,
    N: int,
    device: Any,
    batched: bool = False,
    int8: bool = False,
    twin: bool = True,
) -> Bound:
    """Check a call's epilogue tensors against its ops: every tensor an op needs is given
    and no other, each a torch tensor on ``device`` of float32, bfloat16 or float16 with
    the op's shape (vectors of M or N values, a residual (M, N)); 2-D calls of float
    inputs only. Raises DesignError for the op list, LaunchError for the tensors.
    ``twin``: bind the chain a swapped kernel would run too (:attr:`Bound.twin`), so
    the policy reads it rather than coming back here.

    >>> import torch
    >>> bind(("bias", "gelu"), {"bias": torch.zeros(8)}, 4, 8, torch.device("cpu")).epilogue
    Epilogue(ops=('bias', 'gelu'), dtypes=('f32', ''))
    >>> bind(("bias",), {"bias": torch.zeros(5)}, 4, 8, torch.device("cpu"))
    Traceback (most recent call last):
    ...
    cutemma.errors.LaunchError: gemm epilogue: bias has shape (5,); op 'bias' needs (8,) (one value per column of D, N = 8)
    """
    ops, given = check_call(names, tensors)
    if ops and batched:
        raise LaunchError(
            "gemm epilogue: batched (3-D) calls take no epilogue yet; call per problem, or "
            "apply the ops with torch after the batched GEMM"
        )
    if ops and int8:
        raise LaunchError(
            "gemm epilogue: int8 inputs accumulate and write int32; the epilogue ops work on "
            "float values (float16, bfloat16, float32 (tf32) or float8 inputs)"
        )
    dtypes, args = [], []
    for n in ops:
        op = OPS[n]
        if op.arg is None:
            dtypes.append("")
            continue
        t = given[op.arg]
        dt = _kernel_type(t, op, M, N)
        want = _shape_of(op, M, N)
        if t.shape != want:
            raise LaunchError(
                f"gemm epilogue: {op.arg} has shape {tuple(t.shape)}; op {n!r} needs {want} "
                f"({_what(op, M, N)})"
            )
        if t.device != device:
            raise LaunchError(f"gemm epilogue: {op.arg} is on {t.device}; move it to {device}")
        if op.shape == "MN":  # rows must be contiguous: one row stride
            t = t.contiguous() if N > 1 and t.stride(1) != 1 else t
            args += [t, int(t.stride(0))]
        else:  # a vector read densely
            args.append(t.contiguous() if want[0] > 1 and t.stride(0) != 1 else t)
        dtypes.append(dt)
    key = (ops, tuple(dtypes))
    epi = _BUILT.get(key)
    if epi is None:
        epi = _BUILT[key] = Epilogue(*key)
    params = tuple(epi.params())
    bound = Bound(epi, tuple(args), _fast_record(names, tensors, epi, args, params), params)
    if not twin or not ops:
        return bound
    return replace(bound, twin=transposed(bound, M, N))


# each vector op of D as the op that applies the same vector to D^T (a swapped kernel's
# output: its rows are D's columns); the residual, a matrix read by rows, has none
TRANSPOSED = {"scale_row": "scale_col", "scale_col": "scale_row", "bias": "bias_row",
              "bias_row": "bias"}  # fmt: skip


def transposable(bound: Bound) -> bool:
    """Whether every op of ``bound`` that reads a tensor has a transposed twin
    (:data:`TRANSPOSED`): a swapped kernel can run the chain."""
    return all(n in TRANSPOSED or not OPS[n].arg for n in bound.epilogue.ops)


def transposed(bound: Bound, M: int, N: int) -> Bound | None:
    """``bound``'s chain for a kernel that computes D^T = B^T A^T of an (M, N) call: each
    per-row op as its per-column twin and back (:data:`TRANSPOSED`), the same tensors; the
    repeated-call record keeps the call's own op list and tensors, its slots those of the
    transposed chain's parameters. None where an op has no twin (a residual).

    >>> import torch
    >>> b = bind(("scale_row", "bias", "silu"), {"scale_row": torch.ones(4), "bias": torch.zeros(8)},
    ...          4, 8, torch.device("cpu"))
    >>> t = transposed(b, 4, 8)
    >>> t.epilogue.ops, t.fast.names, [tuple(x.shape) for x in t.tensors]
    (('scale_col', 'bias_row', 'silu'), ('scale_row', 'bias', 'silu'), [(4,), (8,)])
    """
    ops = bound.epilogue.ops
    if not transposable(bound):
        return None
    named = bound.named
    device = next((t.device for t in named.values()), None)  # (checked by the call's bind)
    flipped = bind(
        tuple(TRANSPOSED.get(n, n) for n in ops),
        {TRANSPOSED[a]: t for a, t in named.items()},
        N,
        M,
        device,
        twin=False,
    )
    fast, mine = bound.fast, flipped.fast
    if fast is not None and mine is not None:  # the call's own record, slots at its tensors
        index = {id(t): j for j, t in enumerate(fast.tensors)}
        slots = tuple((i, index[id(mine.tensors[j])]) for i, j in mine.slots)
        fast = FastRecord(fast.names, fast.absent, fast.tensors, slots)
    return Bound(flipped.epilogue, flipped.args, fast if mine else None, flipped.params)


def _fast_record(
    names: Any, tensors: dict, epi: Epilogue, args: list, params: tuple
) -> FastRecord | None:
    """The repeated-call record of a bound call, or None when a repeat could not reuse its
    launch as is: an op list that is no hashable key, or a tensor that was copied (a repeat
    would pass the caller's strided tensor)."""
    try:
        hash(names)
    except TypeError:
        return None
    present = [a for a in ARGS if tensors.get(a) is not None]
    ptr_args = [OPS[n].arg for n in epi.ops if OPS[n].arg]
    kept = [a for a in args if not isinstance(a, int)]
    if any(t is not tensors[a] for t, a in zip(kept, ptr_args)):
        return None
    slots, k = [], 0
    for i, p in enumerate(params):
        if p.is_pointer:
            slots.append((i, present.index(ptr_args[k])))
            k += 1
    absent = tuple(tensors.get(a) is None for a in ARGS)
    return FastRecord(names, absent, tuple(tensors[a] for a in present), tuple(slots))


_BUILT: dict[tuple, Epilogue] = {}  # (ops, dtypes) -> its Epilogue (validated once)
_TORCH_TYPES: dict[Any, str] = {}  # torch dtype -> kernel element type, filled on first use


def _what(op: EpilogueOp, M: int, N: int) -> str:
    return {"M": f"one value per row of D, M = {M}", "N": f"one value per column of D, N = {N}",
            "MN": f"shaped like D ({M}, {N})"}[op.shape]  # fmt: skip


def _kernel_type(t: Any, op: EpilogueOp, M: int, N: int) -> str:
    """The kernel element type of an epilogue tensor, or a LaunchError naming what it is."""
    try:
        return _TORCH_TYPES[t.dtype]
    except (KeyError, AttributeError, TypeError):
        pass
    if not hasattr(t, "data_ptr") or not hasattr(t, "dtype"):
        raise LaunchError(
            f"gemm epilogue: {op.arg} is a {type(t).__name__}; give a torch tensor "
            f"({_what(op, M, N)})"
        )
    dt = str(t.dtype).replace("torch.", "")
    if dt not in ARG_DTYPES:
        raise LaunchError(f"gemm epilogue: {op.arg} is {dt}; give {' or '.join(ARG_DTYPES)}")
    _TORCH_TYPES[t.dtype] = ARG_DTYPES[dt]
    return ARG_DTYPES[dt]


def empty_product(out: Any, C: Any, alpha: float, beta: float, bound: Bound | None) -> Any:
    """``out`` filled as a call with nothing to multiply (an empty D, or K = 0) writes it:
    beta * C (or zeros), through ``bound``'s ops (None: no epilogue).

    >>> import torch
    >>> empty_product(torch.empty(1, 2), torch.tensor([[1.0, -3.0]]), 1.0, 2.0, None)
    tensor([[ 2., -6.]])
    """
    if out.numel() == 0:
        return out
    if bound is not None:
        import torch

        zero = torch.zeros(out.shape, device=out.device)
        return out.copy_(reference(zero, bound.epilogue.ops, bound.named, alpha, beta, C))
    if C is not None:
        return out.copy_(beta * C)
    return out.zero_()


def _finite_real(v: Any) -> bool:
    """A number the reference can scale by: a real (not a bool) within float range."""
    import math
    import numbers

    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def reference(
    acc: Any,
    names: Any,
    tensors: dict[str, Any],
    alpha: float = 1.0,
    beta: float = 0.0,
    C: Any = None,
    out_dtype: Any = None,
) -> Any:
    """The torch reference of ``cast(ops(alpha * acc + beta * C))``: ``acc`` the f32
    product, each op's ``ref`` in order, computed in float32, then the output cast.

    >>> import torch
    >>> acc = torch.tensor([[-1.0, 2.0]])
    >>> reference(acc, ("bias", "relu"), {"bias": torch.tensor([0.5, 0.5])})
    tensor([[0.0000, 2.5000]])
    """
    ops = validate_ops(names)
    if not hasattr(acc, "float") or not hasattr(tensors, "get"):
        raise LaunchError(
            f"epilogue reference: acc is a {type(acc).__name__} and tensors a "
            f"{type(tensors).__name__}; give a torch tensor and a dict of the ops' tensors"
        )
    for n in ops:
        arg = OPS[n].arg
        if arg and not hasattr(tensors.get(arg), "float"):
            raise LaunchError(
                f"epilogue reference: op {n!r} reads tensors[{arg!r}], which is "
                f"{type(tensors.get(arg)).__name__}; give its torch tensor"
            )
    for what, v in (("alpha", alpha), ("beta", beta)):
        if not _finite_real(v):
            raise LaunchError(
                f"epilogue reference: {what}={v!r} must be a finite real number (a Python "
                "or numpy float or int)"
            )
    if C is not None and not hasattr(C, "float"):
        raise LaunchError(
            f"epilogue reference: C is a {type(C).__name__}; give a torch tensor or None"
        )
    if out_dtype is not None and not isinstance(out_dtype, _torch().dtype):
        raise LaunchError(
            f"epilogue reference: out_dtype={out_dtype!r}; give a torch dtype "
            "(torch.bfloat16, torch.float16, torch.float32) or None"
        )
    try:
        x = alpha * acc.float()
        if C is not None and beta != 0:
            x = x + beta * C.float()
        for n in ops:
            op = OPS[n]
            x = op.ref(x, tensors[op.arg].float() if op.arg else None)
        return x if out_dtype is None else x.to(out_dtype)
    except (RuntimeError, TypeError) as exc:  # shapes that do not broadcast, a bad dtype
        raise LaunchError(f"epilogue reference: {exc}") from None
