"""``cutemma gemm``: show a GEMM kernel's source and plan, compile it, or run it on the GPU.

    cutemma gemm --show-source --dtype bf16 --a-major K --b-major N --config 128x128x32/2x2/4
    cutemma gemm --plan --config small
    cutemma gemm --sass --arch sm90a             (the wgmma kernel cutemma.gemm runs there)
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

from cutemma.cli.args import whole_number
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


def arch_option(arch: str) -> str:
    """The compile target of ``--arch``, read by the parser the API uses
    (:func:`cutemma.hardware.parse_arch`); a CliError naming the option and the known ones.

    >>> arch_option("sm90a"), arch_option("SM_120A")
    ('sm_90a', 'sm_120a')
    """
    from cutemma.errors import ArchError
    from cutemma.hardware import parse_arch

    try:
        return parse_arch(arch)
    except ArchError as exc:
        raise CliError(f"--arch: {exc}") from None


def gemm_arch(arch: str | None, dtype: str) -> str:
    """The NVRTC target for ``--arch`` (any spelling) and ``--dtype``: by default the oldest
    architecture with the dtype's mma.sync (sm_80; sm_89 for fp8); an older one is refused.

    >>> gemm_arch(None, "bf16"), gemm_arch(None, "e4m3"), gemm_arch("90a", "e4m3_e5m2")
    ('sm_80', 'sm_89', 'sm_90a')
    """
    from cutemma.hardware import arch_number
    from cutemma.kernels.sm80.plan import ATOMS
    from cutemma.mma import mma_op

    atom = mma_op(ATOMS[dtype])
    need = max(80, atom.arch)  # cp.async and ldmatrix: sm_80, whatever the atom
    if arch is None:
        return f"sm_{need}"
    target = arch_option(arch)
    if arch_number(target) < need:
        raise CliError(
            f"--arch {arch} with --dtype {dtype}: the kernel's atom {atom.name} needs "
            f"sm_{need} or newer; use --arch sm{need} or newer, or leave --arch out"
        )
    return target


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
            f"cp.async {which}: thr_layout {cp.thr_layout}, {cp.iters} x {cp.chunk_bytes} B per "
            "thread, "
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
    if (
        gemm_family(getattr(args, "family", "sm80"), getattr(args, "arch", None), args.dtype)
        == "sm90"
    ):
        return run_sm90(args)
    cfg = parse_config(args.config)
    if not getattr(args, "config_given", True) and cfg == BUILTIN_CONFIGS["large"]:
        cfg = pick_config(1 << 14, 1 << 14, 1 << 14, dtype=args.dtype).config  # fp8: 8 warps
    if args.plan:
        print(describe(GemmPlan(cfg, args.dtype, args.a_major, args.b_major)))
    if args.show_source:
        print(gemm_source(cfg, args.dtype, args.a_major, args.b_major, args.out))
    if args.sass:
        print(_sass_line(gemm_source(cfg, args.dtype, args.a_major, args.b_major, args.out),
                         gemm_arch(args.arch, args.dtype), SM80_SASS_KEYS))  # fmt: skip
    if args.run_mnk:
        _run_gpu(args, cfg)
    return 0


SM80_SASS_KEYS = ("HMMA", "IMMA", "QMMA", "F2FP", "LDSM", "LDGSTS", "BAR", "LDL", "STL")
SM90_SASS_KEYS = ("HGMMA", "QGMMA", "UTMALDG", "UTMASTG", "SYNCS", "USETMAXREG", "LDL", "STL")


def local_text(use) -> str:
    """A LocalMemoryUse in words (the kernel should touch no local memory).

    >>> from cutemma.cuda.sass import LocalMemoryUse
    >>> local_text(LocalMemoryUse(0, 0, 0, 0)), local_text(LocalMemoryUse(2, 1, 16, 0))
    ('none', '2 loads, 1 stores, 16 B stack, 0 B local')
    """
    if not use:
        return "none"
    parts = [f"{use.loads} loads", f"{use.stores} stores"]
    if use.stack_bytes is not None:
        parts.append(f"{use.stack_bytes} B stack")
    if use.local_bytes is not None:
        parts.append(f"{use.local_bytes} B local")
    return ", ".join(parts)


def _sass_line(source: str, target: str, keys: tuple[str, ...]) -> str:
    from cutemma.cuda import compile, count_instructions, local_memory_use, sass

    cubin = compile(source, target)
    counts = count_instructions(sass(cubin))
    found = ", ".join(f"{k} {counts.get(k, 0)}" for k in keys)
    return f"{target}: {found} | local memory: {local_text(local_memory_use(cubin))}"


def gemm_family(family: str, arch: str | None, dtype: str) -> str:
    """Which kernel family ``cutemma gemm`` shows: ``--family`` sm80 / sm90, or (``auto``) the
    one ``cutemma.gemm`` would run on ``--arch``: the wgmma + TMA kernel on sm_90 for the
    dtypes it takes, the mma.sync kernel otherwise.

    >>> gemm_family("auto", None, "bf16"), gemm_family("auto", "sm_90a", "bf16")
    ('sm80', 'sm90')
    >>> gemm_family("auto", "sm90", "s8"), gemm_family("auto", "sm100a", "bf16")
    ('sm80', 'sm80')
    """
    from cutemma.hardware import arch_number
    from cutemma.kernels.sm90.config import ATOMS_SM90

    number = arch_number(arch_option(arch)) if arch is not None else None
    if family == "auto":
        return "sm90" if number == 90 and dtype in ATOMS_SM90 else "sm80"
    if family == "sm90":
        if dtype not in ATOMS_SM90:
            raise CliError(
                f"--family sm90 --dtype {dtype}: the wgmma kernel takes {', '.join(ATOMS_SM90)}; "
                "use --family sm80 for this dtype"
            )
        if number is not None and number != 90:
            raise CliError(
                f"--family sm90 --arch {arch}: wgmma runs on sm_90a only; use --arch sm90a"
            )
    return family


def sm90_config(args: argparse.Namespace):
    """The Sm90Config ``cutemma.gemm`` picks for a 16384^3 problem, or ``--config BMxBN``.

    >>> sm90_config(argparse.Namespace(config="128x128", config_given=True, dtype="bf16")).name
    'b128x128_c2_sauto'
    """
    from cutemma.kernels.pick import builtin_sm90_config
    from cutemma.kernels.sm90.config import Sm90Config

    if not getattr(args, "config_given", False):
        return builtin_sm90_config(1 << 14, 1 << 14, 1 << 14, dtype=args.dtype)
    m = re.fullmatch(r"(\d{1,4})x(\d{1,4})", args.config.strip())
    if not m:
        raise CliError(
            f"--config {args.config!r}: the sm90 kernel takes BMxBN, e.g. 128x256 (the sm80 "
            "kernel's BMxBNxBK/WMxWN/S needs --family sm80)"
        )
    return Sm90Config(int(m.group(1)), int(m.group(2)))


def run_sm90(args: argparse.Namespace) -> int:
    """``cutemma gemm`` for the sm90 (wgmma + TMA) kernel: plan, source, SASS on sm_90a."""
    from cutemma.kernels.sm90.plan import Sm90Plan
    from cutemma.kernels.sm90.source import gemm_sm90_source

    cfg = sm90_config(args)
    out = args.out if args.out != "s32" else "f32"
    plan = Sm90Plan(cfg, args.dtype, args.a_major, args.b_major, out)
    if args.plan:
        print(
            f"sm90 config {cfg.name}: {plan.tiled.atom.name} x {plan.tile_wgs} warpgroups, "
            f"block {cfg.block_m}x{cfg.block_n}x{plan.block_k}, {plan.stages} stages, "
            f"{plan.shared_bytes} B shared\n  smem A {plan.smem_A}\n  smem B {plan.smem_B}"
        )
    if args.show_source:
        print(gemm_sm90_source(cfg, args.dtype, args.a_major, args.b_major, out))
    if args.sass:
        source = gemm_sm90_source(cfg, args.dtype, args.a_major, args.b_major, out)
        print(_sass_line(source, "sm_90a", SM90_SASS_KEYS))
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


def gemm_outputs(dtype: str) -> tuple[str, ...]:
    """The output types :func:`cutemma.gemm` writes for a kernel dtype (its first is the default
    for 16-bit types).

    >>> gemm_outputs("bf16"), gemm_outputs("s8"), gemm_outputs("e4m3_e5m2")
    (('bf16', 'f32'), ('s32',), ('bf16', 'f16', 'f32'))
    """
    from cutemma.kernels.call import KERNEL_TYPES as _INPUTS

    short = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int32": "s32"}
    first = dtype.split("_")[0]  # mixed fp8 'e4m3_e5m2' writes what e4m3 writes
    outs = next(o for kd, o in _INPUTS.values() if kd == first)
    return tuple(short[o] for o in outs)


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
    p = sub.add_parser(
        "gemm",
        help="the GEMM kernels (sm80, sm90): source, plan, SASS, run",
        description="The GEMM kernels cutemma generates (sm80 mma.sync, sm90 wgmma): summarise a "
        "kernel's config and TiledMMA (default), print its CUDA source (--show-source), its "
        "plan (--plan), compile it and read its SASS "
        "(--sass; no GPU needed), or run and check it on a GPU (--run M N K).",
    )
    p.add_argument(
        "--config",
        default=None,
        help="large | wide | small | skinny | BMxBNxBK/WMxWN/S (the sm80 configurations)",
    )
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
        "--arch",
        default=None,
        help="target, spelled as in the API: sm80, sm_90a, sm_120a ... (default sm80; fp8 "
        "sm89); sm_90 shows the wgmma kernel",
    )
    p.add_argument(
        "--family",
        default="auto",
        choices=["auto", "sm80", "sm90"],
        help="kernel family: auto (default) is what cutemma.gemm runs on --arch (sm90: wgmma + "
        "TMA for f16/bf16/tf32/fp8), sm80 the mma.sync kernel",
    )
    p.add_argument(
        "--run",
        dest="run_mnk",
        nargs=3,
        type=whole_number,
        metavar=("M", "N", "K"),
        help="run on the GPU",
    )
    p.add_argument(
        "--batch", type=whole_number, default=0, help="--run a batch of this many problems"
    )

    def _run(args):
        args.config_given = args.config is not None
        args.config = args.config or "large"
        args.out = args.out or {"tf32": "f32", "s8": "s32", "f16": "f16"}.get(args.dtype, "bf16")
        if args.out not in (outs := gemm_outputs(args.dtype)):
            raise CliError(
                f"--out {args.out} for --dtype {args.dtype}: cutemma.gemm writes "
                f"{' or '.join(outs)} for it"
            )
        narrow = ELEM_BYTES[args.dtype] != 2  # 8- and 32-bit types: read K-major only
        args.a_major = args.a_major or "K"
        args.b_major = args.b_major or ("K" if narrow else "N")
        if args.batch and not args.run_mnk:
            raise CliError(f"--batch {args.batch} goes with --run M N K (a batch of GEMMs to run)")
        if not (args.plan or args.show_source or args.sass or args.run_mnk):
            args.plan = True
        return run(args)

    p.set_defaults(run=_run)
