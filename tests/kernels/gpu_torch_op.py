"""cutemma.gemm in torch.compile'd models and CUDA graphs, on the GPU (issue 21, acceptance 6).

    python tests/kernels/gpu_torch_op.py OUT.json [--quick]

1. opcheck: torch.library.opcheck of both custom ops (schema, fake vs real output, the
   dispatcher's registrations) on 2-D, batched, out=, fp8 with scales, an sm80 config.
2. torch.compile: a two-layer module (x @ W1, GELU, @ W2 + residual, all cutemma.gemm)
   compiled with inductor, fullgraph=True (a graph break raises), torch._dynamo.explain's
   graph and break counts, the compiled output against eager (the same kernels: equal up to
   inductor's own elementwise code) and against torch.matmul; also mode="reduce-overhead"
   (inductor's CUDA graphs).
3. CUDA graphs: one graph of 16 decode-sized calls per family (M = 1..64 tokens, N and K of
   transformer projections; sm90 by the built-in pick, sm80 by its builtin_config), and one of
   every sm90 schedule / epilogue / promotion / cluster mode and sm80 config (16- and 8-bit,
   out given or not, C with beta, batched). Each call ran once eagerly first (the warm-up
   that compiles and loads). Replayed 3 times, each after new random data was written into
   the captured input buffers: every output must equal (bitwise) an eager cutemma.gemm on
   the new data and match torch (float64 reference, relative Frobenius error), and differ
   from the previous replay's (not stale).
4. A first call of a kernel variant during capture raises a LaunchError naming the warm-up,
   and the stream and later captures stay usable.
5. Timing: a replay of the 16 decode calls against 16 eager cutemma.gemm calls and a graph
   of 16 torch.matmul calls (medians of CUDA-event times).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import traceback

import torch  # before cutemma's CUDA modules

import cutemma
from cutemma.errors import LaunchError
from cutemma.kernels.pick import BUILTIN_CONFIGS, FP8_LARGE, builtin_config
from cutemma.kernels.sm80.plan import GemmConfig
from cutemma.kernels.sm90.config import Sm90Config

BF, E4 = torch.bfloat16, torch.float8_e4m3fn
DECODE_M = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 48, 64]
DECODE_NK = [(4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336)]  # rotated per call
RESULT: dict = {"checks": {}, "failures": []}


def check(name: str, ok: bool, **info) -> None:
    RESULT["checks"][name] = {"ok": bool(ok), **info}
    if not ok:
        RESULT["failures"].append(name)
    print(f"{'ok  ' if ok else 'FAIL'} {name} {info}", flush=True)


def rel_err(got: torch.Tensor, ref: torch.Tensor) -> float:
    g, r = got.double(), ref.double()
    return float((g - r).norm() / max(float(r.norm()), 1e-30))


def reference(A, B, C=None, alpha=1.0, beta=0.0, scale=1.0) -> torch.Tensor:
    d = alpha * scale * torch.matmul(A.double(), B.double())
    if C is not None and beta:
        d = d + beta * C.double()
    return d


def randn_(t: torch.Tensor) -> None:
    """New random data into t (in place: the captured pointer stays)."""
    if t.dtype == torch.int8:
        t.copy_(torch.randint(-8, 8, t.shape, device=t.device, dtype=torch.int8))
    elif t.dtype.itemsize == 1:
        t.copy_(torch.randn(t.shape, device=t.device).to(t.dtype))
    else:
        t.copy_(torch.randn(t.shape, device=t.device, dtype=t.dtype))


# --- 1. opcheck -----------------------------------------------------------------------


def opchecks() -> None:
    from cutemma.kernels import torch_op

    gemm_op, gemm_out_op = torch_op.register()
    a = torch.randn(64, 128, device="cuda", dtype=BF)
    b = torch.randn(128, 96, device="cuda", dtype=BF)
    a8, b8 = a.to(E4), b.t().contiguous().t().to(E4)
    none = ("", None, None, None, None, None)  # no epilogue: ops "", its five tensors
    bias = torch.randn(96, device="cuda", dtype=torch.float32)
    cases = {
        "2d": (gemm_op, (a, b, None, 1.0, 0.0, None, None, 1.0, 1.0, *none)),
        "batched": (gemm_op, (a.expand(3, 64, 128).contiguous(), b, None, 1.0, 0.0, None,
                              None, 1.0, 1.0, *none)),
        "c_beta": (gemm_op, (a, b, torch.randn(96, device="cuda", dtype=BF), 2.0, 0.5, None,
                             None, 1.0, 1.0, *none)),
        "fp8_scales_f32": (gemm_op, (a8, b8, None, 1.0, 0.0, torch.float32, None, 0.5, 2.0,
                                     *none)),
        "sm80_config": (gemm_op, (a, b, None, 1.0, 0.0, None,
                                  torch_op.config_key(GemmConfig(64, 64, 32)), 1.0, 1.0, *none)),
        "epilogue": (gemm_op, (a, b, None, 1.0, 0.0, None, None, 1.0, 1.0, "bias,gelu_tanh",
                               None, None, bias, None, None)),
        "out": (gemm_out_op, (a, b, None, 1.0, 0.0, None, 1.0, 1.0, *none,
                              torch.empty(64, 96, device="cuda", dtype=BF))),
    }  # fmt: skip
    # opcheck's schema test multiplies the inputs, which float8 tensors cannot do
    # ('"mul_cuda" not implemented for Float8_e4m3fn', run of 2026-11-26): the other three
    no_schema = ("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
    for name, (op, args) in cases.items():
        try:
            kw = {"test_utils": no_schema} if name.startswith("fp8") else {}
            res = torch.library.opcheck(op, args, raise_exception=False, **kw)
            bad = {k: v for k, v in res.items() if v != "SUCCESS"}
            check(f"opcheck_{name}", not bad, result=res)
        except Exception as exc:
            check(f"opcheck_{name}", False, error=f"{type(exc).__name__}: {exc}"[:600])


# --- 2. torch.compile -----------------------------------------------------------------


class TwoLinear(torch.nn.Module):
    """x -> GELU(x @ W1) @ W2 + x: two cutemma.gemm calls, the second with out= into a
    buffer the module owns, and C = x with beta = 1 for the residual."""

    def __init__(self, d: int, hidden: int, config=None):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(d, hidden, device="cuda", dtype=BF) / d**0.5)
        self.w2 = torch.nn.Parameter(torch.randn(hidden, d, device="cuda", dtype=BF) / hidden**0.5)
        self.config = config

    def forward(self, x):
        h = torch.nn.functional.gelu(cutemma.gemm(x, self.w1, config=self.config))
        return cutemma.gemm(h, self.w2, x, beta=1.0, config=self.config)


def compile_checks(quick: bool) -> None:
    torch.manual_seed(0)
    for fam, cfg in (("sm90", None), ("sm80", GemmConfig(64, 64, 32))):
        mod = TwoLinear(1024, 4096, cfg)
        for m in (1, 16, 64) if quick else (1, 7, 16, 64, 200):
            x = torch.randn(m, 1024, device="cuda", dtype=BF)
            with torch.no_grad():
                eager = mod(x)
                torch._dynamo.reset()
                ex = torch._dynamo.explain(mod)(x)
                comp = torch.compile(mod, fullgraph=True)
                got = comp(x)
                got2 = comp(x)  # the second call: the compiled graph, no recompile
                ro = torch.compile(mod, mode="reduce-overhead", fullgraph=True)
                ro_out = [ro(x).clone() for _ in range(3)][-1]
            h = torch.nn.functional.gelu(torch.matmul(x.double(), mod.w1.double()))
            ref = torch.matmul(h.to(BF).double(), mod.w2.double()) + x.double()
            check(
                f"compile_{fam}_m{m}",
                ex.graph_count == 1
                and ex.graph_break_count == 0
                and rel_err(got, eager) < 2e-3
                and torch.equal(got, got2)
                and rel_err(ro_out, eager) < 2e-3
                and rel_err(got, ref) < 2e-2,
                graphs=ex.graph_count,
                breaks=ex.graph_break_count,
                ops=sum(
                    str(n.target).startswith("cutemma") for g in ex.graphs for n in g.graph.nodes
                ),  # fmt: skip
                vs_eager=rel_err(got, eager),
                bitwise_eager=bool(torch.equal(got, eager)),
                reduce_overhead_vs_eager=rel_err(ro_out, eager),
                vs_torch=rel_err(got, ref),
            )


# --- 2b. every calling form under torch.compile(fullgraph=True) -----------------------


def form_cases() -> dict:
    """name -> (function of its tensors, tensors): each calling form of cutemma.gemm."""
    g = torch.Generator(device="cuda").manual_seed(5)

    def rnd(*shape, dtype=BF):
        return torch.randn(*shape, device="cuda", generator=g).to(dtype)

    m, n, k = 96, 256, 192
    x, w = rnd(m, k), rnd(k, n)
    wk = rnd(n, k).t()  # B K-major (an nn.Linear weight, transposed)
    c, out = rnd(m, n), torch.empty(m, n, device="cuda", dtype=BF)
    x8, w8 = rnd(m, k, dtype=E4), rnd(n, k, dtype=E4).t()
    vec_n, vec_m = rnd(n, dtype=torch.float32), rnd(m, dtype=torch.float32)
    gm = cutemma.gemm
    cases = {
        "plain": (lambda a, b: gm(a, b), (x, w)),
        "out=": (lambda a, b, o: gm(a, b, out=o), (x, w, out)),
        "out_dtype": (lambda a, b: gm(a, b, out_dtype=torch.float32), (x, w)),
        "alpha_beta_C": (lambda a, b, cc: gm(a, b, cc, alpha=0.5, beta=2.0), (x, w, c)),
        "batched": (lambda a, b: gm(a, b), (rnd(3, m, k), w)),
        "B N-major": (lambda a, b: gm(a, b), (x, w)),
        "B K-major": (lambda a, b: gm(a, b), (x, wk)),
        "fp8 scale_a/scale_b": (lambda a, b: gm(a, b, scale_a=0.5, scale_b=2.0), (x8, w8)),
        "fp8 scale_row/scale_col": (
            lambda a, b, r, s: gm(a, b, epilogue=("scale_row", "scale_col"), scale_row=r,
                                  scale_col=s), (x8, w8, vec_m, vec_n)),
        "bias": (lambda a, b, v: gm(a, b, epilogue="bias", bias=v), (x, w, vec_n)),
        "bias_row": (lambda a, b, v: gm(a, b, epilogue="bias_row", bias_row=v), (x, w, vec_m)),
        "residual": (lambda a, b, r: gm(a, b, epilogue="residual", residual=r), (x, w, c)),
    }  # fmt: skip
    for act in ("relu", "gelu", "gelu_tanh", "silu"):
        cases[act] = (lambda a, b, act=act: gm(a, b, epilogue=act), (x, w))
    cases["bias + silu"] = (lambda a, b, v: gm(a, b, epilogue=("bias", "silu"), bias=v),
                            (x, w, vec_n))  # fmt: skip
    return cases


def form_checks() -> None:
    """torch._dynamo.explain reports one graph and no break for each form, and
    torch.compile(fullgraph=True) matches the eager call (the same kernel: bitwise, up to
    out= aliasing)."""
    for name, (fn, args) in form_cases().items():
        try:
            torch._dynamo.reset()
            eager = fn(*args).clone()
            ex = torch._dynamo.explain(fn)(*args)
            torch._dynamo.reset()
            got = torch.compile(fn, fullgraph=True)(*args)
            check(f"form_{name}", ex.graph_break_count == 0 and ex.graph_count == 1
                  and rel_err(got, eager) < 1e-6,
                  graphs=ex.graph_count, breaks=ex.graph_break_count,
                  reasons=[str(b.reason)[:200] for b in ex.break_reasons][:3],
                  vs_eager=rel_err(got, eager))  # fmt: skip
        except Exception:
            check(f"form_{name}", False, error=traceback.format_exc()[-1200:])


# --- 3. CUDA graphs -------------------------------------------------------------------


class Call:
    """One gemm call of a graph: its buffers (A, B, C, out when given) and keywords."""

    def __init__(self, name, m, n, k, dtype=BF, b_kmajor=False, batch=None, out=True,
                 c=False, out_dtype=None, **kw):  # fmt: skip
        self.name, self.kw = name, kw
        shape_a = (m, k) if batch is None else (batch, m, k)
        self.A = torch.empty(shape_a, device="cuda", dtype=dtype)
        self.B = torch.empty(n, k, device="cuda", dtype=dtype).t() if b_kmajor else \
            torch.empty(k, n, device="cuda", dtype=dtype)  # fmt: skip
        self.C = torch.empty(m, n, device="cuda", dtype=BF if dtype != torch.int8 else
                             torch.int32) if c else None  # fmt: skip
        od = out_dtype or {E4: BF, torch.int8: torch.int32, torch.float32: torch.float32}.get(
            dtype, dtype
        )
        self.out_dtype = out_dtype
        shape_d = (m, n) if batch is None else (batch, m, n)
        self.out = torch.empty(shape_d, device="cuda", dtype=od) if out else None
        self.result = None
        self.fill()

    def fill(self) -> None:
        for t in (self.A, self.B, self.C):
            if t is not None:
                randn_(t)

    def __call__(self):
        kw = dict(self.kw)
        if self.C is not None:
            kw.update(beta=0.5)
        if self.out_dtype is not None:
            kw["out_dtype"] = self.out_dtype
        return cutemma.gemm(self.A, self.B, self.C, out=self.out, **kw)

    def ref(self):
        scale = self.kw.get("scale_a", 1.0) * self.kw.get("scale_b", 1.0)
        return reference(self.A, self.B, self.C, self.kw.get("alpha", 1.0),
                         0.5 if self.C is not None else 0.0, scale)  # fmt: skip


def decode_calls(family: str) -> list[Call]:
    calls = []
    for i, m in enumerate(DECODE_M):
        n, k = DECODE_NK[i % len(DECODE_NK)]
        cfg = builtin_config(m, n, k) if family == "sm80" else None
        calls.append(Call(f"{family}_m{m}_n{n}_k{k}", m, n, k, out=i % 2 == 0, config=cfg))
    return calls


def schedule_calls() -> list[Call]:
    """Every sm90 schedule / epilogue / promotion / cluster mode and sm80 config."""
    S = Sm90Config
    sm90 = {
        "coop_128x256": S(128, 256),
        "coop_128x192": S(128, 192),
        "coop_128x128": S(128, 128),
        "coop_128x64": S(128, 64),
        "pingpong_128x128": S(128, 128, schedule="pingpong"),
        "alternate_128x128": S(128, 128, schedule="alternate"),
        "tma2_128x256": S(128, 256, epilogue="tma2"),
        "regs_128x128": S(128, 128, epilogue="regs"),
        "cluster2_B": S(128, 128, cluster=2),
        "cluster2_A": S(128, 128, cluster=2, multicast="A"),
    }
    calls = [Call(f"sm90_{k}", 40, 1536, 1024, out=i % 2 == 0, config=v)
             for i, (k, v) in enumerate(sm90.items())]  # fmt: skip
    calls.append(Call("sm90_batched", 24, 512, 1024, batch=3, config=S(128, 128)))
    calls.append(Call("sm90_c_beta_regs", 24, 1024, 1024, c=True, config=S(128, 128)))
    calls.append(Call("sm90_f32_out", 24, 1024, 1024, out_dtype=torch.float32))
    fp8 = {
        "fp8_split_128x192": S(128, 192, promote="split"),
        "fp8_promote_128x128": S(128, 128),
        "fp8_overlap_128x128": S(128, 128, promote="overlap"),
        "fp8_fast_128x256": S(128, 256, promote=False),
    }
    for k, v in fp8.items():
        calls.append(Call(f"sm90_{k}", 16, 2048, 1024, dtype=E4, b_kmajor=True, config=v,
                          scale_a=0.5, scale_b=0.25))  # fmt: skip
    for k, v in {**BUILTIN_CONFIGS, "fp8_large": FP8_LARGE}.items():
        dt = E4 if k == "fp8_large" else BF
        calls.append(Call(f"sm80_{k}", 33, 768, 512, dtype=dt, b_kmajor=dt == E4, config=v))
    calls.append(Call("sm80_int8", 8, 512, 512, dtype=torch.int8, b_kmajor=True,
                      config=GemmConfig(64, 64, 32)))  # fmt: skip
    calls.append(Call("sm80_batched_c", 16, 256, 512, batch=2, c=False,
                      config=GemmConfig(32, 32, 64)))  # fmt: skip
    return calls


TOL = {torch.bfloat16: 1e-2, torch.float32: 1e-2, torch.int32: 0.0}


def graph_check(label: str, calls: list[Call], replays: int = 3) -> torch.cuda.CUDAGraph:
    for c in calls:  # the warm-up: compile, load, prepare each call's launch
        c()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for c in calls:
            c.result = c()
    prev = None
    worst: dict = {}
    ok = True
    for r in range(replays):
        for c in calls:
            c.fill()
        g.replay()
        torch.cuda.synchronize()
        now = [c.result.clone() for c in calls]
        for c, got in zip(calls, now):
            eager = c()
            err = rel_err(got, c.ref())
            tol = TOL.get(got.dtype, 1e-2) if c.A.dtype.itemsize > 1 else 6e-2
            good = bool(torch.equal(got, eager)) and err <= tol
            if prev is not None:
                good &= not torch.equal(got, prev[calls.index(c)])
            worst[c.name] = max(worst.get(c.name, 0.0), err)
            if not good:
                ok = False
                RESULT["failures"].append(f"{label}:{c.name}:replay{r}")
                print(f"FAIL {label} {c.name} replay {r}: err {err:.2e} "
                      f"equal_eager {torch.equal(got, eager)}", flush=True)  # fmt: skip
        prev = now
    check(f"graph_{label}", ok, calls=len(calls), replays=replays, worst_rel_err=worst)
    return g


def refusal_check() -> None:
    """A variant never run in this process, first called inside a capture, is refused."""
    A = torch.randn(16, 256, device="cuda", dtype=BF)
    B = torch.randn(256, 128, device="cuda", dtype=BF)
    fresh = Sm90Config(128, 64, stages=3, group_m=4)  # no other check uses it
    g = torch.cuda.CUDAGraph()
    err = None
    try:
        with torch.cuda.graph(g):
            cutemma.gemm(A, B, config=fresh)
    except LaunchError as exc:
        err = str(exc)
    except Exception as exc:  # anything else is a failure of the refusal
        err = f"not a LaunchError: {type(exc).__name__}: {exc}"
    torch.cuda.synchronize()
    after = cutemma.gemm(A, B, config=fresh)  # eager: loads now
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):
        d = cutemma.gemm(A, B, config=fresh)
    g2.replay()
    torch.cuda.synchronize()
    check(
        "capture_refuses_first_load",
        err is not None and err.startswith("gemm: loading kernel") and "warm-up" in err,
        error=err,
        eager_after_ok=rel_err(after, reference(A, B)) < 1e-2,
        capture_after_ok=rel_err(d, reference(A, B)) < 1e-2,
    )


def time_ms(fn, reps: int = 50) -> float:
    sys.path.insert(
        0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
    )
    from gemm import event_median_ms

    return event_median_ms(fn, 5, reps)


def decode_timing(g90: torch.cuda.CUDAGraph, calls: list[Call]) -> None:
    def eager():
        for c in calls:
            c()

    peer = torch.cuda.CUDAGraph()
    bufs = [(c.A, c.B, torch.empty(c.A.shape[0], c.B.shape[1], device="cuda", dtype=BF))
            for c in calls]  # fmt: skip
    for a, b, o in bufs:
        torch.matmul(a, b, out=o)
    torch.cuda.synchronize()
    with torch.cuda.graph(peer):
        for a, b, o in bufs:
            torch.matmul(a, b, out=o)
    t = {"graph_cutemma_ms": time_ms(g90.replay), "graph_torch_ms": time_ms(peer.replay),
         "eager_cutemma_ms": time_ms(eager)}  # fmt: skip
    t["graph_ratio_to_torch"] = t["graph_torch_ms"] / t["graph_cutemma_ms"]
    t["eager_over_graph"] = t["eager_cutemma_ms"] / t["graph_cutemma_ms"]
    RESULT["decode_timing"] = {k: round(v, 4) for k, v in t.items()}
    print("decode timing", RESULT["decode_timing"], flush=True)


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "serve-h100.json"
    quick = "--quick" in sys.argv
    steps = [
        ("opcheck", opchecks),
        ("compile", lambda: compile_checks(quick)),
        ("forms", form_checks),
        ("graphs", None),
        ("refusal", refusal_check),
    ]
    for name, fn in steps:
        try:
            if name == "graphs":
                torch.manual_seed(1)
                d90 = decode_calls("sm90")
                g90 = graph_check("decode_sm90", d90)
                graph_check("decode_sm80", decode_calls("sm80"))
                graph_check("schedules", schedule_calls())
                decode_timing(g90, d90)
            else:
                fn()
        except Exception as exc:
            check(f"{name}_ran", False, error=traceback.format_exc()[-1500:])
            print(exc, flush=True)
    RESULT.update(
        device=torch.cuda.get_device_name(),
        torch=torch.__version__,
        commit=os.environ.get("CUTEMMA_COMMIT") or _git(),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        passed=sum(c["ok"] for c in RESULT["checks"].values()),
        total=len(RESULT["checks"]),
    )
    with open(out, "w") as f:
        json.dump(RESULT, f, indent=1, default=str)
    print(f"{RESULT['passed']} passed, {RESULT['total'] - RESULT['passed']} failed", flush=True)


def _git() -> str:
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True).strip()
    except Exception:
        return "unknown"


if __name__ == "__main__":
    main()
