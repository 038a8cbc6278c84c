"""``cutemma.gemm`` as a torch custom op: ``torch.ops.cutemma.gemm`` and ``gemm_out``.

A ``torch.compile``d model that calls :func:`cutemma.gemm` sees the call as one node of its
graph (no graph break): while torch traces (dynamo, export, a fake-tensor or proxy trace),
``cutemma.gemm`` hands its arguments to one of two ops registered here, once, on first use:

- ``cutemma::gemm(A, B, C, alpha, beta, out_dtype, config, scale_a, scale_b, epilogue,
  scale_row, scale_col, bias, bias_row, residual) -> Tensor``, the call without ``out=``
  (``epilogue``: the op names joined by commas);
- ``cutemma::gemm_out(A, B, C, alpha, beta, config, scale_a, scale_b, epilogue, scale_row,
  scale_col, bias, bias_row, residual, out) -> ()``, the call with ``out=`` (it writes
  ``out``; torch's functionalisation sees the mutation).

Each op's real implementation is ``cutemma.gemm`` itself (the eager path: prepared launch,
both kernel families; the op runs outside any trace). Its fake implementation, :func:`gemm_meta`, says what the real one
returns without touching the GPU, through the eager call's own checks
(:func:`cutemma.kernels.call.make_call` with ``fake=True``): a traced call refuses exactly
what an eager one refuses, with the same error. A config (an ``Sm90Config`` or
``GemmConfig``, not a torch type) travels as a string, :func:`config_key`; a design or
TiledMMA as the key of a registry entry (:func:`design_key`).

Eager calls never go through the dispatcher (a custom op costs microseconds of host time
per call; ``cutemma.gemm``'s repeated call costs a few).

>>> from cutemma.kernels.sm90.config import Sm90Config
>>> key = config_key(Sm90Config(128, 64))
>>> config_of(key) == Sm90Config(128, 64)
True
>>> config_of(config_key(Sm90Config(swizzle=("SW64", None)))).swizzle
('SW64', None)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch  # this module is imported only where torch traces or a user asks for the ops
from torch import Tensor

from cutemma.errors import LaunchError
from cutemma.kernels.epilogue import ARGS as _EP  # the ops' tensors, in their order

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
    parts = text.split("x")  # a tuple: ints, or swizzle modes and None (Sm90Config.swizzle)
    if len(parts) > 1 and all(p.isdigit() or p == "None" or p.startswith("SW") for p in parts):
        return tuple(int(p) if p.isdigit() else None if p == "None" else p for p in parts)
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


_DESIGNS: dict[str, Any] = {}  # design_key -> the design or TiledMMA it names


def design_key(design: Any, tiled_mma: Any) -> str | None:
    """The string a design (or TiledMMA) travels as through the op's schema: the key of a
    process-wide registry entry holding it (None: no design).

    >>> design_key(None, None) is None
    True
    """
    obj = design if design is not None else tiled_mma
    if obj is None:
        return None
    key = f"{'design' if design is not None else 'tiled_mma'}@{id(obj):x}"
    _DESIGNS[key] = obj  # kept: the compiled graph may call the op long after the trace
    return key


def _design_of(key: str | None) -> tuple[Any, Any]:
    """(design, tiled_mma) a :func:`design_key` names."""
    if key is None:
        return None, None
    obj = _DESIGNS.get(key)
    if obj is None:
        raise LaunchError(f"gemm op: design {key!r} is not one design_key() registered")
    return (obj, None) if key.startswith("design@") else (None, obj)


def _kwargs(config: str | None, epilogue: str, tensors: tuple) -> dict[str, Any]:
    """cutemma.gemm's keywords from the op's config key, epilogue list and its tensors."""
    kw = dict(zip(_EP, tensors))
    if config is not None and "@" in config and ":" not in config:
        kw["design"], kw["tiled_mma"] = _design_of(config)
    else:
        kw["config"] = config_of(config)
    kw["epilogue"] = tuple(epilogue.split(",")) if epilogue else None
    return kw


def gemm_meta(A: Any, B: Any, C: Any, alpha: float, beta: float, out: Any, out_dtype: Any,
              scale_a: float, scale_b: float, **kw: Any) -> Any:  # fmt: skip
    """What ``cutemma.gemm`` returns for these arguments, as an empty tensor like A (a fake
    or meta tensor under a trace), ``out`` itself when given: the eager call's checks
    (:func:`cutemma.kernels.call.make_call`, ``fake=True``), which raise its errors.

    >>> import torch                                                        # doctest: +SKIP
    >>> A = torch.empty(4, 300, 200, dtype=torch.bfloat16, device="meta")  # doctest: +SKIP
    >>> gemm_meta(A, torch.empty(200, 100, dtype=torch.bfloat16, device="meta"),
    ...           None, 1.0, 0.0, None, None, 1.0, 1.0).shape              # doctest: +SKIP
    torch.Size([4, 300, 100])
    """
    from cutemma.kernels.call import make_call

    ep = {k: kw.pop(k) for k in _EP if k in kw}
    call = make_call(A, B, C, alpha=alpha, beta=beta, out=out, out_dtype=out_dtype,
                     scale_a=scale_a, scale_b=scale_b, tensors=ep, fake=True, **kw)  # fmt: skip
    return call.out


def _define() -> None:
    """Register both ops with their real and fake implementations (once per process)."""
    import cutemma  # the op runs the public entry (eager: not tracing when it runs)

    @torch.library.custom_op(f"{NAMESPACE}::gemm", mutates_args=())
    def gemm_op(
        A: Tensor, B: Tensor, C: Tensor | None, alpha: float, beta: float, out_dtype: torch.dtype | None,
        config: str | None, scale_a: float, scale_b: float, epilogue: str,
        scale_row: Tensor | None, scale_col: Tensor | None, bias: Tensor | None, bias_row: Tensor | None,
        residual: Tensor | None,
    ) -> Tensor:  # fmt: skip
        kw = _kwargs(config, epilogue, (scale_row, scale_col, bias, bias_row, residual))
        return cutemma.gemm(A, B, C, alpha=alpha, beta=beta, out_dtype=out_dtype,
                            scale_a=scale_a, scale_b=scale_b, **kw)  # fmt: skip

    @gemm_op.register_fake
    def _(A, B, C, alpha, beta, out_dtype, config, scale_a, scale_b, epilogue, *tensors):
        kw = _kwargs(config, epilogue, tensors)
        return gemm_meta(A, B, C, alpha, beta, None, out_dtype, scale_a, scale_b, **kw)

    @torch.library.custom_op(f"{NAMESPACE}::gemm_out", mutates_args=("out",))
    def gemm_out_op(
        A: Tensor, B: Tensor, C: Tensor | None, alpha: float, beta: float, config: str | None,
        scale_a: float, scale_b: float, epilogue: str, scale_row: Tensor | None,
        scale_col: Tensor | None, bias: Tensor | None, bias_row: Tensor | None, residual: Tensor | None, out: Tensor,
    ) -> None:  # fmt: skip
        kw = _kwargs(config, epilogue, (scale_row, scale_col, bias, bias_row, residual))
        cutemma.gemm(A, B, C, alpha=alpha, beta=beta, out=out, scale_a=scale_a,
                     scale_b=scale_b, **kw)  # fmt: skip

    @gemm_out_op.register_fake
    def _(A, B, C, alpha, beta, config, scale_a, scale_b, epilogue, *rest):
        *tensors, out = rest
        kw = _kwargs(config, epilogue, tuple(tensors))
        gemm_meta(A, B, C, alpha, beta, out, None, scale_a, scale_b, **kw)

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
    alpha: Any,
    beta: Any,
    out: Any,
    out_dtype: Any,
    config: Any,
    scale_a: Any,
    scale_b: Any,
    design: Any = None,
    tiled_mma: Any = None,
    epilogue: Any = None,
    tensors: tuple = (None,) * 5,
) -> Any:
    """``cutemma.gemm`` while torch traces: the call as one op node (``gemm_out`` when ``out``
    is given, whose result is ``out``). ``tensors``: the epilogue's, in the op's order
    (scale_row, scale_col, bias, bias_row, residual). Scalars the op's schema cannot carry
    (not real numbers) are refused here with the eager call's error; None where a tensor
    argument is not a tensor (or out_dtype not a dtype): the caller's checks
    (:func:`~cutemma.kernels.call.make_call` with ``fake=True``) name it."""
    from cutemma.kernels.call import check_scalar

    gemm_op, gemm_out_op = _REGISTERED["gemm"], _REGISTERED["gemm_out"]
    for what, v in (("alpha", alpha), ("beta", beta), ("scale_a", scale_a), ("scale_b", scale_b)):
        check_scalar(what, v)
    if design is not None or tiled_mma is not None:
        if config is not None:
            raise LaunchError(
                "gemm: give one of config=, design= and tiled_mma= (a design holds its config)"
            )
        key = design_key(design, tiled_mma)
    else:
        key = config_key(config)
    ops = [epilogue] if isinstance(epilogue, str) else epilogue
    if ops is not None and not (
        isinstance(ops, tuple | list) and all(isinstance(o, str) and o.isidentifier() for o in ops)
    ):  # a set, a number, names that are not ops' names: the eager call's error
        from cutemma.kernels.epilogue import validate_ops

        validate_ops(epilogue)
    ops = ",".join(ops or ())
    given = (A, B, C, out, *tensors)
    if not all(x is None or isinstance(x, torch.Tensor) for x in given) or not (
        out_dtype is None or isinstance(out_dtype, torch.dtype)
    ):  # what the schema cannot carry: the eager call's checks name it (the caller's)
        return None
    args = (float(alpha), float(beta))
    scales = (float(scale_a), float(scale_b))
    if out is None:
        return gemm_op(A, B, C, *args, out_dtype, key, *scales, ops, *tensors)
    if out_dtype is not None and out_dtype != getattr(out, "dtype", None):
        raise LaunchError(
            f"gemm: out is {getattr(out, 'dtype', type(out).__name__)} but out_dtype is "
            f"{out_dtype}; give one of them"
        )
    gemm_out_op(A, B, C, *args, key, *scales, ops, *tensors, out)
    return out


register()  # at import: see register()
