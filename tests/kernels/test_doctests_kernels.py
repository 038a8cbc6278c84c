"""The docstring examples of cutemma.kernels and of the top-level package (the shared doctest
test skips the kernels layer; these examples need neither a GPU nor NVRTC: the GPU ones are
marked ``+SKIP``)."""

from __future__ import annotations

import doctest
import importlib
import importlib.util

import pytest


def _kernel_modules() -> list[str]:
    """Every module of cutemma.kernels (the families' folders included), found by walking it."""
    import pkgutil

    import cutemma.kernels as pkg

    found = [m.name for m in pkgutil.walk_packages(pkg.__path__, "cutemma.kernels.")]
    if importlib.util.find_spec("torch") is None:  # the torch custom op needs torch itself
        found.remove("cutemma.kernels.torch_op")
    return ["cutemma", "cutemma.kernels", *sorted(found)]


MODULES = _kernel_modules()
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _uses_torch(source: str) -> bool:
    code = "\n".join(line.split("#")[0] for line in source.splitlines())  # not in a comment
    return "torch" in code


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))  # tune's examples read no real cache
    from cutemma.kernels import tuned

    tuned.reload()
    module = importlib.import_module(name)
    flags = doctest.NORMALIZE_WHITESPACE
    runner = doctest.DocTestRunner(optionflags=flags)
    for test in doctest.DocTestFinder().find(module, name):
        if not HAVE_TORCH and any(
            _uses_torch(ex.source) and not ex.options.get(doctest.SKIP) for ex in test.examples
        ):
            continue  # a docstring whose examples run torch runs where torch is installed
        runner.run(test)
    result = runner.summarize(verbose=False)
    tuned.reload()
    assert result.attempted > 0, f"no examples found in {name}"
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
