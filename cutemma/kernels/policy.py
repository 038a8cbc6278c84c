"""The policy: which kernel runs a checked call (:class:`~cutemma.kernels.call.Call`),
chosen once, as a :class:`Choice` of family, config and operand views.

In order: what the call asked for (a config, or a design's), else a config
:func:`cutemma.tune` stored for this GPU and shape class, else the kernel of the sm90
space (:mod:`cutemma.kernels.space`: tiles, stream-K, swap-AB) that the cost model
(:mod:`cutemma.kernels.cost`, calibrated per device kind) prices fastest. The sm90 family (wgmma + TMA) runs where its operand rules
hold (:func:`cutemma.kernels.sm90.operands.views`), the sm80 family (``mma.sync``)
everywhere else. An sm90 config asked for where those rules fail is an error that says
which rule.

>>> Choice("sm80", None).swap
False
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, NamedTuple

from cutemma.errors import LaunchError
from cutemma.kernels.call import Call
from cutemma.kernels.common.types import ELEM_BYTES
from cutemma.kernels.cost import device_kind
from cutemma.kernels.decode import decode_config
from cutemma.kernels.pick import SMALL_SM90, builtin_config, builtin_sm90_config
from cutemma.kernels.sm80.config import GemmConfig
from cutemma.kernels.sm90.config import FP8, Sm90Config
from cutemma.kernels.sm90.operands import Views, views
from cutemma.kernels.space import cheapest
from cutemma.kernels.tuned import device_name, lookup_device


class Choice(NamedTuple):
    """What runs a call: the ``family`` ('sm80' or 'sm90'), its ``config``, a custom
    ``design`` (its own layouts and copies; None for a config's kernel), the sm90 operand
    ``views``, ``swap``: the kernel computes D^T = B^T A^T (the views are then B^T's and
    A^T's, the config's ``swap_ab`` cleared), and ``why`` an sm80 choice is not sm90's
    (None where the sm90 kernel could have read the operands)."""

    family: str
    config: Any
    design: Any = None
    views: Views | None = None
    swap: bool = False
    why: str | None = None
    predicted_s: float | None = None


def choose(call: Call) -> Choice:
    """The kernel of ``call``: the family, config, design and views (see the module doc).

    >>> class C:  # a call that asks for an sm80 config, its int8 operands not sm90's
    ...     design, config, A, B, dtype, arch = None, GemmConfig(64, 64, 32), None, None, "s8", "sm_90a"
    >>> choose(C())[:2] == ("sm80", GemmConfig(64, 64, 32))
    True
    """
    design = call.design
    asked = design.config if design is not None else call.config
    custom = design if design is not None and design.custom else None
    if isinstance(asked, GemmConfig):  # (no sm90 views: they may copy an operand)
        return Choice("sm80", asked, custom, why="an sm80 config was asked for")
    want = (design.major("A"), design.major("B")) if design is not None else (None, None)
    seen = views(call.A, call.B, call.dtype, call.arch, want)
    if isinstance(seen, str) and design is not None and isinstance(asked, Sm90Config):
        # a design's kernel is fixed: operands TMA cannot read are copied into padded rows
        seen = views(call.A, call.B, call.dtype, call.arch, want, pad=True)
    why = seen if isinstance(seen, str) else None
    if isinstance(asked, Sm90Config):
        if isinstance(seen, str):
            raise LaunchError(f"gemm: config {asked.name} is an sm90 config, but {seen}")
        if asked.swap_ab:
            return _swapped(call, asked)
        return Choice("sm90", asked, custom, seen)
    tuned = _tuned(call, seen)
    if isinstance(tuned, GemmConfig):
        return Choice("sm80", tuned, why=why or "cutemma.tune found the sm80 kernel faster")
    if why is not None:
        config = builtin_config(call.M, call.N, call.K, call.batch or 1, call.dtype)
        return Choice("sm80", config, why=why)
    if tuned is not None:
        return _swapped(call, tuned) if tuned.swap_ab else Choice("sm90", tuned, None, seen)
    if call.epilogue is not None and call.dtype in FP8:  # 128x192 by N halves: no registers
        return Choice("sm90", SMALL_SM90, None, seen)  # left for the ops (test_epilogue_compile)
    if os.environ.get("CUTEMMA_PICK") == "rules":
        return _rules(call, seen)
    return _fastest(call, seen)


def _rules(call: Call, seen: Views) -> Choice:
    """The fitted rules the cost model replaced (:mod:`.pick`, :mod:`.decode`), kept while
    the bench compares the two in one run (``CUTEMMA_PICK=rules``)."""
    plain = call.batch is None and call.epilogue is None and call.C is None
    decode = decode_config(call.M, call.N, call.K, call.dtype, call.sms) if plain else None
    if decode is not None:
        try:
            return _swapped(call, decode)
        except LaunchError:  # B^T or A^T not TMA-readable: the plain kernel
            pass
    config = builtin_sm90_config(call.M, call.N, call.sms, call.dtype, call.batch or 1, call.K)
    return Choice("sm90", config, None, seen)


def _tuned(call: Call, seen: Views | str) -> Any:
    """A config :func:`cutemma.tune` stored for this call's device, shape class, dtype and
    majors, or None (no work at all while nothing was tuned). sm90 winners only where the
    sm90 kernel can read the operands, swapped ones only without C or epilogue."""
    if call.batch is not None and not isinstance(seen, str):
        return None  # tuned for 2-D calls: batched sm90 calls take the built-in pick
    a_major = "K" if call.A.stride(-1) == 1 else "M"
    b_major = "N" if call.B.stride(-1) == 1 else "K"
    if ELEM_BYTES[call.dtype] != 2:
        a_major = b_major = "K"
    found = lookup_device(call.device, call.M, call.N, call.K, call.dtype, a_major, b_major)
    if isinstance(found, Sm90Config):
        if isinstance(seen, str) or (found.swap_ab and (call.epilogue or call.C is not None)):
            return None
    return found


def _fastest(call: Call, seen: Views) -> Choice:
    """The kernel of the space (:mod:`.space`) the cost model (:mod:`.cost`) prices fastest
    for this call on this device kind; swapped kernels only for 2-D calls without C or
    epilogue, and only where the transposed operands are TMA-readable."""
    plain = call.batch is None and call.epilogue is None and call.C is None
    kind = _kind(call.device)
    batch = call.batch or 1
    shape = (call.M, call.N, call.K, call.dtype, batch, call.sms)
    config, seconds = cheapest(*shape, swap=plain, kind=kind)
    if config.swap_ab:
        try:
            return _swapped(call, config)._replace(predicted_s=seconds)
        except LaunchError:  # B^T or A^T not TMA-readable: the best unswapped kernel
            config, seconds = cheapest(*shape, swap=False, kind=kind)
    return Choice("sm90", config, None, seen, predicted_s=seconds)


_KINDS: dict[int, str] = {}  # device -> the cost model's kind, asked once per process


def _kind(device: int) -> str:
    kind = _KINDS.get(device)
    if kind is None:
        try:
            name = device_name(device)
        except Exception:  # no CUDA to ask (a call record built on the CPU): the default
            name = ""
        kind = _KINDS[device] = device_kind(name)
    return kind


def _swapped(call: Call, config: Sm90Config) -> Choice:
    """D^T = B^T A^T with ``config``'s kernel (its ``swap_ab`` cleared) on the transposed
    views; a LaunchError where the call cannot run swapped."""
    if call.batch is not None or call.epilogue is not None:
        what = f"a batch of {call.batch}" if call.batch is not None else "a fused epilogue"
        raise LaunchError(
            f"gemm (sm90): config {config.name} swaps A and B, which runs 2-D calls without "
            f"a fused epilogue; this one has {what}: give a config without swap_ab"
        )
    seen = views(call.B.t(), call.A.t(), call.dtype, call.arch)
    if isinstance(seen, str):
        raise LaunchError(f"gemm: config {config.name} swaps A and B, but then {seen}")
    return Choice("sm90", replace(config, swap_ab=False), None, seen, True)
