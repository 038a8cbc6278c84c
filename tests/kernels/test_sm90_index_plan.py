"""An sm90 index record that is sealed and plausible but not its kernel's is rebuilt, never
launched (issue 34, "sm90 index records").

The seal (a digest and a length) catches damage to the bytes; it cannot tell a record that
was written wrong, or edited and sealed again, from a right one. Each record is therefore
compared with the one its kernel's plan derives, field by field: every field passes the
record's own checks (:func:`cutemma.kernels.sm90.index.record_refusal`), yet one differs from
the plan, and the entry is a miss with one CacheWarning naming that field.

The expected values come from the plan itself (``Sm90Plan`` and ``Sm90Launch.of``), never
from the index module; the damaged records are the plan's with one field changed.
"""

from __future__ import annotations

import copy
import json
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "cuda"))
from cuda_skips import needs_nvrtc  # noqa: E402

from cutemma.errors import CacheWarning  # noqa: E402
from cutemma.kernels.sm90 import index as sm90_index  # noqa: E402
from cutemma.kernels.sm90.config import Sm90Config  # noqa: E402
from cutemma.kernels.sm90.host import kernel_key  # noqa: E402
from cutemma.kernels.sm90.plan import Sm90Plan  # noqa: E402
from cutemma.kernels.sm90.tma_maps import Sm90Launch  # noqa: E402

CUBIN = b"\x7fELF" + bytes(range(256)) * 4

KEYS = {
    "default": kernel_key(Sm90Config(), "bf16", "K", "K", "bf16", "bf16"),
    "stream-K, MN-major": kernel_key(Sm90Config(stream_k=True), "f16", "M", "N", "f16", "f16"),
}


def _plan_record(key) -> dict:
    plan = Sm90Plan(key.config, key.dtype, key.a_major, key.b_major, key.out)
    return json.loads(Sm90Launch.of(plan).to_json())


def _other_swizzle(sw: str) -> str:
    return "SW64" if sw == "SW128" else "SW128"


# (name, the field it changes, a change of the plan's record); each keeps the record plausible
def _changes():
    def box(which, field, f):
        def change(r):
            r["tma"][which][field] = f(r["tma"][which][field])

        return change

    def top(field, f):
        def change(r):
            r[field] = f(r[field])

        return change

    def d_box(field, f):
        def change(r):
            r["tma_D"][field] = f(r["tma_D"][field])

        return change

    return {
        "shared_bytes=1": ("shared_bytes", top("shared_bytes", lambda v: 1)),
        "shared_bytes 1 KiB short": ("shared_bytes", top("shared_bytes", lambda v: v - 1024)),
        "shared_bytes 8 bytes over": ("shared_bytes", top("shared_bytes", lambda v: v + 8)),
        "A box 64 -> 32": ("box", box("A", "box", lambda b: [b[0] // 2, b[1]])),
        "B box rows halved": ("box", box("B", "box", lambda b: [b[0], b[1] // 2])),
        "A swizzle": ("swizzle", box("A", "swizzle", _other_swizzle)),
        "B contiguous": ("contiguous", box("B", "contiguous", lambda c: "MN" if c == "K" else "K")),
        "A dtype": ("dtype", box("A", "dtype", lambda d: "f16" if d == "bf16" else "bf16")),
        "A copy offset": ("copies", box("A", "copies", lambda c: [[0, 0, 64]] + c[1:])),
        "B one copy more": ("copies", box("B", "copies", lambda c: c + [[0, 64, 4096]])),
        "D box": ("box", d_box("box", lambda b: [b[0], b[1] // 2])),
        "D copies dropped": ("copies", d_box("copies", lambda c: c[:1])),
        "stream_k block": ("stream_k", top("stream_k", lambda s: [64, 64, 64])),
        "stream_k as floats": (
            "stream_k",
            top("stream_k", lambda s: [64.0, 128.0, 64.0] if s is None else [float(x) for x in s]),
        ),
        "an extra field": ("keys", lambda r: r.update(threads=384)),
    }


CHANGES = _changes()


def _read_warned(path, key):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        hit = sm90_index.read(path, key)
    return hit, [str(w.message) for w in got if issubclass(w.category, CacheWarning)]


@pytest.mark.parametrize("kname", sorted(KEYS))
def test_the_plans_own_record_is_served(tmp_path, kname):
    key = KEYS[kname]
    record = _plan_record(key)
    path = tmp_path / "k.sm90"
    sm90_index.write(path, CUBIN, record)
    assert _read_warned(path, key) == ((CUBIN, record), [])


@pytest.mark.parametrize("kname", sorted(KEYS))
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_sealed_plausible_record_unlike_its_plan_is_a_miss(tmp_path, kname, change):
    key = KEYS[kname]
    field, mutate = CHANGES[change]
    record = copy.deepcopy(_plan_record(key))
    mutate(record)
    assert record != _plan_record(key) or field == "stream_k"  # floats compare equal to ints
    if field != "stream_k":  # the field checks alone pass it: only the plan tells it wrong
        assert sm90_index.record_refusal(record) is None
    path = tmp_path / "k.sm90"
    sm90_index.write(path, CUBIN, record)  # sealed: the digest matches the bytes
    hit, warned = _read_warned(path, key)
    assert hit is None
    assert len(warned) == 1 and "differs from its plan" in warned[0]
    assert field.split("_")[0] in warned[0]  # the message names what differs


def test_a_record_of_another_kernel_is_a_miss(tmp_path):
    # the plain config's record under the stream-K key: right for a kernel, not for this one
    path = tmp_path / "k.sm90"
    sm90_index.write(path, CUBIN, _plan_record(KEYS["default"]))
    hit, warned = _read_warned(path, KEYS["stream-K, MN-major"])
    assert hit is None and len(warned) == 1


def test_a_record_nested_past_the_parser_is_damage_not_recursion(tmp_path):
    from cutemma.cuda.cache import seal

    path = tmp_path / "k.sm90"
    path.write_bytes(seal(CUBIN + b"\n--cutemma-sm90--\n" + b"[" * 100_000 + b"]" * 100_000))
    hit, warned = _read_warned(path, KEYS["default"])
    assert hit is None and len(warned) == 1


@needs_nvrtc
def test_compiled_sm90_rebuilds_a_record_unlike_its_plan(monkeypatch, tmp_path):
    # end to end: the index holds the right cubin but shared_bytes=1, sealed; a new process
    # (the in-process cache cleared) must load the plan's shared bytes and rewrite the entry
    from cutemma.kernels.sm90.host import compiled_sm90

    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path / "cache"))
    key = KEYS["default"]
    compiled_sm90.cache_clear()
    kern, launch = compiled_sm90(key, "sm_90a")
    kern.image()  # the first load's build: compiled, the index entry written
    (index,) = (tmp_path / "cache").glob("*.sm90")
    cubin, record = sm90_index.read(index, key)
    sm90_index.write(index, cubin, dict(record, shared_bytes=1))
    compiled_sm90.cache_clear()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        again, launch_again = compiled_sm90(key, "sm_90a")
    compiled_sm90.cache_clear()
    want = _plan_record(key)["shared_bytes"]
    assert [str(index) in str(w.message) for w in got] == [True]
    assert again.shared == launch_again.shared_bytes == want != 1
    again.image()  # its first load's build rewrites the entry
    assert sm90_index.read(index, key)[1]["shared_bytes"] == want  # rewritten right
