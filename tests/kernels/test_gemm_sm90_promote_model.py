"""The promoted fp8 mainloops of the generated sm90 source, run on the CPU with g++.

The consumer mainloop text of ``gemm_sm90_source`` (promote=True, "overlap" and "split") is
cut out of the kernel and compiled as host C++ against a model of wgmma and the mbarriers:

- a wgmma is recorded in the open group with the k tile its stage holds; ``commit_group``
  closes the group; ``wait_group N`` retires all but the newest N groups, and only then do
  their sums land in the set (scale-d 0: from zero). From its issue until it retires, a
  set's registers read as NaN (the hardware may write them at any time), so adding a set
  into ``accf`` before its batch is retired, or after the next batch into it was issued,
  spoils the sum;
- a full-barrier wait checks its parity (the stage's uses so far, mod 2) and puts the next
  k tile into the stage; an arrival on an empty barrier fails if a pending or open wgmma
  still reads that stage, or if the stage was not in use.

Each tile's ``accf`` must equal the sum over its k tiles, every batch retired and every
stage released at the tile's end, over tiles of 1..13 k tiles run back to back (the ring
position carries over). Broken overlap loops (no retire at the half's wait, the wrong stage
released, an exit without its drain, the set in flight added) are caught, and so are
broken split loops (a stage released before its hi half retires, the last stage kept,
the half in flight added, no retire at a half's wait, a drain without wait_group 0). With
"split" the sets are the N halves: ``accf``'s first half sums the lo batches, its second
the hi ones.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from cute_cpp import harness  # noqa: E402

from cutemma.kernels.sm90.plan import Sm90Config, Sm90Plan  # noqa: E402
from cutemma.kernels.sm90.source import gemm_sm90_source  # noqa: E402

pytestmark = pytest.mark.skipif(
    harness.unavailable_reason() is not None, reason=str(harness.unavailable_reason())
)

K_TILES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 1, 1, 2, 6, 12, 3]

MODEL = r"""
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
struct Op { float* set; int value; int scale; int stage; };
static std::vector<std::vector<Op>> groups;
static std::vector<Op> open_ops;
static int content[16], uses[16], held[16], next_k = 0;
static double expected = 0, expected_hi = 0;
static float* hi_set = nullptr;  // split: the hi half's set (its sums go to accf's 2nd half)
static void fail(const char* what, int a) { printf("FAIL %s %d\n", what, a); exit(1); }
static int stage_of_full(uint32_t bar) {
  int s = (int)(bar - BARS) / 8;
  if (s < 0 || s >= S) fail("not a full barrier", s);
  return s;
}
void mbar_wait(uint32_t bar, uint32_t parity) {
  int s = stage_of_full(bar);
  if ((int)parity != uses[s] % 2) fail("wrong parity on full barrier of stage", s);
  uses[s]++; held[s]++; content[s] = next_k++;
}
void mbar_arrive(uint32_t bar) {
  int s = (int)(bar - BARS) / 8 - S;
  if (s < 0 || s >= S) fail("arrival not on an empty barrier", s);
  for (auto& g : groups) for (auto& o : g) if (o.stage == s) fail("released while read", s);
  for (auto& o : open_ops) if (o.stage == s) fail("released while read (open)", s);
  if (held[s] <= 0) fail("released a stage not in use", s);
  held[s]--;
}
void trace_mma(float* set, uint32_t a_addr, int scale) {
  int s = (int)(a_addr - (SMEM & 0x3ffffu)) / STAGE_BYTES;
  if (held[s] <= 0) fail("wgmma reads a stage not waited for", s);
  for (int i = 0; i < SET_N; ++i) set[i] = NAN;  // undefined until retired
  open_ops.push_back({set, content[s], scale, s});
  (set == hi_set ? expected_hi : expected) += content[s] + 1;
}
void wgmma_fence() {}
void fence_acc(float&) {}
void wgmma_commit() { groups.push_back(open_ops); open_ops.clear(); }
template <int N> void wgmma_wait() {
  while ((int)groups.size() > N) {
    for (auto& o : groups.front())
      for (int i = 0; i < SET_N; ++i) {
        if (!o.scale || std::isnan(o.set[i])) {
          if (o.scale) fail("accumulates onto an undefined set", 0);
          o.set[i] = 0.f;
        }
        o.set[i] += o.value + 1;
      }
    groups.erase(groups.begin());
  }
}
const uint32_t a_off[MMA_M][K_BLOCKS] = {};
void tile(int k_tiles, int& stage, uint32_t& phase, float* ACC0, float* ACC1, float* accf) {
  const uint32_t smem = SMEM, bars = BARS;
  const bool signals = true;
MAINLOOP
}
int main() {
  static float a0[N_ACC], a1[N_ACC], f[N_ACC];
  int stage = 0; uint32_t phase = 0;
  const int k_tiles[] = {K_TILES};
  if (SPLIT) hi_set = a1;
  for (int t : k_tiles) {
    expected = expected_hi = 0;
    tile(t, stage, phase, a0, a1, f);
    if (!groups.empty() || !open_ops.empty()) fail("batches left in flight after tile", t);
    for (int s = 0; s < S; ++s) if (held[s]) fail("stage not released after tile", s);
    for (int i = 0; i < N_ACC; ++i) {
      const double want = SPLIT && i >= N_ACC / 2 ? expected_hi : expected;
      if (!(f[i] == (float)want)) { printf("FAIL tile of %d k tiles: accf %g, want %g\n", t, f[i], want); return 1; }
    }
  }
  printf("OK\n");
  return 0;
}
"""


def _mainloop_text(config: Sm90Config) -> tuple[str, Sm90Plan]:
    """The consumers' mainloop of one tile, wgmma asm statements -> trace_mma(set, a, scale)."""
    plan = Sm90Plan(config, "e4m3", "K", "K", "bf16")
    src = gemm_sm90_source(config, "e4m3", "K", "K", "bf16")
    start = src.index("#pragma unroll", src.index("const int n0 = ", src.index("setmaxnreg.inc")))
    end = src.index("// epilogue:", start)
    text = src[start:end]

    def trace(m: re.Match) -> str:
        body = m.group(0)
        acc = re.search(r'"\+f"\((\w+)\[0\]\)', body).group(1)
        scale = re.search(r'"r"\((\w+)\)\);$', body).group(1)
        return f"trace_mma({acc}, a_addr, {scale});"

    text, n = re.subn(r"asm volatile\(\n(?:(?!\);\n).)*wgmma\.mma_async(?:(?!\);\n).)*\);", trace,
                      text, flags=re.S)  # fmt: skip
    batches = 3 if plan.overlap else 5 if plan.split_n else 1  # split: lo(0) + 2 x (hi, lo)
    assert n == batches * plan.k_blocks * plan.mma_m, n
    assert "asm" not in text
    return text, plan


def _run(text: str, plan: Sm90Plan) -> str:
    defines = {
        "S": plan.stages,
        "STAGE_BYTES": plan.stage_bytes,
        "N_ACC": plan.acc_per_thread,
        "SET_N": plan.acc_per_thread // (2 if plan.split_n else 1),
        "SPLIT": int(plan.split_n),
        "MMA_M": plan.mma_m,
        "K_BLOCKS": plan.k_blocks,
        "SMEM": "0x400u",
        "BARS": f"{0x400 + plan.shared_bytes}u",
        "DESC_A": "0ull",
        "DESC_B": "0ull",
        "K_TILES": ", ".join(map(str, K_TILES)),
    }
    head = "".join(f"#define {k} {v}\n" for k, v in defines.items())
    sets = (
        ("acc0", "acc1")
        if plan.overlap
        else ("accL", "accH")
        if plan.split_n
        else ("acc", "unused_set")
    )
    source = head + MODEL.replace("ACC0", sets[0]).replace("ACC1", sets[1]).replace(
        "MAINLOOP", text
    )
    exe = harness.build(source)
    res = subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=60)
    return res.stdout.strip()


@pytest.mark.parametrize("promote", [True, "overlap", "split"])
def test_promoted_mainloop_sums_every_k_tile_once(promote):
    text, plan = _mainloop_text(Sm90Config(128, 128, promote=promote))
    assert _run(text, plan) == "OK"


def test_split_default_tile_sums_every_k_tile_once():
    """fp8's default (128x192 by N halves, 4 stages) through the same model."""
    text, plan = _mainloop_text(Sm90Config(128, 192, promote="split"))
    assert _run(text, plan) == "OK"


MUTATIONS = {
    # the half's wait retires nothing: the FADDs read a set whose batch may still write it
    "no retire at the half's wait": ("wgmma_wait<1>();", "wgmma_wait<2>();"),
    # the stage of the batch just issued released instead of the retired one's
    "release the stage in flight": (
        "if (signals) mbar_arrive(prev_empty);",
        "if (signals) mbar_arrive(cur_empty);",
    ),
    # an exit adds its set without draining
    "exit without wait_group 0": ("wgmma_wait<0>();", ""),
}


@pytest.mark.parametrize("name", MUTATIONS)
def test_overlap_mutations_are_caught(name):
    text, plan = _mainloop_text(Sm90Config(128, 128, promote="overlap"))
    old, new = MUTATIONS[name]
    broken = text.replace(old, new)
    assert broken != text
    assert _run(broken, plan).startswith("FAIL")


def test_overlap_adding_the_set_in_flight_is_caught():
    """Adding the set just issued (acc1 after issuing into acc1) instead of the retired one."""
    text, plan = _mainloop_text(Sm90Config(128, 128, promote="overlap"))
    first = text.index("accf[i] += acc0[i];", text.index("wgmma_wait<1>();"))
    broken = text[:first] + "accf[i] += acc1[i];" + text[first + len("accf[i] += acc0[i];") :]
    assert _run(broken, plan).startswith("FAIL")


LO_WAIT = "wgmma_wait<1>();  // lo(kt) retired; hi(kt) runs"
HI_WAIT = "wgmma_wait<1>();  // hi(kt - 1) retired: its stage is read; lo(kt) runs"
SPLIT_MUTATIONS = {
    # stage kt - 1 released before the wait that retires hi(kt - 1) (hi still reads it)
    "release before hi retires": (
        re.compile(re.escape(HI_WAIT) + r"(\s*)(if \(signals\) mbar_arrive\(empty_kt\);)"),
        lambda m: m.group(2) + m.group(1) + HI_WAIT,
    ),
    # the tile's last stage kept
    "last stage not released": (
        "if (signals) mbar_arrive(empty_kt);  // the tile's last stage",
        "",
    ),
    # lo's wait retires nothing: its FADDs read a set a batch may still write
    "no retire at lo's wait": (LO_WAIT, "wgmma_wait<2>();"),
    # the drain adds hi without retiring it
    "drain without wait_group 0": ("wgmma_wait<0>();", ""),
    # the half in flight added instead of the retired one
    "hi added at lo's turn": ("accf[0 + i] += accL[i];", "accf[0 + i] += accH[i];"),
}


@pytest.mark.parametrize("name", SPLIT_MUTATIONS)
def test_split_mutations_are_caught(name):
    text, plan = _mainloop_text(Sm90Config(128, 128, promote="split"))
    old, new = SPLIT_MUTATIONS[name]
    broken = old.sub(new, text) if isinstance(old, re.Pattern) else text.replace(old, new)
    assert broken != text, name
    assert _run(broken, plan).startswith("FAIL")
