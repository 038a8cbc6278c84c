"""The CUDA C++ emitters: exact text, and that what they emit compiles."""

from __future__ import annotations

import pytest
from cuda_skips import needs_nvrtc

from cutemma.cuda.source import (
    FIXED_WIDTH_TYPES,
    Param,
    asm_volatile,
    comment,
    constant_table,
    declare,
    kernel,
    operand_list,
    translation_unit,
)
from cutemma.errors import CompileError


def test_param_pointer_gets_restrict_and_pointee():
    p = Param("const uint16_t *", "a")
    assert p.is_pointer and p.pointee == "uint16_t"
    assert p.declaration == "const uint16_t * __restrict__ a"
    assert Param("float*", "d", restrict=False).declaration == "float* d"


@pytest.mark.parametrize("bad", ["1x", "a b", "a-b", ""])
def test_bad_identifiers_are_refused_with_the_name(bad):
    with pytest.raises(CompileError, match="not a C identifier"):
        Param("int", bad)
    with pytest.raises(CompileError, match="not a C identifier"):
        declare("int", bad)


def test_declare_forms():
    assert declare("float", "x", 1.5) == "float x = 1.5f;"
    assert declare("int", "v", [1, 2], count=2) == "int v[2] = {1, 2};"
    assert declare("float", "tiny", 1e-30) == "float tiny = 1e-30f;"
    assert declare("bool", "p", True) == "bool p = true;"
    with pytest.raises(CompileError, match="finite"):
        declare("float", "x", float("nan"))


def test_asm_with_only_inputs_keeps_the_empty_output_section():
    text = asm_volatile("st.u32 [%0], %1;", inputs=[("l", "ptr"), ("r", "v")], clobbers=["memory"])
    assert text == (
        'asm volatile(\n  "st.u32 [%0], %1;\\n"\n  :\n  : "l"(ptr), "r"(v)\n  : "memory");'
    )


def test_operand_list_and_comment():
    assert operand_list(0, 1) == "{%0}"
    assert comment("a\n\nb") == "// a\n//\n// b"


def test_translation_unit_drops_empty_parts():
    assert translation_unit("", "int x;", "\n") == "int x;\n"


@needs_nvrtc
def test_emitted_kernel_with_table_and_asm_compiles():
    from cutemma.cuda.compile import compile

    body = "\n".join(
        [
            declare("uint32_t", "v", "offsets[threadIdx.x % 4]"),
            declare("uint32_t", "w"),
            asm_volatile("add.u32 %0, %1, 1;", [("=r", "w")], [("r", "v")]),
            "out[threadIdx.x] = w;",
        ]
    )
    source = translation_unit(
        FIXED_WIDTH_TYPES,
        comment("layout (4):(16) as offsets"),
        constant_table("uint32_t", "offsets", [0, 16, 32, 48]),
        kernel("table_probe", [Param("uint32_t*", "out")], body, launch_bounds=32),
    )
    assert compile(source, "sm_80").data.startswith(b"\x7fELF")
