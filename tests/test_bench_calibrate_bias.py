"""bench/calibrate.py bias: measured over predicted time by kind of kernel, on a committed
calibration file (no GPU)."""

import importlib.util
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from cutemma.kernels.sm90.config import Sm90Config
from cutemma.kernels.space import swapped_kernel

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "bench"))  # (calibrate imports its sibling gemm_sweep)
spec = importlib.util.spec_from_file_location("calibrate", ROOT / "bench" / "calibrate.py")
calibrate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(calibrate)
MEASURED = ROOT / "bench" / "results" / "raw" / "calibrate-h200-decode-ends.json"


def test_kinds_follow_the_model_s_terms():
    """66 tiles of 128x128 over 132 CTAs: split 16 cuts each in two (aligned), the grid's
    shares (split None) do not; a swapped kernel of 16 tokens is one tile column, of 300
    several; 4096^3 at 128x256 fills its waves, so its stream-K variant shares nothing."""
    kind = calibrate.kernel_kind
    aligned, grid = (Sm90Config(128, 128, stream_k=True, split=s) for s in (16, None))
    assert kind(aligned, 6 * 128, 11 * 128, 8192, "bf16") == "plain aligned"
    assert kind(grid, 6 * 128, 11 * 128, 8192, "bf16") == "plain unaligned"
    assert kind(Sm90Config(128, 128), 6 * 128, 11 * 128, 8192, "bf16") == "plain whole"
    full = Sm90Config(128, 256, stream_k=True, split=16)
    assert kind(full, 4096 * 4, 4096 * 2, 4096, "bf16") == "plain no-share"
    column = replace(swapped_kernel(16, 4096, 8192, "bf16", 132, False), split=16)
    assert kind(column, 16, 4096, 8192, "bf16") == "swapped aligned"
    tiles = swapped_kernel(16, 4096, 8192, "bf16", 132, True)
    assert kind(tiles, 300, 4096, 8192, "bf16") == "swapped-tiles whole"


def test_bias_counts_every_timed_kernel_of_the_file():
    rows = json.loads(MEASURED.read_text())["rows"]
    report = calibrate.bias([str(MEASURED)], "h200")
    assert sum(v["kernels"] for v in report.values()) == len(calibrate._points(rows)) > 0
    for v in report.values():
        assert 0 < v["p25"] <= v["median"] <= v["p75"]
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "calibrate.py"), "bias", str(MEASURED)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    assert json.loads(out.stdout) == report


def test_measure_draws_only_the_band_asked_and_times_each_call_s_own_kernels():
    """``--rows LO HI`` keeps drawn shapes of M in the band (every combo of each); a call's
    kernels are the pick's: B N-major for 'bf16_bN' (whose few-token long-K calls run the
    64-row whole swapped tiles the K-major space lacks), and e4m3 rows half a sector apart
    (K an odd multiple of 16) take the pairs of CTAs."""
    from cutemma.kernels.space import candidates

    cases = calibrate._cases(6, 11, (129, 1024))
    assert len(cases) == 18 and all(129 <= m <= 1024 for _, m, _, _ in cases)
    assert [c for c, *_ in cases[:3]] == ["bf16_bK", "bf16_bN", "e4m3"]
    assert len({tuple(shape) for _, *shape in cases}) == 6
    assert calibrate._cases(6, 11) != cases  # (no band: the sweep's draw as it was)

    n_major = calibrate._configs(8, 8192, 8192, "bf16_bN")
    assert n_major == list(candidates(8, 8192, 8192, "bf16", b_major="N"))
    assert set(n_major) - set(candidates(8, 8192, 8192, "bf16"))  # (the 64-row twins)
    odd_k = calibrate._configs(300, 4096, 4112, "e4m3")
    assert any(c.cluster > 1 for c in odd_k)
    assert not any(c.cluster > 1 for c in calibrate._configs(300, 4096, 4096, "e4m3"))
