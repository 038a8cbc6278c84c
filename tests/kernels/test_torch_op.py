"""cutemma.gemm as a torch custom op (issue 21): registration, the fake implementation's
output for every kind of call gemm accepts, and traces with no graph break — all on the CPU,
with fake CUDA tensors (torch's FakeTensorMode: no GPU, no kernel).

What the outputs should be comes from gemm's documented contract and from torch itself:
D's shape is torch.matmul's on meta tensors (its batch broadcasting is the rule gemm's
docstring names), its strides those of a new contiguous tensor of that shape, its dtype the
documented default (A's dtype for 16-bit inputs, float32 for tf32, int32 for int8, bfloat16
for float8) or out_dtype.
"""

from __future__ import annotations

import pytest

from cutemma.errors import LaunchError

torch = pytest.importorskip("torch")
fake_tensor = pytest.importorskip("torch._subclasses.fake_tensor")

import cutemma  # noqa: E402
from cutemma.kernels import torch_op  # noqa: E402
from cutemma.kernels.sm80.plan import GemmConfig  # noqa: E402
from cutemma.kernels.sm90.config import Sm90Config  # noqa: E402

E4, E5 = torch.float8_e4m3fn, torch.float8_e5m2
BF, F16, F32 = torch.bfloat16, torch.float16, torch.float32
# gemm's docstring: "default: A's dtype for 16-bit inputs, float32 for tf32, int32 for int8,
# bfloat16 for float8"
DEFAULT_OUT = {F16: F16, BF: BF, F32: F32, torch.int8: torch.int32, E4: BF, E5: BF}
SHAPES = [  # (A shape, B shape): 2-D, and torch.matmul's batch broadcasting
    ((16, 64), (64, 32)),
    ((1, 64), (64, 8)),
    ((3, 16, 64), (64, 32)),
    ((16, 64), (3, 64, 32)),
    ((1, 16, 64), (3, 64, 32)),
    ((3, 16, 64), (1, 64, 32)),
    ((3, 16, 64), (3, 64, 32)),
    ((1, 16, 64), (1, 64, 32)),
]


@pytest.fixture(scope="module")
def mode():
    return fake_tensor.FakeTensorMode()


def cuda(mode, shape, dtype):
    with mode:
        return torch.empty(shape, device="cuda", dtype=dtype)


def expected(a, b, dtype):
    """torch.matmul's output shape (meta tensors) and a new tensor's strides."""
    d = torch.matmul(torch.empty(a, device="meta"), torch.empty(b, device="meta"))
    return tuple(d.shape), torch.empty(d.shape, device="meta").stride(), dtype


def test_ops_are_registered_once_with_their_schemas():
    g1, o1 = torch_op.register()
    g2, o2 = torch_op.register()
    assert g1 is g2 and o1 is o2
    schema = str(torch.ops.cutemma.gemm.default._schema)
    assert schema.startswith("cutemma::gemm(Tensor A, Tensor B, Tensor? C, float alpha")
    assert schema.endswith("-> Tensor")
    out_schema = str(torch.ops.cutemma.gemm_out.default._schema)
    assert out_schema.endswith("!) out) -> ()")  # out is written (an alias set with '!')


@pytest.mark.parametrize("a,b", SHAPES)
@pytest.mark.parametrize("dtype", list(DEFAULT_OUT))
def test_fake_output_matches_the_documented_result(mode, a, b, dtype):
    A, B = cuda(mode, a, dtype), cuda(mode, b, dtype)
    with mode:
        D = cutemma.gemm(A, B)
    assert isinstance(D, fake_tensor.FakeTensor)
    assert (tuple(D.shape), D.stride(), D.dtype) == expected(a, b, DEFAULT_OUT[dtype])
    assert D.device == torch.device("cuda", 0)


@pytest.mark.parametrize(
    "dtype,out_dtype",
    [(BF, F32), (F16, F32), (E4, F16), (E4, F32), (E5, BF), (F32, F32), (torch.int8, None)],
)
def test_fake_out_dtype_and_scales(mode, dtype, out_dtype):
    A, B = cuda(mode, (3, 16, 64), dtype), cuda(mode, (64, 32), dtype)
    fp8 = dtype in (E4, E5)
    kw = {"scale_a": 0.5, "scale_b": 2.0} if fp8 else {}
    with mode:
        D = cutemma.gemm(A, B, out_dtype=out_dtype, **kw)
    want = out_dtype or DEFAULT_OUT[dtype]
    assert (tuple(D.shape), D.stride(), D.dtype) == expected((3, 16, 64), (64, 32), want)


def test_fake_mixed_fp8_and_c_broadcast(mode):
    A, B = cuda(mode, (16, 64), E4), cuda(mode, (64, 32), E5)
    C = cuda(mode, (32,), BF)
    with mode:
        D = cutemma.gemm(A, B, C, beta=1.0)
    assert (tuple(D.shape), D.dtype) == ((16, 32), BF)


@pytest.mark.parametrize("a,b", SHAPES)
def test_fake_out_given_is_the_result(mode, a, b):
    A, B = cuda(mode, a, BF), cuda(mode, b, BF)
    shape, _, _ = expected(a, b, BF)
    out = cuda(mode, shape, BF)
    with mode:
        D = cutemma.gemm(A, B, out=out)
    assert D is out


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"out": ((16, 33), BF)}, r"out is \(16, 33\) torch.bfloat16 on cuda:0; need \(16, 32\)"),
        ({"out": ((16, 32), F16)}, "out_dtype float16 for bfloat16 inputs"),  # eager's words
        ({"out_dtype": F16}, "out_dtype float16 for bfloat16 inputs; choose bfloat16 or float32"),
        ({"C": ((5, 32), BF), "beta": 1.0}, r"C \(5, 32\) does not broadcast to \(16, 32\)"),
    ],
)
def test_fake_raises_what_the_call_raises(mode, kw, match):
    A, B = cuda(mode, (16, 64), BF), cuda(mode, (64, 32), BF)
    kw = dict(kw)
    for name in ("out", "C"):
        if name in kw:
            kw[name] = cuda(mode, *kw[name])
    with pytest.raises(LaunchError, match=match), mode:
        cutemma.gemm(A, B, **kw)


def test_fake_raises_shape_dtype_and_int8_errors(mode):
    with pytest.raises(LaunchError, match=r"A's columns \(64\) must equal B's rows \(63\)"), mode:
        cutemma.gemm(cuda(mode, (16, 64), BF), cuda(mode, (63, 32), BF))
    with pytest.raises(LaunchError, match="A is bfloat16 and B is float16"), mode:
        cutemma.gemm(cuda(mode, (16, 64), BF), cuda(mode, (64, 32), F16))
    i8 = torch.int8
    with pytest.raises(LaunchError, match="per-tensor scales are for float8"), mode:
        cutemma.gemm(cuda(mode, (16, 64), i8), cuda(mode, (64, 32), i8), scale_a=2.0)
    with pytest.raises(LaunchError, match="whole-number alpha and beta"), mode:
        cutemma.gemm(cuda(mode, (16, 64), i8), cuda(mode, (64, 32), i8), alpha=0.5)


@pytest.mark.parametrize(
    "config",
    [None, Sm90Config(128, 64), Sm90Config(128, 192, promote="split"), Sm90Config(128, 128, schedule="pingpong"),
     GemmConfig(64, 64, 32), GemmConfig(128, 256, 32, (2, 4), 3)],
)  # fmt: skip
def test_config_travels_as_a_string_and_back(config):
    key = torch_op.config_key(config)
    assert torch_op.config_of(key) == config
    assert key is None or isinstance(key, str)


@pytest.mark.parametrize("config", [GemmConfig(64, 64, 32), Sm90Config(128, 64, promote="split")])
def test_a_config_held_by_the_module_traces_with_no_break(mode, config):
    """A config that is a module attribute (a frozen dataclass dynamo cannot hand to other
    code as a constant on torch 2.11: 'can't reconstruct arbitrary frozen dataclass
    instances', run of 2026-11-26) travels through field reads and string joins."""

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.config = config

        def forward(self, x, w):
            return cutemma.gemm(x, w, config=self.config) + 1

    x, w = cuda(mode, (16, 64), BF), cuda(mode, (64, 32), BF)
    torch._dynamo.reset()
    with mode:
        ex = torch._dynamo.explain(M())(x, w)
    assert (ex.graph_count, ex.graph_break_count) == (1, 0)
    node = next(n for n in ex.graphs[0].graph.nodes if "cutemma" in str(n.target))
    assert torch_op.config_of(node.args[6]) == config


def test_config_of_refuses_what_config_key_does_not_make():
    good = torch_op.config_key(GemmConfig(64, 64, 32))
    for bad in (good.replace("block_m=64;", ""), good + ";extra=1", "GemmConfig:"):
        with pytest.raises(LaunchError, match="is not one config_key\\(\\) makes"):
            torch_op.config_of(bad)


def test_config_key_refuses_other_objects():
    with pytest.raises(LaunchError, match="give an Sm90Config, a GemmConfig or None"):
        torch_op.config_key({"block_m": 128})


def _ops(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def test_dynamo_traces_a_two_layer_module_with_no_graph_break(mode):
    """torch._dynamo.explain over fake CUDA inputs: one graph, no break, both gemm ops."""

    class TwoLinear(torch.nn.Module):
        def forward(self, x, w1, w2, out):
            h = torch.relu(cutemma.gemm(x, w1, config=Sm90Config(128, 64)))
            cutemma.gemm(h, w2, out=out)
            return out + 1

    x, w1 = cuda(mode, (16, 64), BF), cuda(mode, (64, 128), BF)
    w2, out = cuda(mode, (128, 32), BF), cuda(mode, (16, 32), BF)
    torch._dynamo.reset()
    with mode:
        ex = torch._dynamo.explain(TwoLinear())(x, w1, w2, out)
    assert (ex.graph_count, ex.graph_break_count) == (1, 0)
    targets = _ops(ex.graphs[0])
    assert torch.ops.cutemma.gemm.default in targets or any("cutemma" in str(t) for t in targets)


@pytest.mark.parametrize(
    "call",
    ["2d", "batched", "out", "fp8_scales", "c_beta", "sm80_config"],
)
def test_fullgraph_compile_of_each_call_kind(mode, call):
    """torch.compile(fullgraph=True) raises on any graph break; the backend records the
    graph, whose cutemma node's fake output is what the call documents."""
    A, B = cuda(mode, (16, 64), BF), cuda(mode, (64, 32), BF)
    kw: dict = {}
    want = ((16, 32), BF)
    if call == "batched":
        A, want = cuda(mode, (4, 16, 64), BF), ((4, 16, 32), BF)
    elif call == "out":
        kw["out"] = cuda(mode, (16, 32), BF)
    elif call == "fp8_scales":
        A, B = cuda(mode, (16, 64), E4), cuda(mode, (64, 32), E4)
        kw.update(scale_a=0.25, scale_b=4.0, out_dtype=F32)
        want = ((16, 32), F32)
    elif call == "c_beta":
        kw.update(C=cuda(mode, (16, 32), BF), alpha=2.0, beta=0.5)
    elif call == "sm80_config":
        kw["config"] = GemmConfig(64, 64, 32)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(A, B):
        return cutemma.gemm(A, B, **kw) * 1

    torch._dynamo.reset()
    with mode:
        D = torch.compile(f, backend=backend, fullgraph=True)(A, B)
    assert (tuple(D.shape), D.dtype) == want
    (gm,) = graphs
    node = next(n for n in gm.graph.nodes if "cutemma" in str(n.target))
    args = dict(zip([a.name for a in node.target._schema.arguments], node.args))
    if "config" in kw:
        assert torch_op.config_of(args["config"]) == kw["config"]
    if call == "fp8_scales":
        assert (args["scale_a"], args["scale_b"], args["out_dtype"]) == (0.25, 4.0, F32)
    if call == "c_beta":
        assert (args["alpha"], args["beta"]) == (2.0, 0.5)
    if call == "out":
        assert node.target is torch.ops.cutemma.gemm_out.default


def test_export_records_the_mutation_of_out(mode):
    class M(torch.nn.Module):
        def forward(self, x, w, out):
            cutemma.gemm(x, w, out=out)
            return out * 2

    x, w, out = cuda(mode, (16, 64), BF), cuda(mode, (64, 32), BF), cuda(mode, (16, 32), BF)
    with mode:
        ep = torch.export.export(M(), (x, w, out), strict=True)
        assert any("cutemma.gemm_out" in str(t) for t in _ops(ep.graph_module))
        functional = ep.run_decompositions()  # the write as auto_functionalized + copy back
    assert list(functional.graph_signature.user_inputs_to_mutate.values()) == ["out"]


def test_a_kernel_load_during_capture_is_refused(monkeypatch):
    """The module load of a kernel's first call refuses while a graph captures (the query
    of torch answers 'capturing'); nothing reaches the driver."""
    from cutemma.kernels.runtime.driver import DriverKernel

    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    k = DriverKernel(b"\x7fELF", "gemm_kernel", 0, 128)
    with pytest.raises(LaunchError, match="captures the current stream.*warm-up"):
        k.handle(0)
    assert k._loaded == {}


def test_docstring_examples():
    import doctest

    assert doctest.testmod(torch_op, optionflags=doctest.ELLIPSIS).failed == 0
