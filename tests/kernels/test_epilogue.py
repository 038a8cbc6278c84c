"""The epilogue op table (cutemma/kernels/epilogue.py) on the CPU: each torch reference
against a formula written here from its definition (math module, per element), the
order rules and the call-argument checks."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from cutemma.errors import DesignError, LaunchError  # noqa: E402
from cutemma.kernels.epilogue import OPS, Epilogue, bind, reference, validate_ops  # noqa: E402

# independent per-element definitions (scalars, math module)
ACTIVATIONS = {
    "relu": lambda x: x if x > 0 else 0.0,
    # GELU: x * Phi(x), Phi the standard normal CDF = (1 + erf(x / sqrt 2)) / 2
    "gelu": lambda x: x * 0.5 * (1.0 + math.erf(x / math.sqrt(2.0))),
    # the tanh approximation (Hendrycks & Gimpel): 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3)))
    "gelu_tanh": lambda x: (
        0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    ),
    "silu": lambda x: x / (1.0 + math.exp(-x)),
}
POINTS = [-30.0, -6.0, -2.5, -1.0, -0.3, -1e-3, 0.0, 1e-3, 0.7, 1.0, 2.0, 5.5, 30.0]


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_reference_matches_its_definition(name):
    x = torch.tensor([POINTS], dtype=torch.float64)
    got = OPS[name].ref(x, None)[0].tolist()
    for p, g in zip(POINTS, got):
        assert g == pytest.approx(ACTIVATIONS[name](p), rel=1e-12, abs=1e-12), (name, p)


def test_vector_and_matrix_references_index_rows_and_columns():
    M, N = 3, 4
    x = torch.arange(M * N, dtype=torch.float64).reshape(M, N)
    row = torch.tensor([10.0, 20.0, 30.0], dtype=torch.float64)
    col = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    res = torch.full((M, N), 0.5, dtype=torch.float64)
    for m in range(M):
        for n in range(N):
            v = float(x[m, n])
            assert OPS["scale_row"].ref(x, row)[m, n] == v * float(row[m])
            assert OPS["scale_col"].ref(x, col)[m, n] == v * float(col[n])
            assert OPS["bias"].ref(x, col)[m, n] == v + float(col[n])
            assert OPS["bias_row"].ref(x, row)[m, n] == v + float(row[m])
            assert OPS["residual"].ref(x, res)[m, n] == v + 0.5


def test_reference_composes_alpha_beta_c_then_ops_in_order():
    acc = torch.tensor([[1.0, -2.0], [3.0, 0.5]])
    C = torch.tensor([[1.0, 1.0], [1.0, 1.0]])
    s_row = torch.tensor([2.0, -1.0])
    bias = torch.tensor([0.25, -0.25])
    got = reference(acc, ("scale_row", "bias", "relu"), {"scale_row": s_row, "bias": bias},
                    alpha=0.5, beta=2.0, C=C)  # fmt: skip
    for m in range(2):
        for n in range(2):
            v = (0.5 * float(acc[m, n]) + 2.0 * float(C[m, n])) * float(s_row[m]) + float(bias[n])
            assert float(got[m, n]) == pytest.approx(max(v, 0.0))
    assert reference(acc, ("cast",), {}, out_dtype=torch.bfloat16).dtype == torch.bfloat16


@pytest.mark.parametrize(
    "names, fragment",
    [
        (("bias", "gleu"), "did you mean 'gelu'"),
        (("relu", "relu"), "appears twice"),
        (("relu", "gelu"), "two activations"),
        (("gelu", "bias"), "after the activation"),
        (("bias", "scale_row"), "after the bias"),
        (("residual", "scale_col"), "after the residual"),
        (("cast", "relu"), "'cast' must be last"),
        ((3,), "unknown op 3"),
        (5, "not a list of op names"),
    ],
)
def test_bad_op_lists_are_refused_by_name(names, fragment):
    with pytest.raises(DesignError, match=fragment):
        validate_ops(names)


def test_good_orders_pass():
    for names in [("scale_row", "scale_col", "bias", "gelu", "residual", "cast"),
                  ("residual", "relu"), ("bias_row", "bias", "silu"), ("cast",), ()]:  # fmt: skip
        assert validate_ops(names) == names


CPU = torch.device("cpu")


@pytest.mark.parametrize(
    "names, tensors, fragment",
    [
        (("bias",), {}, "missing bias="),
        (("relu",), {"bias": torch.zeros(8)}, "no op of epilogue=('relu',) reads it"),
        (("bias",), {"bias": torch.zeros(4)}, "needs (8,)"),
        (("bias_row",), {"bias_row": torch.zeros(8)}, "needs (4,)"),
        (("residual",), {"residual": torch.zeros(8, 4)}, "needs (4, 8)"),
        (
            ("scale_col",),
            {"scale_col": torch.zeros(8, dtype=torch.float64)},
            "float64; give float32",
        ),
        (("scale_col",), {"scale_col": [1.0] * 8}, "give a torch tensor"),
    ],
)
def test_bad_call_tensors_are_refused_by_name(names, tensors, fragment):
    with pytest.raises(LaunchError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        bind(names, tensors, 4, 8, CPU)


def test_bind_refuses_another_device_batched_and_int8():
    with pytest.raises(LaunchError, match="is on cpu; move it to meta"):
        bind(("bias",), {"bias": torch.zeros(8)}, 4, 8, torch.device("meta"))
    with pytest.raises(LaunchError, match="batched"):
        bind(("relu",), {}, 4, 8, CPU, batched=True)
    with pytest.raises(LaunchError, match="int8"):
        bind(("relu",), {}, 4, 8, CPU, int8=True)
    assert not bind((), {}, 4, 8, CPU, batched=True, int8=True).epilogue


def test_bind_gives_pointers_and_residual_strides_in_parameter_order():
    res = torch.zeros(8, 6)[:, :4]  # strided rows: (6, 1)
    b = bind(("scale_col", "residual", "gelu"), {"scale_col": torch.ones(4), "residual": res},
             8, 4, CPU)  # fmt: skip
    assert [p.name for p in b.epilogue.params()] == [
        "ep_scale_col", "ep_residual", "ep_residual_ld"]  # fmt: skip
    assert b.values == (b.tensors[0].data_ptr(), res.data_ptr(), 6)
    assert b.epilogue.dtypes == ("f32", "f32", "")
    col = torch.zeros(4, 8).t()  # columns contiguous: copied to rows
    b = bind(("residual",), {"residual": col}, 8, 4, CPU)
    assert b.values[1:] == (4,) and b.tensors[0].data_ptr() != col.data_ptr()


def test_epilogue_expression_and_naming():
    e = Epilogue(("scale_row", "scale_col", "bias", "gelu"), ("f32", "f32", "f16", ""))
    x = e.apply("acc", "m", "n")
    assert x == (
        "epi_gelu_erf((((acc) * __ldg(&epl_scale_row[m])) * __ldg(&epl_scale_col[n]))"
        " + f16_to_f32(__ldg(&epl_bias[n])))"
    )
    assert "epi_gelu_erf" in e.helpers() and "epi_silu" not in e.helpers()
    assert not Epilogue() and Epilogue().suffix == "" and Epilogue().params() == []
    with pytest.raises(DesignError, match="dtypes"):
        Epilogue(("bias",), ("",))


def _stand_in_families(monkeypatch, d, arch="sm_90a"):
    """cutemma.gemm down to the policy on CPU tensors: the device checks pass as a CUDA
    device of ``arch``'s, and the chosen kernel is recorded instead of run. Returns the
    list each call's record lands in."""
    import cutemma.kernels.call as c

    ran = []
    monkeypatch.setattr(c, "_operands", lambda A, B: (None, *c.kernel_type(A, B)))
    monkeypatch.setattr(c, "device_arch", lambda device: arch)
    monkeypatch.setattr(c, "sm_count", lambda device: 132)
    monkeypatch.setattr(c, "gpu_name", lambda device: "NVIDIA H100")

    def choose(call):
        ran.append(call)
        raise _Stop

    monkeypatch.setattr(d, "choose", choose)
    return ran


class _Stop(Exception):
    """Raised by the stand-in policy: the call record is what these tests read."""


def test_epilogue_calls_take_their_own_repeated_call_path(monkeypatch):
    """cutemma.gemm with an epilogue (or any epilogue tensor) asks the epilogue's fast path
    (its key holds the op list and which tensors were given; the tensors in ARGS order),
    never the plain one; the checked call it falls to gets the record a repeat needs. The
    families are stand-ins (no GPU)."""
    import cutemma.kernels.dispatch as d
    from cutemma.kernels.epilogue import ARGS

    plain, epi = [], []
    monkeypatch.setattr(d, "try_fast", lambda *a: plain.append(a))
    monkeypatch.setattr(d, "try_fast_epilogue", lambda *a: epi.append(a))
    ran = _stand_in_families(monkeypatch, d)
    assert ARGS == ("scale_row", "scale_col", "bias", "bias_row", "residual")
    A, B = torch.zeros(4, 8, dtype=torch.bfloat16), torch.zeros(8, 6, dtype=torch.bfloat16)
    bias = torch.zeros(6)
    with pytest.raises(_Stop):
        d.gemm(A, B, epilogue=("bias", "gelu"), bias=bias)
    assert plain == [] and epi[-1][5:] == (("bias", "gelu"), (None, None, bias, None, None))
    bound = ran[-1].epilogue
    assert ran[-1].remember and ran[-1].asked is None and bound.fast.tensors == (bias,)
    assert bound.epilogue == Epilogue(("bias", "gelu"), ("f32", ""))
    with pytest.raises(_Stop):
        d.gemm(A, B, epilogue=("bias",), bias=torch.zeros(12)[::2])  # strided: copied
    assert ran[-1].epilogue.fast is None  # a repeat would pass the strided tensor
    with pytest.raises(LaunchError, match="no op of epilogue=\\(\\) reads it"):
        d.gemm(A, B, bias=bias)  # a tensor without its op: refused, not ignored
    with pytest.raises(_Stop):
        d.gemm(A, B)
    assert len(plain) == 1 and ran[-1].remember and ran[-1].epilogue is None


def test_fast_record_maps_each_pointer_box_to_its_tensor():
    s, r = torch.ones(8), torch.zeros(8, 4)
    b = bind(("scale_row", "residual", "relu"), {"residual": r, "scale_row": s}, 8, 4, CPU)
    # parameters: ep_scale_row, ep_residual, ep_residual_ld; given in ARGS order: s, r
    assert b.fast.slots == ((0, 0), (1, 1)) and b.fast.tensors == (s, r)
    assert b.fast.absent == (False, True, True, True, False)
    assert bind(["relu"], {}, 8, 4, CPU).fast is None  # a list is no key


def test_a_designs_epilogue_is_the_calls_own(monkeypatch):
    """GemmDesign(epilogue=...) given as design= fuses its ops when the call names none, its
    rule refuses a bad op list before anything runs, and a call's own epilogue wins. The
    sm80 family is a stand-in (no GPU)."""
    import cutemma.kernels.dispatch as d
    from cutemma.errors import DesignError
    from cutemma.kernels import GemmDesign
    from cutemma.tiled import make_tiled_mma

    monkeypatch.setattr(d, "try_fast", lambda *a: None)
    monkeypatch.setattr(d, "try_fast_epilogue", lambda *a: None)
    ran = _stand_in_families(monkeypatch, d)
    tiled = make_tiled_mma("SM80_16x8x16_F32BF16BF16F32_TN", (2, 2, 1))
    A, B = torch.zeros(4, 8, dtype=torch.bfloat16), torch.zeros(8, 6, dtype=torch.bfloat16)
    with pytest.raises(_Stop):
        d.gemm(A, B, design=GemmDesign(tiled, (64, 64, 32), epilogue=("relu",)))
    assert ran[-1].epilogue.epilogue.ops == ("relu",)
    with pytest.raises(_Stop):
        d.gemm(A, B, design=GemmDesign(tiled, (64, 64, 32), epilogue=("relu",)), epilogue=("silu",))
    assert ran[-1].epilogue.epilogue.ops == ("silu",)
    with pytest.raises(DesignError, match="epilogue"):
        d.gemm(A, B, design=GemmDesign(tiled, (64, 64, 32), epilogue=("gleu",)))


def test_reference_names_what_is_wrong():
    """epilogue.reference refuses by name what it cannot compute (issue 34: bare errors)."""
    from cutemma.kernels.epilogue import reference

    acc = torch.zeros(2, 3)
    with pytest.raises(LaunchError, match="acc is a list"):
        reference([[0.0]], ("relu",), {})
    with pytest.raises(LaunchError, match="op 'bias' reads tensors\\['bias'\\], which is NoneType"):
        reference(acc, ("bias",), {})
    with pytest.raises(LaunchError, match="epilogue reference: "):
        reference(acc, ("bias",), {"bias": torch.zeros(5)})  # 5 does not broadcast to 3
    assert reference(acc, ("bias",), {"bias": torch.ones(3)}).sum() == 6


def test_a_transposed_chain_on_d_t_is_the_chain_on_d():
    """epilogue.transposed: each vector op as its twin on D^T, so that the swapped kernel's
    D^T through the transposed chain is, transposed back, the call's D through its own
    chain (torch references on random values); a residual has no twin."""
    from cutemma.kernels.epilogue import transposed

    M, N, cpu = 5, 7, torch.device("cpu")
    acc = torch.randn(M, N)
    vec = {"scale_row": torch.rand(M) + 0.5, "scale_col": torch.rand(N) + 0.5,
           "bias": torch.randn(N), "bias_row": torch.randn(M)}  # fmt: skip
    for ops in [("bias", "gelu_tanh"), ("scale_row", "scale_col", "bias", "silu"),
                ("scale_col", "bias_row", "relu"), ("bias", "bias_row")]:  # fmt: skip
        tensors = {OPS[n].arg: vec[OPS[n].arg] for n in ops if OPS[n].arg}
        b = bind(ops, tensors, M, N, cpu)
        t = transposed(b, M, N)
        assert t.epilogue.ops != b.epilogue.ops and t.fast.names == ops
        # the call's bind holds the same twin, so the policy asks the epilogue nothing more
        assert (b.twin.epilogue, b.twin.values, b.twin.fast) == (t.epilogue, t.values, t.fast)
        assert t.twin is None  # (a twin binds no twin of its own)
        want = reference(acc, ops, tensors)
        got = reference(acc.t().contiguous(), t.epilogue.ops, t.named).t()
        assert torch.allclose(got, want, atol=1e-6), ops
        # each fast-path slot of the transposed launch points at the call's same tensor
        assert {t.values[i] for i, _ in t.fast.slots} == {x.data_ptr() for x in tensors.values()}
        for i, j in t.fast.slots:
            assert t.fast.tensors[j].data_ptr() == t.values[i]
    r = bind(("bias", "residual"), {"bias": vec["bias"], "residual": torch.randn(M, N)}, M, N, cpu)
    assert transposed(r, M, N) is None and r.twin is None
