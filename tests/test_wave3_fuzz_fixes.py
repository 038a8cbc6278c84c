"""What the wave-3 fuzz (tests/hostile_calls.py, issue 34) still found, fixed: each was a bare
exception or a silent answer on the current code before this file's commit."""

from __future__ import annotations

import contextlib
import io
import shlex
import warnings

import pytest

torch = pytest.importorskip("torch")

from cutemma.errors import DesignError, LaunchError  # noqa: E402
from cutemma.kernels import epilogue  # noqa: E402
from cutemma.kernels.design import GemmDesign  # noqa: E402


def _cli(argv: str, tmp_path, monkeypatch) -> tuple[int, str, str]:
    from cutemma.cli import main

    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(shlex.split(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("text", ["0", "(0,2):(1,0)", "(2,0):(1,1)"])
def test_a_layout_of_size_0_prints_and_draws(text, tmp_path, monkeypatch):
    # was: ValueError (max of no cells) in the text grid, ZeroDivisionError in the picture
    status, out, err = _cli(f"layout '{text}'", tmp_path, monkeypatch)
    assert status == 0 and err == "" and "size 0" in out and "no cells" in out
    status, out, err = _cli(f"layout '{text}' --svg a.svg", tmp_path, monkeypatch)
    assert status == 0 and err == ""
    assert (tmp_path / "a.svg").read_text().startswith("<")


def test_unhashable_stages_are_named():
    with pytest.raises(DesignError, match=r"stages \[1\]"):
        GemmDesign("SM80_16x8x16_F32F16F16F32_TN", (128, 128, 32), stages=[1])


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"beta": "x"}, "beta='x' must be a finite real"),
        ({"alpha": float("nan")}, "alpha=nan must be a finite real"),
        ({"alpha": True}, "alpha=True"),
        ({"beta": 10**400}, "must be a finite real"),
        ({"C": "x"}, "C is a str"),
        ({"C": 2**40}, "C is a int"),
        ({"out_dtype": 1.5}, "out_dtype=1.5"),
        ({"out_dtype": True}, "out_dtype=True"),
    ],
)
def test_the_epilogue_reference_refuses_what_is_not_a_scalar_tensor_or_dtype(kw, fragment):
    # was: an answer (beta and C ignored, NaN everywhere, a bool tensor for out_dtype=True)
    acc = torch.zeros(4, 4)
    with pytest.raises(LaunchError, match=fragment):
        epilogue.reference(acc, ("bias",), {"bias": torch.zeros(4)}, **kw)


def test_the_epilogue_reference_still_computes():
    acc = torch.tensor([[-1.0, 2.0]])
    got = epilogue.reference(acc, ("relu",), {}, alpha=2, beta=0.5, C=torch.ones(1, 2),
                             out_dtype=torch.float32)  # fmt: skip
    assert got.tolist() == [[0.0, 4.5]]  # relu(2 * acc + 0.5): -1.5 -> 0, 4.5


@pytest.mark.parametrize("out", ["x", 0, 1.5, (), [1]])
def test_a_traced_call_names_an_out_that_is_no_tensor(out):
    # was: AttributeError: 'str' object has no attribute 'dtype' (make_call read out.dtype)
    from torch._subclasses import fake_tensor

    import cutemma

    with warnings.catch_warnings(), fake_tensor.FakeTensorMode():
        warnings.simplefilter("ignore")
        a = torch.empty(64, 32, dtype=torch.bfloat16, device="cuda")
        b = torch.empty(32, 64, dtype=torch.bfloat16, device="cuda")
        with pytest.raises(LaunchError, match="out"):
            cutemma.gemm(a, b, out=out)
