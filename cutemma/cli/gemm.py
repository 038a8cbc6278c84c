"""``cutemma gemm``: show a GEMM kernel's source and plan, compile it, or run it on the GPU.

    cutemma gemm --show-source --dtype bf16 --a-major K --b-major N --config 128x128x32/2x2/4
    cutemma gemm --plan --config small
    cutemma gemm --sass --arch sm90a
    cutemma gemm --run 4096 4096 4096
    cutemma gemm --show-source --dtype e4m3_e5m2 --out f32     (fp8: A e4m3, B e5m2)
    cutemma gemm --run 512 512 512 --batch 8 --dtype e4m3

Every kernel is batched: blockIdx.y picks the problem, ``batch_a`` ... ``batch_d`` are the
element strides between problems (0 broadcasts; a 2-D call passes zeros).

>>> from cutemma.cli import main
>>> main(["gemm", "--plan", "--config", "64x64x32/2x2/3"])  # doctest: +ELLIPSIS
config b64x64x32_w2x2_s3: 128 threads, 3 stages, 24576 B shared
...
0
"""

from __future__ import annotations

import argparse
import re

from cutemma.errors import CliError, LaunchError, TiledMmaError
from cutemma.kernels.pick import BUILTIN_CONFIGS, pick_config
from cutemma.kernels.sm80.plan import ELEM_BYTES, GemmConfig, GemmPlan
from cutemma.kernels.sm80.source import gemm_source

_FP8_TORCH = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def parse_config(text: str) -> GemmConfig:
    """A built-in name ('large', 'wide', 'small') or 'MxNxK/WMxWN/STAGES'.

    >>> parse_config("128x256x32/2x4/3").name
    'b128x256x32_w2x4_s3'
    """
    if text in BUILTIN_CONFIGS:
        return BUILTIN_CONFIGS[text]
    m = re.fullmatch(r"(\d{1,6})x(\d{1,6})x(\d{1,6})/(\d{1,3})x(\d{1,3})/(\d{1,3})", text.strip())
    if not m:
        raise TiledMmaError(
            f"--config {text!r}: give one of {', '.join(BUILTIN_CONFIGS)} or "
            "BMxBNxBK/WMxWN/STAGES, e.g. 128x128x32/2x2/4"
        )
    bm, bn, bk, wm, wn, stages = (int(x) for x in m.groups())
    try:
        return GemmConfig(bm, bn, bk, (wm, wn), stages)
    except TiledMmaError as err:
        raise TiledMmaError(f"--config {text!r}: {err}") from None


def gemm_arch(arch: str | None, dtype: str) -> str:
    """The NVRTC target for ``--arch`` (any spelling) and ``--dtype``: by default the oldest
    architecture with the dtype's mma.sync (sm_80; sm_89 for fp8); an older one is refused.

    >>> gemm_arch(None, "bf16"), gemm_arch(None, "e4m3"), gemm_arch("90a", "e4m3_e5m2")
    ('sm_80', 'sm_89', 'sm_90a')
    """
    from cutemma.cli.args import nvrtc_target, parse_arch
    from cutemma.kernels.sm80.plan import ATOMS
    from cutemma.mma import mma_op

    atom = mma_op(ATOMS[dtype])
    need = max(80, atom.arch)  # cp.async and ldmatrix: sm_80, whatever the atom
    if arch is None:
        return f"sm_{need}"
    number, _ = parse_arch(arch)
    if number < need:
        raise CliError(
            f"--arch {arch} with --dtype {dtype}: the kernel's atom {atom.name} needs "
            f"sm_{need} or newer; use --arch sm{need} or newer, or leave --arch out"
        )
    return nvrtc_target(arch)


def describe(plan: GemmPlan) -> str:
    """The plan's layouts, one per line: what the kernel's constants come from.

    >>> print("\\n".join(describe(GemmPlan(GemmConfig(), "bf16", "K", "N")).splitlines()[:2]))
    config b128x128x32_w2x2_s4: 128 threads, 4 stages, 65536 B shared
    TiledMMA SM80_16x8x16_F32BF16BF16F32_TN x (2, 2): tile (32, 16, 16)
    """
    cfg = plan.config
    (la, sa), (lb, sb) = plan.ldmatrix("A"), plan.ldmatrix("B")
    m_t, n_t, _ = plan.epilogue
    lines = [
        f"config {cfg.name}: {plan.threads} threads, {cfg.stages} stages, "
        f"{plan.shared_bytes} B shared",
        f"TiledMMA {plan.tiled.atom.name} x {cfg.warps}: tile {plan.tiled.tile_size_mnk}",
        f"  tv_layout_A_tiled {plan.tiled.tv_layout_A_tiled}",
        f"  tv_layout_B_tiled {plan.tiled.tv_layout_B_tiled}",
        f"  tv_layout_C_tiled {plan.tiled.tv_layout_C_tiled}",
        f"smem A (m,k) {plan.smem_A}",
        f"smem B (n,k) {plan.smem_B}",
        f"ldmatrix A {la.atom.ptx}: lane rows {sa.thread.layout} then {sa.thread.swizzle}, "
        f"values {sa.op} {list(sa.consts)}",
        f"ldmatrix B {lb.atom.ptx}: lane rows {sb.thread.layout} then {sb.thread.swizzle}, "
        f"values {sb.op} {list(sb.consts)}",
        f"bank conflicts (rows per 16-byte group): A {plan.bank_conflicts('A')}, "
        f"B {plan.bank_conflicts('B')}",
        f"epilogue: m {m_t.layout}, n {n_t.layout} over tid",
    ]
    for which in ("A", "B"):
        cp = plan.copy(which)
        lines.append(
            f"cp.async {which}: thr_layout {cp.thr_layout}, {cp.iters} x 16 B per thread, "
            f"smem {cp.smem.thread.layout} then {cp.smem.thread.swizzle} {cp.smem.op} "
            f"{list(cp.smem.consts)}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the plan and/or the source, count SASS, or run on the GPU, as ``args`` ask.

    ``args`` has every option filled in (the parser's ``run`` default does that first):

    >>> args = argparse.Namespace(config="small", dtype="bf16", a_major="K", b_major="N",
    ...                           out="bf16", plan=True, show_source=False, sass=False,
    ...                           run_mnk=None)
    >>> run(args)  # doctest: +ELLIPSIS
    config b64x64x32_w2x2_s4: 128 threads, 4 stages, 32768 B shared
    ...
    0
    """
    cfg = parse_config(args.config)
    if not getattr(args, "config_given", True) and cfg == BUILTIN_CONFIGS["large"]:
        cfg = pick_config(1 << 14, 1 << 14, 1 << 14, dtype=args.dtype).config  # fp8: 8 warps
    if args.plan:
        print(describe(GemmPlan(cfg, args.dtype, args.a_major, args.b_major)))
    if args.show_source:
        print(gemm_source(cfg, args.dtype, args.a_major, args.b_major, args.out))
    if args.sass:
        from cutemma.cuda import compile, count_instructions, local_memory_use, sass

        cubin = compile(
            gemm_source(cfg, args.dtype, args.a_major, args.b_major, args.out),
            gemm_arch(args.arch, args.dtype),
        )
        counts = count_instructions(sass(cubin))
        keys = ("HMMA", "IMMA", "QMMA", "F2FP", "LDSM", "LDGSTS", "BAR", "LDL", "STL")
        print(
            ", ".join(f"{k} {counts.get(k, 0)}" for k in keys),
            "| local memory:",
            local_memory_use(cubin),
        )
    if args.run_mnk:
        _run_gpu(args, cfg)
    return 0


def _torch_on_gpu():
    """torch with a CUDA GPU, or a LaunchError saying which is missing and how to get it."""
    try:
        import torch
    except ImportError:
        raise LaunchError(
            "gemm --run needs PyTorch and an NVIDIA GPU: torch is not installed (pip install "
            "torch); --show-source, --plan and --sass work without them"
        ) from None
    if not torch.cuda.is_available():
        raise LaunchError(
            "gemm --run needs an NVIDIA GPU and torch sees none (torch.cuda.is_available() is "
            "False); --show-source, --plan and --sass work without one"
        )
    return torch


def _run_gpu(args: argparse.Namespace, cfg: GemmConfig) -> None:
    m, n, k = args.run_mnk
    if min(m, n, k) < 1 or args.batch < 0:
        raise CliError(
            f"--run {m} {n} {k} --batch {args.batch}: M, N and K must be at least 1 and the "
            "batch at least 0 (0: one 2-D problem)"
        )
    torch = _torch_on_gpu()
    from cutemma.kernels import gemm

    lead = (args.batch,) if args.batch else ()
    dt = {"f16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}.get(args.dtype)
    if args.dtype == "s8":
        A = torch.randint(-128, 128, (*lead, m, k), device="cuda", dtype=torch.int8)
        B = torch.randint(-128, 128, (*lead, k, n), device="cuda", dtype=torch.int8)
    elif dt is None:  # fp8: 'e4m3', 'e5m2' or a mixed 'e4m3_e5m2'
        ta, tb = (getattr(torch, _FP8_TORCH[t]) for t in (args.dtype.split("_") * 2)[:2])
        A = torch.randn(*lead, m, k, device="cuda").to(ta)
        B = torch.randn(*lead, k, n, device="cuda").to(tb)
    else:
        A = torch.randn(*lead, m, k, device="cuda", dtype=dt)
        B = torch.randn(*lead, k, n, device="cuda", dtype=dt)
    D = gemm(A, B, config=cfg if args.config_given else None)
    ref = torch.matmul(A.float().double(), B.float().double())
    err = float((D.double() - ref).norm() / ref.norm())
    what = f"{args.batch} x " if args.batch else ""
    print(f"cutemma.gemm {what}{m}x{n}x{k} {args.dtype}: rel err vs float64 {err:.2e}")


def register(sub) -> None:
    """Add the ``gemm`` subcommand; unset options take defaults that suit ``--dtype``.

    int8 writes s32 and reads B K-major:

    >>> import contextlib, io
    >>> sub = argparse.ArgumentParser(prog="cutemma").add_subparsers()
    >>> register(sub)
    >>> args = sub.choices["gemm"].parse_args(["--dtype", "s8"])
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     status = args.run(args)
    >>> status, args.out, args.a_major, args.b_major
    (0, 's32', 'K', 'K')
    """
    p = sub.add_parser("gemm", help="the sm80 GEMM kernel: source, plan, SASS, run")
    p.add_argument("--config", default=None, help="large | wide | small | BMxBNxBK/WMxWN/S")
    p.add_argument(
        "--dtype",
        default="bf16",
        choices=list(ELEM_BYTES),
        help="element type; fp8 'e4m3'/'e5m2', mixed A_B as 'e4m3_e5m2' (default bf16)",
    )
    p.add_argument("--a-major", default=None, choices=["K", "M"], help="default K")
    p.add_argument(
        "--b-major", default=None, choices=["K", "N"], help="default N (8/32-bit types: K)"
    )
    p.add_argument(
        "--out", default=None, choices=["f16", "bf16", "f32", "s32"], help="output (fp8: bf16)"
    )
    p.add_argument("--show-source", action="store_true", help="print the CUDA C++")
    p.add_argument("--plan", action="store_true", help="print the layouts behind the constants")
    p.add_argument("--sass", action="store_true", help="compile and count key SASS instructions")
    p.add_argument(
        "--arch", default=None, help="--sass target, e.g. sm80, sm_90a (default sm80; fp8 sm89)"
    )
    p.add_argument(
        "--run", dest="run_mnk", nargs=3, type=int, metavar=("M", "N", "K"), help="run on the GPU"
    )
    p.add_argument("--batch", type=int, default=0, help="--run a batch of this many problems")

    def _run(args):
        args.config_given = args.config is not None
        args.config = args.config or "large"
        args.out = args.out or {"tf32": "f32", "s8": "s32", "f16": "f16"}.get(args.dtype, "bf16")
        narrow = ELEM_BYTES[args.dtype] != 2  # 8- and 32-bit types: read K-major only
        args.a_major = args.a_major or "K"
        args.b_major = args.b_major or ("K" if narrow else "N")
        if not (args.plan or args.show_source or args.sass or args.run_mnk):
            args.plan = True
        return run(args)

    p.set_defaults(run=_run)
