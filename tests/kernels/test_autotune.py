"""CUTEMMA_AUTOTUNE=1 (cutemma.kernels.autotune) through its front over cutemma.gemm's checked
path, without a GPU: the call record, the policy, the family's prepare and the launch are
stand-ins, and a fake timer replaces the CUDA events. What is real: the front, the bucket
check, the lock, the candidates, the margin rule and the cache file."""

from __future__ import annotations

import json
import threading
import types

import pytest

from cutemma.errors import LaunchError
from cutemma.kernels import autotune, timing, tuned
from cutemma.kernels import dispatch as dsp
from cutemma.kernels.policy import Choice
from cutemma.kernels.sm80.config import GemmConfig

torch = pytest.importorskip("torch")

BUILT = GemmConfig()  # the stand-in policy's built-in pick
QUICK = GemmConfig(128, 128, 64, (2, 2), 3)  # a candidate tune times besides it


class Rig:
    """What the stand-ins saw: the timers made, the configs timed, the choices prepared."""

    def __init__(self, times):
        self.times, self.timers, self.timed, self.prepared = times, [], [], []

    def timer(self, M, N, K, dtype, a_major, b_major, device, warmup, reps, run):
        self.timers.append((M, N, K, dtype, a_major, b_major, run))
        return self.time

    def time(self, cfg):
        self.timed.append(cfg)
        return self.times.get(cfg.name, 1.0)


@pytest.fixture
def rig(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(autotune.ENV, raising=False)
    tuned.reload()
    r = Rig({QUICK.name: 0.5})  # QUICK: half the built-in's time

    def make_call(A, B, C=None, *, config=None, **kw):
        M, K = A.shape
        return types.SimpleNamespace(
            A=A, B=B, given=(A, B), C=None, out=f"out {M}x{B.shape[1]}", D=None, alpha=1.0,
            beta=0.0, epilogue=None, M=M, N=B.shape[1], K=K, batch=None, dtype="bf16",
            a_major="K", b_major="N", device=0, arch="sm_80", gpu="", design=None, config=config,
            done=None,
        )  # fmt: skip

    def choose(call):  # the policy's order: asked, else tuned, else built-in
        cfg = call.config or tuned.lookup_device(0, call.M, call.N, call.K, "bf16", "K", "N")
        return Choice("sm80", cfg or BUILT)

    def prepare(call, choice):
        r.prepared.append(choice.config)
        return object(), False

    monkeypatch.setattr(dsp, "make_call", make_call)
    monkeypatch.setattr(dsp, "choose", choose)
    monkeypatch.setattr(dsp.sm80, "prepare", prepare)
    monkeypatch.setattr(dsp, "run", lambda *a: None)
    monkeypatch.setattr(timing, "event_timer", r.timer)
    monkeypatch.setattr(tuned, "device_name", lambda device: "GPU X")
    autotune._SEEN.clear()
    yield r
    tuned.reload()


def gemm(m, n, k, **kw):  # cutemma.gemm as the switch binds it: the autotuning front
    return autotune.gemm(torch.zeros(m, k), torch.zeros(k, n), **kw)


def entries(path):
    return json.loads((path / tuned.FILE_NAME).read_text())["entries"]


def test_off_by_default_nothing_is_tuned(rig, tmp_path):
    gemm(1000, 512, 512)
    assert rig.timers == [] and rig.prepared == [BUILT]
    assert not (tmp_path / tuned.FILE_NAME).exists()


def test_first_call_of_a_bucket_tunes_once_and_runs_the_winner(rig, tmp_path, monkeypatch):
    monkeypatch.setenv(autotune.ENV, "1")
    assert gemm(1000, 512, 512) == "out 1000x512"
    (made,) = rig.timers
    assert made[:6] == (1000, 512, 512, "bf16", "K", "N") and made[6] is dsp.gemm  # the call's
    assert rig.timed[0] == BUILT and QUICK in rig.timed  # the built-in first, then the rest
    assert rig.prepared == [QUICK]  # this call already runs the winner
    assert entries(tmp_path)["GPU X|m1024,n512,k512|bf16|KN"]["config"]["block_k"] == 64
    gemm(600, 500, 300)  # another shape of the class: the stored winner, no tuning
    assert len(rig.timers) == 1 and rig.prepared[-1] == QUICK
    gemm(2000, 512, 512)  # a new bucket tunes
    assert len(rig.timers) == 2 and len(entries(tmp_path)) == 2


def test_a_candidate_within_the_margin_is_not_stored(rig, tmp_path, monkeypatch):
    """QUICK at 0.98 of the built-in's time is inside the 3% noise margin: the built-in stays,
    recorded as such, so neither this process nor the next tunes the bucket again."""
    monkeypatch.setenv(autotune.ENV, "1")
    rig.times = {QUICK.name: 1.0 - timing.MARGIN / 1.5}
    gemm(1000, 512, 512)
    assert rig.prepared == [BUILT]
    entry = entries(tmp_path)["GPU X|m1024,n512,k512|bf16|KN"]
    assert entry["family"] == "builtin" and entry["config"] is None
    assert entry["timings"][QUICK.name] < entry["timings"][BUILT.name]
    tuned.reload()  # a new process reads the file
    gemm(1000, 512, 512)
    assert len(rig.timers) == 1 and rig.prepared == [BUILT, BUILT]
    assert tuned.lookup("GPU X", 1000, 512, 512, "bf16", "K", "N") is None


def test_a_bucket_another_process_stored_is_taken_not_tuned(rig, tmp_path, monkeypatch):
    monkeypatch.setenv(autotune.ENV, "1")
    tuned.table()  # this process read the (empty) file before the other one wrote
    from dataclasses import asdict

    other = {"family": "sm80", "config": asdict(QUICK), "timings": {}, "shape": [1, 1, 1]}
    text = json.dumps({"format": 1, "entries": {"GPU X|m1024,n512,k512|bf16|KN": other}})
    (tmp_path / tuned.FILE_NAME).write_text(text)
    gemm(1000, 512, 512)
    assert rig.timers == [] and rig.prepared == [QUICK]


def test_asked_configs_captures_and_traces_do_not_tune(rig, monkeypatch):
    monkeypatch.setenv(autotune.ENV, "1")
    gemm(1000, 512, 512, config=GemmConfig(64, 64, 32))
    monkeypatch.setattr(autotune, "capturing", lambda: True)  # a CUDA graph being captured
    gemm(1000, 512, 512)
    assert rig.timers == [] and rig.prepared == [GemmConfig(64, 64, 32), BUILT]
    # a call torch traces is the custom op's node before the policy runs
    from cutemma.kernels import torch_op

    monkeypatch.setattr(dsp, "_TRACING", [lambda: True])
    monkeypatch.setattr(torch_op, "traced_gemm", lambda *a: "node")
    assert gemm(1000, 512, 512) == "node" and rig.timers == []


def test_a_bad_switch_value_is_named(rig, monkeypatch):
    monkeypatch.setenv(autotune.ENV, "on")
    with pytest.raises(LaunchError, match="CUTEMMA_AUTOTUNE='on'; set it to 1"):
        gemm(64, 64, 64)


def test_two_threads_on_one_bucket_tune_once(rig, monkeypatch):
    """The first thread's timer lets the second one start and reach the tuning lock before
    any candidate is timed; the second waits there, then runs the first one's winner."""
    monkeypatch.setenv(autotune.ENV, "1")
    arrived = threading.Event()
    lock = autotune._TUNE_LOCK

    class Watched:  # the lock, telling when a thread comes to it
        def __enter__(self):
            if threading.current_thread() is not threading.main_thread():
                arrived.set()
            return lock.__enter__()

        def __exit__(self, *exc):
            return lock.__exit__(*exc)

    monkeypatch.setattr(autotune, "_TUNE_LOCK", Watched())
    second = threading.Thread(target=gemm, args=(1000, 512, 512))
    time = rig.time

    def first_timer(cfg):
        if not second.is_alive() and not arrived.is_set():
            second.start()
            assert arrived.wait(60)  # (a bound on a hang, not a timing)
        return time(cfg)

    rig.time = first_timer
    gemm(1000, 512, 512)
    second.join(60)
    assert len(rig.timers) == 1 and rig.prepared == [QUICK, QUICK]


def test_the_switch_binds_cutemma_gemm_to_the_front_or_the_dispatcher():
    """Read when cutemma.gemm is first looked up, in a fresh process each way."""
    import os
    import subprocess
    import sys

    ask = (
        "import cutemma\n"
        "from cutemma.kernels import autotune, dispatch\n"
        "print(cutemma.gemm is autotune.gemm, cutemma.gemm is dispatch.gemm)"
    )
    for value, want in (("1", "True False"), ("0", "False True"), (None, "False True")):
        env = {k: v for k, v in os.environ.items() if k != autotune.ENV}
        if value is not None:
            env[autotune.ENV] = value
        out = subprocess.run([sys.executable, "-c", ask], env=env, capture_output=True,
                             text=True, check=True)  # fmt: skip
        assert out.stdout.split() == want.split(), (value, out.stdout, out.stderr)


def test_a_seen_signature_goes_straight_to_the_dispatcher(rig, monkeypatch):
    """The front checks a signature once: a repeat costs a set look-up, not a checked call."""
    monkeypatch.setenv(autotune.ENV, "1")
    seen = []
    real = dsp.checked
    monkeypatch.setattr(dsp, "checked", lambda *a, **k: seen.append(1) or real(*a, **k))
    A, B = torch.zeros(1000, 512), torch.zeros(512, 512)
    autotune.gemm(A, B)
    autotune.gemm(A, B)
    assert len(seen) == 1 and len(rig.timers) == 1
