"""The sm90 kernels' disk index: a compiled variant's cubin and launch record in one entry.

A new process that runs a known kernel reads this entry instead of generating the kernel's
source and loading NVRTC (:func:`cutemma.kernels.sm90.host.compiled_sm90`). The entry is
sealed like every cache file (:func:`cutemma.cuda.cache.seal`: a digest and a length, checked
on read), and its launch record is checked before the launch uses it, twice: field by field
(a shared-memory size past the limit, a TMA box TMA cannot copy or a missing operand), then
against the record its kernel's plan derives (:func:`plan_record`), so a plausible but wrong
record (``shared_bytes=1``, a box of 32 rows where the plan has 64) is caught too. Either
makes the entry a miss, rebuilt with one :class:`~cutemma.errors.CacheWarning`, never a launch.

>>> import tempfile
>>> from pathlib import Path
>>> rec = {"tma": {w: {"dtype": "bf16", "contiguous": "K", "box": [64, 128], "swizzle": "SW128",
...        "copies": [[0, 0, 0]]} for w in "AB"}, "tma_D": None, "tma_store": False,
...        "shared_bytes": 65536}
>>> p = Path(tempfile.mkdtemp()) / "k.sm90"
>>> write(p, b"\\x7fELF", rec) == p, read(p) == (b"\\x7fELF", rec)
(True, True)
>>> record_refusal(dict(rec, shared_bytes=10**9))
'shared_bytes 1000000000 is not a whole number in [1, 232448]'
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from cutemma.copy.tma_map import SWIZZLE_MODES, TMA_DTYPES, TMA_RULES
from cutemma.cuda.cache import load_entry, store_entry, warn_damaged
from cutemma.errors import TiledMmaError
from cutemma.kernels.sm90.config import (
    ALIGN_SLACK,
    ATOMS_SM90,
    BARRIER_BYTES,
    MAX_STAGES,
    OUTS_SM90,
    SMEM_LIMIT,
    SWIZZLE_SPANS,
    SWIZZLES,
    TMA_EPILOGUES,
    TMA_STORE_OUTS,
    Sm90Config,
    split_swizzles,
    staging_bytes,
    store_passes,
)


def _whole(x: object, lo: int, hi: int) -> bool:
    return type(x) is int and lo <= x <= hi


def _box_refusal(which: str, box: object) -> str | None:
    """Why a record's TMA box is not one TMA can copy, or None."""
    if not isinstance(box, dict):
        return f"TMA box {which} is not a record"
    dims, copies = box.get("box"), box.get("copies")
    checks = (
        (box.get("dtype") in TMA_DTYPES, "dtype"),
        (box.get("contiguous") in ("K", "MN"), "contiguous"),
        (box.get("swizzle") in SWIZZLE_MODES, "swizzle"),
        (
            isinstance(dims, list)
            and len(dims) == 2
            and all(_whole(d, 1, TMA_RULES.max_box) for d in dims),
            "box",
        ),
        (
            isinstance(copies, list)
            and 0 < len(copies) <= SMEM_LIMIT
            and all(
                isinstance(c, list) and len(c) == 3 and all(_whole(v, 0, SMEM_LIMIT) for v in c)
                for c in copies
            ),
            "copies",
        ),
    )
    bad = [what for ok, what in checks if not ok]
    return f"TMA box {which} has a bad {', '.join(bad)}" if bad else None


def record_refusal(record: object) -> str | None:
    """Why a launch record (the JSON of an ``Sm90Launch``) must not be used, or None.

    >>> record_refusal({"tma": {}})
    'the record lacks tma_D, tma_store, shared_bytes'
    """
    if not isinstance(record, dict):
        return "the record is not a JSON object"
    missing = [k for k in ("tma", "tma_D", "tma_store", "shared_bytes") if k not in record]
    if missing:
        return f"the record lacks {', '.join(missing)}"
    if not _whole(record["shared_bytes"], 1, SMEM_LIMIT):
        return f"shared_bytes {record['shared_bytes']!r} is not a whole number in [1, {SMEM_LIMIT}]"
    tma = record["tma"]
    if not isinstance(tma, dict) or sorted(tma) != ["A", "B"]:
        return "the record's TMA boxes are not those of A and B"
    if type(record["tma_store"]) is not bool or record["tma_store"] != (
        record["tma_D"] is not None
    ):
        return "tma_store and tma_D disagree"
    boxes = [("A", tma["A"]), ("B", tma["B"])]
    if record["tma_D"] is not None:
        boxes.append(("D", record["tma_D"]))
    return next((r for which, box in boxes if (r := _box_refusal(which, box))), None)


@cache
def plan_record(key: Any) -> dict:
    """The launch record (JSON of an ``Sm90Launch``) that the plan of ``key`` (a
    :class:`~cutemma.kernels.common.key.KernelKey` of the sm90 family) derives: what an index
    entry for that kernel must hold, field for field.

    Computed from the config by arithmetic (:func:`launch_record`), not by building the
    plan: a cached kernel's first call checks its record without loading the layout
    algebra (tests/kernels/test_sm90_index_plan.py holds the two equal over the kernel space).

    >>> from cutemma.kernels.sm90.config import Sm90Config
    >>> from cutemma.kernels.sm90.host import kernel_key
    >>> rec = plan_record(kernel_key(Sm90Config(), "bf16", "K", "K", "bf16", "bf16"))
    >>> rec["tma"]["A"]["box"], rec["tma_store"], rec["stream_k"]
    ([64, 128], True, None)
    """
    return launch_record(key.config, key.dtype, key.a_major, key.b_major, key.out)


def _stage_box(
    extent: int,
    block_k: int,
    major: str,
    dtype: str,
    eb: int,
    swizzle: str | None = None,
    allowed: tuple[str, ...] = SWIZZLES,
) -> dict:
    """The TMA box record of one (extent, block_k) stage as ``Sm90Plan`` lays it out
    (:func:`cutemma.kernels.sm90.plan.stage_layout`, then :func:`cutemma.copy.tma.tma_box`).

    The stage is the widest GMMA swizzle atom that tiles it: K-major atoms are 8 rows of one
    swizzle span (w elements) tiled along MN first; MN-major atoms w rows by 8 K, tiled
    along K first. A box is one span of the contiguous mode by the largest divisor (at most
    the TMA limit) of the other mode's run, and the boxes start where the tiling puts them.
    """
    # a given mode the warpgroups' columns cut (split_swizzles) is refused as the plan does
    for sw in allowed if swizzle is None else (swizzle,) if swizzle in allowed else ():
        w = SWIZZLE_SPANS[sw] // eb
        rows, cols = (8, w) if major == "K" else (w, 8)
        if extent % rows == 0 and block_k % cols == 0:
            break
    else:
        mode = "swizzled GMMA" if swizzle is None else f"{swizzle} GMMA"
        raise TiledMmaError(
            f"no {mode} atom tiles a {extent} x {block_k} {major}-major {dtype} stage"
        )
    # (contiguous extent, other extent, start of the box at (c, o))
    if major == "K":
        c_ext, o_ext = block_k, extent

        def start(c: int, o: int) -> int:
            return o * w + (c // w) * extent * w
    else:
        c_ext, o_ext = extent, block_k

        def start(c: int, o: int) -> int:
            return (c // w) * block_k * w + o * w

    # (the largest divisor of o_ext up to the TMA limit: the first one counting down)
    b1 = next(d for d in range(min(o_ext, TMA_RULES.max_box), 0, -1) if o_ext % d == 0)
    copies = sorted(
        ([c, o, start(c, o)] for o in range(0, o_ext, b1) for c in range(0, c_ext, w)),
        key=lambda x: x[2],
    )
    return {"dtype": dtype, "contiguous": major, "box": [w, b1], "swizzle": sw, "copies": copies}


def launch_record(config: Any, dtype: str, a_major: str, b_major: str, out: str | None) -> dict:
    """The launch record ``Sm90Plan(config, dtype, a_major, b_major, out)`` derives (its TMA
    boxes, TMA-store flag, shared bytes, stream-K block), by arithmetic on the config: no
    layouts, atoms or partitions are built. TiledMmaError where the plan's own rules for
    these fields refuse (a dtype, output or major it does not take, stages that do not fit).

    >>> from cutemma.kernels.sm90.config import Sm90Config
    >>> rec = launch_record(Sm90Config(), "bf16", "K", "N", "bf16")
    >>> rec["tma"]["B"]["box"], rec["tma"]["B"]["copies"], rec["shared_bytes"]
    ([64, 64], [[0, 0, 0], [64, 0, 4096]], 230496)
    """
    if not isinstance(config, Sm90Config) or dtype not in ATOMS_SM90:
        raise TiledMmaError(f"launch record: {config!r} {dtype!r}: an Sm90Config and a dtype "
                            f"of {', '.join(ATOMS_SM90)}")  # fmt: skip
    if (
        (out is not None and out not in OUTS_SM90)
        or a_major not in ("K", "M")
        or b_major
        not in (
            "K",
            "N",
        )
    ):
        raise TiledMmaError(
            f"launch record: out {out!r}, majors A={a_major!r} B={b_major!r}: out one of "
            f"{', '.join(OUTS_SM90)}, A 'K' or 'M', B 'K' or 'N'"
        )
    eb = ATOMS_SM90[dtype][1]
    bm, bn = config.block_m, config.block_n
    bk = config.k_tiles[eb]
    majors = {"A": "K" if a_major == "K" else "MN", "B": "K" if b_major == "K" else "MN"}
    tma_store = config.epilogue in TMA_EPILOGUES and out in TMA_STORE_OUTS
    sk_bar = BARRIER_BYTES if config.stream_k and tma_store else 0
    stage = (bm + bn) * bk * eb + 2 * BARRIER_BYTES
    d_width = bn // store_passes(config, stage, SMEM_LIMIT - ALIGN_SLACK - sk_bar)
    bytes_d = staging_bytes(config, d_width) if tma_store else 0
    room = (SMEM_LIMIT - ALIGN_SLACK - bytes_d - sk_bar) // stage
    stages = config.stages or min(room, MAX_STAGES)
    if stages < 2 or stages > room:
        raise TiledMmaError(
            f"{config.name}: {stages} stages of {stage} bytes do not fit in {SMEM_LIMIT} bytes"
        )
    tma = {}
    for which, extent in (("A", bm), ("B", bn)):
        share = extent // config.cluster_mn["BA".index(which)]  # A shared along N, B along M
        sw = config.swizzle["AB".index(which)]
        allowed = (
            split_swizzles(config, bn, majors[which] == "MN", eb) if which == "B" else SWIZZLES
        )
        tma[which] = _stage_box(share, bk, majors[which], dtype, eb, sw, allowed)
    d_major = TMA_EPILOGUES.get(config.epilogue)
    return {
        "tma": tma,
        "tma_D": _stage_box(
            bm, d_width, d_major, out, 2, None, split_swizzles(config, d_width, d_major == "K", 2)
        )
        if tma_store
        else None,
        "tma_store": tma_store,
        "shared_bytes": stages * stage + sk_bar + bytes_d + ALIGN_SLACK,
        "stream_k": [bm, bn, bk] if config.stream_k else None,
    }


def _difference(got: object, want: object, where: str) -> str | None:
    """The first place ``got`` differs from ``want`` (types too: ``true`` is not ``1``,
    ``64.0`` not ``64``), walking only as deep as ``want``, or None."""
    if isinstance(want, dict):
        if not isinstance(got, dict) or sorted(got) != sorted(want):
            return f"{where or 'the record'} has keys {_keys(got)}, the plan's {_keys(want)}"
        return next((d for k in want if (d := _difference(got[k], want[k], f"{where}{k} "))), None)
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        return next(
            (d for i, w in enumerate(want) if (d := _difference(got[i], w, f"{where}[{i}] "))),
            None,
        )
    if json.dumps(got) != json.dumps(want):
        return f"{where}is {_short(got)}, the plan's {_short(want)}"
    return None


def _keys(x: object) -> str:
    return _short(sorted(map(str, x))) if isinstance(x, dict) else f"none (a {type(x).__name__})"


def _short(x: object) -> str:
    text = json.dumps(x)
    return text if len(text) <= 80 else text[:77] + "..."


def plan_refusal(record: dict, key: Any) -> str | None:
    """Why ``record`` is not the launch record the plan of ``key`` derives, or None.

    >>> from cutemma.kernels.sm90.config import Sm90Config
    >>> from cutemma.kernels.sm90.host import kernel_key
    >>> key = kernel_key(Sm90Config(), "bf16", "K", "K", "bf16", "bf16")
    >>> print(plan_refusal(dict(plan_record(key), shared_bytes=1), key))
    differs from its plan: shared_bytes is 1, the plan's 230496
    """
    why = _difference(record, plan_record(key), "")
    return None if why is None else f"differs from its plan: {why}"


def read(path: Path, key: Any = None) -> tuple[bytes, dict] | None:
    """(cubin, launch record) of the entry at ``path``, or None: absent, from before seals,
    or damaged (then one CacheWarning). With ``key`` (the entry's kernel), a record that is
    not the one its plan derives (:func:`plan_refusal`) is damage too."""
    entry = load_entry(path)
    if entry is None:
        return None
    cubin, text = entry
    try:
        record = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):  # sealed but not JSON, or nested past the parser
        record = None
    why = record_refusal(record) if record is not None else "has no launch record"
    if why is None and key is not None:
        why = plan_refusal(record, key)
    if why is None and not cubin.startswith(b"\x7fELF"):
        why = "holds no cubin"
    if why is not None:
        warn_damaged(path, why)
        return None
    return cubin, record


def write(path: Path, cubin: bytes, record: dict) -> Path | None:
    """Store (cubin, record) at ``path``, sealed, atomically; None if it cannot be written
    (the runtime writes a new kernel's entry itself when it compiles it:
    :meth:`cutemma.kernels.runtime.driver.DriverKernel.image`)."""
    return store_entry(path, cubin, json.dumps(record))
