"""One runtime compiles, caches and launches for both families: a family hands over the
kernel's text and sizes, and the runtime compiles it at the kernel's first load
(:meth:`cutemma.kernels.runtime.driver.DriverKernel.image`), once."""

from __future__ import annotations

import pytest

import cutemma.cuda as cuda_pkg
from cutemma.kernels.runtime.driver import DriverKernel
from cutemma.kernels.sm80 import host as h80
from cutemma.kernels.sm80.config import GemmConfig


class FakeCubin:
    data = b"\x7fELF-fake"


def test_sm80_prepares_text_and_sizes_and_compiles_nothing(monkeypatch):
    compiled = []
    monkeypatch.setattr(cuda_pkg, "compile", lambda src, arch: compiled.append(src) or FakeCubin())
    h80.compiled_kernel.cache_clear()
    key = h80.kernel_key(GemmConfig(), "bf16", "K", "N", "bf16", "bf16", True, True)
    kern = h80.compiled_kernel(key, "sm_90a")
    h80.compiled_kernel.cache_clear()
    # 128x128x32 tiles of 2-byte A and B, 4 stages: (128 + 128) * 32 * 2 * 4 bytes; 2x2 warps
    assert (kern.shared, kern.threads) == ((128 + 128) * 32 * 2 * 4, 4 * 32)
    assert compiled == [] and kern.cubin is None and kern.index is None
    assert kern.image() == FakeCubin.data and compiled == [kern.source]
    assert kern.image() == FakeCubin.data and len(compiled) == 1  # compiled once


def test_a_kernel_given_its_cubin_never_compiles(monkeypatch):
    def boom(*a):
        raise AssertionError("compiled a kernel whose cubin was given")

    monkeypatch.setattr(cuda_pkg, "compile", boom)
    assert DriverKernel(b"\x7fELF", "k", 0, 128).image() == b"\x7fELF"


def test_a_failed_compile_leaves_the_kernel_unbuilt(monkeypatch, tmp_path):
    from cutemma.errors import CompileError

    def fail(src, arch):
        raise CompileError(f"{arch}: no")

    monkeypatch.setattr(cuda_pkg, "compile", fail)
    k = DriverKernel(None, "k", 0, 128, source="x", arch="sm_90a", index=tmp_path / "k.sm90",
                     record="{}")  # fmt: skip
    with pytest.raises(CompileError, match="sm_90a"):
        k.image()
    assert k.cubin is None and list(tmp_path.iterdir()) == []
