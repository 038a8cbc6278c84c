"""A traced cutemma.gemm (fake CUDA tensors: what torch.compile and export see) refuses
exactly what the eager call refuses, with the same error class and message (issue 34), and
every calling form traces to one graph with no break (issue 32, acceptance 5 on the CPU:
the GPU script tests/kernels/gpu_torch_op.py runs the same forms compiled for real).

The eager side is the eager call's own checks on CPU tensors, its device queries stood in
(a CUDA device of sm_90a), so both sides see the same arguments but for the tensors' kind.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.errors import CutemmaError

torch = pytest.importorskip("torch")
fake_tensor = pytest.importorskip("torch._subclasses.fake_tensor")

import cutemma  # noqa: E402
import cutemma.kernels.call as call_mod  # noqa: E402
from cutemma.kernels.epilogue import ARGS  # noqa: E402

BF, E4 = torch.bfloat16, torch.float8_e4m3fn
M, N, K = 16, 32, 64


@pytest.fixture
def eager(monkeypatch):
    """make_call as the eager call runs it, on CPU tensors taken for an sm_90a device's."""
    orig = call_mod._operands
    device = type("Device", (), {"type": "cuda", "index": 0})()  # one device: A's is B's

    class Cuda:
        def __init__(self, t):
            self._t = t
            self.device = device

        def __getattr__(self, name):
            return getattr(self._t, name)

    monkeypatch.setattr(call_mod, "_operands", lambda A, B: orig(Cuda(A), Cuda(B)))
    monkeypatch.setattr(call_mod, "device_arch", lambda device: "sm_90a")
    monkeypatch.setattr(call_mod, "sm_count", lambda device: 132)
    monkeypatch.setattr(call_mod, "gpu_name", lambda device: "NVIDIA H100")

    def run(A, B, **kw):
        tensors = {k: kw.pop(k) for k in list(kw) if k in ARGS}
        C = kw.pop("C", None)
        return call_mod.make_call(A, B, C, tensors=tensors, **kw)

    return run


def _bad_calls(make):
    """name -> (A, B, keywords) of calls both paths must refuse; ``make(shape, dtype)``
    builds a tensor of the path's kind."""
    A, B = make((M, K), BF), make((K, N), BF)
    return {
        "scale_a NaN": (A, B, {"scale_a": float("nan")}),
        "alpha inf": (A, B, {"alpha": float("inf")}),
        "alpha 2**2000": (A, B, {"alpha": 2**2000}),
        "scale_a 10**400": (A, B, {"scale_a": 10**400}),
        "beta a string": (A, B, {"beta": "1"}),
        "complex C": (A, B, {"C": make((M, N), torch.complex64), "beta": 1.0}),
        "out_dtype a string": (A, B, {"out_dtype": "float32"}),
        "out_dtype a numpy dtype": (A, B, {"out_dtype": np.float32}),
        "numpy C": (A, B, {"C": np.zeros((M, N), np.float32), "beta": 1.0}),
        "float C": (A, B, {"C": 1.0, "beta": 1.0}),
        "numpy out": (A, B, {"out": np.zeros((M, N), np.float32)}),
        "unknown op": (A, B, {"epilogue": ("bias", "gleu"), "bias": make((N,), BF)}),
        "a set of ops": (A, B, {"epilogue": {"relu", "bias"}, "bias": make((N,), BF)}),
        "bias of the wrong length": (A, B, {"epilogue": "bias", "bias": make((N + 1,), BF)}),
        "bias without its op": (A, B, {"bias": make((N,), BF)}),
        "a list for bias": (A, B, {"epilogue": "bias", "bias": [0.0] * N}),
        "int8 with scales": (
            make((M, K), torch.int8),
            make((K, N), torch.int8),
            {"scale_a": 2.0},
        ),  # fmt: skip
        "shapes": (A, make((K + 1, N), BF), {}),
        "numpy A": (np.zeros((M, K), np.float32), B, {}),
    }


NAMES = list(_bad_calls(lambda s, d: torch.zeros(s, dtype=d)))


@pytest.mark.parametrize("name", NAMES)
def test_a_traced_call_refuses_what_the_eager_call_refuses(eager, name):
    A, B, kw = _bad_calls(lambda s, d: torch.zeros(s, dtype=d))[name]
    with pytest.raises(CutemmaError) as want:
        eager(A, B, **dict(kw))
    mode = fake_tensor.FakeTensorMode()

    def make(shape, dtype):
        with mode:
            return torch.empty(shape, device="cuda", dtype=dtype)

    A, B, kw = _bad_calls(make)[name]
    with pytest.raises(CutemmaError) as got, mode:
        cutemma.gemm(A, B, **kw)
    assert (type(got.value), str(got.value)) == (type(want.value), str(want.value))


FORMS = {
    "plain": ({}, (M, N), BF),
    "out_dtype": ({"out_dtype": torch.float32}, (M, N), torch.float32),
    "bias + silu": ({"epilogue": ("bias", "silu"), "bias": ((N,), torch.float32)}, (M, N), BF),
    "bias_row": ({"epilogue": "bias_row", "bias_row": ((M,), BF)}, (M, N), BF),
    "residual": ({"epilogue": "residual", "residual": ((M, N), BF)}, (M, N), BF),
    "gelu_tanh": ({"epilogue": "gelu_tanh"}, (M, N), BF),
    "fp8 scale_row/scale_col": ({"epilogue": ("scale_row", "scale_col"),
                                 "scale_row": ((M,), torch.float32),
                                 "scale_col": ((N,), torch.float32), "fp8": True}, (M, N), BF),
}  # fmt: skip


@pytest.mark.parametrize("form", FORMS)
def test_each_form_traces_to_one_op_node_with_no_break(form):
    kw, shape, dtype = FORMS[form]
    kw = dict(kw)
    mode = fake_tensor.FakeTensorMode()

    def make(s, d):
        with mode:
            return torch.empty(s, device="cuda", dtype=d)

    fp8 = kw.pop("fp8", False)
    A = make((M, K), E4 if fp8 else BF)
    B = make((N, K), E4).t() if fp8 else make((K, N), BF)
    tensors = {k: make(*v) for k, v in kw.items() if isinstance(v, tuple) and k != "epilogue"}
    rest = {k: v for k, v in kw.items() if k not in tensors}
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(A, B, **t):
        return cutemma.gemm(A, B, **rest, **t) * 1

    torch._dynamo.reset()
    with mode:
        D = torch.compile(f, backend=backend, fullgraph=True)(A, B, **tensors)
    assert (tuple(D.shape), D.dtype) == (shape, dtype)
    (gm,) = graphs
    nodes = [n for n in gm.graph.nodes if "cutemma" in str(n.target)]
    assert len(nodes) == 1
    if "epilogue" in rest:
        ops = rest["epilogue"]
        want = ops if isinstance(ops, str) else ",".join(ops)
        args = dict(zip([a.name for a in nodes[0].target._schema.arguments], nodes[0].args))
        assert args["epilogue"] == want
