"""Issue 22: the surfaces added after the bad-input table refuse bad input as the algebra does.

Coverage is derived, not listed: every public callable of the copy, TMA, kernels and tune
modules (their ``__all__``, else what they define), every field or keyword of the kernels'
configs and entry points (their signatures) and every option of every command (the argparse
parsers) must appear in a row of tests/bad_inputs_table.py or tests/bad_inputs_copy_table.py,
so a name added later without rows fails here. The issue's own examples run through
tests/hostile_calls.py's worker (time and memory limits): no bare exception, no silent answer,
no hang.
"""

from __future__ import annotations

import importlib
import inspect
import shlex

import numpy as np
import pytest
from bad_inputs_copy_table import COPY_API
from bad_inputs_table import API, CLI

from cutemma.errors import CutemmaError, LaunchError

SURFACES = (
    "cutemma.copy",
    "cutemma.copy.tma",
    "cutemma.copy.tma_atoms",
    "cutemma.emulate.copy",
    "cutemma.emulate.tma",
    "cutemma.emulate.tmem",
    "cutemma.tiled.tiled_copy",
    "cutemma.tiled.copy_analysis",
    "cutemma.kernels",
    "cutemma.kernels.tune",
    "cutemma.kernels.tuned",
)
# public callables with no bad input of their own, each with its reason
EXEMPT = {
    # records the library fills (their constructors take what a catalog or an analysis made)
    "cutemma.copy.CopyFamily", "cutemma.copy.CopyOperation", "cutemma.copy.ValueType",
    "cutemma.copy.tma.TensorMap", "cutemma.copy.tma.TmaRules", "cutemma.copy.tma.TmaSwizzle",
    "cutemma.tiled.copy_analysis.BankReport", "cutemma.tiled.copy_analysis.CoalescingReport",
    "cutemma.tiled.copy_analysis.InstructionCost",
    # predicates: every value has an answer
    "cutemma.copy.is_copy_name", "cutemma.kernels.tuned.is_time",
    # no arguments, or a device index whose checks need a GPU (tune's device= has rows)
    "cutemma.kernels.tuned.cache_path", "cutemma.kernels.tuned.table",
    "cutemma.kernels.tuned.reload", "cutemma.kernels.tuned.refresh",
    "cutemma.kernels.tuned.device_name",
    "cutemma.kernels.tuned.lookup_device",
}  # fmt: skip
# keywords of the entry points whose checks need operands on a GPU first (a CPU tensor is
# refused as such before them): their rows run on the device (tests/kernels/*_gpu*.py)
KEYWORDS_NEED_GPU = {"gemm": {"C", "out", "out_dtype"}}
# options that cannot be wrong (they print help or the version and exit 0)
CLI_EXEMPT = {"-h", "--help", "--version"}


def _calls() -> str:
    return "\n".join(call for call, _, _ in API + COPY_API)


def _public_callables(modname: str) -> list[str]:
    mod = importlib.import_module(modname)
    listed = getattr(mod, "__all__", None)
    if listed is None:  # what the module defines itself
        listed = [
            n
            for n, x in vars(mod).items()
            if not n.startswith("_") and getattr(x, "__module__", None) == modname
        ]
    return [
        n
        for n in listed
        if callable(getattr(mod, n))
        and not (isinstance(getattr(mod, n), type) and issubclass(getattr(mod, n), BaseException))
    ]


def test_every_public_name_of_the_newer_surfaces_has_rows():
    calls = _calls()
    names = [f"{m}.{n}" for m in SURFACES for n in _public_callables(m)]
    names += [f"cutemma.{n}" for n in importlib.import_module("cutemma")._LAZY]
    assert len(names) > 60  # the derivation found the surfaces
    missing = [q for q in names if q not in EXEMPT and f"{q.rsplit('.', 1)[1]}(" not in calls]
    assert missing == [], f"public names without a bad-input row: {missing}"


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("Sm90Config", "cutemma.kernels.Sm90Config"),
        ("GemmConfig", "cutemma.kernels.GemmConfig"),
        ("gemm", "cutemma.kernels.gemm"),
        ("tune", "cutemma.kernels.tune.tune"),
    ],
)
def test_every_field_and_keyword_of_the_kernels_entry_points_has_rows(name, target):
    mod, attr = target.rsplit(".", 1)
    fn = getattr(importlib.import_module(mod), attr)
    rows = [call for call, _, _ in API + COPY_API if f"{name}(" in call]
    params = inspect.signature(fn).parameters.values()
    keywords = [
        p.name
        for p in params
        if p.default is not inspect.Parameter.empty  # operands and sizes are positional
        and p.name not in KEYWORDS_NEED_GPU.get(name, ())
    ]
    missing = [k for k in keywords if not any(f"{k}=" in call for call in rows)]
    assert missing == [], f"{name}: no row passes a bad {missing}"


def _options() -> dict[str, list[tuple[str, ...]]]:
    """{command: [option strings of each option]} from the argparse parsers."""
    import argparse

    from cutemma.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: [tuple(a.option_strings) for a in p._actions if a.option_strings]
        for name, p in sub.choices.items()
    }


def test_every_option_of_every_command_has_rows():
    rows = [shlex.split(argv) for argv, _ in CLI]
    assert set(_options()) >= {"layout", "list", "show", "desc", "verify", "gemm"}
    missing = []
    for command, options in _options().items():
        for strings in options:
            if set(strings) & CLI_EXEMPT:
                continue
            used = any(
                argv[:1] == [command]
                and any(t == s or t.startswith(s + "=") for t in argv for s in strings)
                for argv in rows
            )
            if not used:
                missing.append(f"{command} {strings[-1]}")
    assert missing == [], f"options without a bad-input row: {missing}"


# --- the issue's examples, through the hostile-call worker ---------------------------------


def _have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def test_the_issues_examples_are_refused_by_name_without_hang(tmp_path, monkeypatch):
    import hostile_calls as hc

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    torch_rows = ("tA", "torch", "traced(", "(acc,")  # rows whose objects torch makes
    cases = [c for c in hc.EXTRA if _have_torch() or not any(t in c[0] for t in torch_rows)]
    cases += [(f"cli({argv!r})", "raise") for argv in hc.CLI_EXTRA if "--hardware" not in argv]
    cases += [(f"cli({argv!r})", "ok") for argv in hc.CLI_OK]
    results = hc.run(cases)
    bad = [
        f"{r['kind']}: {r['call'][:90]} -> {r['text'][:120]}"
        for r in results
        if r["kind"] not in ("named", "ok", "legal") and not _legal_value(r)
    ]
    assert bad == []


def _legal_value(r: dict) -> bool:
    # commands that succeed by design among CLI_EXTRA (a huge layout prints its size only)
    return r["kind"] == "value" and r["call"].startswith("cli(") and "layout '(" in r["call"]


# --- the cases a row cannot express (files, environment, numbers to compare) ---------------


def test_tune_names_a_cache_folder_that_is_a_file(tmp_path, monkeypatch):
    import cutemma
    from cutemma.kernels.sm80.plan import GemmConfig
    from cutemma.kernels.tuned import reload

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(blocker))
    reload()
    with pytest.raises(LaunchError, match="cannot write the tuning cache") as info:
        cutemma.tune(64, 64, 64, "bf16", candidates=[GemmConfig(64, 64, 32)],
                     timer=lambda c: 1e-3, device_name_="gpu")  # fmt: skip
    assert "CUTEMMA_CACHE_DIR" in str(info.value)
    assert blocker.read_text() == "x"  # nothing written over it
    reload()


def test_a_nan_timing_is_never_the_winner(tmp_path, monkeypatch):
    import json

    import cutemma
    from cutemma.kernels.sm80.plan import GemmConfig
    from cutemma.kernels.tuned import cache_path, reload

    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    reload()
    fast, broken = GemmConfig(64, 64, 32), GemmConfig(128, 128, 32)
    times = {fast.name: 2e-3, broken.name: float("nan")}  # NaN < x is False for every x
    best = cutemma.tune(64, 64, 64, "bf16", candidates=[broken, fast],
                        timer=lambda c: times[c.name], device_name_="gpu")  # fmt: skip
    assert best == fast
    entry = next(iter(json.loads(cache_path().read_text())["entries"].values()))
    assert entry["timings"] == {fast.name: 2e-3}  # the NaN is not stored as a time
    reload()


def test_emulated_gemm_of_empty_extents():
    import cutemma as cm

    tiled = cm.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1))
    C = np.arange(32 * 16, dtype=np.float64).reshape(32, 16)
    # K = 0: no products, D = C (values exactly representable in the atom's f32 D)
    D = cm.emulate.gemm(tiled, np.ones((32, 0)), np.ones((16, 0)), C)
    assert D.shape == (32, 16) and (D == C).all()
    assert cm.emulate.gemm(tiled, np.ones((0, 16)), np.ones((8, 16))).shape == (0, 8)
    assert cm.emulate.gemm(tiled, np.ones((5, 16)), np.ones((0, 16))).shape == (5, 0)


def test_gemm_refuses_a_tensor_scale_before_touching_it():
    torch = pytest.importorskip("torch")
    import cutemma as cm

    A, B = torch.zeros(64, 32, dtype=torch.bfloat16), torch.zeros(32, 64, dtype=torch.bfloat16)
    for kw in ({"scale_a": torch.ones(2)}, {"scale_b": torch.tensor(2.0)}, {"alpha": "2"}):
        with pytest.raises(LaunchError, match="must be a finite real number"):
            cm.gemm(A, B, **kw)


def test_a_tiled_copy_tile_covers_every_thread_value():
    # issue 22: a tiler smaller than the TV layout handed thread 31 elements 124-127 of a
    # 100-element tile; a tile that covers them is still accepted
    import cutemma as cm

    uni = cm.make_copy_atom("UniversalCopy<uint32_t>", "f16")
    tv = cm.Layout((32, 4), (4, 1))
    with pytest.raises(CutemmaError, match="reaches index 127"):
        cm.TiledCopy(uni, tv, (10, 10))
    assert cm.TiledCopy(uni, tv, (16, 8)).tiler_mn == (16, 8)


# --- generous where users expect it: numpy integers are integers on these surfaces too ------

NUMPY_INTS = [
    ("cm.Sm90Config(np.int64(128), np.int32(256), block_k=np.int64(64))", "cm.Sm90Config(128, 256, block_k=64)"),
    ("cm.TiledCopy(uni, cm.Layout((32, 2), (2, 1)), (np.int64(8), np.int64(8))).tiler_mn", "(8, 8)"),
    ("cm.make_tiled_copy(uni, np.int64(32), np.int64(2)).tiler_mn", "cm.make_tiled_copy(uni, 32, 2).tiler_mn"),
    ("tma.TmaBox('bf16', 'K', (np.int64(64), 64), 'SW128', ((0, 0, 0),)).box_bytes", "8192"),
    ("etma.tma_load(args, np.arange(8192, dtype=np.uint16), (np.int64(64), np.int32(1))).tolist()", "etma.tma_load(args, np.arange(8192, dtype=np.uint16), (64, 1)).tolist()"),
    ("etmem.tmem_load(tld, np.arange(65536, dtype=np.uint32).reshape(128, 512), np.int64(32), np.int64(4)).tolist()", "etmem.tmem_load(tld, np.arange(65536, dtype=np.uint32).reshape(128, 512), 32, 4).tolist()"),
    ("tuned.shape_class(np.int64(1000), np.int32(64), 64)", "(1024, 64, 64)"),
    ("kernels.pick_sm90_config(np.int64(4096), np.int64(4096), np.int64(4096))", "kernels.pick_sm90_config(4096, 4096, 4096)"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "same_as"), NUMPY_INTS, ids=[r[0][:60] for r in NUMPY_INTS])
def test_numpy_integers_are_integers_on_the_newer_surfaces(call, same_as):
    from bad_inputs_copy_table import namespace

    names = namespace()
    got, want = eval(call, dict(names)), eval(same_as, dict(names))  # noqa: S307
    assert got == want
    assert repr(got) == repr(want)  # stored as plain ints, printed without np.int64(...)
