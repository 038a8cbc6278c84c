"""The command line as a newcomer meets it (issue 13): real processes for the exit status and
stderr, --version, verify without the cuda extra, large layouts, gemm's arch choice, and
generated kernels that compile without warnings."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cutemma.cli import main
from cutemma.cli.args import nvrtc_target, parse_arch

ROOT = Path(__file__).resolve().parents[2]


def cutemma(*argv: str, block_cuda: bool = False) -> subprocess.CompletedProcess:
    """``python -m cutemma ARGV`` in a fresh process; ``block_cuda`` hides cuda-python (no
    NVRTC), as on a machine without the cuda extra."""
    prelude = "import sys; sys.modules['cuda'] = None; " if block_cuda else ""
    code = prelude + "from cutemma.cli import console_main; console_main()"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=120
    )


def run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["layout", "(2,2"], "expected ')'"),
        (["gemm", "--config", "64x64x32/0x2/4"], "warps"),
        (["layout", "4:1", "--svg", "/nonexistent/x.svg"], "/nonexistent does not exist"),
        (["show", "SM80_16x8x16_F32F16F16F32_TN", "--tile", "-64x64"], "--tile"),
    ],
)
def test_a_real_process_prints_one_line_and_exits_2(argv, fragment):
    done = cutemma(*argv)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cutemma: error: ") and fragment in lines[0]
    assert "Traceback" not in done.stderr


def test_version():
    done = cutemma("--version")
    assert done.returncode == 0 and done.stdout.strip() == "cutemma 0.1.0"


def test_an_internal_error_is_one_line_too(monkeypatch):
    import cutemma.cli.layout_cmd as layout_cmd

    def broken(args):
        raise KeyError("boom")

    monkeypatch.setattr(layout_cmd, "run", broken)
    monkeypatch.delenv("CUTEMMA_TRACEBACK", raising=False)
    status, _, err = run_main("layout", "4:1")
    assert status == 1 and err.count("\n") == 1 and "internal error: KeyError" in err


@pytest.mark.parametrize("text", ["sm89", "89", "sm_89", "SM89", "sm_89a"])
def test_one_arch_parser_reads_every_spelling(text):
    assert parse_arch(text)[0] == 89
    status, out, _ = run_main("list", "--arch", text)
    assert status == 0 and "sm89.fp8 8" in out


def test_nvrtc_spelling():
    assert [nvrtc_target(a) for a in ("sm90a", "90a", "sm_80", "89")] == [
        "sm_90a",
        "sm_90a",
        "sm_80",
        "sm_89",
    ]


def test_verify_without_the_cuda_extra_runs_the_layout_stage_and_passes():
    done = cutemma("verify", "--arch", "sm80", "--no-progress", block_cuda=True)
    assert done.returncode == 0, done.stderr
    plan, hint = done.stderr.strip().splitlines()  # one install hint, not one per atom
    # issue 22: what it will do is said up front (no compile stage here: no time estimate)
    n = len(_ops("sm80"))
    assert (
        plan == f"cutemma verify: {n} atoms: layouts vs the PTX ISA. Narrow it with --arch "
        "sm80 or --family sm80.f16."
    )
    assert "compile and hardware stages skipped" in hint
    assert "stages run: layout" in done.stdout
    total = next(ln for ln in done.stdout.splitlines() if ln.startswith("total"))
    assert total.split()[1:4] == [str(len(_ops("sm80"))), "0", "0"]


def _ops(arch: str) -> list:
    from cutemma.mma import mma_ops

    return mma_ops(arch)


def test_a_huge_layout_prints_its_summary_not_a_grid():
    status, out, _ = run_main("layout", "(100000,100000):(1,100000)")
    assert status == 0
    assert "size 10000000000" in out and "not printed" in out and len(out) < 500


def test_a_5000_digit_integer_is_a_parse_error():
    status, _, err = run_main("layout", "(" + "9" * 5000 + ",2):(1,2)")
    assert status == 2 and "at most 4000 digits" in err and len(err) < 400


def test_gemm_picks_an_arch_that_supports_the_dtype():
    from cutemma.cli.gemm import gemm_arch

    assert gemm_arch(None, "e4m3") == "sm_89" and gemm_arch(None, "bf16") == "sm_80"
    assert gemm_arch("sm89", "bf16") == "sm_89" and gemm_arch("90a", "e5m2") == "sm_90a"
    status, _, err = run_main("gemm", "--sass", "--arch", "sm80", "--dtype", "e4m3")
    assert status == 2 and "SM89_16x8x32_F32E4M3E4M3F32_TN needs sm_89" in err


def test_compile_errors_lead_with_the_first_error_line():
    from cutemma.cuda.compile import _compile_error

    # a front-end error (no recompile needed to place it, so no NVRTC needed here)
    log = (
        'k.cu(1): warning #177-D: variable "x" was declared but never referenced\n'
        'k.cu(2): error: identifier "y" is undefined\n'
    )
    err = _compile_error("int x;\nint z = y;\n", "k.cu", ("--gpu-architecture=sm_80",), log)
    first = str(err).splitlines()[0]
    assert first.endswith('k.cu(2): error: identifier "y" is undefined')


def test_generated_gemm_kernels_compile_without_warnings():
    from cutemma.cuda.compile import _run_nvrtc, compile_options, unavailable_reason
    from cutemma.kernels.pick import BUILTIN_CONFIGS, pick_config
    from cutemma.kernels.sm80.source import gemm_source

    if reason := unavailable_reason():
        pytest.skip(reason)
    # `gemm --sass --dtype e4m3` compiled the fp8 8-warp tile with two unused variables
    cases = [
        (pick_config(1 << 14, 1 << 14, 1 << 14, dtype="e4m3").config, "e4m3", "K", "K", "bf16"),
        (BUILTIN_CONFIGS["small"], "bf16", "K", "N", "bf16"),
        (BUILTIN_CONFIGS["small"], "s8", "K", "K", "s32"),
    ]
    for cfg, dtype, am, bm, out in cases:
        src = gemm_source(cfg, dtype, am, bm, out)
        ok, _, log = _run_nvrtc(src, "k.cu", compile_options("sm_89"), ptx=True)
        assert ok and "warning" not in log, (cfg.name, dtype, log[:500])


def test_writing_pictures_checks_the_folder_first(tmp_path):
    target = tmp_path / "a.svg"
    status, out, _ = run_main("layout", "(2,2):(1,2)", "--svg", str(target))
    assert status == 0 and target.read_text().startswith("<svg") and f"wrote {target}" in out
