"""The cost model's :func:`~cutemma.kernels.cost.cheapest`, compiled: the same two passes over
the same figures in C (``native_cheapest.c`` beside this file), so that a new shape's pick
spends its host time on the space's look-ups rather than on the pricing loop.

The C file is built once per machine with the system's C compiler (``$CC``, else ``cc``) and
kept in the kernel cache folder (:func:`cutemma.cuda.cache.cache_dir`), sealed as the cubins
are. Where there is no compiler, the build fails, or ``CUTEMMA_NATIVE_PRICER=0`` is set, the
pick prices in Python (:func:`cutemma.kernels.cost.cheapest`) with the same result;
:func:`status` says which runs and why. Every float is computed in the order the Python
computes it, with no fused multiply-adds, so the two agree bit for bit
(tests/kernels/test_native_cheapest.py holds them equal on drawn calls).

>>> from cutemma.kernels.cost import price_table
>>> from cutemma.kernels.space import candidates
>>> tables = (price_table(candidates(512, 8192, 8192, "bf16"), "bf16"),)
>>> t, table, index = cheapest(tables, 512, 8192, 8192)
>>> table, t < 1e-3
(0, True)
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import subprocess
import tempfile
import threading
from array import array
from ctypes import c_void_p
from functools import cache
from pathlib import Path

from cutemma.errors import CompileError
from cutemma.kernels.common.scheduler import FULL_WAVE
from cutemma.kernels.cost import _TABLES_MAX as TABLES_KEPT
from cutemma.kernels.cost import READS_ONCE_ROWS, _check_call, _split_prices, _views
from cutemma.kernels.cost import cheapest as cost_cheapest
from cutemma.kernels.sm90.streamk import ITERS_MAX

SOURCE = Path(__file__).with_name("native_cheapest.c")
ENV = "CUTEMMA_NATIVE_PRICER"  # "0": price in Python
# strict IEEE doubles: no contraction of a * b + c into one rounding (the Python rounds twice)
FLAGS = ("-O2", "-shared", "-fPIC", "-std=c99", "-ffp-contract=off", "-fno-fast-math")
# A group's record, as the C file reads it by position: the tile's figures (rows it is
# dominated to, bm, bn, bm and bn times its cluster's pairs, whether paired, the pairs and the
# cluster's cost, bk, a k tile's microseconds), whether a clamp prices a call of fewer rows and
# its terms (flops' microseconds, whole rows' bytes, half-sector weights, cluster shares),
# its first whole config's index, and the length of the stream-K part that follows it
GROUP_FIELDS = 20

_LOCK = threading.Lock()
_STATE: dict[str, object] = {}  # "fn": the loaded function or None, "why": a sentence
_OUT = threading.local()  # each thread's result slot (the seconds)


def status() -> str:
    """Whether the compiled pricer runs in this process, and if not, why.

    >>> status().startswith(("compiled", "Python"))
    True
    """
    fn = _function()
    return "compiled: " + str(_STATE["path"]) if fn is not None else "Python: " + str(_STATE["why"])


def _function():
    """The loaded C function, or None (the reason kept in ``_STATE['why']``); built and loaded
    once per process."""
    if "fn" in _STATE:
        return _STATE["fn"]
    with _LOCK:
        if "fn" not in _STATE:
            fn, why = None, "CUTEMMA_NATIVE_PRICER=0"
            if os.environ.get(ENV, "1") != "0":
                try:
                    fn, why = _load()
                except (OSError, CompileError) as exc:  # (no folder to write the library to)
                    fn, why = None, f"the library could not be written or loaded: {exc}"
            _STATE["why"], _STATE["fn"] = why, fn
    return _STATE["fn"]


def _load():
    from cutemma.cuda.cache import cache_dir, load_sealed, seal, write_atomic

    compiler = os.environ.get("CC") or "cc"
    source = SOURCE.read_bytes()
    key = hashlib.sha256(
        b"\0".join(
            [source, compiler.encode(), " ".join(FLAGS).encode(), platform.machine().encode()]
        )
    ).hexdigest()
    entry = cache_dir() / f"native-cheapest-{key[:32]}.so.sealed"
    binary = load_sealed(entry)
    lib = None
    if binary is not None:
        try:  # (a cache shared with another machine may hold a library this one cannot load)
            lib = _loaded(binary)
        except OSError:
            lib = None
    if lib is None:
        binary, why = _build(compiler)
        if binary is None:
            return None, why
        write_atomic(entry, seal(binary))  # (a read-only cache: built again next process)
        lib = _loaded(binary)
    # (no argtypes: the packed tables and the result slot come as c_void_p, the counts as
    # ints under 2**31, each converted by ctypes at less cost than argtypes' checks)
    fn = ctypes.PYFUNCTYPE(ctypes.c_int64)(("cheapest", lib))
    _STATE["lib"], _STATE["path"] = lib, entry
    return fn, ""


def _loaded(binary: bytes) -> ctypes.PyDLL:
    """The library of ``binary``, loaded from a private copy of the checked bytes (the cache
    file may change after the check)."""
    fd, path = tempfile.mkstemp(suffix=".so", prefix="cutemma-native-cheapest-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(binary)
        return ctypes.PyDLL(path)  # (holds the GIL: it runs for well under a microsecond)
    finally:
        os.unlink(path)


def _build(compiler: str) -> tuple[bytes | None, str]:
    with tempfile.TemporaryDirectory(prefix="cutemma-native-") as tmp:
        out = Path(tmp) / "native_cheapest.so"
        cmd = [compiler, *FLAGS, "-o", str(out), str(SOURCE), "-lm"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"no C compiler ran ({' '.join(cmd[:1])}: {exc})"
        if done.returncode != 0 or not out.exists():
            return None, f"{compiler} failed: {(done.stderr or done.stdout).strip()[:300]}"
        return out.read_bytes(), ""


def cheapest(
    tables: tuple[tuple, ...], m: int, n: int, k: int, batch: int = 1
) -> tuple[float, int, int]:
    """:func:`cutemma.kernels.cost.cheapest` (same arguments, same answer) priced by the
    compiled pricer where it runs (:func:`status`), else by the Python.

    >>> from cutemma.kernels import cost
    >>> from cutemma.kernels.space import candidates
    >>> tables = (cost.price_table(candidates(9, 8192, 8192, "bf16", swap=True), "bf16"),)
    >>> cheapest(tables, 9, 8192, 8192) == cost.cheapest(tables, 9, 8192, 8192)
    True
    """
    found = None
    if isinstance(tables, tuple) and tables:
        _check_call(m, n, k, batch, "native cheapest")
        _views(tables)  # (its checks: tables of one basis)
        packed = _pack(tables)
        found = _price(packed, int(m), int(n), int(k), int(batch)) if packed else None
    return found or cost_cheapest(tables, m, n, k, batch)  # (its checks: its errors)


# where the C file's int64 products of the call's counts could overflow (they never do on a
# call whose operands fit a GPU), the Python prices
SAFE_PRODUCT = 2**56
INT_MAX = 2**31


def _pack(tables: tuple | list):
    """A pick's price tables (:func:`~cutemma.kernels.cost.price_table`'s, of one basis) as
    the compiled pricer reads them, or None where it does not run (or the tables' bases
    differ: :func:`~cutemma.kernels.cost.cheapest` then says so). A pick keeps the result
    with its tables (packing costs more than pricing)."""
    if _function() is None:
        return None
    basis = tables[0][0]
    try:
        constants, address, _ = _constants(basis)
        plan, kept = [address, len(tables)], [constants]
        for table in tables:
            if table[0] is not basis:
                return None
            found = _packed_table(table)
            plan.append(found[1])
            kept.append(found)
    except _Unpackable:
        return None
    plan = array("Q", plan)
    return c_void_p(plan.buffer_info()[0]), plan, kept


# each price table's packed form (kept with the table, which price_table's cache keeps alive)
_TABLES: dict[int, tuple] = {}
_TABLES_MAX = TABLES_KEPT  # (as many as the cost model keeps)


def _packed_table(table: tuple) -> tuple[array, int, list]:
    """A price table's views as the C file reads them: their count, then per view whether it
    is swapped, its count of groups and their address (:func:`_packed_groups`); its address;
    the group arrays it points to (kept alive with it). Kept per table."""
    hit = _TABLES.get(id(table))
    if hit is not None and hit[0] is table:
        return hit[1]
    basis, views = table
    _, (_, _, _, _, reread, *_) = basis
    ordered = reread >= 0  # (cost._shared_prices' ordered)
    fields, kept = [len(views)], []
    for swap, groups in views:
        found = _packed_groups(groups, ordered)
        fields += (swap, len(groups), found[1])
        kept.append(found)
    buf = array("Q", fields)
    if len(_TABLES) >= _TABLES_MAX:
        _TABLES.clear()  # (a pick's plan keeps its own tables' arrays alive)
    found = buf, _address(buf), kept
    _TABLES[id(table)] = (table, found)
    return found


_BASES: dict[int, tuple] = {}


def _constants(basis: tuple) -> tuple[array, int, tuple]:
    """A basis's constants (:func:`~cutemma.kernels.cost._basis`) as the C file reads them, and
    their address, kept per basis (a few: one per element size and device kind)."""
    hit = _BASES.get(id(basis))
    if hit is not None and hit[2] is basis:
        return hit
    eb, (grid, p, ip, launch, reread, tile_us, dram, load) = basis
    fields = (eb, grid, p, ip, launch, reread, tile_us, dram, load, READS_ONCE_ROWS)
    constants = array("d", (*fields, FULL_WAVE, ITERS_MAX, GROUP_FIELDS))
    found = _BASES[id(basis)] = (constants, _address(constants), basis)
    return found


def _address(buf: array) -> int:
    """Where ``buf``'s items sit (the C file reads it from a uint64 or a double: under 2**53
    on every 64-bit system that maps user memory; else the Python prices)."""
    address = buf.buffer_info()[0]
    if address >= 2**53:
        raise _Unpackable
    return address


class _Unpackable(Exception):
    """A table the C file cannot read (an address a double does not hold exactly, a record
    of another length than it reads): :func:`_pack` gives None, the Python prices."""


def _price(packed: tuple, m: int, n: int, k: int, batch: int) -> tuple[float, int, int] | None:
    """:func:`cheapest` of :func:`_pack`'s tables on a checked call (plain ints >= 1), or None
    where the Python must price it (counts too large for the C file's ints, or more
    stream-K tiles kept than it holds)."""
    if not (m < INT_MAX and n < INT_MAX and k < INT_MAX and batch < INT_MAX):
        return None  # (the C file takes its counts as ints)
    if batch * (m + n) * k >= SAFE_PRODUCT or batch * m * n >= SAFE_PRODUCT:
        return None
    slot = getattr(_OUT, "seconds", None)
    if slot is None:
        slot = _OUT.seconds = ctypes.c_double()
        _OUT.address = ctypes.c_void_p(ctypes.addressof(slot))
    found = _STATE["fn"](packed[0], m, n, k, batch, _OUT.address)
    if found < 0:
        return None
    return slot.value, found >> 32, found & 0xFFFFFFFF


# each group tuple's packed form (kept with the tuple, which the price tables keep alive)
_GROUPS: dict[int, tuple] = {}
_GROUPS_MAX = TABLES_KEPT


def _packed_groups(groups: tuple, ordered: bool) -> tuple[array, int, list]:
    """A view's groups (:func:`~cutemma.kernels.cost.price_table`'s) packed, where they sit in
    memory, and the split prices they point to (kept alive with them), per group tuple."""
    hit = _GROUPS.get(id(groups))
    if hit is not None and hit[0] is groups:
        return hit[1]
    buf, kept = array("d"), []
    for dominated, bm, bn, bmp, bnp, paired, bk, k_us, clamp, index, part in groups:
        pm, pn, pcost = paired if paired is not None else (1, 1, 0.0)
        terms = clamp if clamp is not None else (0.0, 0, 1.0, 1.0, 1, 1)
        tail = _packed_part(part, ordered, kept) if part is not None else ()
        record = (dominated, bm, bn, bmp, bnp, paired is not None, pm, pn, pcost, bk, k_us,
                  clamp is not None, *terms, index, len(tail))  # fmt: skip
        if len(record) != GROUP_FIELDS:  # (a field added here must be read there)
            raise _Unpackable
        buf.extend(record)
        buf.extend(tail)
    if len(_GROUPS) >= _GROUPS_MAX:
        _GROUPS.clear()  # (a pick's packed tables keep their own arrays alive)
    found = buf, _address(buf), kept
    _GROUPS[id(groups)] = (groups, found)
    return found


def _packed_part(part: tuple, ordered: bool, kept: list) -> array:
    """A tile's stream-K part (:func:`~cutemma.kernels.cost._shared_part`): its figures, the
    address of its splits' prices (:func:`_packed_prices`, appended to ``kept``), its
    indices. (The prices apart: the first pass then reads its groups' figures from a few
    cache lines, not from between price lists.)"""
    idle, least_fix, first, bmn, indices, splits, partial_us, together_us, cap, _ = part
    prices, address = _packed_prices(splits, cap, ordered)
    kept.append(prices)
    fields = (idle, least_fix, first, bmn, cap, partial_us, together_us, len(indices), address)
    buf = array("d", fields)
    buf.extend(indices)
    return buf


@cache
def _packed_prices(splits: tuple, cap: int, ordered: bool) -> tuple[array, int]:
    """The prices of stream-K configs of ``splits`` (:func:`~cutemma.kernels.cost._split_prices`)
    for every room up to ``cap`` (theirs), not in one wave then in one (the slots
    :func:`~cutemma.kernels.cost._shared_prices` fills as calls ask): per slot, a count, then
    (split's position, CTAs per tile, together, aligned) each; and the array's address (a
    pointer is exact in a double under 2**53). Few sets of splits exist: each is kept."""
    buf = array("d")
    for one_wave in (False, True):
        for room in range(cap + 1):
            how = _split_prices(splits, one_wave, room, ordered)
            buf.append(len(how))
            for j, per, together, aligned in how:
                buf.extend((j, per, together, aligned))
    return buf, _address(buf)
