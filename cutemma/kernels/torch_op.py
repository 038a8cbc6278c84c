"""``cutemma.gemm`` as a torch custom op: ``torch.ops.cutemma.gemm`` and ``gemm_out``.

A ``torch.compile``d model that calls :func:`cutemma.gemm` sees the call as one node of its
graph (no graph break): while torch traces (dynamo, export, a fake-tensor or proxy trace),
``cutemma.gemm`` hands its arguments to one of two ops registered here, once, on first use:

- ``cutemma::gemm(A, B, C, alpha, beta, out_dtype, config, scale_a, scale_b) -> Tensor``,
  the call without ``out=`` (a new output);
- ``cutemma::gemm_out(A, B, C, alpha, beta, config, scale_a, scale_b, out) -> ()``, the call
  with ``out=`` (it writes ``out``; torch's functionalisation sees the mutation).

Each op's real implementation is ``cutemma.gemm`` itself (the eager path: prepared launch,
both kernel families; the op runs outside any trace). Its fake implementation, :func:`gemm_meta`, says what the real one
returns without touching the GPU: the shape (torch.matmul's batch broadcasting), the dtype
(the call's out_dtype, else the input's default) and contiguous strides, and raises the
LaunchError that the real call would raise for shapes, dtypes, devices and ``out``. A
config (an ``Sm90Config`` or ``GemmConfig``, not a torch type) travels as a string,
:func:`config_key`.

Eager calls never go through the dispatcher (a custom op costs microseconds of host time
per call; ``cutemma.gemm``'s repeated call costs a few).

>>> from cutemma.kernels.sm90.config import Sm90Config
>>> key = config_key(Sm90Config(128, 64))
>>> config_of(key) == Sm90Config(128, 64)
True
>>> gemm_meta_shape((4, 300, 200), (200, 100))
(4, 300, 100)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch  # this module is imported only where torch traces or a user asks for the ops

from cutemma.errors import LaunchError

NAMESPACE = "cutemma"
_REGISTERED: dict[str, Any] = {}  # "gemm", "gemm_out" -> the torch op, once registered


def _config_classes() -> dict[str, type]:
    from cutemma.kernels.sm80.config import GemmConfig
    from cutemma.kernels.sm90.config import Sm90Config

    return {"Sm90Config": Sm90Config, "GemmConfig": GemmConfig}


# each config class's fields in order (read once): the key names them all
_FIELDS = {n: tuple(f.name for f in dataclasses.fields(c)) for n, c in _config_classes().items()}


def _text(value: Any) -> str:
    """One field's value as key text: tuples of ints as 2x2, the rest by str()."""
    if isinstance(value, tuple):
        return "x".join([str(v) for v in value])
    return str(value)


def config_key(config: Any) -> str | None:
    """The string a config travels as through the op's schema (None: no config asked).

    Built from the fields by getattr and string joins only: dynamo traces it as constants
    on any torch 2.x (a frozen dataclass is not a constant it can hand to other code).

    >>> from cutemma.kernels.sm80.config import GemmConfig
    >>> config_key(GemmConfig(64, 64, 32))
    'GemmConfig:block_m=64;block_n=64;block_k=32;warps=2x2;stages=4;swizzle_bytes=128;group_m=8'
    """
    if config is None:
        return None
    name = type(config).__name__
    fields = _FIELDS.get(name)
    if fields is None:
        raise LaunchError(
            f"gemm: config is a {name}; give an Sm90Config, a GemmConfig or None (the built-in pick)"
        )
    return name + ":" + ";".join([f + "=" + _text(getattr(config, f)) for f in fields])


def _value(text: str) -> Any:
    """A field's value back from its key text (the inverse of :func:`_text`)."""
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text.isdigit():
        return int(text)
    parts = text.split("x")
    if len(parts) > 1 and all(p.isdigit() for p in parts):
        return tuple(int(p) for p in parts)
    return text


def config_of(key: str | None) -> Any:
    """The config a :func:`config_key` string names (None for None).

    >>> config_of("Nope:block_m=1")
    Traceback (most recent call last):
    ...
    cutemma.errors.LaunchError: gemm op: config 'Nope:block_m=1' is not one config_key() makes: 'Sm90Config:field=value;...' or 'GemmConfig:field=value;...'
    """
    if key is None:
        return None
    name, _, body = key.partition(":")
    pairs = [p.partition("=") for p in body.split(";")]
    values = {f: _value(v) for f, eq, v in pairs if eq}
    if name not in _FIELDS or set(values) != set(_FIELDS[name]) or len(values) != len(pairs):
        raise LaunchError(
            f"gemm op: config {key!r} is not one config_key() makes: "
            "'Sm90Config:field=value;...' or 'GemmConfig:field=value;...'"
        )
    return _config_classes()[name](**values)


def gemm_meta_shape(a: tuple, b: tuple) -> tuple:
    """D's shape for A and B of shapes ``a`` and ``b`` (2-D, or 3-D with torch.matmul's
    broadcasting of the batch); the shape rules are :func:`cutemma.kernels.operands._check`'s,
    so a wrong pair raises its LaunchError.

    >>> gemm_meta_shape((1, 3, 5), (4, 5, 2)), gemm_meta_shape((3, 5), (5, 2))
    ((4, 3, 2), (3, 2))
    """
    M, N = a[-2], b[-1]
    if len(a) == 2 and len(b) == 2:
        return (M, N)
    ba = a[0] if len(a) == 3 else 1
    bb = b[0] if len(b) == 3 else 1
    return (bb if ba == 1 else ba, M, N)


def gemm_meta(
    A: Any,
    B: Any,
    C: Any = None,
    alpha: float = 1.0,
    beta: float = 0.0,
    out: Any = None,
    out_dtype: Any = None,
    scale_a: float = 1.0,
    scale_b: float = 1.0,
) -> Any:
    """What ``cutemma.gemm`` returns for these arguments, as an empty tensor like A (a fake
    or meta tensor under a trace): shape, dtype, contiguous strides; ``out`` itself when
    given. Raises the real call's LaunchError for a wrong shape, dtype, device, scale or
    ``out`` (no GPU work; the kernel's own rules, e.g. TMA alignment, pick a family and
    cannot fail a call).

    >>> import torch                                                        # doctest: +SKIP
    >>> A = torch.empty(4, 300, 200, dtype=torch.bfloat16, device="meta")  # doctest: +SKIP
    >>> gemm_meta(A, torch.empty(200, 100, dtype=torch.bfloat16, device="meta")).shape  # doctest: +SKIP
    torch.Size([4, 300, 100])
    """
    from cutemma.kernels.operands import _check, _dtype, _dtype_name

    _, dtype, outs = _check(A, B)
    shape = gemm_meta_shape(tuple(A.shape), tuple(B.shape))
    out_dtype = out_dtype or (out.dtype if out is not None else getattr(torch, outs[0]))
    if _dtype_name(out_dtype) not in outs:
        raise LaunchError(
            f"gemm: out_dtype {_dtype_name(out_dtype)} for {_dtype(A)} inputs; choose "
            + " or ".join(outs)
        )
    if (scale_a != 1.0 or scale_b != 1.0) and dtype == "s8":
        raise LaunchError(
            f"gemm: scale_a={scale_a}, scale_b={scale_b} for int8 inputs; per-tensor "
            "scales are for float8 (and float) inputs — fold them into alpha for int8"
        )
    if dtype == "s8":
        ab = float(alpha) * float(scale_a) * float(scale_b)
        if ab != int(ab) or float(beta) != int(beta):
            raise LaunchError(f"gemm: int8 takes whole-number alpha and beta, got {alpha}, {beta}")
    if C is not None and beta != 0:
        if C.device != A.device:
            raise LaunchError(f"gemm: C on {C.device}, A on {A.device}; put both on one device")
        try:
            torch.broadcast_shapes(tuple(C.shape), shape)
            ok = len(C.shape) <= len(shape)
        except RuntimeError:
            ok = False
        if not ok or torch.broadcast_shapes(tuple(C.shape), shape) != torch.Size(shape):
            raise LaunchError(f"gemm: C {tuple(C.shape)} does not broadcast to {shape}")
    if out is not None:
        if tuple(out.shape) != shape or out.device != A.device or out.dtype != out_dtype:
            raise LaunchError(
                f"gemm: out is {tuple(out.shape)} {out.dtype} on {out.device}; need {shape} "
                f"{out_dtype} on {A.device}"
            )
        if len(shape) == 3 and shape[0] > 1 and out.stride(0) == 0:
            raise LaunchError(
                f"gemm: out {tuple(out.shape)} has batch stride 0: its {shape[0]} problems "
                "would overwrite each other; give an output with a batch stride"
            )
        return out
    return A.new_empty(shape, dtype=out_dtype)


def _define() -> None:
    """Register both ops with their real and fake implementations (once per process)."""
    import cutemma  # the op runs the public entry (eager: not tracing when it runs)

    @torch.library.custom_op(f"{NAMESPACE}::gemm", mutates_args=())
    def gemm_op(
        A: torch.Tensor,
        B: torch.Tensor,
        C: torch.Tensor | None,
        alpha: float,
        beta: float,
        out_dtype: torch.dtype | None,
        config: str | None,
        scale_a: float,
        scale_b: float,
    ) -> torch.Tensor:
        return cutemma.gemm(A, B, C, alpha=alpha, beta=beta, out_dtype=out_dtype,
                            config=config_of(config), scale_a=scale_a, scale_b=scale_b)  # fmt: skip

    @gemm_op.register_fake
    def _(A, B, C, alpha, beta, out_dtype, config, scale_a, scale_b):
        config_of(config)  # a wrong key fails the trace, as it would fail the call
        return gemm_meta(A, B, C, alpha, beta, None, out_dtype, scale_a, scale_b)

    @torch.library.custom_op(f"{NAMESPACE}::gemm_out", mutates_args=("out",))
    def gemm_out_op(
        A: torch.Tensor,
        B: torch.Tensor,
        C: torch.Tensor | None,
        alpha: float,
        beta: float,
        config: str | None,
        scale_a: float,
        scale_b: float,
        out: torch.Tensor,
    ) -> None:
        cutemma.gemm(A, B, C, alpha=alpha, beta=beta, out=out, config=config_of(config),
                     scale_a=scale_a, scale_b=scale_b)  # fmt: skip

    @gemm_out_op.register_fake
    def _(A, B, C, alpha, beta, config, scale_a, scale_b, out):
        config_of(config)
        gemm_meta(A, B, C, alpha, beta, out, None, scale_a, scale_b)

    _REGISTERED["gemm"], _REGISTERED["gemm_out"] = gemm_op, gemm_out_op


def register() -> tuple[Any, Any]:
    """``(torch.ops.cutemma.gemm, torch.ops.cutemma.gemm_out)``: registered when this module
    is first imported (by ``cutemma.gemm``'s first traced call, or here), once per process.
    Registration runs at import, not inside a traced function: dynamo executes an import
    for real, but would try to trace ``torch.library.custom_op`` itself.

    >>> gemm_op, gemm_out_op = register()                  # doctest: +SKIP
    >>> gemm_op._name, gemm_out_op._name                   # doctest: +SKIP
    ('cutemma::gemm', 'cutemma::gemm_out')
    """
    if not _REGISTERED:
        _define()
    return _REGISTERED["gemm"], _REGISTERED["gemm_out"]


def traced_gemm(
    A: Any,
    B: Any,
    C: Any,
    alpha: float,
    beta: float,
    out: Any,
    out_dtype: Any,
    config: Any,
    scale_a: float,
    scale_b: float,
) -> Any:
    """``cutemma.gemm`` while torch traces: the call as one op node (``gemm_out`` when ``out``
    is given, whose result is ``out``)."""
    gemm_op, gemm_out_op = _REGISTERED["gemm"], _REGISTERED["gemm_out"]
    key = config_key(config)
    if out is None:
        return gemm_op(A, B, C, float(alpha), float(beta), out_dtype, key, float(scale_a),
                       float(scale_b))  # fmt: skip
    if out_dtype is not None and out_dtype != out.dtype:
        raise LaunchError(
            f"gemm: out is {out.dtype} but out_dtype is {out_dtype}; give one of them"
        )
    gemm_out_op(A, B, C, float(alpha), float(beta), key, float(scale_a), float(scale_b), out)
    return out


register()  # at import: see register()
