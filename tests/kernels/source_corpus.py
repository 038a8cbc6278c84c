"""A corpus of generated kernel sources and their sha256 digests: the fixture that holds a
refactor of the kernel text to byte-identity (tests/kernels/test_source_identity.py).

The cases cover what changes the text: every sm90 candidate config of a few shapes for
every dtype of ATOMS_SM90 (each in two rotating variants of majors, output and C types,
batched and fused epilogues), hand-picked sm90 configs for the rarer options (clusters,
pingpong/alternate, promote modes, RS, tma2/regs, F16 accumulation, pdl, evict-first,
stream-K, split wgmma widths, swap-AB), and some sm80 kernels. A case whose source raises
records the error's text, so a refactor keeps the refusals too.

Check every case (a few minutes), or regenerate the digests (on purpose, when the kernel
text is meant to change)::

    PYTHONPATH=$PWD python tests/kernels/source_corpus.py --check
    PYTHONPATH=$PWD python tests/kernels/source_corpus.py --write

>>> c = Case("sm90", {}, "bf16", "K", "K", "bf16")
>>> len(c.digest())
64
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

DIGESTS = Path(__file__).with_name("source_digests.json")

SHAPES = ((8192, 8192, 8192), (64, 8192, 4096), (512, 4096, 8192), (2048, 1024, 16384))
MAJORS_16 = (("K", "K"), ("K", "N"), ("M", "K"), ("M", "N"))
OUTS = ("bf16", "f32", "f16")
# fused epilogues (ops, tensor dtypes): scales, biases, activations, a residual
EPILOGUES = (
    (("bias", "gelu"), ("f32", "")),
    (("scale_row", "scale_col", "relu"), ("f32", "f32", "")),
    (("bias_row", "silu"), ("bf16", "")),
    (("residual",), ("f16",)),
    (("scale_col", "bias", "gelu_tanh", "residual"), ("f32", "bf16", "", "bf16")),
)
# sm90 configs for the options candidates() rarely or never picks (fields as keywords)
SM90_EXTRA: tuple[dict[str, Any], ...] = (
    {},
    {"cluster": 2},
    {"cluster": 2, "multicast": "A"},
    {"block_m": 256, "block_n": 128, "cluster": 2},
    {"schedule": "pingpong", "block_m": 64},
    {"schedule": "pingpong", "block_m": 64, "block_n": 256},
    {"schedule": "alternate"},
    {"schedule": "alternate", "consumers": 3, "block_m": 192},
    {"promote": "overlap", "block_n": 64},
    {"promote": "split", "block_n": 192},
    {"promote": False},
    {"a_regs": True},
    {"a_regs": True, "block_n": 256},
    {"a_regs": True, "promote": False},
    {"schedule": "pingpong", "block_m": 64, "promote": False},
    {"epilogue": "tma2"},
    {"epilogue": "tma2", "block_n": 256},
    {"epilogue": "regs"},
    {"acc_f16": True},
    {"pdl": True},
    {"pdl": True, "stream_k": True},
    {"evict_first": "A"},
    {"evict_first": "B"},
    {"stream_k": True},
    {"stream_k": True, "epilogue": "tma2"},
    {"wgmma_n": 64, "block_n": 256},
    {"wgmma_n": (256, 64), "block_n": 320},
    {"swap_ab": True, "block_n": 64},
    {"group_m": 4, "stages": 3},
    {"block_k": 32},
    {"consumers": 1, "block_m": 64},
    {"consumers": 3, "block_m": 192, "block_n": 128},
)
SM80_EXTRA: tuple[dict[str, Any], ...] = (
    {},
    {"block_m": 64, "block_n": 64, "stages": 3},
    {"warps": (4, 2), "block_m": 256},
    {"block_k": 64, "swizzle_bytes": 64},
    {"group_m": 4},
)
SM80_DTYPES = (("f16", "f32"), ("bf16", "bf16"), ("f16", "f16"), ("tf32", "f32"), ("s8", "s32"))


@dataclass(frozen=True)
class Case:
    """One generated source: the family, the config's non-default fields and the arguments."""

    family: str
    config: dict
    dtype: str
    a_major: str
    b_major: str
    out: str
    c_type: str | None = None
    batched: bool = False
    epilogue: tuple | None = None  # (ops, dtypes)

    def source(self) -> str:
        """The source this case generates (sm90: gemm_sm90_source, sm80: gemm_source)."""
        from cutemma.kernels.epilogue import NO_EPILOGUE, Epilogue

        epi = Epilogue(*map(tuple, self.epilogue)) if self.epilogue else NO_EPILOGUE
        kw = {k: tuple(v) if isinstance(v, list) else v for k, v in self.config.items()}
        if self.family == "sm90":
            from cutemma.kernels.sm90.config import Sm90Config
            from cutemma.kernels.sm90.source import gemm_sm90_source

            cfg = Sm90Config(**kw)
            return gemm_sm90_source(cfg, self.dtype, self.a_major, self.b_major, self.out,
                                    self.c_type, self.batched, epi)  # fmt: skip
        from cutemma.kernels.sm80.config import GemmConfig
        from cutemma.kernels.sm80.source import gemm_source

        return gemm_source(GemmConfig(**kw), self.dtype, self.a_major, self.b_major, self.out,
                           self.c_type, epilogue=epi)  # fmt: skip

    def text(self) -> str:
        """The source, or ``error: <message>`` when generating it raises."""
        from cutemma.errors import CutemmaError

        try:
            return self.source()
        except CutemmaError as e:
            return f"error: {type(e).__name__}: {e}"

    def digest(self) -> str:
        """sha256 of :meth:`text`."""
        return hashlib.sha256(self.text().encode()).hexdigest()

    def record(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _non_default(cfg: Any) -> dict:
    out = {}
    for f in fields(cfg):
        v = getattr(cfg, f.name)
        if v != f.default:
            out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


def _variant(family: str, config: dict, dtype: str, i: int, batchable: bool) -> Case:
    """The i-th rotation of majors, output, C type, batched and epilogue for one config."""
    sixteen = dtype in ("bf16", "f16")
    a, b = MAJORS_16[i % 4] if sixteen else ("K", "K")
    out = OUTS[i % 3]
    c_type = "f32" if i % 5 == 3 else None
    batched = batchable and i % 2 == 1
    epilogue = None if batched or i % 3 != 2 else EPILOGUES[(i // 3) % len(EPILOGUES)]
    return Case(family, config, dtype, a, b, out, c_type, batched, epilogue)


def cases() -> Iterator[Case]:
    """Every case of the corpus, in a fixed order (duplicates dropped)."""
    from cutemma.errors import CutemmaError
    from cutemma.kernels.sm90.config import ATOMS_SM90, Sm90Config
    from cutemma.kernels.space import candidates

    seen: set[str] = set()

    def new(c: Case) -> bool:
        key = json.dumps(c.record(), sort_keys=True)
        if key in seen:
            return False
        seen.add(key)
        return True

    i = 0
    for dtype in ATOMS_SM90:
        configs = dict.fromkeys(c for s in SHAPES for c in candidates(*s, dtype))
        for cfg in configs:
            batchable = not (cfg.stream_k or cfg.pdl)
            for j in (i, i + 7):
                c = _variant("sm90", _non_default(cfg), dtype, j, batchable)
                if new(c):
                    yield c
            i += 1
    for kw in SM90_EXTRA:
        try:
            cfg = Sm90Config(**kw)
        except CutemmaError:
            continue
        batchable = not (cfg.stream_k or cfg.pdl)
        for dtype in ATOMS_SM90:
            for j in (i, i + 1, i + 2):
                c = _variant("sm90", _non_default(cfg), dtype, j, batchable)
                if new(c):
                    yield c
            i += 1
    for kw in SM80_EXTRA:
        for dtype, out in SM80_DTYPES:
            for a, b in MAJORS_16 if dtype in ("f16", "bf16") else (("K", "K"),):
                c = Case("sm80", kw, dtype, a, b, out)
                if new(c):
                    yield c
            if dtype != "s8":
                epi = EPILOGUES[i % len(EPILOGUES)]
                c = Case("sm80", kw, dtype, "K", "K", out, None, False, epi)
                if new(c):
                    yield c
            i += 1


def load() -> list[tuple[Case, str]]:
    """The committed cases and their digests."""
    rows = json.loads(DIGESTS.read_text())
    return [(Case(**{k: v for k, v in r.items() if k != "sha256"}), r["sha256"]) for r in rows]


def main(argv: list[str]) -> None:
    """``--write``: every case's digest into DIGESTS; ``--check``: every committed digest
    regenerated and compared (the test checks a sample); neither: count the cases."""
    if "--check" in argv:
        stored = load()
        bad = [c for c, digest in stored if c.digest() != digest]
        for c in bad:
            print("differs:", c)
        print(f"{len(stored) - len(bad)} of {len(stored)} sources byte-identical")
        sys.exit(1 if bad else 0)
    rows, errors = [], 0
    for c in cases():
        text = c.text()
        if text.startswith("error: "):
            errors += 1
        rows.append(c.record() | {"sha256": hashlib.sha256(text.encode()).hexdigest()})
    distinct = len({r["sha256"] for r in rows})
    print(f"{len(rows)} cases, {distinct} distinct digests, {errors} of them errors")
    if "--write" in argv:
        lines = ",\n".join(json.dumps(r, sort_keys=True) for r in rows)
        DIGESTS.write_text(f"[\n{lines}\n]\n")  # a case a line: a diff names the cases
        print(f"wrote {DIGESTS}")


if __name__ == "__main__":
    main(sys.argv[1:])
