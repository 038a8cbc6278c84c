"""``gemm_sm90(A, B, C=None, *, alpha, beta, out, out_dtype, config)``: the Hopper kernel's host side.

2-D torch tensors of float16 or bfloat16 (either major each), on an sm_90 GPU, with
TMA's rules met (16-byte aligned base pointers and leading strides); else a LaunchError
says which rule failed (``cutemma.gemm`` then keeps the sm80 kernel). The tensor maps
come from :mod:`cutemma.copy.tma` (boxes and swizzle from the plan's stage layouts),
cached per (pointer, shape, strides, box); the kernel is persistent: one CTA per SM.

>>> supports_sm90("bfloat16", "bfloat16")
True
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from cutemma.copy.tma import TmaBox, encode_tensor_map, tensor_map_args, tensor_map_param
from cutemma.errors import LaunchError, TmaError
from cutemma.kernels.dispatch import _arch, _check, _dtype, _dtype_name, _major
from cutemma.kernels.fastlaunch import DriverKernel
from cutemma.kernels.fastpath_sm90 import PreparedLaunch, fast_key, remember
from cutemma.kernels.gemm_sm90 import gemm_sm90_source, kernel_name_sm90
from cutemma.kernels.plan_sm90 import Sm90Config, Sm90Plan

# torch input dtype -> (kernel dtype, output dtypes it may write; the first is the default)
SM90_DTYPES = {
    "float16": ("f16", ("float16", "float32")),
    "bfloat16": ("bf16", ("bfloat16", "float32")),
    "float32": ("tf32", ("float32",)),
    "float8_e4m3fn": ("e4m3", ("bfloat16", "float16", "float32")),
    "float8_e5m2": ("e5m2", ("bfloat16", "float16", "float32")),
}
_OUT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}
DEFAULT_SM90 = Sm90Config(128, 256)
SMALL_SM90 = Sm90Config(128, 128)


def supports_sm90(a_dtype: str, b_dtype: str) -> bool:
    """Whether the sm90 kernel takes these input dtypes (torch names, no 'torch.').

    >>> supports_sm90("float32", "float32"), supports_sm90("int8", "int8")
    (True, False)
    """
    return a_dtype == b_dtype and a_dtype in SM90_DTYPES


def sm90_refusal(A: Any, B: Any, config: Any = None) -> str | None:
    """Why ``cutemma.gemm`` cannot run (A, B) on the sm90 kernel, or None when it can.

    The rules: a 2-D call on an sm_90a device, A and B of one sm90 dtype, 16-bit types in
    either major and others K-major (A row-major, B column-major), every base pointer and
    leading stride 16-byte aligned (TMA), and no sm80 ``GemmConfig`` asked for. (float8
    runs here by default: its k-tile sums are promoted into f32, ``Sm90Config.promote``.)

    >>> sm90_refusal(None, None, config=object())
    'an sm80 config was asked for'
    """
    if config is not None and not isinstance(config, Sm90Config):
        return "an sm80 config was asked for"
    if A.dim() != 2 or B.dim() != 2:
        return "batched 3-D operands (not yet on sm90)"
    a, b = _dtype(A), _dtype(B)
    if not supports_sm90(a, b):
        return f"dtypes {a} x {b}"
    if _arch(A.device.index or 0) != "sm_90a":
        return "the device is not sm_90"
    eb = A.element_size()
    a_t, a_major, lda = _major(A, "A", ("K", "M"))
    b_t, b_major, ldb = _major(B, "B", ("K", "N"))
    if SM90_DTYPES[a][0] in ("tf32", "e4m3", "e5m2") and (a_major, b_major) != ("K", "K"):
        return "an 8- or 32-bit operand that is not K-major"
    for t, ld in ((a_t, lda), (b_t, ldb)):
        if t.data_ptr() % 16 or (ld * eb) % 16:
            return "an operand TMA cannot read (base or leading stride not 16-byte aligned)"
    return None


# per-tile speed of 128x128 relative to 128x256 tiles (run 9, 8192^3: 643 vs 711 TFLOP/s)
SMALL_TILE_SPEED = 0.92


def pick_sm90_config(m: int, n: int, sms: int = 132, dtype: str = "bf16") -> Sm90Config:
    """The built-in tile for an (m, n) output: 128x256 or 128x128, whichever finishes first
    counting whole waves of tiles over the SMs (the last wave's idle SMs cost time) and the
    smaller tile's lower speed (under one wave of 128x256 tiles: 128x128). fp8 (promoted
    accumulation: two accumulator sets, at most 2 x 96 per thread) the same way between
    128x192 and 128x128.

    >>> [pick_sm90_config(s, s).name for s in (8192, 4096, 3072, 1024)]
    ['b128x256_c2_sauto', 'b128x256_c2_sauto', 'b128x128_c2_sauto', 'b128x128_c2_sauto']
    >>> [pick_sm90_config(s, s, dtype="e4m3").name for s in (8192, 6144, 4096, 1024)]
    ['b128x192_c2_sauto', 'b128x192_c2_sauto', 'b128x128_c2_sauto', 'b128x128_c2_sauto']
    """

    def cost(bn: int, speed: float) -> float:  # time in units of a 128-row, 1-column tile
        tiles = -(-m // 128) * -(-n // bn)
        return -(-tiles // sms) * bn / speed

    if dtype in ("e4m3", "e5m2"):
        # promoted fp8, runs 14-16 (e4m3 8192^3): 128x192 0.97-1.00x of _scaled_mm,
        # 128x128 0.88-0.94x of 128x192's speed (mean 0.915); at 4096^3 128x128 by waves
        big = Sm90Config(128, 192)
        if -(-m // 128) * -(-n // 192) < sms:
            return SMALL_SM90
        return big if cost(192, 1.0) <= cost(128, 0.915) else SMALL_SM90
    if -(-m // 128) * -(-n // 256) < sms:  # under one wave: more, smaller tiles (measured)
        return SMALL_SM90
    return DEFAULT_SM90 if cost(256, 1.0) <= cost(128, SMALL_TILE_SPEED) else SMALL_SM90


@dataclass(frozen=True)
class Sm90Launch:
    """What the host needs of a compiled variant's plan: TMA boxes, shared bytes, the
    TMA-store flag (kept beside the cubin, so a new process need not rebuild the plan)."""

    tma: dict
    tma_D: TmaBox | None
    tma_store: bool
    shared_bytes: int

    def to_json(self) -> str:
        boxes = {k: asdict(v) for k, v in self.tma.items()}
        d = None if self.tma_D is None else asdict(self.tma_D)
        return json.dumps({"tma": boxes, "tma_D": d, "tma_store": self.tma_store,
                           "shared_bytes": self.shared_bytes})  # fmt: skip

    @staticmethod
    def from_json(text: str) -> Sm90Launch:
        def box(d):
            return TmaBox(d["dtype"], d["contiguous"], tuple(d["box"]), d["swizzle"],
                          tuple(tuple(c) for c in d["copies"]))  # fmt: skip

        r = json.loads(text)
        tma_d = None if r["tma_D"] is None else box(r["tma_D"])
        return Sm90Launch({k: box(v) for k, v in r["tma"].items()}, tma_d, r["tma_store"],
                          r["shared_bytes"])  # fmt: skip

    @staticmethod
    def of(plan: Sm90Plan) -> Sm90Launch:
        tma_d = plan.tma_D if plan.tma_store else None
        return Sm90Launch(dict(plan.tma), tma_d, plan.tma_store, plan.shared_bytes)


@cache
def _package_fingerprint() -> str:
    """Sizes and mtimes of cutemma's sources: any edit changes the generated kernels' index."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        st = p.stat()
        h.update(f"{p.relative_to(root)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()


def _index_path(name: str, arch: str) -> Path | None:
    from cutemma.cuda import cache as disk
    from cutemma.cuda.compile import nvrtc_version_hint

    hint = nvrtc_version_hint()
    if hint is None:
        return None
    key = hashlib.sha256(f"{name}|{arch}|{hint}|{_package_fingerprint()}".encode()).hexdigest()
    return disk.cache_dir() / f"{key}.sm90"


@cache
def compiled_sm90(
    config: Sm90Config, dtype: str, a_major: str, b_major: str, out: str, c_type: str, arch: str
) -> tuple[DriverKernel, Sm90Launch]:
    """(DriverKernel, launch record) for one variant, compiled once per process.

    Disk-cached twice: the cubin by its source (:func:`cutemma.cuda.compile`), and an index
    by kernel name + cutemma's source fingerprint holding the cubin and the launch record,
    so a new process loads a known kernel without generating its source or loading NVRTC.

    >>> k, launch = compiled_sm90(Sm90Config(), "bf16", "K", "K", "bf16", "bf16", "sm_90a")  # doctest: +SKIP
    """
    name = kernel_name_sm90(config, dtype, a_major, b_major, out, c_type)
    index = _index_path(name, arch)
    if index is not None:
        try:
            cubin, record = index.read_bytes().split(b"\n--cutemma-sm90--\n", 1)
            launch = Sm90Launch.from_json(record.decode())
            return DriverKernel(cubin, name, launch.shared_bytes, config.threads), launch
        except (OSError, ValueError, KeyError, TypeError):
            pass  # absent or damaged: build it
    from cutemma.cuda import compile

    plan = Sm90Plan(config, dtype, a_major, b_major, out)
    cubin = compile(gemm_sm90_source(config, dtype, a_major, b_major, out, c_type), arch)
    launch = Sm90Launch.of(plan)
    if index is not None:
        try:
            index.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=index.parent, prefix=".tmp-", suffix=".sm90")
            with os.fdopen(fd, "wb") as f:
                f.write(cubin.data + b"\n--cutemma-sm90--\n" + launch.to_json().encode())
            os.replace(tmp, index)
        except OSError:
            pass  # a read-only cache only makes the next process slower
    return DriverKernel(cubin.data, name, launch.shared_bytes, config.threads), launch


@cache
def sm_count(device: int) -> int:
    """Multiprocessors of a device (read once)."""
    import torch

    return torch.cuda.get_device_properties(device).multi_processor_count


def operand_map(plan: Sm90Plan | Sm90Launch, which: str, t: Any, major: str, ld: int) -> bytes:
    """The encoded tensor map of operand ``which`` (dims contiguous mode first).

    A is (M, K): 'K'-major -> dims (K, M); 'M'-major -> (M, K). B is (K, N): 'K'-major
    (column-major) -> dims (K, N); 'N'-major -> (N, K). Raises LaunchError naming the
    TMA rule a tensor breaks.
    """
    rows, cols = t.shape[-2:]
    if which == "A":
        dims = (cols, rows) if major == "K" else (rows, cols)
    else:
        dims = (rows, cols) if major == "K" else (cols, rows)
    try:
        args = tensor_map_args(plan.tma[which], t.data_ptr(), dims, (ld,))
    except TmaError as exc:
        raise LaunchError(f"gemm (sm90): operand {which}: {exc}") from None
    return encode_tensor_map(args)


_I32 = ctypes.c_int32
# prepared launches (kernel, grid, tensor-map argument boxes, sizes) per argument signature:
# a repeated call with the same operands only boxes C, D, their strides and alpha/beta
_PREPARED: dict[tuple, tuple] = {}
_PREPARED_MAX = 256


def _prepare(A: Any, B: Any, majors: tuple, out: Any, C: Any, config, persistent: bool) -> tuple:
    """(kernel, grid, map_a, map_b, (M, N, K) boxes, device) for one argument signature."""
    M, K = A.shape
    N = B.shape[1]
    a_major, lda, b_major, ldb = majors
    device = A.device.index or 0
    arch = _arch(device)
    if arch != "sm_90a":
        raise LaunchError(f"gemm (sm90): device {device} is {arch}; the kernel needs sm_90a")
    dtype = SM90_DTYPES[_dtype(A)][0]
    config = config or pick_sm90_config(M, N, sm_count(device), dtype)
    kern, plan = compiled_sm90(
        config, dtype, a_major, b_major, _OUT[_dtype(out)], _OUT[_dtype(C)], arch
    )
    map_a = tensor_map_param(operand_map(plan, "A", A, a_major, lda))
    map_b = tensor_map_param(operand_map(plan, "B", B, b_major, ldb))
    cl = config.cluster  # a cluster walks cl M (or N) tiles at once; the grid is whole clusters
    cm, cn = (1, cl) if config.multicast == "A" else (cl, 1)
    tiles = -(-M // (config.block_m * cm)) * -(-N // (config.block_n * cn))
    grid = cl * (min(tiles, sm_count(device) // cl) if persistent else tiles)
    return kern, grid, map_a, map_b, (_I32(M), _I32(N), _I32(K)), device, plan


# tensor maps of outputs D (the TMA-store epilogue), per (pointer, shape, row stride, box):
# torch's caching allocator hands a repeated call the same output block, so this hits
_DMAPS: dict[tuple, Any] = {}
NO_MAP = tensor_map_param(bytes(128))  # passed (unused) when D is stored from registers


def output_map(plan: Sm90Plan | Sm90Launch, out: Any) -> Any:
    """The tensor-map argument storing ``out`` (row-major, TMA-aligned) box by box, or None
    when TMA cannot write it (the kernel then stores from registers)."""
    ptr, (M, N), (ld, unit) = out.data_ptr(), out.shape, out.stride()
    eb = out.element_size()
    if unit != 1 or ptr % 16 or (ld * eb) % 16 or (M > 1 and ld < N):
        return None
    key = (ptr, M, N, ld, plan.tma_D)
    param = _DMAPS.get(key)
    if param is None:
        try:
            args = tensor_map_args(plan.tma_D, ptr, (N, M), (max(ld, N),))
        except TmaError:
            return None
        if len(_DMAPS) >= _PREPARED_MAX:
            _DMAPS.pop(next(iter(_DMAPS)))
        param = _DMAPS[key] = tensor_map_param(encode_tensor_map(args))
    return param


def gemm_sm90(
    A: Any,
    B: Any,
    C: Any = None,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    out: Any = None,
    out_dtype: Any = None,
    config: Sm90Config | None = None,
    persistent: bool = True,
    _remember: Any = None,
) -> Any:
    """D = alpha * A @ B + beta * C with the sm90 (wgmma + TMA, warp-specialised) kernel.

    A (M, K) and B (K, N): float16 or bfloat16, 2-D, any row/column-major strides whose
    leading dimension is a multiple of 8 elements (TMA: 16-byte strides), base pointers
    16-byte aligned. ``out_dtype`` is A's dtype or float32. ``persistent=False`` launches one
    CTA per tile (the ablation's "no persistent scheduler"). ``_remember`` (cutemma.gemm's
    use): ``(out dtype or None,)``, the slot of the fast-path key under which this call's
    launch is kept for the next call with the same operands.

    >>> import torch                                                  # doctest: +SKIP
    >>> A = torch.randn(300, 256, device="cuda", dtype=torch.bfloat16)  # doctest: +SKIP
    >>> B = torch.randn(256, 136, device="cuda", dtype=torch.bfloat16)  # doctest: +SKIP
    >>> gemm_sm90(A, B).shape                                         # doctest: +SKIP
    torch.Size([300, 136])
    """
    import torch

    batch, _, _ = _check(A, B)
    if batch is not None or A.dim() != 2:
        raise LaunchError("gemm (sm90): batched 3-D operands are not supported yet; use 2-D")
    a_name, b_name = _dtype(A), _dtype(B)
    if not supports_sm90(a_name, b_name):
        raise LaunchError(
            f"gemm (sm90): A is {a_name}, B is {b_name}; the sm90 kernel takes one of "
            f"{', '.join(SM90_DTYPES)} for both"
        )
    dtype, outs = SM90_DTYPES[a_name]
    M, K = A.shape
    N = B.shape[1]
    out_dtype = out_dtype or (out.dtype if out is not None else getattr(torch, outs[0]))
    if _dtype_name(out_dtype) not in outs:
        raise LaunchError(f"gemm (sm90): out_dtype {out_dtype}; choose {' or '.join(outs)}")
    if out is None:
        out = torch.empty((M, N), dtype=out_dtype, device=A.device)
    if tuple(out.shape) != (M, N) or out.dtype != out_dtype or out.device != A.device:
        raise LaunchError(f"gemm (sm90): out is {tuple(out.shape)} {out.dtype}; need {(M, N)}")
    if M == 0 or N == 0:
        return out
    if K == 0:
        return out.copy_(beta * C.expand(M, N) if C is not None and beta else torch.zeros_like(out))
    if C is None or beta == 0:
        C, beta = out, 0.0
    else:
        C = (C if C.dtype == out.dtype else C.to(out.dtype)).expand(M, N)
    A_in, B_in = A, B
    A, a_major, lda = _major(A, "A", ("K", "M"))  # a copy if neither mode is contiguous
    B, b_major, ldb = _major(B, "B", ("K", "N"))
    key = (A.data_ptr(), A.shape, A.stride(), A.dtype, B.data_ptr(), B.shape, B.stride(),
           B.dtype, out.dtype, C.dtype, config, persistent, A.device)  # fmt: skip
    prepared = _PREPARED.get(key)
    if prepared is None:
        kern, grid, map_a, map_b, sizes, device, plan = _prepare(
            A, B, (a_major, lda, b_major, ldb), out, C, config, persistent
        )
        prepared = PreparedLaunch(kern, device, grid, (map_a, map_b), sizes, plan, out.dtype,
                                  (M, N))  # fmt: skip
        if len(_PREPARED) >= _PREPARED_MAX:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[key] = prepared
    if _remember is not None and C is out and persistent and A is A_in and B is B_in:
        remember(fast_key(A, B, _remember[0], config), prepared)  # cutemma.gemm's next call
    prepared.set_operands(C, out, alpha, beta)
    prepared.launch()
    return out
