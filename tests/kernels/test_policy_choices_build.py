"""The policy's swapped choices on column-major activations, without torch: the tokens'
operand of a swapped kernel (A^T) is then N-major, and a 16-bit N-major stage tiles only
with GMMA atoms a multiple of 16 wide, so a token tile of 24, 40, ..., 168 has no kernel
(the launch record refuses it). The policy must choose a kernel that builds for the
operands' majors, and keep swapping where the token tile tiles them; and every sm90 choice
on random calls must build as its plan says."""

from __future__ import annotations

import pytest
from policy_calls import Strided, nothing_tuned, record  # noqa: F401 - beside this file (its fixture: autouse)

from cutemma.kernels.policy import choose
from cutemma.kernels.sm90.index import launch_record

H200 = "NVIDIA H200"  # (the device kind whose cost model picks)


@pytest.mark.parametrize("b_major", ["K", "N"])
def test_column_major_activations_get_a_kernel_whose_stages_tile_them(b_major):
    n, k = 8192, 4096
    swapped = set()
    for m in range(1, 300):
        A = Strided((m, k), (1, m))  # M contiguous
        B = Strided((k, n), (1, k)) if b_major == "K" else Strided((k, n), (n, 1))
        c = choose(record(A, B, gpu=H200))
        if c.family == "sm80":  # (A's leading stride of m elements not 16 bytes: TMA cannot)
            assert m % 8, m
            continue
        v = c.views
        # the kernel the host would build: its launch record for the views' majors
        launch_record(c.config, "bf16", v.a_major, v.b_major, "bf16")
        if c.swap:
            swapped.add(m)
    # swapping stays where the tokens' tile is a multiple of 16 (and TMA reads A^T's rows)
    assert {16, 32, 48, 64, 160} <= swapped
    assert not {24, 40, 56, 136, 152, 168} & swapped


ELEMENT_BYTES = {"bf16": 2, "f16": 2, "e4m3": 1, "tf32": 4}


def test_every_sm90_choice_on_random_calls_builds_as_its_plan_says():
    """Random 2-D calls of each kernel dtype, both majors where the dtype takes them, 16-bit
    and f32 outputs: every sm90 choice's launch record builds for its views' majors, and on
    a sample the record is the plan's (shared bytes, D's TMA boxes)."""
    import json
    import random

    from cutemma.kernels.sm90.plan import Sm90Plan
    from cutemma.kernels.sm90.tma_maps import Sm90Launch

    rng, built, planned = random.Random(33), 0, 0
    for i in range(600):
        dtype = rng.choice(sorted(ELEMENT_BYTES))
        eb, wide = ELEMENT_BYTES[dtype], dtype in ("bf16", "f16")
        m = rng.choice([rng.randint(1, 300), rng.randint(1, 5000)])
        n, k = rng.randint(1, 800) * 8, rng.randint(1, 800) * 16
        am, bm = (rng.choice("KM"), rng.choice("KN")) if wide else ("K", "K")
        A = Strided((m, k), (k, 1), eb) if am == "K" else Strided((m, k), (1, m), eb)
        B = Strided((k, n), (1, k), eb) if bm == "K" else Strided((k, n), (n, 1), eb)
        out = rng.choice(["f16" if dtype == "f16" else "bf16", "f32"])
        c = choose(record(A, B, dtype=dtype, gpu=H200, out_type=out, c_type=out))
        if c.family != "sm90":
            continue
        v = c.views
        rec = launch_record(c.config, dtype, v.a_major, v.b_major, out)
        built += 1
        if i % 10 == 0:
            plan = json.loads(
                Sm90Launch.of(Sm90Plan(c.config, dtype, v.a_major, v.b_major, out)).to_json()
            )
            assert (rec["shared_bytes"], rec["tma_D"]) == (
                plan["shared_bytes"],
                plan["tma_D"],
            )
            planned += 1
    assert built > 400 and planned > 30


@pytest.mark.parametrize("a_major", ["K", "M"])
@pytest.mark.parametrize("b_major", ["K", "N"])
def test_16_bit_calls_past_2048_rows_swap_where_the_model_says_and_build(a_major, b_major):
    """16-bit calls of more than SWAP_MAX_M rows may run swapped on wave-fitted token tiles
    (space.swaps_call, space.wave_tokens): the policy's choice is the pick's own (swapped
    on these calls, where the token tile tiles A^T's major), its views are the swapped
    problem's, and its kernel builds for them; fp8 never swaps past SWAP_MAX_M rows."""
    from cutemma.kernels.pick import builtin
    from cutemma.kernels.space import SWAP_MAX_M

    swapped = 0
    for m, n, k in [(5798, 528, 2688), (5010, 784, 57728), (2844, 816, 6944), (16384, 1000, 520)]:
        m = -(-m // 8) * 8 if a_major == "M" else m  # (TMA: M-major A's rows in 16 bytes)
        A = Strided((m, k), (k, 1)) if a_major == "K" else Strided((m, k), (1, m))
        B = Strided((k, n), (1, k)) if b_major == "K" else Strided((k, n), (n, 1))
        call = record(A, B, gpu=H200)
        c = choose(call)
        want, _ = builtin(m, n, k, 1, "bf16", 132, "h200", True, call.rows16, b_major)
        assert m > SWAP_MAX_M and c.family == "sm90"
        if c.swap:
            swapped += 1
            assert want.swap_ab and c.config.block_n == want.block_n
            # (D^T = B^T A^T: the kernel's A is B^T, n rows of the weights; its B is A^T)
            assert (c.views.A.shape[0], c.views.B.shape[1]) == (n, m)
        else:  # (unswapped only where the token tile has no stage for A^T's major)
            assert not want.swap_ab or a_major == "M"
        launch_record(c.config, "bf16", c.views.a_major, c.views.b_major, "bf16")
        fp8 = choose(record(Strided((m, k), (k, 1), 1), Strided((k, n), (1, k), 1),
                            dtype="e4m3", gpu=H200))  # fmt: skip
        assert not fp8.swap
    assert swapped >= 2
