"""Sparse GMMA probes (wgmma.mma_async.sp): packed A and sp-meta words come from the host,
the kernel reads them as the catalog says, a few compile to their SASS kind, and (GPU) a
sample matches emulate_tiles on an H100.

On a failing GPU run, each line names the atom and where D is wrong (rows/columns of D);
the readings of the ISA to suspect first are listed in cutemma/mma/sparse.py's docstring.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from cuda_skips import needs_cuobjdump, needs_nvrtc
from gpu_verify import verify_on_gpu

from cutemma.cuda.probe import probe_for
from cutemma.cuda.tile_values import to_container
from cutemma.cuda.verify import _inputs
from cutemma.mma import make_mma_atom, mma_op
from cutemma.mma.sparse import check_pattern, contributors, sparse_operands
from cutemma.mma.traits import tv_table


def c_eval(expr: str, **env: int) -> int:
    return eval(re.sub(r"(?<![/])/(?![/])", "//", expr), {}, dict(env))


def test_probe_takes_packed_a_and_metadata_words():
    p = probe_for(mma_op("SM90_SPARSE_64x16x64_S32S8S8_SS_TN"))
    assert p.runnable_on == ("sm_90a",)
    assert "const uint32_t* __restrict__ E)" in p.source  # the fifth parameter
    assert "uint32_t sp_meta = E[t];" in p.source and "0x444" not in p.source
    assert "i < 2048;" in p.source  # SS copies the packed 64 x 32 tile, not 64 x 64
    assert "wgmma.mma_async.sp.sync.aligned.m64n16k64.s32.s8.s8" in p.source


RS_ATOMS = [
    ("SM90_SPARSE_64x8x32_F16F16F16_RS", {}),
    ("SM90_SPARSE_64x16x32_F32BF16BF16_RS", {"sp_sel": 1}),
    ("SM90_SPARSE_64x8x16_F32TF32TF32_RS_TN", {}),
    ("SM90_SPARSE_64x8x64_F32E4M3E5M2_RS_TN", {}),
    ("SM90_SPARSE_64x16x64_S32U8S8_RS_TN", {}),
]


@pytest.mark.parametrize("name,kw", RS_ATOMS)
def test_registers_and_metadata_rebuild_the_dense_a(name, kw):
    # Run the probe's A loads (its C expressions) on the packed container the verify sweep
    # passes, decode each selected thread's sp-meta word as the hardware is read to, put the
    # kept values where the metadata says inside the chunks the traits' dense tv_layout_A
    # gives that register: the dense A comes back.
    atom = make_mma_atom(name, **kw)
    fmt = atom.sparsity
    A, _, _ = _inputs(atom, np.random.default_rng(11))
    packed, words = sparse_operands(atom, A)
    flat = to_container(atom.val_type_A, packed)  # what the kernel's A points at
    values = packed.reshape(-1, order="F")
    assert flat.size == values.size == 64 * atom.shape_mnk[2] // 2
    src = probe_for(atom.op).source
    a0 = re.search(r"int a0 = (.*);  // A", src).group(1)
    regs = [re.findall(r"vA\[a0 \+ (\d+)\]", line) for line in re.findall(r"a\[\d+\] = .*;", src)]
    dense = tv_table(atom.tv_layout_A)
    per = len(regs[0])
    sel = atom.op.param("sp_sel")
    rebuilt = np.zeros_like(A)
    for t in range(128):
        base = c_eval(a0, t=t)
        for r, offs in enumerate(regs):
            kept = [values[base + int(o)] for o in offs]
            chunk_offs = dense[t, r * 2 * per : (r + 1) * 2 * per]  # the register's dense values
            for c in range(0, len(chunk_offs), fmt.chunk):
                m, k0 = chunk_offs[c] % 64, chunk_offs[c] // 64
                idx = _decode(words, fmt, m, k0, sel)
                for j, p in enumerate(idx):
                    rebuilt[m, k0 + p] = kept[c // fmt.chunk * fmt.keep + j]
    assert (rebuilt == A).all()


def _decode(words, fmt, m, k0, sel):
    """The kept positions of chunk (m, k0), from the selected thread whose word holds it."""
    table = tv_table(fmt.meta)
    bits = 32 // table.shape[1]
    for t, v in np.argwhere(table == m + 64 * k0):
        if t in contributors(fmt, sel):
            code = (int(words[t]) >> (v * bits)) & 0xF
            sub = 4 // fmt.chunk
            halves = [(code >> (2 * i)) & 3 for i in range(fmt.keep * sub)]
            return [h // sub for h in halves[::sub]]
    raise AssertionError(f"no metadata for ({m}, {k0})")


def test_verify_inputs_are_structured_for_sparse_atoms():
    atom = make_mma_atom("SM90_SPARSE_64x8x16_F32TF32TF32_SS_TN")
    A, _, _ = _inputs(atom, np.random.default_rng(7))
    check_pattern(A, atom.sparsity)
    assert (A != 0).sum() > 64 * 16 // 2 * 0.9  # nearly every kept value is nonzero


COMPILE_SAMPLE = [
    ("SM90_SPARSE_64x8x32_F16F16F16_SS", {}, "HGMMA"),
    ("SM90_SPARSE_64x24x32_F32F16F16_SS", {"a_major": "MN"}, "HGMMA"),
    ("SM90_SPARSE_64x16x32_F32BF16BF16_RS", {"sp_sel": 1}, "HGMMA"),
    ("SM90_SPARSE_64x8x16_F32TF32TF32_RS_TN", {}, "HGMMA"),
    ("SM90_SPARSE_64x16x64_F32E4M3E5M2_SS_TN", {}, "QGMMA"),
    ("SM90_SPARSE_64x16x64_S32S8S8_RS_TN", {}, "IGMMA"),
]


@needs_nvrtc
@needs_cuobjdump
def test_sparse_probes_compile_to_their_sass_kind():
    from cutemma.cuda.batch_compile import compile_probes

    probes = [probe_for(mma_op(n, **kw)) for n, kw, _ in COMPILE_SAMPLE]
    for r, (_, _, kind) in zip(compile_probes(probes), COMPILE_SAMPLE, strict=True):
        assert r.problem is None, (r.probe.kernel_name, r.problem)
        assert set(r.kinds) == {kind}, (r.probe.kernel_name, r.kinds)


# --- the GPU ---------------------------------------------------------------------------------

GPU_SAMPLE = [
    ("SM90_SPARSE_64x8x32_F16F16F16_SS", {}),
    ("SM90_SPARSE_64x8x32_F16F16F16_RS", {}),
    ("SM90_SPARSE_64x16x32_F16F16F16_RS", {"sp_sel": 1}),
    ("SM90_SPARSE_64x24x32_F32F16F16_SS", {"a_major": "MN"}),
    ("SM90_SPARSE_64x64x32_F32BF16BF16_SS", {"b_major": "MN"}),
    ("SM90_SPARSE_64x256x32_F32BF16BF16_RS", {}),
    ("SM90_SPARSE_64x8x16_F32TF32TF32_SS_TN", {}),
    ("SM90_SPARSE_64x32x16_F32TF32TF32_SS_TN", {"sp_sel": 1}),
    ("SM90_SPARSE_64x136x16_F32TF32TF32_RS_TN", {}),
    ("SM90_SPARSE_64x16x64_F32E4M3E4M3_SS_TN", {}),
    ("SM90_SPARSE_64x40x64_F16E5M2E4M3_RS_TN", {}),
    ("SM90_SPARSE_64x8x64_S32S8S8_SS_TN", {}),
    ("SM90_SPARSE_64x48x64_S32U8S8_RS_TN", {}),
    ("SM90_SPARSE_64x256x64_S32S8U8_SS_TN_SATURATE", {}),
]


@pytest.mark.gpu
def test_sparse_gmma_probes_match_emulation_on_the_gpu(tmp_path):
    verify_on_gpu(GPU_SAMPLE, tmp_path)
