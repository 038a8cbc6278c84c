"""NVRTC compile, target architectures, errors and the disk cache (CPU only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cuda_probes import axpy_probe, mma_sync_probe, wgmma_probe
from cuda_skips import needs_cuobjdump, needs_nvrtc

from cutemma.cuda import cache as disk
from cutemma.cuda.compile import TARGETS, compile, compile_options, numbered_lines
from cutemma.cuda.sass import local_memory_use, sass, tensor_core_counts
from cutemma.errors import CompileError

pytestmark = needs_nvrtc

REPO = Path(__file__).resolve().parents[2]


@needs_cuobjdump
def test_mma_sync_probe_is_one_hmma_without_local_memory():
    cubin = compile(mma_sync_probe(), "sm_80")
    text = sass(cubin)
    assert tensor_core_counts(text) == {"HMMA": 1}
    assert "HMMA.16816.F32" in text
    assert not local_memory_use(cubin)


@needs_cuobjdump
def test_wgmma_probe_is_one_hgmma_for_sm90a():
    cubin = compile(wgmma_probe(), "sm_90a")
    assert tensor_core_counts(sass(cubin)) == {"HGMMA": 1}
    assert not local_memory_use(cubin)


def test_nvrtc_writes_only_into_buffers_of_our_own(monkeypatch):
    """NVRTC writes its log (just a NUL when empty) and the cubin into buffers we hand it:
    they must be mutable objects of our own. An immutable b" " * n is not (for n = 1 it
    is the module's b" " constant, or the interpreter's one shared b" " when the module
    was compiled from source: written, every later b" " read b"\\x00", and on Python
    3.12 every f-string compiled later had NULs for its single spaces)."""
    import sys

    comp = sys.modules["cutemma.cuda.compile"]
    real = comp._nvrtc()
    handed = []

    class Spy:
        def __getattr__(self, name):
            fn = getattr(real, name)
            if name in ("nvrtcGetProgramLog", "nvrtcGetCUBIN", "nvrtcGetPTX"):
                return lambda prog, buf: handed.append(type(buf)) or fn(prog, buf)
            return fn

    monkeypatch.setattr(comp, "_nvrtc", Spy)
    ok, cubin, log = comp._run_nvrtc(mma_sync_probe(), "p.cu", ("--gpu-architecture=sm_80",), False)
    assert ok and log == "" and cubin[:4] == b"\x7fELF" and type(cubin) is bytes
    assert handed == [bytearray, bytearray]
    assert bytes([32]) == b" "


def test_wgmma_needs_the_arch_specific_target():
    # Without the 'a' suffix ptxas refuses wgmma: the target really matters.
    with pytest.raises(CompileError, match="wgmma"):
        compile(wgmma_probe(), "sm_90", cache=False)


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_every_target_compiles(arch):
    cubin = compile(axpy_probe(), arch)
    assert cubin.data.startswith(b"\x7fELF")
    assert cubin.options[0] == f"--gpu-architecture={arch}"


def test_unknown_arch_names_the_supported_ones():
    with pytest.raises(CompileError, match=r"sm_70.*sm_80.*compile it for sm_80") as info:
        compile(axpy_probe(), "sm_70")
    assert "sm_90" in str(info.value)
    with pytest.raises(CompileError, match="'ampere'"):
        compile(axpy_probe(), "ampere")


def test_frontend_error_carries_log_and_numbered_lines():
    source = axpy_probe().replace("a * x[i]", "a * z[i]")
    bad_line = 1 + source.splitlines().index(next(l for l in source.splitlines() if "z[i]" in l))
    with pytest.raises(CompileError) as info:
        compile(source, "sm_80")
    err = info.value
    assert 'identifier "z" is undefined' in err.log
    assert err.source_line == bad_line
    assert f"> {bad_line} |" in str(err) and "z[i]" in err.excerpt
    assert f"source around line {bad_line}" in str(err)


def test_ptxas_error_is_traced_back_to_the_asm_source_line():
    source = mma_sync_probe().replace(".m16n8k16.", ".m16n8k17.")
    lines = source.splitlines()
    asm_first = 1 + next(i for i, l in enumerate(lines) if "asm volatile" in l)
    asm_last = 1 + next(i for i, l in enumerate(lines) if i >= asm_first and l.endswith(");"))
    with pytest.raises(CompileError) as info:
        compile(source, "sm_80")
    err = info.value
    assert "ptxas" in err.log
    assert "PTX line" in str(err) and "m16n8k17" in str(err)
    # The PTX .loc directive names a line of the (multi-line) asm statement.
    assert asm_first <= err.source_line <= asm_last
    assert "> " + str(err.source_line) in err.excerpt


def test_missing_header_error_explains_nvrtc_has_none():
    with pytest.raises(CompileError, match="no CUDA headers built in"):
        compile("#include <cuda_fp16.h>\n" + axpy_probe(), "sm_80")


def test_numbered_lines_clips_at_the_edges():
    assert numbered_lines("x\ny", 1, context=5) == "> 1 | x\n  2 | y"


def test_compile_options_put_target_first_and_caller_last():
    assert compile_options("sm_80", ["-G"]) == ("--gpu-architecture=sm_80", "-std=c++17", "-G")


def test_second_compile_in_process_is_a_cache_hit(private_cache):
    first = compile(axpy_probe(), "sm_80")
    second = compile(axpy_probe(), "sm_80")
    assert (first.cache_hit, second.cache_hit) == (False, True)
    assert first.data == second.data
    assert (private_cache / f"{first.key}.cubin").is_file()


def test_key_depends_on_source_options_and_arch():
    base = compile(axpy_probe(), "sm_80")
    assert compile(axpy_probe(), "sm_89").key != base.key
    assert compile(axpy_probe(), "sm_80", ["-lineinfo"]).key != base.key
    assert compile(axpy_probe() + "// edited\n", "sm_80").key != base.key


def test_cache_can_be_bypassed_and_damage_is_a_miss(private_cache):
    first = compile(axpy_probe(), "sm_80")
    assert compile(axpy_probe(), "sm_80", cache=False).cache_hit is False
    (private_cache / f"{first.key}.cubin").write_bytes(b"garbage")
    again = compile(axpy_probe(), "sm_80")
    assert again.cache_hit is False and again.data == first.data
    assert compile(axpy_probe(), "sm_80").cache_hit is True


def test_unwritable_cache_still_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(blocker / "cache"))
    assert compile(axpy_probe(), "sm_80").data.startswith(b"\x7fELF")


def test_cache_dir_defaults_under_home(monkeypatch):
    monkeypatch.delenv("CUTEMMA_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert disk.cache_dir() == Path.home() / ".cache" / "cutemma"


_CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
from cuda_probes import mma_sync_probe
from cutemma.cuda.compile import compile
c = compile(mma_sync_probe(), "sm_80")
print(json.dumps({{"hit": c.cache_hit, "key": c.key, "size": len(c.data)}}))
"""


def _compile_in_child(cache: Path) -> dict:
    env = {**os.environ, "CUTEMMA_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
    code = _CHILD.format(tests=str(Path(__file__).parent))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_second_process_is_a_cache_hit(private_cache):
    first = _compile_in_child(private_cache)
    second = _compile_in_child(private_cache)
    assert first["hit"] is False and second["hit"] is True
    assert first["key"] == second["key"] and first["size"] == second["size"]
    assert disk.clear() == 1
    assert _compile_in_child(private_cache)["hit"] is False
