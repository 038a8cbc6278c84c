"""``cutemma verify``: every atom's layouts against the ISA, compiled, and (``--hardware``) run.

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> register(sub)
>>> sorted(sub.choices)
['verify']
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cutemma.errors import CliError, CutemmaError


def register(subparsers) -> None:
    """Add the ``verify`` subcommand.

    >>> sub = argparse.ArgumentParser(prog="cutemma").add_subparsers()
    >>> register(sub)
    >>> args = sub.choices["verify"].parse_args(["--family", "sm80.f16", "--family", "sm80.tf32"])
    >>> args.family, args.hardware
    (['sm80.f16', 'sm80.tf32'], False)
    """
    p = subparsers.add_parser(
        "verify",
        help="check every atom: layouts vs the PTX ISA, probe compile + SASS, and on the GPU",
        description=(
            "Check every catalog atom's layouts against the PTX ISA, compile its probe kernel "
            "(expected tensor-core SASS, no local memory) and, with --hardware, run it on the "
            "GPU present and compare D with the CPU emulation."
        ),
    )
    p.add_argument("--hardware", action="store_true", help="also run each probe the GPU can run")
    p.add_argument("--arch", help="only atoms of this architecture, e.g. sm90 or 80")
    p.add_argument(
        "--family",
        action="append",
        help="only this family (repeatable), e.g. sm80.int8; with --copy a copy family: ldsm, "
        "stsm, cp_async, shuffle or tma",
    )
    p.add_argument(
        "--k-major-only",
        action="store_true",
        help="GMMA as listed (K-major) only; default adds the MN-major variants the type allows",
    )
    p.add_argument("--json", type=_json_path, metavar="FILE", help="write the JSON report here")
    p.add_argument("--copy", action="store_true", help="verify the copy atoms instead")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(run=run)


def _json_path(text: str) -> Path:
    """``--json``'s file, refused before the sweep when it is empty or a folder.

    >>> _json_path("r.json").name
    'r.json'
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: give a file name, e.g. --json report.json")
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name in it")
    return Path(text)


def select_ops(arch: str | None, families: list[str] | None) -> list:
    """The catalog operations named by ``--arch`` / ``--family`` (all without either).

    >>> len(select_ops('sm61', None)), len(select_ops('61', None))
    (2, 2)
    """
    from cutemma.cli.args import catalog_arch
    from cutemma.mma import mma_ops

    arch = catalog_arch(arch) if arch else None

    if families:
        ops = [op for fam in families for op in mma_ops(arch=arch, family=fam)]
    else:
        ops = list(mma_ops(arch=arch))
    if not ops:
        raise CutemmaError(
            f"no atoms match --arch {arch} --family {families}; "
            "`cutemma list` shows the architectures and families"
        )
    return ops


def compile_unavailable() -> str | None:
    """Why probes cannot be compiled and read here (NVRTC, cuobjdump or nvdisasm missing),
    or None when they can.

    >>> compile_unavailable() is None or "not" in compile_unavailable()
    True
    """
    from cutemma.cuda.compile import unavailable_reason
    from cutemma.cuda.sass import find_tool

    if unavailable_reason() is not None:
        return "NVRTC is not installed"
    for tool in ("cuobjdump", "nvdisasm"):
        try:
            find_tool(tool)
        except CutemmaError:
            return f"{tool} is not installed"
    return None


# seconds per atom of a cold sweep on 2 CPU cores (compile + SASS of its probe): the full
# 3144-probe sweep took about 15 minutes there (issue 22); cached probes take a fraction
PROBE_SECONDS = 0.3


def copy_probe_names(families: list[str]) -> list[str]:
    """The copy probes ``--copy --family F`` runs: every probed atom of each family named as
    ``cutemma list --family`` names it (``ldsm`` or ``sm75.ldsm``).

    >>> copy_probe_names(["stsm"])[:2]
    ['SM90_U32x1_STSM_N', 'SM90_U32x2_STSM_N']
    """
    from cutemma.copy import copy_ops
    from cutemma.copy.catalog import copy_families
    from cutemma.cuda.probe_copy import PROBED
    from cutemma.cuda.probe_copy_tma import tma_probes

    probed = [f for f in copy_families() if f.name in PROBED or f.name == "sm90.tma"]
    shorts = ", ".join(f.short for f in probed)
    names: list[str] = []
    for given in families:
        fam = next((f for f in copy_families() if given in (f.name, f.short)), None)
        if fam is None:
            raise CliError(
                f"--family {given!r:.60}: not a copy family; with --copy give one of {shorts} "
                "(cutemma list --family copy lists the copy atoms)"
            )
        if fam not in probed:
            raise CliError(
                f"--family {given}: {fam.name} atoms have no probe of their own; --copy "
                f"--family takes {shorts} (leave --family out to check every copy atom, the "
                "sm100 ones included)"
            )
        if fam.name == "sm90.tma":
            names += [p.name for p in tma_probes()]
        else:
            names += [op.name for op in copy_ops(family=fam.name)]
    return list(dict.fromkeys(names))


def plan_line(n: int, compile: bool = True, hardware: bool = False) -> str:
    """What ``cutemma verify`` is about to do and about how long it takes, said up front.

    >>> print(plan_line(3144))
    cutemma verify: 3144 atoms: layouts vs the PTX ISA, then compile + SASS of each probe; up to about 16 min on a CPU when no probe is cached yet (cached ones are quick). Narrow it with --arch sm80 or --family sm80.f16.
    """
    stages = ["layouts vs the PTX ISA"]
    if compile:
        stages.append("then compile + SASS of each probe")
    if hardware:
        stages.append("then run each on the GPU")
    text = f"cutemma verify: {n} atoms: {', '.join(stages)}"
    if compile:
        minutes = n * PROBE_SECONDS / 60
        took = f"{minutes:.0f} min" if minutes >= 1 else f"{n * PROBE_SECONDS:.0f} s"
        text += f"; up to about {took} on a CPU when no probe is cached yet (cached ones are quick)"
    return text + ". Narrow it with --arch sm80 or --family sm80.f16."


def run(args: argparse.Namespace) -> int:
    """Run the sweep; exit status 0 when nothing failed, 1 otherwise.

    It compiles every probe, so the example needs NVRTC and cuobjdump (the cuda extra):

    >>> ns = argparse.Namespace(arch="sm61", family=None, hardware=False, k_major_only=True,
    ...                         json=None, no_progress=True)
    >>> run(ns)  # doctest: +SKIP
    family   pass  fail  skip
    sm61.dp     2     0     0
    total       2     0     0   (0.6 s)
    0
    """
    if args.hardware:
        try:  # torch before cutemma touches the driver (notes/CUDA.md)
            import torch  # noqa: F401
        except ImportError:
            pass
        from cutemma.cuda import gpu_unavailable_reason

        if reason := gpu_unavailable_reason():
            raise CliError(
                f"--hardware: {reason}; leave --hardware out to check the layouts and compile"
            )
    if getattr(args, "copy", False):  # copy atoms: cutemma.cuda.verify_copy
        if args.arch or args.k_major_only:
            raise CliError(
                "--copy verifies the copy atoms: --arch and --k-major-only select MMA atoms; "
                "leave them out with --copy (--family ldsm, stsm, cp_async, shuffle or tma "
                "narrows the copy check)"
            )
        from cutemma.cuda.verify_copy import table, verify_copy

        names = copy_probe_names(args.family) if args.family else None
        report = verify_copy(names, hardware=args.hardware)
        print(table(report))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=1) + "\n")
        return 1 if report["failed"] else 0
    from cutemma.cuda.verify import verify, with_majors

    ops = select_ops(args.arch, args.family)
    if not args.k_major_only:
        ops = with_majors(ops)
    missing = compile_unavailable()
    print(plan_line(len(ops), compile=not missing, hardware=args.hardware), file=sys.stderr)
    if missing:  # no cuda extra: the layout stage still runs and decides the exit status
        print(
            f"compile and hardware stages skipped: {missing}; install them with "
            "pip install 'cutemma[cuda]' (or pip install -e '.[cuda]' in a clone)",
            file=sys.stderr,
        )
    report = verify(
        ops, hardware=args.hardware and not missing, progress=not args.no_progress,
        compile=not missing,
    )  # fmt: skip
    print(report.table())
    if args.json:
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report.to_json(), indent=1) + "\n")
        except OSError as e:
            raise CliError(f"--json {args.json}: cannot write it ({e.strerror})") from None
        print(f"wrote {args.json}", file=sys.stderr)
    return 1 if report.failed else 0
