"""``cutemma desc``: build prints layout, fields and raw value; --decode explains a raw value."""

import re

from cutemma.cli import main


def _raw(out: str) -> int:
    return int(re.search(r"^raw: (0x[0-9a-f]+)$", out, re.M).group(1), 16)


def test_build_k_sw128_bf16(capsys):
    assert main(["desc", "--major", "K", "--swizzle", "128", "--dtype", "bf16", "--tile",
                 "64x64", "--start", "0x400"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "Sw<3,3,3> o 0 o (8,64):(64,1)" in out  # GMMA::Layout_K_SW128_Atom<bf16>: 8 x 64
    # 128B swizzle = code 1 at bits 62-63; SBO = 8 rows x 128 B = 1024 -> 64; LBO 1; 0x400 >> 4
    assert _raw(out) == (1 << 62) | (64 << 32) | (1 << 16) | 0x40


def test_build_sm100_mn_32b_atomic(capsys):
    assert main(["desc", "--arch", "sm100", "--major", "MN", "--swizzle", "128_32B", "--dtype",
                 "tf32", "--tile", "64x8"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    # code 1 at bits 61-63, version 1 at bit 46; LBO: next 128-byte MN row = 4 rows x 128 B,
    # SBO: next 4 K rows over 64 tf32 of MN = 4 x 256 B
    assert _raw(out) == (1 << 61) | (1 << 46) | ((1024 >> 4) << 32) | ((512 >> 4) << 16)


def test_decode_round_trip(capsys):
    main(["desc", "--major", "MN", "--swizzle", "32", "--dtype", "f16", "--tile", "32x32"])
    raw = _raw(capsys.readouterr().out)
    assert main(["desc", "--decode", hex(raw), "--major", "MN"]) == 0
    out = capsys.readouterr().out
    assert "wgmma (sm90)" in out and "SW32" in out and "if K-major" not in out


def test_decode_picks_sm100_by_version_bit_and_reads_instr(capsys):
    main(["desc", "--decode", hex((2 << 61) | (1 << 46))])
    assert "tcgen05 (sm100)" in capsys.readouterr().out
    main(["desc", "--decode", "0x8400490", "--kind", "f16"])
    assert "M = 128, N = 256" in capsys.readouterr().out


def test_errors_exit_2(capsys):
    assert main(["desc", "--major", "K"]) == 2
    assert main(["desc", "--decode", "zz"]) == 2
    assert main(["desc", "--decode", hex(1 << 14)]) == 2
    assert main(["desc", "--major", "K", "--swizzle", "128", "--dtype", "bf16",
                 "--tile", "60x64"]) == 2  # fmt: skip
    assert "error" in capsys.readouterr().err
