"""infer_layout: seed 004's hand derivation, round trips through random layouts, errors."""

from __future__ import annotations

import numpy as np
import pytest

from cutemma.errors import NotALayoutError
from cutemma.layout import Layout, coalesce
from cutemma.mma.infer import infer_layout
from cutemma.mma.ptx_spec import flat_coords, fragment_coords


def table_of(lay: Layout) -> np.ndarray:
    """(T, V) table of a rank-2 layout through Layout's own call."""
    t_size, v_size = (_size(s) for s in lay.shape)
    return np.array([[lay(t, v) for v in range(v_size)] for t in range(t_size)])


def _size(s) -> int:
    return s if isinstance(s, int) else int(np.prod([_size(x) for x in s]))


def _runs(mode: Layout) -> int:
    """Number of (extent, stride) runs left after CuTe's coalesce of one mode."""
    c = coalesce(mode)
    return 1 if isinstance(c.shape, int) else len(c.shape)


def test_seed_sm70_f32_accumulator():
    # Seed 004 reads T0..T7 and V0..V7 off the ISA picture and writes this layout.
    c = fragment_coords("m8n8k4", "f16", "C", ctype="f32")[[0, 1, 2, 3, 16, 17, 18, 19]]
    got = infer_layout(flat_coords(c, "C", (8, 8, 4)))
    assert str(got) == "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))"


def test_seed_table_typed_from_the_text():
    # The seed's (m,n) positions, as m + 8n, with the other entries as sums
    # (T_t,V0) + (T0,V_v) - the seed's own argument for the stride split.
    t0 = [0, 1, 16, 17, 4, 5, 20, 21]
    v0 = [0, 8, 2, 10, 32, 40, 34, 42]
    table = np.add.outer(t0, v0)
    assert str(infer_layout(table)) == "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))"


@pytest.mark.parametrize(
    "text",
    [
        "((4,8),(2,2)):((32,1),(16,8))",  # SM80_16x8_Row (seed 003)
        "((4,8,4),(2,2,16)):((128,1,16),(64,8,512))",  # GMMA 64x128 C (seed 004)
        "((4,2),4):((8,4),1)",  # SM70 NT A (seed 004)
        "(32,(16,8)):(0,(1,16))",  # the GMMA SS A form of seed 004, smaller: stride-0 threads
        "(1,4):(0,1)",  # dp4a-like single thread
    ],
)
def test_published_layouts_round_trip_as_functions(text):
    lay = Layout.parse(text)
    table = table_of(lay)
    got = infer_layout(table)
    assert np.array_equal(table_of(got), table)
    for mode in range(2):
        assert _runs(got[mode]) == _runs(lay[mode])


def _random_mode(rng) -> tuple[tuple[int, ...], tuple[int, ...]]:
    k = int(rng.integers(1, 4))
    shape = tuple(int(x) for x in rng.choice([1, 2, 3, 4, 8], size=k))
    stride = tuple(int(x) for x in rng.choice([0, 1, 2, 3, 4, 8, 16, 32, 64, 96], size=k))
    return shape, stride


@pytest.mark.parametrize("seed", range(40))
def test_random_layouts_round_trip_with_fewest_runs(seed):
    rng = np.random.default_rng(seed)
    (ts, td), (vs, vd) = _random_mode(rng), _random_mode(rng)
    lay = Layout((ts, vs), (td, vd))
    table = table_of(lay)
    got = infer_layout(table)
    assert np.array_equal(table_of(got), table), f"{lay} -> {got}"
    for mode in range(2):
        assert _runs(got[mode]) <= _runs(lay[mode]), f"{lay} -> {got}: mode {mode} not simplest"


def test_function_table_and_1d_table():
    assert str(infer_layout(lambda t, v: 4 * t + v, (8, 4))) == "(8,4):(4,1)"
    assert str(infer_layout([0, 1, 16, 17, 4, 5, 20, 21])) == "(2,2,2):(1,16,4)"
    assert str(infer_layout(np.zeros((4, 1), dtype=int))) == "(4,1):(0,0)"


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ([[1, 2], [3, 4]], r"entry \(0,0\) is 1"),
        ([[0, 1], [2, 4]], r"\(t=1,v=1\) is 4, not 2\+1=3"),
        ([[0, 1, 2, 5]], r"value mode .*\[0, 1, 2, 5\]"),
        ([[0], [1], [5]], r"thread mode .*\[0, 1, 5\]"),
        (np.zeros((2, 2, 2), dtype=int), r"shape \(2, 2, 2\)"),
        ([[0.0, 0.5]], "non-integer"),
    ],
)
def test_not_a_layout_names_the_entries(table, needle):
    with pytest.raises(NotALayoutError, match=needle):
        infer_layout(table)


def test_function_needs_extents():
    with pytest.raises(NotALayoutError, match="extents"):
        infer_layout(lambda t, v: t)
