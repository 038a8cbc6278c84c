"""The policy: which kernel runs a checked call (:class:`~cutemma.kernels.call.Call`),
chosen once, as a :class:`Choice` of family, config and operand views.

In order: what the call asked for (a config, or a design's), else a config
:func:`cutemma.tune` stored for this GPU and shape class, else the kernel of the sm90
space (:mod:`cutemma.kernels.space`: tiles, stream-K, swap-AB) that the cost model
(:mod:`cutemma.kernels.cost`, calibrated per device kind) prices fastest
(:func:`cutemma.kernels.pick.builtin`). The sm90 family (wgmma + TMA) runs where its operand rules
hold (:func:`cutemma.kernels.sm90.operands.views`), the sm80 family (``mma.sync``)
everywhere else. An sm90 config asked for where those rules fail is an error that says
which rule.

Each source is asked once, in this order: the tuned table, the operand views (the call's
and, where it may run swapped, the swapped problem's), the built-in pick; then the choice
is made from their answers. The call record's plain ints, majors and ``rows16`` (how far
apart the operands' rows sit) are all it reads of the arguments.

>>> Choice("sm80", None).swap
False
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

from cutemma.errors import LaunchError
from cutemma.kernels.call import Call
from cutemma.kernels.pick import builtin
from cutemma.kernels.sm80.config import GemmConfig
from cutemma.kernels.sm90.config import ATOMS_SM90, Sm90Config
from cutemma.kernels.sm90.operands import Views, operand_views
from cutemma.kernels.sm90.streamk import sk_split
from cutemma.kernels.space import _swaps_call, builds
from cutemma.kernels.tuned import lookup_device


class Choice(NamedTuple):
    """What runs a call: the ``family`` ('sm80' or 'sm90'), its ``config``, a custom
    ``design`` (its own layouts and copies; None for a config's kernel), the sm90 operand
    ``views``, ``swap``: the kernel computes D^T = B^T A^T (the views are then B^T's and
    A^T's, the config's ``swap_ab`` cleared), ``why`` an sm80 choice is not sm90's (None
    where the sm90 kernel could have read the operands), ``predicted_s`` the cost
    model's time for a built-in sm90 choice, and ``epilogue``: the fused chain as the
    swapped kernel runs it (:attr:`~cutemma.kernels.epilogue.Bound.twin`; None: the call's
    own); ``work``, a stream-K config's (tiles shared, CTAs sharing them), as the cost
    model priced them (:func:`~cutemma.kernels.sm90.streamk.sk_split`)."""

    family: str
    config: Any
    design: Any = None
    views: Views | None = None
    swap: bool = False
    why: str | None = None
    predicted_s: float | None = None
    epilogue: Any = None
    work: tuple[int, int] | None = None


def _tiles(config: Sm90Config, dtype: str, views: Views) -> bool:
    """Whether a swapped config's stages tile the swapped operands' majors (:func:`~cutemma.
    kernels.space.builds`; checked only where the tokens' operand is not K-major)."""
    if views.b_major == "K":
        return True
    return builds(replace(config, swap_ab=False), dtype, (views.a_major, views.b_major))


def _fused(call: Call) -> bool | tuple[str, ...]:
    """What the built-in pick knows of a call's epilogue: its op names where the pingpong
    tiles may run it (no C, a 16-bit D through the TMA-store epilogue: what the GPU ran
    them with, bench/results/raw/epilogue-schedules-h200.json), else whether there is one.

    >>> class C:
    ...     epilogue, C, out_type = None, None, "bf16"
    >>> _fused(C())
    False
    """
    if call.epilogue is None:
        return False
    if call.C is None and call.out_type in ("bf16", "f16"):
        return call.epilogue.epilogue.ops
    return True


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
    tuned = None
    if asked is None:  # (no work at all while nothing was tuned)
        tuned = lookup_device(call.device, call.M, call.N, call.K, call.dtype, call.a_major,
                              call.b_major)  # fmt: skip
    want = (design.major("A"), design.major("B")) if design is not None else (None, None)
    # a design's kernel is fixed: operands TMA cannot read are copied into padded rows
    fixed = design is not None and isinstance(asked, Sm90Config)
    # what a swapped kernel runs: 2-D calls, their fused ops each with a transposed twin
    plain = call.batch is None and (call.epilogue is None or call.epilogue.twin is not None)
    swaps = plain and (
        (_swaps_call(call.M, call.dtype) and call.C is None)  # one they may run
        or any(isinstance(c, Sm90Config) and c.swap_ab for c in (asked, tuned))
    )
    seen, swapped = operand_views(call.A, call.B, call.dtype, call.arch, want, fixed, swaps)
    why = seen if isinstance(seen, str) else None
    config = asked
    if isinstance(asked, Sm90Config) and why is not None:
        raise LaunchError(f"gemm: config {asked.name} is an sm90 config, but {why}")
    if isinstance(tuned, Sm90Config) and (
        why is not None or call.batch is not None  # tuned for 2-D calls
        or (tuned.swap_ab and (not plain or call.C is not None))
    ):  # fmt: skip
        tuned = None  # sm90 winners only where the sm90 kernel reads the operands
    elif isinstance(tuned, GemmConfig) and call.batch is not None and why is None:
        tuned = None  # batched sm90 calls take the built-in pick
    if isinstance(tuned, GemmConfig):
        return Choice("sm80", tuned, why=why or "cutemma.tune found the sm80 kernel faster")
    if config is None and tuned is not None:
        config = tuned
    predicted = None
    may_swap = (
        swaps
        and _swaps_call(call.M, call.dtype)
        and call.C is None
        and not isinstance(swapped, str)
    )
    if config is None:
        kind = call.gpu if why is None else None  # None: the sm80 family's pick
        pick = (call.M, call.N, call.K, call.batch or 1, call.dtype, call.sms, kind)
        b_major, fused = "N" if call.b_major == "N" else "K", _fused(call)
        config, predicted = builtin(*pick, may_swap, call.rows16, b_major, fused)
        if why is not None:
            return Choice("sm80", config, why=why)
        if config.swap_ab and not _tiles(config, call.dtype, swapped):
            # the tokens' operand (A^T) N-major: a token tile of 8 past a multiple of 16 has no
            # swizzled stage (M = 24, 40, 136, ... with column-major activations): unswapped
            config, predicted = builtin(*pick, False, call.rows16, b_major, fused)
    work = None
    if config.stream_k:  # the tiles stream-K shares and its CTAs, as the cost model priced them
        m, n = (call.N, call.M) if config.swap_ab else (call.M, call.N)
        bk = config.k_tiles[ATOMS_SM90[call.dtype][1]]
        tiles_m, tiles_n = -(-m // config.block_m), -(-n // config.block_n)
        work = sk_split(tiles_m, tiles_n, -(-call.K // bk), call.sms, config.split)
    if not config.swap_ab:
        return Choice(
            "sm90",
            config,
            custom if config is asked else None,
            seen,
            predicted_s=predicted,
            work=work,
        )
    # D^T = B^T A^T with the config's kernel (its swap_ab cleared) on the transposed views
    if not plain:
        what = f"a batch of {call.batch}" if call.batch is not None else "a fused epilogue"
        raise LaunchError(
            f"gemm (sm90): config {config.name} swaps A and B, which runs 2-D calls whose "
            f"fused ops each have a transposed twin (no residual); this one has {what}: give "
            "a config without swap_ab"
        )
    if isinstance(swapped, str):
        raise LaunchError(f"gemm: config {config.name} swaps A and B, but then {swapped}")
    epi = None if call.epilogue is None else call.epilogue.twin
    return Choice(
        "sm90",
        replace(config, swap_ab=False),
        None,
        swapped,
        True,
        predicted_s=predicted,
        epilogue=epi,
        work=work,
    )
