"""Sm90Config(pdl=True): programmatic dependent launch. What the kernel's source and SASS
must hold (the waits before any global access, the trigger, the L2 prefetches), that other
kernels are untouched, the driver structs against cuda.h, and the decode rule. The GPU
checks (results after a torch kernel rewrites the operands, eager and in CUDA graphs) are
tests/kernels/gpu_pdl.py."""

from __future__ import annotations

import ctypes
import importlib.util
import pathlib
import re
import shutil
import subprocess
from dataclasses import replace

import pytest

from cutemma.errors import TiledMmaError
from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.sm90.source import gemm_sm90_source
from cutemma.kernels.space import swapped_kernel
from cutemma.libcuda import (
    PROGRAMMATIC_STREAM_SERIALIZATION,
    LaunchAttribute,
    LaunchConfig,
    PdlLauncher,
)

CASES = [  # (config, dtype, a_major, b_major): a stream-K fp8 decode kernel, a whole bf16 one
    (
        replace(swapped_kernel(16, 10240, 8192, "e4m3", 132, False), swap_ab=False, pdl=True),
        "e4m3",
        "K",
        "K",
    ),
    (
        replace(swapped_kernel(16, 10240, 8192, "bf16", 132, True), swap_ab=False, pdl=True),
        "bf16",
        "M",
        "K",
    ),
    (Sm90Config(128, 256, pdl=True), "bf16", "K", "N"),
]


def _body(src: str, start: str, end: str) -> str:
    i = src.index(start)
    return src[i : src.index(end, i)]


@pytest.mark.parametrize(("cfg", "dtype", "a", "b"), CASES)
def test_every_global_access_comes_after_the_wait(cfg, dtype, a, b):
    """The producer waits before its first TMA load (after prefetching only), the
    consumers before anything else, and the trigger follows the producer's last load."""
    assert cfg.pdl
    src = gemm_sm90_source(cfg, dtype, a, b, "bf16")
    producer = _body(src, "if (threadIdx.x == 0) {  // one thread", "} else {")
    wait, first_load = producer.index("griddep_wait();"), producer.index("tma_load_2d")
    assert wait < first_load
    assert "tma_prefetch_2d" in producer[:wait] and "tma_prefetch_2d" not in producer[wait:]
    assert producer.rindex("griddep_launch_dependents();") > producer.rindex("tma_load_2d")
    consumer = src[src.index("setmaxnreg.inc") :]
    assert consumer.index("griddep_wait();") < min(
        consumer.index(x) for x in ("D[", "sk_flags", "__stcg") if x in consumer
    )
    # one prefetch per load of a k tile: the same boxes
    loads = len(re.findall(r"tma_load_2d(?:_hint)?\(", producer))
    assert len(re.findall(r"tma_prefetch_2d\(", producer)) == loads


@pytest.mark.parametrize(("cfg", "dtype", "a", "b"), CASES)
def test_kernels_without_pdl_carry_none_of_it(cfg, dtype, a, b):
    src = gemm_sm90_source(replace(cfg, pdl=False), dtype, a, b, "bf16")
    assert "griddep" not in src and "prefetch.tensor.2d" not in src


def test_sass_holds_the_waits_the_trigger_and_the_prefetches():
    from cutemma.cuda import compile, count_instructions, sass

    cfg, dtype, a, b = CASES[0]
    counts = count_instructions(sass(compile(gemm_sm90_source(cfg, dtype, a, b, "bf16"), "sm_90a")))
    plain = count_instructions(
        sass(compile(gemm_sm90_source(replace(cfg, pdl=False), dtype, a, b, "bf16"), "sm_90a"))
    )
    # griddepcontrol.wait is ACQBULK, launch_dependents PREEXIT, the prefetch UTMAPF (sm_90a)
    assert counts.get("ACQBULK", 0) >= 2 and counts.get("PREEXIT", 0) >= 1
    assert counts.get("UTMAPF", 0) > 0
    assert not any(plain.get(k, 0) for k in ("ACQBULK", "PREEXIT", "UTMAPF"))


def test_config_rules_and_names():
    assert Sm90Config(128, 128, pdl=True).name == "b128x128_c2_sauto_pdl"
    with pytest.raises(TiledMmaError, match="pdl with cluster=1"):
        Sm90Config(128, 128, pdl=True, cluster=2)
    with pytest.raises(TiledMmaError, match="pdl 1 True or False"):
        Sm90Config(pdl=1)
    with pytest.raises(TiledMmaError, match="pdl is for 2-D kernels"):
        gemm_sm90_source(Sm90Config(128, 128, pdl=True), "bf16", "K", "N", "bf16", batched=True)


def test_decode_configs_leave_pdl_to_the_caller():
    """raw/inference-run16-fp8-pdl.json: with pdl, fp8 decode rows ran 0-8% faster in a CUDA
    graph but 0-4% slower L2-flushed (the inference table's timing): no default."""
    for dtype in ("e4m3", "bf16"):
        for n in (8192, 10240, 57344):
            for whole in (False, True):
                assert not swapped_kernel(16, n, 8192, dtype, 132, whole).pdl


def test_pdl_launcher_fills_cuda_launch_config():
    class FakeCu:
        def __init__(self):
            self.seen = None

        def cuLaunchKernelEx(self, config_ref, fn, params, extra):  # noqa: N802 (libcuda's name)
            c = ctypes.cast(config_ref, ctypes.POINTER(LaunchConfig)).contents
            self.seen = (c.gridDimX, c.gridDimY, c.blockDimX, c.sharedMemBytes, c.hStream,
                         c.numAttrs, c.attrs[0].id, c.attrs[0].value[0], fn, params)  # fmt: skip
            return 0

    cu = FakeCu()
    launch = PdlLauncher(cu)
    assert launch(7, 132, 2, 1, 256, 1, 1, 99000, ctypes.c_void_p(0x1234), 5, None) == 0
    assert cu.seen == (132, 2, 256, 99000, 0x1234, 1, PROGRAMMATIC_STREAM_SERIALIZATION, 1, 7, 5)


def _cuda_h() -> pathlib.Path | None:
    spec = importlib.util.find_spec("nvidia.cu13")
    for root in spec.submodule_search_locations if spec else ():
        h = pathlib.Path(root) / "include" / "cuda.h"
        if h.exists():
            return h
    return None


def test_launch_structs_match_cuda_h(tmp_path):
    """ctypes' layout of CUlaunchAttribute and CUlaunchConfig and the attribute's id, against
    cuda.h compiled by the host C compiler (the nvidia-cuda-runtime wheel's header)."""
    h, cc = _cuda_h(), shutil.which("gcc") or shutil.which("cc")
    if h is None or cc is None:
        pytest.skip("needs cuda.h (nvidia-cuda-runtime) and a C compiler")
    (tmp_path / "l.c").write_text(
        "#include <cuda.h>\n#include <stdio.h>\n#include <stddef.h>\nint main(void) {\n"
        '  printf("%zu %zu %zu %zu %zu %zu %d", sizeof(CUlaunchAttribute),\n'
        "         offsetof(CUlaunchAttribute, value), sizeof(CUlaunchConfig),\n"
        "         offsetof(CUlaunchConfig, hStream), offsetof(CUlaunchConfig, attrs),\n"
        "         offsetof(CUlaunchConfig, numAttrs),\n"
        "         (int)CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);\n}\n"
    )
    exe = tmp_path / "l"
    subprocess.run([cc, f"-I{h.parent}", str(tmp_path / "l.c"), "-o", str(exe)], check=True)
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True,
                                          check=True).stdout.split()]  # fmt: skip
    ours = [ctypes.sizeof(LaunchAttribute), LaunchAttribute.value.offset,
            ctypes.sizeof(LaunchConfig), LaunchConfig.hStream.offset, LaunchConfig.attrs.offset,
            LaunchConfig.numAttrs.offset, PROGRAMMATIC_STREAM_SERIALIZATION]  # fmt: skip
    assert got == ours
