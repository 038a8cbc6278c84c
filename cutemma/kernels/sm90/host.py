"""The sm90 family's host side: a checked call and its :class:`~cutemma.kernels.policy.Choice`
become a prepared launch (:func:`prepare`): the kernel (its cubin from the disk index by name,
so a new process loads a known kernel without generating it, else its plan's kernel text, which
the runtime compiles at the first launch), the tensor maps of A and B (boxes and
swizzle from the plan's stage layouts, :mod:`.tma_maps`), the persistent grid. The kernel is
persistent: one CTA per SM walking every problem's tiles.

>>> from cutemma.kernels.sm90.config import Sm90Config
>>> kernel_key(Sm90Config(), "bf16", "K", "N", "bf16", "bf16").name
'cutemma_gemm_sm90_bf16_KN_b128x128_c2_sauto_obf16_cbf16'
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from cutemma.copy.tma_map import TMA_RULES, tensor_map_param
from cutemma.errors import LaunchError
from cutemma.kernels.common.key import KernelKey
from cutemma.kernels.common.types import ELEM_BYTES
from cutemma.kernels.epilogue import NO_EPILOGUE
from cutemma.kernels.runtime.driver import DriverKernel
from cutemma.kernels.runtime.fastpath import put_bounded
from cutemma.kernels.sm90 import index as sm90_index
from cutemma.kernels.sm90.config import BAT_A, BAT_B, Sm90Config, kernel_name_sm90
from cutemma.kernels.sm90.kcluster import clusters
from cutemma.kernels.sm90.launch import PreparedLaunch, SwapLaunch
from cutemma.kernels.sm90.tma_maps import Sm90Launch, operand_map


def kernel_key(
    config: Sm90Config,
    dtype: str,
    a_major: str,
    b_major: str,
    out: str,
    c_type: str,
    batched: bool = False,
    epilogue: Any = NO_EPILOGUE,
) -> KernelKey:
    """The :class:`~cutemma.kernels.common.key.KernelKey` of one sm90 variant (its name is
    :func:`~cutemma.kernels.sm90.config.kernel_name_sm90`'s). Stream-K's ``split`` value is
    the host's alone (its launch's CTA count): configs with a split share one kernel (the
    fix-up that adds partials together, where the launch's shares allow it), keyed as
    split 2; those without keep the serial fix-up alone.

    >>> k = kernel_key(Sm90Config(stream_k=True, split=4), "bf16", "K", "K", "bf16", "bf16")
    >>> k.name.endswith("_sauto_sk2_obf16_cbf16")
    True
    """
    if config.split is not None:
        config = replace(config, split=2)
    key = KernelKey("sm90", config, dtype, a_major, b_major, out, c_type, batched, epilogue)
    return replace(key, name=kernel_name_sm90(*key.args()))


@cache
def _package_fingerprint() -> str:
    """Sizes and mtimes of cutemma's sources: any edit changes the generated kernels' index."""
    root = str(Path(__file__).resolve().parents[2])  # cutemma/
    cut = len(root) + 1  # each entry's path is root/...: its relative path by a slice
    entries = []
    stack = [root]
    while stack:  # os.scandir: the directory entries carry their stat (pathlib's rglob
        # stats again; this runs in a new process's first call, 3x faster this way)
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False) and e.name != "__pycache__":
                    stack.append(e.path)
                elif e.name.endswith(".py"):
                    st = e.stat()
                    entries.append(f"{e.path[cut:]}:{st.st_size}:{st.st_mtime_ns};")
    return hashlib.sha256("".join(sorted(entries)).encode()).hexdigest()


def _index_path(name: str, arch: str) -> Path | None:
    from cutemma.cuda import cache as disk
    from cutemma.cuda.compile import nvrtc_version_hint

    hint = nvrtc_version_hint()
    if hint is None:
        return None
    key = hashlib.sha256(f"{name}|{arch}|{hint}|{_package_fingerprint()}".encode()).hexdigest()
    return disk.cache_dir() / f"{key}.sm90"


@cache
def compiled_sm90(key: KernelKey, arch: str) -> tuple[DriverKernel, Sm90Launch]:
    """(DriverKernel, launch record) of one variant, made once per process.

    The launch record is the one the variant's plan derives, by arithmetic on the config
    (:func:`~cutemma.kernels.sm90.index.plan_record`: no plan is built). A variant in the disk
    index (its cubin beside that record, by kernel name + cutemma's source fingerprint)
    comes back with no plan, no source and no NVRTC; otherwise the generator writes its
    text, which the runtime compiles at the kernel's first load, writing the index entry
    (:meth:`~cutemma.kernels.runtime.driver.DriverKernel.image`).

    >>> from cutemma.kernels.sm90.config import Sm90Config
    >>> k, launch = compiled_sm90(kernel_key(Sm90Config(), "bf16", "K", "K", "bf16", "bf16"), "sm_90a")
    >>> launch.shared_bytes == k.shared, k.threads
    (True, 384)
    """
    config, name = key.config, key.name
    index = _index_path(name, arch)
    hit = None if index is None else sm90_index.read(index, key)  # sealed, its plan's record
    record = sm90_index.plan_record(key)  # what a hit holds (the index refuses any other)
    launch = Sm90Launch.from_json(json.dumps(record))
    if hit is not None:
        return DriverKernel(hit[0], name, launch.shared_bytes, config.threads, config.pdl), launch
    from cutemma.kernels.sm90.source import gemm_sm90_source  # the generator: loaded to compile

    kern = DriverKernel(None, name, launch.shared_bytes, config.threads, config.pdl,
                        gemm_sm90_source(*key.args()), arch, index, launch.to_json())  # fmt: skip
    return kern, launch


_I32 = ctypes.c_int32
# prepared launches (kernel, grid, tensor-map argument boxes, sizes) per argument signature:
# a repeated call with the same operands only boxes C, D, their strides and alpha/beta
_PREPARED: dict[tuple, Any] = {}
_PREPARED_MAX = 256


def prepare(call: Any, choice: Any, persistent: bool = True) -> tuple[Any, bool]:
    """(the prepared launch of ``call`` as ``choice`` says, whether a repeat may reuse it).

    The persistent grid covers the device's multiprocessors (``call.sms``); ``persistent=False``
    launches one CTA per tile. A swapped choice launches D^T = B^T A^T on its views and
    hands back a :class:`~cutemma.kernels.sm90.launch.SwapLaunch`, whose output is D.
    Raises LaunchError for what the config cannot run (stream-K, pdl or swap-AB with a
    batch).
    """
    config, v = choice.config, choice.views
    batch = call.batch
    for flag, what in (
        (config.stream_k, "stream-K"),
        (config.pdl, "a programmatic dependent launch"),
    ):
        if flag and batch is not None:
            raise LaunchError(
                f"gemm (sm90): config {config.name} is {what}, which runs 2-D calls; this one "
                f"has a batch of {batch}: give a config without {'stream_k' if config.stream_k else 'pdl'}"
            )
    if config.kcluster > 1:
        _check_kcluster(config, call.dtype, v.A.shape[-1], batch)
    D = call.D.t() if choice.swap else call.D  # what the kernel writes
    C = D if call.C is None else call.C
    bound = call.epilogue if choice.epilogue is None else choice.epilogue  # (swapped: D^T's)
    epi = NO_EPILOGUE if bound is None else bound.epilogue
    A, B = v.A, v.B
    key = (A.data_ptr(), A.shape, A.stride(), A.dtype, B.data_ptr(), B.shape, B.stride(),
           B.dtype, D.dtype, C.dtype, config, persistent, A.device, batch, epi)  # fmt: skip
    prepared = _PREPARED.get(key)
    if prepared is None:  # the host's own steps, then the kernel, its maps and boxes
        M, K = A.shape[-2:]
        N = B.shape[-1]
        grid = _grid(config, M, N, batch, call.sms, persistent)
        variant = kernel_key(config, call.dtype, v.a_major, v.b_major, call.out_type, call.c_type,
                             batch is not None, epi)  # fmt: skip
        kern, plan = compiled_sm90(variant, call.arch)
        map_a = tensor_map_param(operand_map(plan, "A", A, v.a_major, v.lda))
        map_b = tensor_map_param(operand_map(plan, "B", B, v.b_major, v.ldb))
        sizes = (_I32(M), _I32(N), _I32(K))
        bat = None
        if batch is not None:
            bat = (batch, (BAT_A if A.dim() == 3 else 0) | (BAT_B if B.dim() == 3 else 0))
        shape = tuple(D.shape)
        prepared = PreparedLaunch(kern, call.device, grid, (map_a, map_b), sizes, plan, D.dtype,
                                  shape, bat, choice.work)  # fmt: skip
        if epi:  # (the bound epilogue's kernel parameters)
            prepared.add_epilogue(bound.params)
        put_bounded(_PREPARED, key, prepared, _PREPARED_MAX)
    keep = call.remember and persistent and call.C is None and not v.copied
    return (SwapLaunch(prepared) if choice.swap else prepared), keep


def _check_kcluster(config: Sm90Config, dtype: str, K: int, batch: int | None) -> None:
    """A kcluster launch needs a 2-D call and a k tile for every CTA of a cluster."""
    if batch is not None:
        raise LaunchError(
            f"gemm (sm90): config {config.name} shares each tile's k tiles in a cluster, "
            f"which runs 2-D calls; this one has a batch of {batch}: give a config without kcluster"
        )
    k_tile = config.k_tiles[ELEM_BYTES[dtype]]
    if -(-K // k_tile) < config.kcluster:
        raise LaunchError(
            f"gemm (sm90): config {config.name} splits K={K} into {config.kcluster} shares of "
            f"whole k tiles, but it has {-(-K // k_tile)} of {k_tile}: give K > "
            f"{(config.kcluster - 1) * k_tile} or a smaller kcluster"
        )


def _grid(config: Sm90Config, M: int, N: int, batch: int | None, sms: int, persistent: bool) -> int:
    """CTAs of a launch: whole clusters, one CTA per SM when persistent (every SM for
    stream-K), else one per tile."""
    cl = config.cluster  # a cluster walks cm x cn tiles at once
    cm, cn = config.cluster_mn
    tiles = (batch or 1) * -(-M // (config.block_m * cm)) * -(-N // (config.block_n * cn))
    if tiles > TMA_RULES.max_coord:  # the kernel's tile index is a 32-bit int
        raise LaunchError(f"gemm (sm90): {tiles} tiles exceed 2^31 - 1; split the batch")
    if config.stream_k:  # every SM takes a share of the k iterations (persistent always)
        return sms
    if config.kcluster > 1:  # one tile per cluster (its fix-up reuses the ring's stages)
        if tiles * config.kcluster * cl > TMA_RULES.max_coord:
            raise LaunchError(
                f"gemm (sm90): {tiles} tiles of {config.kcluster * cl} CTAs exceed 2^31 - 1 CTAs; "
                "give a config without kcluster"
            )
        return config.kcluster * cl * tiles
    # (a persistent grid: the clusters the GPU holds at once, kcluster.clusters)
    return cl * (min(tiles, clusters(cl, sms) if cl > 2 else sms // cl) if persistent else tiles)
