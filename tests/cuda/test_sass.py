"""SASS disassembly, instruction counting and local-memory detection."""

from __future__ import annotations

import importlib

import pytest
from cuda_skips import needs_cuobjdump, needs_nvrtc

from cutemma.cuda.sass import (
    count_instructions,
    find_tool,
    instructions,
    local_memory_use,
    resource_usage,
    sass,
    tensor_core_counts,
)
from cutemma.errors import CompileError

# Lines as cuobjdump prints them for sm_90a and sm_100a (encodings stripped).
SAMPLE = """\
        /*0010*/                   WARPGROUP.ARRIVE ;
        /*0060*/                   HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ, !UPT, gsb0 ;
        /*0070*/              @!P0 LDSM.16.M88.4 R4, [R2] ;
        /*0080*/                   UTCHMMA gdesc[UR8], gdesc[UR10], tmem[UR6], tmem[UR4], idesc[UR5], UPT ;
        /*0090*/             @UP1 QGMMA.64x8x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24 ;
        /*00a0*/                   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64] ;
        /*00b0*/                   EXIT ;
        Function : other
"""


def test_instructions_keep_modifiers_and_skip_predicates():
    assert instructions(SAMPLE) == [
        "WARPGROUP.ARRIVE",
        "HGMMA.64x8x16.F32",
        "LDSM.16.M88.4",
        "UTCHMMA",
        "QGMMA.64x8x32.F32.E4M3.E4M3",
        "LDGSTS.E.BYPASS.128",
        "EXIT",
    ]


def test_counts_by_kind_and_tensor_core_subset():
    counts = count_instructions(SAMPLE)
    assert counts["HGMMA"] == 1 and counts["LDSM"] == 1 and counts["LDGSTS"] == 1
    assert "Function" not in counts
    assert tensor_core_counts(SAMPLE) == {"HGMMA": 1, "UTCHMMA": 1, "QGMMA": 1}


def test_local_memory_from_text():
    assert not local_memory_use(SAMPLE)
    spill = local_memory_use("/*0000*/ STL.64 [R1+0x8], R4 ;\n/*0010*/ @P0 LDL R5, [R1] ;")
    assert (spill.loads, spill.stores, bool(spill)) == (1, 1, True)


def test_not_a_cubin_is_refused():
    with pytest.raises(CompileError, match="ELF magic"):
        sass(b"hello")


def test_missing_tool_names_the_pip_package(monkeypatch):
    # importlib, not "import ... as": the package attribute `sass` is the function.
    sass_module = importlib.import_module("cutemma.cuda.sass")

    monkeypatch.setattr(sass_module, "find_nvidia_files", lambda pattern: [])
    monkeypatch.setenv("PATH", "")
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    monkeypatch.delenv("CUDA_PATH", raising=False)
    if (sass_module.Path("/usr/local/cuda/bin/nvdisasm")).exists():
        pytest.skip("a CUDA toolkit in /usr/local/cuda provides nvdisasm")
    with pytest.raises(CompileError, match="pip install nvidia-cuda-nvdisasm"):
        find_tool("nvdisasm")


# A register array indexed at run time cannot live in registers: it spills.
SPILLING = """
extern "C" __global__ void spills(float* o, const int* idx) {
  float a[32];
  #pragma unroll 1
  for (int t = 0; t < 32; ++t) a[idx[t]] = o[t];
  o[threadIdx.x] = a[idx[threadIdx.x]];
}
"""


@needs_nvrtc
@needs_cuobjdump
def test_spilling_kernel_is_caught_from_the_cubin():
    from cutemma.cuda.compile import compile

    cubin = compile(SPILLING, "sm_80")
    use = local_memory_use(cubin)
    assert use and use.loads >= 1 and use.stores >= 1
    assert use.stack_bytes == 128  # 32 floats
    assert resource_usage(cubin)["spills"]["STACK"] == 128
    raw = sass(cubin, raw=True)
    assert "/* 0x" in raw and "/* 0x" not in sass(cubin)
    assert local_memory_use(sass(cubin)).stores == use.stores
