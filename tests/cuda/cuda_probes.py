"""Small probe kernels the CUDA tests compile, written with the source emitters."""

from __future__ import annotations

from cutemma.cuda.source import (
    FIXED_WIDTH_TYPES,
    Param,
    asm_volatile,
    block,
    comment,
    declare,
    kernel,
    operand_list,
    translation_unit,
)

MMA_SYNC_PTX = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"


def mma_sync_probe() -> str:
    """One m16n8k16 f16 mma.sync per warp: A, B as packed halves, D as floats."""
    ptx = (
        f"{MMA_SYNC_PTX} {operand_list(0, 4)}, {operand_list(4, 4)}, "
        f"{operand_list(8, 2)}, {operand_list(0, 4)};"
    )
    body = "\n".join(
        [
            "int lane = threadIdx.x % 32;",
            declare("float", "d", 0.0, count=4),
            declare("uint32_t", "a", count=4),
            declare("uint32_t", "b", count=2),
            block("for (int i = 0; i < 4; ++i)", "a[i] = a_in[lane * 4 + i];"),
            block("for (int i = 0; i < 2; ++i)", "b[i] = b_in[lane * 2 + i];"),
            asm_volatile(
                ptx,
                outputs=[("+f", f"d[{i}]") for i in range(4)],
                inputs=[("r", f"a[{i}]") for i in range(4)] + [("r", f"b[{i}]") for i in range(2)],
            ),
            block("for (int i = 0; i < 4; ++i)", "d_out[lane * 4 + i] = d[i];"),
        ]
    )
    params = [
        Param("float*", "d_out"),
        Param("const uint32_t*", "a_in"),
        Param("const uint32_t*", "b_in"),
    ]
    return translation_unit(
        FIXED_WIDTH_TYPES,
        comment(f"probe: one {MMA_SYNC_PTX} per warp"),
        kernel("mma_sync_probe", params, body, launch_bounds=32),
    )


WGMMA_PTX = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"


def wgmma_probe() -> str:
    """One m64n8k16 wgmma from two shared-memory descriptors (values not meaningful)."""
    ptx = "\n".join(
        [
            "{",
            ".reg .pred p;",
            "setp.ne.b32 p, %6, 0;",
            f"{WGMMA_PTX} {operand_list(0, 4)}, %4, %5, p, 1, 1, 0, 0;",
            "}",
        ]
    )
    body = "\n".join(
        [
            declare("float", "d", 0.0, count=4),
            asm_volatile("wgmma.fence.sync.aligned;", clobbers=["memory"]),
            asm_volatile(
                ptx,
                outputs=[("+f", f"d[{i}]") for i in range(4)],
                inputs=[("l", "desc_a"), ("l", "desc_b"), ("r", "1")],
            ),
            asm_volatile("wgmma.commit_group.sync.aligned;", clobbers=["memory"]),
            asm_volatile("wgmma.wait_group.sync.aligned 0;", clobbers=["memory"]),
            block("for (int i = 0; i < 4; ++i)", "d_out[threadIdx.x * 4 + i] = d[i];"),
        ]
    )
    params = [Param("float*", "d_out"), Param("uint64_t", "desc_a"), Param("uint64_t", "desc_b")]
    return translation_unit(
        FIXED_WIDTH_TYPES,
        comment(f"probe: one {WGMMA_PTX} per warpgroup"),
        kernel("wgmma_probe", params, body, launch_bounds=128),
    )


def axpy_probe() -> str:
    """y[i] = a * x[i] + y[i] for i < n: a kernel whose result a test can check."""
    body = block(
        "if (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n)", "y[i] = a * x[i] + y[i];"
    )
    params = [
        Param("float*", "y"),
        Param("const float*", "x"),
        Param("float", "a"),
        Param("int", "n"),
    ]
    return translation_unit(kernel("axpy", params, body))


AXPY_PARAMS = [
    Param("float*", "y"),
    Param("const float*", "x"),
    Param("float", "a"),
    Param("int", "n"),
]
