"""The docstring examples of cutemma.kernels and of the top-level package (the shared doctest
test skips the kernels layer; these examples need neither a GPU nor NVRTC: the GPU ones are
marked ``+SKIP``)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "cutemma",
    "cutemma.kernels",
    "cutemma.kernels.capture",
    "cutemma.kernels.dispatch",
    "cutemma.kernels.dispatch_sm90",
    "cutemma.kernels.epilogue_sm90",
    "cutemma.kernels.fastlaunch",
    "cutemma.kernels.fastpath",
    "cutemma.kernels.fastpath_sm80",
    "cutemma.kernels.fastpath_sm90",
    "cutemma.kernels.gemm_sm80",
    "cutemma.kernels.gemm_sm90",
    "cutemma.kernels.gemm_sm90_batched",
    "cutemma.kernels.ldmatrix",
    "cutemma.kernels.mainloop_sm90",
    "cutemma.kernels.pipeline",
    "cutemma.kernels.plan",
    "cutemma.kernels.plan_sm90",
    "cutemma.kernels.ring",
    "cutemma.kernels.tune",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))  # tune's examples read no real cache
    from cutemma.kernels import tune

    tune.reload()
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    tune.reload()
    assert result.attempted > 0, f"no examples found in {name}"
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
