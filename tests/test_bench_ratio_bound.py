"""bench/ratio_bound.py: the most each inference row's ratio could be at the run's best
measured rates, checked on the committed table (no GPU)."""

import doctest
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
spec = importlib.util.spec_from_file_location("ratio_bound", ROOT / "bench" / "ratio_bound.py")
ratio_bound = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ratio_bound)
TABLE = ROOT / "bench" / "results" / "inference-h100.json"


def test_examples():
    assert doctest.testmod(ratio_bound).failed == 0


def test_bounds_of_the_committed_table():
    """Every bound lies between its measured ratio and the compute side's limit (the table's
    best TFLOPS over the peer's: a row takes at least its flops at the best rate, so its
    bytes can only lower the bound); the geometric mean of the bounds is above the
    measured one."""
    res = json.loads(TABLE.read_text())
    rows = [r for r in res["rows"] if "ratio" in r]
    bounds = ratio_bound.row_bounds(rows, res["copy_tbps"])
    for d in ("bf16", "e4m3"):
        mine = [(r, b) for r, b in zip(rows, bounds) if r["dtype"] == d]
        best = max(max(r["cutemma_tflops"], r["peer_tflops"]) for r, _ in mine)
        for r, b in mine:
            # peer_us and peer_tflops are rounded in the file: 1% slack
            assert r["ratio"] <= b <= max(r["ratio"], best / r["peer_tflops"]) * 1.01, r
        measured = res["summary"][d]["geomean_ratio"]
        assert ratio_bound.geomean_bounds(rows, res["copy_tbps"])[d] > measured


def test_command_prints_every_row_and_the_means():
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ratio_bound.py"), str(TABLE)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rows = [r for r in json.loads(TABLE.read_text())["rows"] if "ratio" in r]
    assert out.count(" ratio ") == len(rows)
    assert "bf16: geometric mean" in out and "e4m3: geometric mean" in out
