"""Canonical forms in 128-bit units against the forms CuTe documents in units of uint128_t
(cute/arch/mma_sm90_desc / mma_sm100_umma_desc comments, read as facts), and the element-unit
forms against the 128-bit ones: element (mn, k) of a T-per-16-byte type lies in 16-byte unit
L_u(mn // T, k) at position mn % T (MN-major), and likewise along K for K-major."""

import itertools

import pytest

from cutemma.layout import Layout
from cutemma.smem import canonical_layout

M, K, LBO, SBO = 2, 2, 40, 24  # u128 units; m, k repeats


def offsets(layout):
    return [layout(i) for i in range(layout.size())]


# CuTe's uint128_t forms, typed in: (shape, stride) before the swizzle
CUTE_U128 = {
    ("MN", "INTER"): (((1, M), (8, K)), ((1, SBO), (1, LBO))),
    ("MN", "SW32"): (((2, M), (8, K)), ((1, LBO), (2, SBO))),
    ("MN", "SW64"): (((4, M), (8, K)), ((1, LBO), (4, SBO))),
    ("MN", "SW128"): (((8, M), (8, K)), ((1, LBO), (8, SBO))),
    ("MN", "SW128_32B"): (((8, M), (4, K)), ((1, LBO), (8, SBO))),  # K stride: the 128 B row
    ("K", "INTER"): (((8, M), 2 * K), ((1, SBO), LBO)),
    ("K", "SW32"): (((8, M), 2 * K), ((2, SBO), 1)),
    ("K", "SW64"): (((8, M), 2 * K), ((4, SBO), 1)),
    ("K", "SW128"): (((8, M), 2 * K), ((8, SBO), 1)),
}
SWIZZLE_BITS = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3, "SW128_32B": 2}


@pytest.mark.parametrize("major,sw", list(CUTE_U128))
def test_u128_forms_match_cute(major, sw):
    got = canonical_layout(major, sw, T=8, m=M, k=K, lbo=LBO, sbo=SBO, units="u128")
    shape, stride = CUTE_U128[(major, sw)]
    assert offsets(got.inner) == offsets(Layout(shape, stride))
    assert got.outer.bits == SWIZZLE_BITS[sw]
    # 16-byte units: the 16-byte-granule swizzles act from bit 0, the 32-byte one from bit 1
    assert got.outer.base == (1 if sw == "SW128_32B" else 0)


@pytest.mark.parametrize("major,sw,T", [(a, b, t) for (a, b) in CUTE_U128 for t in (4, 8, 16, 32)])
def test_element_form_refines_u128_form(major, sw, T):
    u = canonical_layout(major, sw, T=T, m=M, k=K, lbo=LBO, sbo=SBO, units="u128")
    e = canonical_layout(major, sw, T=T, m=M, k=K, lbo=LBO * T, sbo=SBO * T)
    mn_e, k_e = e.inner[0].size(), e.inner[1].size()
    for mn, k in itertools.product(range(mn_e), range(k_e)):
        if major == "MN":
            assert e(mn, k) == T * u(mn // T, k) + mn % T
        else:
            assert e(mn, k) == T * u(mn, k // T) + k % T
