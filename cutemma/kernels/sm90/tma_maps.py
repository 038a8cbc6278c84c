"""The sm90 kernel's tensor maps: the encoded ``cuTensorMapEncodeTiled`` arguments of A and B
(rank 3 with a batch) and of the output D of the TMA-store epilogue (cached per pointer,
shape and strides; ``NO_MAP`` when D is stored from registers), and ``Sm90Launch``, what
the host keeps of a compiled variant's plan (its TMA boxes, shared bytes).

>>> len(bytes(NO_MAP))
128
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from cutemma.copy.tma_map import (
    TMA_RULES,
    TensorMapArgs,
    TmaBox,
    batched_dims,
    encode_tensor_map,
    tensor_map_args,
    tensor_map_param,
)
from cutemma.errors import LaunchError, TmaError
from cutemma.kernels.runtime.driver import ensure_context
from cutemma.kernels.runtime.fastpath import put_bounded

if TYPE_CHECKING:  # annotations only: a launch from the disk index needs no plan
    from cutemma.kernels.sm90.plan import Sm90Plan

_DMAPS_MAX = 256  # encoded output maps kept (oldest dropped)


@dataclass(frozen=True)
class Sm90Launch:
    """What the host needs of a compiled variant's plan: TMA boxes, shared bytes, the
    TMA-store flag (kept beside the cubin, so a new process need not rebuild the plan)."""

    tma: dict
    tma_D: TmaBox | None
    tma_store: bool
    shared_bytes: int
    # (block_m, block_n, block_k) of a stream-K kernel (its launch sizes the workspace and
    # the shared tiles by them), else None
    stream_k: tuple | None = None

    def to_json(self) -> str:
        boxes = {k: asdict(v) for k, v in self.tma.items()}
        d = None if self.tma_D is None else asdict(self.tma_D)
        return json.dumps({"tma": boxes, "tma_D": d, "tma_store": self.tma_store,
                           "shared_bytes": self.shared_bytes,
                           "stream_k": self.stream_k})  # fmt: skip

    @staticmethod
    def from_json(text: str) -> Sm90Launch:
        def box(d):
            return TmaBox(d["dtype"], d["contiguous"], tuple(d["box"]), d["swizzle"],
                          tuple(tuple(c) for c in d["copies"]))  # fmt: skip

        r = json.loads(text)
        tma_d = None if r["tma_D"] is None else box(r["tma_D"])
        sk = r.get("stream_k")
        return Sm90Launch({k: box(v) for k, v in r["tma"].items()}, tma_d, r["tma_store"],
                          r["shared_bytes"], None if sk is None else tuple(sk))  # fmt: skip

    @staticmethod
    def of(plan: Sm90Plan) -> Sm90Launch:
        tma_d = plan.tma_D if plan.tma_store else None
        cfg = plan.config
        sk = (cfg.block_m, cfg.block_n, plan.block_k) if cfg.stream_k else None
        return Sm90Launch(dict(plan.tma), tma_d, plan.tma_store, plan.shared_bytes, sk)


def operand_map_args(
    box: TmaBox,
    which: str,
    address: int,
    rows: int,
    cols: int,
    major: str,
    ld: int,
    batch: int | None = None,
    batch_stride: int = 0,
) -> TensorMapArgs:
    """``cuTensorMapEncodeTiled`` arguments of operand ``which`` (pure: no GPU).

    A is (M, K): 'K'-major -> dims (K, M); 'M'-major -> (M, K). B is (K, N): 'K'-major
    (column-major) -> dims (K, N); 'N'-major -> (N, K). With a batch (``batch`` > 1
    matrices ``batch_stride`` elements apart) the batch is a third, outermost dim; a
    shared operand (no batch, or stride 0) keeps rank 2. Raises TmaError naming the rule
    a tensor breaks.

    >>> from cutemma.kernels.sm90.plan import Sm90Plan, Sm90Config
    >>> box = Sm90Plan(Sm90Config(), "bf16", "K", "N").tma["A"]
    >>> a = operand_map_args(box, "A", 0x7F0000000000, 300, 64, "K", 64, 5, 300 * 64)
    >>> a.global_dim, a.global_strides, a.box_dim
    ((64, 300, 5), (128, 38400), (64, 128, 1))
    """
    if which == "A":
        dims = (cols, rows) if major == "K" else (rows, cols)
    else:
        dims = (rows, cols) if major == "K" else (cols, rows)
    dims, strides = batched_dims(dims, (ld,), batch, batch_stride)
    return tensor_map_args(box, address, dims, strides)


def operand_map(plan: Sm90Plan | Sm90Launch, which: str, t: Any, major: str, ld: int) -> bytes:
    """The encoded tensor map of operand ``which`` (2-D, or 3-D with a batch: rank 3; see
    :func:`operand_map_args`). Raises LaunchError naming the TMA rule a tensor breaks."""
    rows, cols = t.shape[-2:]
    batch, bstride = (t.shape[0], t.stride(0)) if t.dim() == 3 else (None, 0)
    ensure_context(t.device.index or 0)  # a new thread has none; encoding needs one
    try:
        args = operand_map_args(
            plan.tma[which], which, t.data_ptr(), rows, cols, major, ld, batch, bstride
        )
    except TmaError as exc:
        raise LaunchError(f"gemm (sm90): operand {which}: {exc}") from None
    return encode_tensor_map(args)


# tensor maps of outputs D (the TMA-store epilogue), per (pointer, shape, row stride, box):
# torch's caching allocator hands a repeated call the same output block, so this hits
_DMAPS: dict[tuple, Any] = {}


NO_MAP = tensor_map_param(bytes(128))  # passed (unused) when D is stored from registers


def output_map_args(
    box: TmaBox, address: int, shape: tuple, strides: tuple
) -> TensorMapArgs | None:
    """``cuTensorMapEncodeTiled`` arguments storing an output of ``shape`` (M, N) or
    (L, M, N) with element ``strides`` through ``box``, or None when TMA cannot write it
    (not row-major, rows or problems overlapping, a TMA rule broken): the kernel then
    stores from registers. A batched output is rank 3, the problem outermost. A box whose
    contiguous mode is 'MN' (the "tmat" epilogue) stores a column-major 2-D output (the
    swapped kernel's D^T): dims (M, N).

    >>> from cutemma.kernels.sm90.plan import Sm90Plan, Sm90Config
    >>> box = Sm90Plan(Sm90Config(), "bf16", "K", "N", "bf16").tma_D
    >>> output_map_args(box, 0x7F0000000000, (3, 100, 72), (7200, 72, 1)).global_dim
    (72, 100, 3)
    >>> output_map_args(box, 0x7F0000000000, (3, 100, 72), (7201, 72, 1)) is None
    True
    """
    if box.contiguous == "MN":
        return _column_major_args(box, address, shape, strides)
    *lb, M, N = shape
    *lbs, ld, unit = strides
    if unit != 1 or address % TMA_RULES.global_align or (M > 1 and ld < N):
        return None
    batch, bstride = (lb[0], lbs[0]) if lb else (None, 0)
    if batch is not None and (batch < 2 or bstride < (M - 1) * ld + N):
        return None  # one problem, or problems overlapping: not a rank-3 store
    dims, st = batched_dims((N, M), (max(ld, N),), batch, bstride)
    try:
        return tensor_map_args(box, address, dims, st)
    except TmaError:
        return None


def _column_major_args(
    box: TmaBox, address: int, shape: tuple, strides: tuple
) -> TensorMapArgs | None:
    """:func:`output_map_args` of a column-major (M, N) output, or None (another layout,
    a batch, a TMA rule broken).

    >>> from cutemma.kernels.sm90.plan import Sm90Plan, Sm90Config
    >>> box = Sm90Plan(Sm90Config(128, 144, epilogue="tmat"), "bf16", "K", "K", "bf16").tma_D
    >>> _column_major_args(box, 0x7F0000000000, (8192, 300), (1, 8192)).global_dim
    (8192, 300)
    >>> _column_major_args(box, 0x7F0000000000, (8192, 300), (300, 1)) is None
    True
    """
    if len(shape) != 2 or strides[0] != 1 or address % TMA_RULES.global_align:
        return None
    (M, N), ld = shape, strides[1]
    if N > 1 and ld < M:
        return None
    try:
        return tensor_map_args(box, address, (M, N), (max(ld, M),))
    except TmaError:
        return None


def output_map(plan: Sm90Plan | Sm90Launch, out: Any) -> Any:
    """The tensor-map argument storing ``out`` (row-major, TMA-aligned) box by box, or None
    when TMA cannot write it (the kernel then stores from registers)."""
    ptr, shape, st = out.data_ptr(), tuple(out.shape), out.stride()
    key = (ptr, shape, st, plan.tma_D)
    param = _DMAPS.get(key)
    if param is None:
        args = output_map_args(plan.tma_D, ptr, shape, st)
        if args is None:
            return None
        ensure_context(out.device.index or 0)  # a new thread has none; encoding needs one
        param = put_bounded(_DMAPS, key, tensor_map_param(encode_tensor_map(args)), _DMAPS_MAX)
    return param
