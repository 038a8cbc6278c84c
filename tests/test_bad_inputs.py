"""Every bad input gets a named cutemma error (issue 13): the table in bad_inputs_table.py.

API rows must raise the row's CutemmaError subclass with the fragment in the message. CLI
rows run ``cutemma.cli.main`` in-process (a subprocess per row would take minutes): exit
status 2, exactly one line on stderr (``cutemma: error: ...``) holding the fragment, no
traceback. A few real subprocess runs are in tests/cli/test_cli_errors.py.
"""

from __future__ import annotations

import contextlib
import io
import shlex
import warnings

import numpy as np
import pytest
from bad_inputs_copy_table import COPY_API
from bad_inputs_table import API, CLI, PUBLIC_NAMES, namespace

from cutemma.errors import CutemmaError

# rows whose check needs NVRTC (the cuda extra); they skip without it
NEEDS_NVRTC = {"cuda.compile('', arch='sm_999')"}
# CLI rows that are bad input only where there is no GPU with torch
NEEDS_NO_GPU = {"gemm --run 64 64 64", "verify --hardware --arch sm61 --no-progress"}


@pytest.fixture(scope="module")
def names() -> dict:
    return namespace()


def _nvrtc_missing() -> str | None:
    from cutemma.cuda.compile import unavailable_reason

    return unavailable_reason()


def _gpu_with_torch() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def test_the_table_is_large_and_covers_the_public_api():
    import cutemma
    import cutemma.cuda
    import cutemma.kernels
    import cutemma.tiled
    import cutemma.viz

    assert len(API) + len(CLI) >= 300
    calls = " ".join(call for call, _, _ in API + COPY_API)  # + the copy layer's rows

    def is_error(x) -> bool:
        return isinstance(x, type) and issubclass(x, BaseException)

    missing = [
        f"{mod.__name__}.{n}"
        for mod in (cutemma, cutemma.cuda, cutemma.kernels, cutemma.tiled, cutemma.viz)
        for n in mod.__all__
        if callable(getattr(mod, n)) and not is_error(getattr(mod, n)) and f"{n}(" not in calls
    ]
    # names with no bad input of their own: data classes filled by the library, constants,
    # environment queries without arguments
    exempt = {
        "cutemma.Extra", "cutemma.Family", "cutemma.MmaAtom", "cutemma.MmaName",
        "cutemma.NumericType", "cutemma.Operation", "cutemma.RegArray", "cutemma.Traits",
        "cutemma.CanonicalForm", "cutemma.InstrDescriptor", "cutemma.SwizzleMode",
        "cutemma.TiledMma", "cutemma.cuda.Cubin", "cutemma.cuda.Kernel", "cutemma.cuda.Param",
        "cutemma.cuda.Probe", "cutemma.cuda.cache_dir", "cutemma.cuda.device_count",
        "cutemma.cuda.gpu_unavailable_reason", "cutemma.cuda.nvrtc_version",
        "cutemma.cuda.ptx_isa_version", "cutemma.cuda.unavailable_reason",
        "cutemma.kernels.kernel_name", "cutemma.viz.Figure", "cutemma.viz.Panel",
        "cutemma.kernels.TiledMma", "cutemma.tiled.TiledMma",
    }  # fmt: skip
    assert [m for m in missing if m not in exempt and m in PUBLIC_NAMES] == []
    if new := [m for m in missing if m not in exempt and m not in PUBLIC_NAMES]:
        warnings.warn(
            f"public names without a row in tests/bad_inputs_table.py yet: {new}", stacklevel=1
        )
    commands = {argv.split()[0] for argv, _ in CLI if argv}
    assert commands >= {"layout", "list", "show", "desc", "verify", "gemm"}


@pytest.mark.parametrize(("call", "error", "fragment"), API, ids=[row[0][:70] for row in API])
def test_api_bad_input_raises_a_named_error(names, call, error, fragment):
    if call in NEEDS_NVRTC and (why := _nvrtc_missing()):
        pytest.skip(why)
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(CutemmaError) as info:
        eval(call, dict(names))  # noqa: S307 - the table's own text
    assert isinstance(info.value, error), f"{type(info.value).__name__}: {info.value}"
    assert fragment.lower() in str(info.value).lower(), str(info.value)


@pytest.mark.parametrize(("argv", "fragment"), CLI, ids=[row[0][:70] for row in CLI])
def test_cli_bad_input_is_one_line_and_exit_2(argv, fragment, tmp_path, monkeypatch):
    from cutemma.cli import main

    if argv in NEEDS_NO_GPU and _gpu_with_torch():
        pytest.skip("a GPU and torch are here: this command runs")
    monkeypatch.chdir(tmp_path)  # a picture refused too late would land here, not in the repo
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(shlex.split(argv))
    text = err.getvalue()
    lines = text.strip().splitlines()
    assert status == 2, text
    assert len(lines) == 1 and lines[0].startswith("cutemma: error: "), text
    assert "Traceback" not in text
    assert fragment.lower() in text.lower(), text
    assert list(tmp_path.iterdir()) == []  # nothing written


# --- generous where users expect it: numpy integers are integers --------------------------

NUMPY_INTS = [
    ("cm.Layout(np.int64(4), np.int64(2))", "cm.Layout(4, 2)"),
    ("cm.Layout((np.int32(4), 2))", "cm.Layout((4, 2))"),
    ("L(np.int64(5))", "L(5)"),
    ("L(np.int64(1), np.int64(1))", "L(1, 1)"),
    ("L[np.int64(1)]", "L[1]"),
    ("cm.size(L, np.int64(1))", "cm.size(L, 1)"),
    ("cm.composition(L, np.int64(4))", "cm.composition(L, 4)"),
    ("cm.logical_divide(L8, np.int64(2))", "cm.logical_divide(L8, 2)"),
    ("cm.complement(cm.Layout(4, 2), np.int64(16))", "cm.complement(cm.Layout(4, 2), 16)"),
    ("cm.upcast(cm.Layout((8, 4), (1, 8)), np.int64(8))", "cm.upcast(cm.Layout((8, 4), (1, 8)), 8)"),
    ("cm.downcast(L, np.int64(2))", "cm.downcast(L, 2)"),
    ("cm.select(L, np.int64(1))", "cm.select(L, 1)"),
    ("cm.idx2crd(np.int64(5), (2, 3))", "cm.idx2crd(5, (2, 3))"),
    ("cm.crd2idx((np.int64(1), 2), (2, 3))", "cm.crd2idx((1, 2), (2, 3))"),
    ("cm.product((np.int64(2), 3))", "cm.product((2, 3))"),
    ("cm.Swizzle(np.int64(3), 4, 3)", "cm.Swizzle(3, 4, 3)"),
    ("sw(np.int64(1000))", "sw(1000)"),
    ("cm.make_identity_tensor((np.int64(4), 2))(np.int64(5))", "cm.make_identity_tensor((4, 2))(5)"),
    ("cm.make_tiled_mma(atom, (np.int64(2), 2, 1)).tile_size_mnk", "cm.make_tiled_mma(atom, (2, 2, 1)).tile_size_mnk"),
    ("tiled.get_slice(np.int64(5)).thr_idx", "tiled.get_slice(5).thr_idx"),
    ("cm.GemmConfig(np.int64(64), 64, 32).name", "cm.GemmConfig(64, 64, 32).name"),
    ("cm.decode_gmma_desc(np.uint64(0x4000004000010040))", "cm.decode_gmma_desc(0x4000004000010040)"),
    ("cm.swizzle_mode(np.int64(128))", "cm.swizzle_mode(128)"),
    ("cm.make_mma_atom('SM100_MMA_F16BF16_SS', m=np.int64(128)).shape_mnk", "cm.make_mma_atom('SM100_MMA_F16BF16_SS', m=128).shape_mnk"),
    ("cm.Tensor(np.arange(8), cm.Layout(4), np.int64(2))(1)", "cm.Tensor(np.arange(8), cm.Layout(4), 2)(1)"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "same_as"), NUMPY_INTS, ids=[r[0][:60] for r in NUMPY_INTS])
def test_numpy_integers_are_integers(names, call, same_as):
    got, want = eval(call, dict(names)), eval(same_as, dict(names))  # noqa: S307
    assert got == want
    assert str(got) == str(want)  # printed with plain ints, not np.int64(...)


def test_a_misspelled_atom_name_gets_the_closest_names_not_a_family_list():
    import cutemma as cm

    with pytest.raises(cm.AtomError) as info:
        cm.make_mma_atom("SM80_16x8x16_F32F16F16F32")  # the majors left out
    msg = str(info.value)
    assert "did you mean SM80_16x8x16_F32F16F16F32_TN" in msg
    assert len(msg) < 400  # not the 900-character list of every family's description


def test_silent_nonsense_of_the_issue_is_refused(names):
    # each was once returned without complaint (issue 13); now each is an error
    for call in (
        "cm.composition(cm.Layout(4), -2)",
        "cm.downcast(cm.Layout(4), 2.5)",
        "cm.complement(cm.Layout(4, 1), 2.5)",
        "cm.Swizzle(3.5, 4, 4)",
        "cm.ComposedLayout('nope', 0, cm.Layout(4))",
        "cm.make_tiled_mma(atom, cm.Layout((2, 2), (1, 1)))",
        "cm.Tensor(np.arange(8), cm.Layout(8), -3)(0)",
        "cm.crd2idx((1, 2), (2, 3), (1,))",
        "cm.Layout.parse('(٤,2):(1,4)')",
        "cm.decode_gmma_desc(True)",
        "cm.swizzle_mode(None)",
        "cm.mma_ops(arch=999)",
        "cm.emulate.gemm(tiled, np.ones((32, 16)) * 1j, np.ones((16, 16)))",
    ):
        with pytest.raises(CutemmaError):
            eval(call, dict(names))  # noqa: S307


def test_numpy_arrays_still_pass_through_swizzles():
    import cutemma as cm

    sw = cm.Swizzle(3, 4, 3)
    xs = np.arange(1024)
    assert sw(xs).tolist() == [sw(int(x)) for x in xs]
