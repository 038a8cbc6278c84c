"""Issue 34, the command line's second hour: --thread, verify --copy --family, --help."""

from __future__ import annotations

import contextlib
import io

import pytest

from cutemma.cli import main

MMA = "SM80_16x8x16_F32F16F16F32_TN"


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue().strip()


@pytest.mark.parametrize("thread", ["²", "٣", "9" * 5000, "-1", "1e3", "32"])
def test_a_bad_thread_is_one_line_naming_the_range(thread):
    status, _, err = _cli(["show", MMA, "--thread", thread])
    assert status == 2 and err.startswith("cutemma: error: --thread") and "0..31" in err
    assert len(err) < 300  # the 5,000 digits are not echoed


def test_thread_on_a_copy_atom_is_refused_not_ignored():
    status, _, err = _cli(["show", "SM75_U32x4_LDSM_N", "--thread", "3"])
    assert status == 2 and "copy atom" in err


def test_verify_copy_family_runs_only_that_familys_probes(monkeypatch):
    import cutemma.cuda.verify_copy as vc

    seen = {}

    def fake(names=None, hardware=False, sm100=True):
        seen["names"] = names
        return {"failed": 0, "results": []}

    monkeypatch.setattr(vc, "verify_copy", fake)
    monkeypatch.setattr(vc, "table", lambda report: "")
    assert _cli(["verify", "--copy", "--family", "ldsm"])[0] == 0
    # what `cutemma list --family ldsm` lists (the same family), and nothing else
    _, listed, _ = _cli(["list", "--family", "ldsm"])
    names = {line.split()[0] for line in listed.splitlines() if line.startswith("SM")}
    assert set(seen["names"]) == names and names


@pytest.mark.parametrize("command", ["layout", "list", "desc", "gemm", "emit", "show", "verify"])
def test_every_command_help_has_a_description(command):
    status, out, _ = _cli([command, "--help"])
    assert status == 0
    paragraphs = out.split("\n\n")
    # argparse: usage, then the description paragraph, then the arguments
    assert not paragraphs[1].lstrip().startswith(("positional arguments", "options")), out[:300]


def test_gemm_config_help_lists_skinny():
    assert "skinny" in _cli(["gemm", "--help"])[1]
