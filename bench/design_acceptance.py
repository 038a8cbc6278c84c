"""What share of the design space the design layer accepts (issue 32, acceptance 3).

    python bench/design_acceptance.py [--draws=N] [--seed=S] [--out=FILE] [--any-wg-layout]
    python bench/design_acceptance.py --gpu --out=FILE [N] [--draws=N] [--seed=S] [--from=FILE]
                                      [--shards=P] [--budget=SECONDS]
    python bench/design_acceptance.py --dry [N] ...     # the GPU run's cases, without CUDA

Random designs are drawn WITHOUT filtering by the rules, over every atom family that runs:
sm80 (``mma.sync``: f16/bf16 k16 and k8, F32- and F16-accumulating; tf32 k8 and k4; int8
k32 and k16; fp8 e4m3/e5m2, mixed too; the SM70 8x8x4 quadpairs), 1-8 warps in any (m, n)
atom layout, M- or N-ordered, sometimes the seeds' M permutation; sm90 (GMMA SS and RS, every
N from 8 to 256 in steps of 8, 16-bit majors K or MN where CuTe allows them, 1-3
warpgroups, every schedule). Tiles are 1-8x the TiledMMA's tile in each of M, N, K (each
multiple drawn), stages 2-6. A draw is only ever shaped by what CuTe itself refuses to
build: an RS atom's A is K-major, ldmatrix .trans moves 16-bit elements, an ldmatrix atom
splits one MMA atom's fragment registers (a wider one fails CuTe's "TiledCopy uses too few
vals", :func:`ldmatrix_atoms`), the quadpair's fragments take no ldmatrix, CUTLASS's
pingpong kernel takes a one-warpgroup TiledMMA, 'alternate' means 2 or 3 warpgroups taking
turns, and an smem layout the stage cannot hold (``smem_layout`` raises) is left to the
design.

Each draw is classified with ``failed_rules(design, "sm_90a")``: accepted; refused by a
hardware limit (:data:`LIMIT_RULES`, evaluated even where an earlier rule stops the table);
refused by another rule (its name and first message); 'cute' when CuTe's own layout algebra
refuses the TiledMMA (no design at all, e.g. 28 quadpairs over the SM70 thread layout break
the stride divisibility condition); or a bare exception (anything not a CutemmaError). The
figure is accepted / (accepted + refused + bare); ``accepted_share_counting_cute`` also
counts the 'cute' draws as refused. The output JSON holds the seed, the
counts (in all and per family), one example message per rule, and the accepted designs as
their draw parameters (:func:`build` rebuilds each).

``--gpu`` runs up to N accepted designs through ``cutemma.gemm(A, B, design=d)`` on two
shapes each (the first with M, N and K not multiples of the tile), small-integer operands
in the majors the design fixes (else the drawn ones), and compares with float64 exactly;
it counts exact / wrong / refused at launch / bare exceptions. The designs run in
``--shards`` processes on the one GPU (default: CPU cores - 2, at most 12), so their NVRTC
compiles run side by side (the kernel variant of a design's call depends on the call's
majors and alignment, which the call path derives; running the calls is the one sure way
to compile what they need); a shard that dies or hangs (150 s) on a design is restarted
past it, and ``--budget`` (330 s) stops the run. ``--from=FILE`` takes the accepted designs
of an earlier CPU run's JSON instead of drawing them. ``--dry`` builds the same cases (shapes, majors,
dtypes) without torch.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from cutemma.errors import CutemmaError, DesignError, LaunchError
from cutemma.kernels.design import RULES, SM80_ATOMS, GemmDesign, checked, failed_rules
from cutemma.kernels.sm80.plan import ELEM_BYTES, ldmatrix_num, smem_layout
from cutemma.kernels.sm90.config import ATOMS_SM90, SCHEDULES
from cutemma.layout import Layout
from cutemma.mma import make_mma_atom
from cutemma.tiled import make_tiled_mma

ARCH = "sm_90a"
# The rules that are hardware limits: a block's shared memory (smem_limit: "N bytes of shared
# memory per block (the sm_90a limit is ...)"), a thread's registers (registers: "about N
# registers per thread (the limit is ...)") and a block's threads (threads: "N threads per
# block (the device allows ...)"). A design past one of them is outside the space measured.
LIMIT_RULES = ("smem_limit", "registers", "threads")
MULTIPLES = range(1, 9)  # a tile is 1-8x the TiledMMA's tile in each of M, N, K
STAGES = range(2, 7)
GMMA_N = range(8, 257, 8)  # wgmma's N for 16-bit, tf32 and fp8 (PTX ISA 9.7.15.5.2)
UNIVERSAL = "UniversalCopy<uint32_t>"
LDSM = {"K": ("SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x1_LDSM_N"),
        "MN": ("SM75_U16x8_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x2_LDSM_T")}  # fmt: skip


def ldmatrix_atoms(atom: str, which: str, major: str) -> tuple[str, ...]:
    """The ldmatrix copy atoms of ``major`` ('K' or 'MN') that CuTe builds over operand
    ``which`` of ``atom``'s TiledMMA: those whose matrices split one atom's registers. A
    wider one fails ``make_tiled_copy_A/B``'s static assertion "TiledCopy uses too few vals
    for selected CopyAtom" (witness: tests/cute_cpp/test_ldmatrix_vals.py).

    >>> ldmatrix_atoms("SM80_16x8x16_F32F16F16F32_TN", "B", "MN")
    ('SM75_U16x4_LDSM_T', 'SM75_U16x2_LDSM_T')
    """
    op = make_mma_atom(atom).op
    regs = op.a.count if which == "A" else op.b.count
    return tuple(n for n in LDSM[major] if regs % ldmatrix_num(n) == 0)


def _sm80_classes() -> dict[str, list[str]]:
    """The sm80 family's atoms (the design layer's own table) by kind."""
    out: dict[str, list[str]] = defaultdict(list)
    for name, dtype in SM80_ATOMS.items():
        if name.startswith("SM70_"):
            kind = "sm70 quadpair"
        elif dtype in ("f16", "bf16"):
            kind = "16-bit F16-acc" if "F16F16F16F16" in name else "16-bit"
        else:
            kind = {"tf32": "tf32", "s8": "int8"}.get(dtype, "fp8")
        out[f"sm80/{kind}"].append(name)
    return dict(out)


SM80_CLASSES = _sm80_classes()
# sm90: kernel dtype -> (SS name pattern, RS allowed, 16-bit majors free)
SM90_KINDS = {dt: (pat, dt in ("bf16", "f16", "tf32"), free)
              for dt, (pat, _, free) in ATOMS_SM90.items()} | {
    "f16acc": ("SM90_64x{n}x16_F16F16F16_SS", True, True)}  # fmt: skip


def _factor_pairs(n: int) -> list[tuple[int, int]]:
    return [(m, n // m) for m in range(1, n + 1) if n % m == 0]


def perm_m(atom_m: int, wm: int) -> Layout:
    """The seeds' kind of M permutation: the 8-row halves of ``wm`` atoms interleaved."""
    return Layout((8, atom_m // 8, wm), (1, 8 * wm, 8))


# ---------------------------------------------------------------------------- the generator
def draw_params(rng: random.Random, any_wg_layout: bool = False) -> dict:
    """One design's draw parameters (JSON data; :func:`build` makes the design)."""
    return (_draw_sm80 if rng.random() < 0.5 else _draw_sm90)(rng, any_wg_layout)


def _draw_sm80(rng: random.Random, _any: bool) -> dict:
    label = rng.choice(sorted(SM80_CLASSES))
    atom = rng.choice(SM80_CLASSES[label])
    dtype = SM80_ATOMS[atom]
    quad = atom.startswith("SM70_")
    warps = rng.randint(1, 8)
    # a quadpair atom is 8 threads: whole warps are 4k atoms (k = 1..8), or the lone atom
    atoms = (1 if rng.random() < 1 / 9 else 4 * warps) if quad else warps
    wm, wn = rng.choice(_factor_pairs(atoms))
    p = {"family": "sm80", "label": label, "atom": atom, "layout": [wm, wn],
         "order": rng.choice("MN"), "perm": (not quad and wm > 1 and rng.random() < 0.25),
         "mult": [rng.choice(MULTIPLES) for _ in range(3)], "stages": rng.choice(STAGES)}  # fmt: skip
    sixteen = ELEM_BYTES[dtype] == 2
    majors = [rng.choice("KM"), rng.choice("KN")] if sixteen else ["K", "K"]
    p["majors"], p["smem"], p["copy"] = majors, [None, None], [None, None]
    try:
        tile = _cute_objects(p)[1]
    except CutemmaError:
        return p  # build() raises it again: counted as a refusal of the TiledMMA
    for i, ext in enumerate(tile[:2]):
        if rng.random() < 0.5:
            width = rng.choice([32, 64, 128])
            major = "K" if majors[i] == "K" else "MN"
            try:  # a width the stage cannot take: no layout to give (the design picks)
                smem_layout(ext, tile[2], major, width, ELEM_BYTES[dtype])
                p["smem"][i] = width
            except CutemmaError:
                pass
        r = rng.random()
        if r < 0.25 and not quad:  # the ldmatrix atoms of the operand's major
            p["copy"][i] = rng.choice(
                ldmatrix_atoms(atom, "AB"[i], "K" if majors[i] == "K" else "MN")
            )
        elif r < 0.45:
            p["copy"][i] = UNIVERSAL
    return p


def _draw_sm90(rng: random.Random, any_wg_layout: bool) -> dict:
    kind = rng.choice(sorted(SM90_KINDS))
    pattern, rs_ok, free = SM90_KINDS[kind]
    rs = rs_ok and rng.random() < 0.5
    n = rng.choice(GMMA_N)
    name = pattern.format(n=n).replace("_SS", "_RS" if rs else "_SS")
    if free:  # CuTe: an RS atom's A comes from registers, K-major
        a = "K" if rs else rng.choice(["K", "MN"])
        name += f"<{a},{rng.choice(['K', 'MN'])}>"
    schedule = rng.choice(SCHEDULES)
    # CUTLASS's pingpong kernel gives each consumer warpgroup its own tile (a one-warpgroup
    # TiledMMA); 'alternate' is warpgroups taking turns, so it has 2 or 3 of them
    wg = {"pingpong": 1, "alternate": rng.randint(2, 3)}.get(schedule, rng.randint(1, 3))
    layout = rng.choice([[wg, 1], [1, wg]]) if any_wg_layout else [wg, 1]
    label = f"sm90/{'RS' if rs else 'SS'}/{kind}"
    return {"family": "sm90", "label": label, "atom": name, "layout": layout,
            "mult": [rng.choice(MULTIPLES) for _ in range(3)], "stages": rng.choice(STAGES),
            "schedule": schedule, "majors": _gmma_majors(name, rng)}  # fmt: skip


def _gmma_majors(name: str, rng: random.Random) -> list[str]:
    """The call's majors: the atom's where it names MN, else drawn for 16-bit (the design
    leaves a K,K 16-bit atom's operands to the call), else K."""
    m = re.search(r"<(\w+),(\w+)>", name)
    if not m:
        return ["K", "K"]
    a, b = m.groups()
    if (a, b) == ("K", "K"):
        return [rng.choice("KM"), rng.choice("KN")]
    return ["M" if a == "MN" else "K", "N" if b == "MN" else "K"]


def _tiled(p: dict) -> Any:
    wm, wn = p["layout"]
    if p["family"] == "sm90":
        return make_tiled_mma(p["atom"], (wm, wn, 1))
    order = (1, wm, 0) if p.get("order", "M") == "M" else (wn, 1, 0)
    perm = None
    if p.get("perm"):
        perm = perm_m(int(re.search(r"_(\d+)x", p["atom"]).group(1)), wm)
    return make_tiled_mma(p["atom"], Layout((wm, wn, 1), order), (perm, None, None))


def _tile(tiled: Any, mult: list[int]) -> tuple[int, int, int]:
    return tuple(t * r for t, r in zip(tiled.tile_size_mnk, mult))


def _cute_objects(p: dict) -> tuple[Any, tuple[int, int, int]]:
    """The draw's TiledMMA and tile, its thread layout evaluated: a CutemmaError here is
    CuTe's own algebra refusing the object (e.g. the stride divisibility condition of an
    atom layout over the quadpair's threads), so the draw is no design at all."""
    tiled = _tiled(p)
    tiled.size  # noqa: B018 - the thread layout: CuTe's logical_product of the atom layout
    return tiled, _tile(tiled, p["mult"])


def build(p: dict) -> GemmDesign:
    """The GemmDesign of draw parameters ``p`` (a CutemmaError where CuTe's objects refuse).

    >>> d = build({"family": "sm80", "atom": "SM80_16x8x16_F32F16F16F32_TN", "layout": [2, 2],
    ...            "mult": [2, 4, 2], "stages": 3, "majors": ["K", "N"], "smem": [None, 64],
    ...            "copy": [None, None]})
    >>> d.tile, d.major("B")
    ((64, 64, 32), 'N')
    """
    tiled, tile = _cute_objects(p)
    if p["family"] == "sm90":
        return GemmDesign(tiled, tile, stages=p["stages"], schedule=p["schedule"])
    eb = ELEM_BYTES[SM80_ATOMS[p["atom"]]]
    kw: dict[str, Any] = {}
    for i, (which, ext) in enumerate((("a", tile[0]), ("b", tile[1]))):
        if p["smem"][i] is not None:
            major = "K" if p["majors"][i] == "K" else "MN"
            kw[f"smem_{which}"] = smem_layout(ext, tile[2], major, p["smem"][i], eb)
        if p["copy"][i] is not None:
            kw[f"copy_{which}"] = p["copy"][i]
    return GemmDesign(tiled, tile, stages=p["stages"], **kw)


# ---------------------------------------------------------------------------- the classifier
def _rule_of(message: str) -> str:
    """The rule a refusal's message names ('rule NAME: ...'), else 'unnamed'."""
    m = re.search(r"rule ([\w.]+):", message)
    return m.group(1) if m else "unnamed"


def _message(design: GemmDesign, rule: str) -> str:
    """The first message of ``rule`` in ``check``'s refusal of ``design``."""
    try:
        checked(design, ARCH)
    except DesignError as exc:
        text = str(exc)
        start = text.find(f"rule {rule}:")
        if start >= 0:
            end = text.find("; rule ", start + 1)
            return text[start : end if end > 0 else None]
        return text
    return ""


# A config refusal that smem_limit reports ("its shared memory cannot be sized (...)") is a
# limit where it names one: the shared-memory budget, or the registers a block of 512 threads
# enters with (65536 / 512 = 128 each, too few for a 256-column wgmma)
CONFIG_LIMITS = (("bytes of shared memory", "smem_limit"), ("registers each", "registers"))


def _limit(design: GemmDesign) -> tuple[str, str] | None:
    """(rule, message) of the first hardware limit the design is past, evaluated even where
    an earlier rule stops the table (a design past a limit is outside the space)."""
    for rule in RULES:
        if rule.name not in LIMIT_RULES:
            continue
        try:
            why = rule.check(design, ARCH)
        except CutemmaError:
            continue  # not sizeable: the other rules name what is wrong
        if not why:
            continue
        if "cannot be sized" not in why:
            return rule.name, f"rule {rule.name}: {why}"
        for words, limit in CONFIG_LIMITS:
            if words in why:
                return limit, f"rule {rule.name}: {why}"
    return None


def classify(p: dict) -> dict:
    """{'status', 'rule', 'message'} of a draw; status 'accepted', 'limit' (past a hardware
    limit), 'refused' (by another rule), 'cute' (CuTe's objects refuse it: no design), or
    'bare' (an exception that is no CutemmaError)."""
    try:
        _cute_objects(p)
    except CutemmaError as exc:
        return {"status": "cute", "rule": type(exc).__name__, "message": str(exc)}
    except Exception as exc:  # noqa: BLE001 - what is counted: must be none
        return {"status": "bare", "rule": type(exc).__name__, "message": f"tiled: {exc!r}"}
    try:
        d = build(p)
    except CutemmaError as exc:  # CuTe's objects (or the design's fields) refuse the draw
        msg = f"{type(exc).__name__}: {exc}"
        return {"status": "refused", "rule": f"build:{_rule_of(str(exc))}", "message": msg}
    except Exception as exc:  # noqa: BLE001 - what is counted: must be none
        return {"status": "bare", "rule": type(exc).__name__, "message": f"build: {exc!r}"}
    try:
        names = failed_rules(d, ARCH)
        if not names:
            return {"status": "accepted", "rule": None, "message": "", "name": d.name}
        limit = _limit(d)
        if limit:
            return {"status": "limit", "rule": limit[0], "message": limit[1]}
        return {"status": "refused", "rule": names[0], "message": _message(d, names[0])}
    except CutemmaError as exc:  # a rule's own refusal escaping the table
        return {"status": "refused", "rule": f"raised:{_rule_of(str(exc))}",
                "message": f"{type(exc).__name__}: {exc}"}  # fmt: skip
    except Exception as exc:  # noqa: BLE001
        return {"status": "bare", "rule": type(exc).__name__, "message": f"rules: {exc!r}"}


def _pattern(message: str) -> str:
    """A refusal's message with its numbers and names blanked: its kind."""
    text = re.sub(r"\bd_\w+", "D", message.split("; need ")[0])
    text = re.sub(r"with A \w+-major, B \w+-major: ", "", text)  # one kind for every major
    return re.sub(r"\d+", "#", text)[:160]


def _classify_quiet(p: dict) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SM70 atoms on sm_90a: a software routine
        return classify(p)


def measure(
    draws: int, seed: int, any_wg_layout: bool = False, stop_after: int = 0, processes: int = 1
) -> dict:
    """Draw and classify ``draws`` designs (stop early after ``stop_after`` accepted ones,
    0: never) in ``processes`` forked workers; the report as the JSON holds it.

    >>> r = measure(4, seed=7)
    >>> r["draws"], sum(r["counts"].values())
    (4, 4)
    """
    rng = random.Random(seed)
    counts: Counter = Counter()
    fams: dict[str, Counter] = defaultdict(Counter)
    rules: dict[str, dict[str, dict]] = {"limit": {}, "refused": {}, "cute": {}, "bare": {}}
    kinds: dict[str, Counter] = defaultdict(Counter)
    accepted = []
    t0 = time.perf_counter()
    params = [draw_params(rng, any_wg_layout) for _ in range(draws)]
    if processes > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(processes) as pool:
            results = pool.map(_classify_quiet, params, chunksize=4)
    else:
        results = map(_classify_quiet, params)
    for i, (p, c) in enumerate(zip(params, results)):
        counts[c["status"]] += 1
        fams[p["label"]][c["status"]] += 1
        if c["status"] == "accepted":
            accepted.append(p | {"draw": i, "name": c["name"]})
            if stop_after and len(accepted) >= stop_after:
                break
            continue
        row = rules[c["status"]].setdefault(c["rule"], {"count": 0, "example": None})
        row["count"] += 1
        if row["example"] is None:
            row["example"] = {"message": c["message"][:600], "draw": p}
        if c["status"] == "refused":
            kinds[c["rule"]][_pattern(c["message"])] += 1
    for key in rules:
        rules[key] = dict(sorted(rules[key].items(), key=lambda kv: -kv[1]["count"]))
    for rule, row in rules["refused"].items():
        row["kinds"] = dict(kinds[rule].most_common(12))
    within = counts["accepted"] + counts["refused"] + counts["bare"]
    fam = {
        k: {**dict(v), "share": _share(v["accepted"], v["accepted"] + v["refused"] + v["bare"])}
        for k, v in sorted(fams.items())
    }
    return {
        "seed": seed, "arch": ARCH, "draws": sum(counts.values()), "any_wg_layout": any_wg_layout,
        "limit_rules": list(LIMIT_RULES), "counts": dict(counts), "within_limits": within,
        "accepted_share": _share(counts["accepted"], within),
        "accepted_share_counting_cute": _share(counts["accepted"], within + counts["cute"]),
        "per_family": fam, "refused_by_rule": rules["refused"], "limit_by_rule": rules["limit"],
        "cute_refusals": rules["cute"], "bare_exceptions": rules["bare"],
        "seconds": round(time.perf_counter() - t0, 1), "accepted": accepted,
    }  # fmt: skip


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


# ---------------------------------------------------------------------------- the GPU cases
TORCH = {"f16": "float16", "bf16": "bfloat16", "tf32": "float32", "s8": "int8",
         "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}  # fmt: skip


def _dtypes(atom: str) -> tuple[str, str]:
    """(A's, B's) kernel dtype of a design's atom (mixed fp8: 'e4m3_e5m2')."""
    from cutemma.kernels.design import atom_family

    dt = atom_family(atom)[1]
    return tuple(dt.split("_")) if "_" in dt else (dt, dt)


def _dim(rng: random.Random, t: int, align: int, partial: bool, loose: bool = False) -> int:
    """A problem extent of up to 3 tiles ``t``: a multiple of ``align`` (a contiguous mode's
    16-byte rule), and where ``partial`` not a multiple of ``t``. Where every multiple of
    ``align`` is one of ``t``, ``loose`` drops the alignment (sm80 reads unaligned operands
    with narrower loads), else the extent stays aligned and whole.

    >>> rng = random.Random(0)
    >>> all(_dim(rng, 64, 8, True) % 64 and _dim(rng, 64, 8, True) % 8 == 0 for _ in range(50))
    True
    >>> _dim(rng, 4, 8, True, loose=True) % 4 != 0
    True
    """
    if partial and loose and align % t == 0:
        align = 1
    hi = max(1, 3 * t // align)
    x = align
    for _ in range(64):
        x = align * rng.randint(1, hi)
        if not partial or x % t or align % t == 0:
            return x
    return x


def cases(p: dict, index: int, seed: int) -> list[dict]:
    """The two runs of accepted design ``p`` (the ``index``-th): shapes, majors, dtypes,
    operand range, output dtype; the first has partial tiles in M, N and K."""
    d = build(p)
    rng = random.Random(seed * 1_000_003 + index)
    majors = [d.major("A") or p["majors"][0], d.major("B") or p["majors"][1]]
    ta, tb = _dtypes(d.atom_name)
    align = 16 // ELEM_BYTES[ta]  # TMA: a 16-byte leading stride (cp.async's vector too)
    bm, bn, bk = d.tile
    # f16 accumulators: |partial sums| <= K <= 2048 stays exact with operands in {-1, 0, 1}
    f16_acc = "F16F16F16" in d.atom_name
    out = []
    for partial in (True, False):
        loose = d.family == "sm80"
        m = _dim(rng, bm, align if majors[0] == "M" else 1, partial, loose)
        n = _dim(rng, bn, align if majors[1] == "N" else 1, partial, loose)
        k = _dim(rng, bk, align, partial, loose)
        if f16_acc:
            k = min(k, 2048 - 2048 % align)
        out.append({"shape": [m, n, k], "majors": majors, "a": TORCH[ta], "b": TORCH[tb],
                    "out": "int32" if ta == "s8" else "float32", "range": 1 if f16_acc else 3,
                    "partial": partial})  # fmt: skip
    return out


def run_case(d: GemmDesign, case: dict, gen: Any) -> dict:
    """One case on the GPU: 'exact', 'wrong', 'launch' (LaunchError), 'refused' (another
    CutemmaError), 'bare' (anything else)."""
    import torch

    import cutemma

    m, n, k = case["shape"]
    r = case["range"]
    try:
        a = torch.randint(-r, r + 1, (m, k), generator=gen, device="cuda").double()
        b = torch.randint(-r, r + 1, (k, n), generator=gen, device="cuda").double()
        A = a.t().contiguous().t() if case["majors"][0] == "M" else a.contiguous()
        B = b.contiguous() if case["majors"][1] == "N" else b.t().contiguous().t()
        # through float32: float64 -> float8 has no direct conversion in every torch; .to keeps
        # the strides (the majors)
        A = A.to(torch.float32).to(getattr(torch, case["a"]))
        B = B.to(torch.float32).to(getattr(torch, case["b"]))
        D = torch.full((m, n), 7777, dtype=getattr(torch, case["out"]), device="cuda")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SM70 atoms on sm_90a: a software routine
            cutemma.gemm(A, B, design=d, out=D)
        torch.cuda.synchronize()
        err = float((D.double() - a @ b).abs().max())
        return {"result": "exact" if err == 0 else "wrong", "max_abs_err": err}
    except LaunchError as exc:
        return {"result": "launch", "error": str(exc)[:400]}
    except CutemmaError as exc:
        return {"result": "refused", "error": f"{type(exc).__name__}: {exc}"[:400]}
    except Exception as exc:  # noqa: BLE001 - counted; a CUDA fault ends the shard
        return {"result": "bare", "error": f"{type(exc).__name__}: {exc}"[:400]}


def _context_alive() -> bool:
    """Whether this process's CUDA context still runs work (a faulting kernel kills it)."""
    import torch

    try:
        torch.ones(1, device="cuda").add_(1)
        torch.cuda.synchronize()
        return True
    except Exception:  # noqa: BLE001 - any failure here means the context is gone
        return False


def shard_main(listfile: str, indices: list[int], rows_path: str, seed: int) -> int:
    """Run the accepted designs ``indices`` of ``listfile``, a JSON line per event; exit 3
    when a case leaves the CUDA context dead (the parent restarts past that design)."""
    import torch

    designs = json.load(open(listfile))
    gen = torch.Generator(device="cuda").manual_seed(seed)
    with open(rows_path, "a") as f:
        for i in indices:
            print(json.dumps({"i": i, "event": "start", "t": time.time()}), file=f, flush=True)
            p = designs[i]
            try:
                d, runs = build(p), cases(p, i, seed)
            except Exception as exc:  # noqa: BLE001 - accepted on the CPU: counted if not
                row = {"i": i, "case": 0, "name": p["name"], "label": p["label"]}
                print(json.dumps(row | {"result": "bare", "error": repr(exc)}), file=f, flush=True)
                continue
            for j, case in enumerate(runs):
                row = {"i": i, "case": j, "name": p["name"], "label": p["label"], **case}
                row |= run_case(d, case, gen)
                print(json.dumps(row), file=f, flush=True)
                if row["result"] not in ("exact", "wrong") and not _context_alive():
                    return 3
            print(json.dumps({"i": i, "event": "done"}), file=f, flush=True)
    return 0


def gpu_main(designs: list[dict], out: str, seed: int, shards: int, budget: float) -> dict:
    """Every design through the GPU in ``shards`` processes; restarts a shard that dies
    or spends 150 s on one design, past that design."""
    work = Path(out + ".work")
    work.mkdir(exist_ok=True)
    listfile = str(work / "designs.json")
    json.dump(designs, open(listfile, "w"))
    pending = list(range(len(designs)))
    procs: dict[int, tuple] = {}
    t0, serial, lost = time.time(), 0, {}

    def events(path: str) -> list[dict]:
        try:
            lines = open(path).read().splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:  # the line a shard is writing now
                pass
        return out

    def launch(chunk: list[int]) -> None:
        nonlocal serial
        path = str(work / f"rows{serial}.jsonl")
        cmd = [sys.executable, __file__, "--shard-run", listfile, path, f"--seed={seed}",
               "--indices=" + ",".join(map(str, chunk))]  # fmt: skip
        procs[serial] = (subprocess.Popen(cmd), chunk, path)
        serial += 1

    for s in range(shards):
        chunk = pending[s::shards]
        if chunk:
            launch(chunk)
    while procs:
        time.sleep(2)
        for key, (proc, chunk, path) in list(procs.items()):
            ev = events(path)
            started = [e for e in ev if e.get("event") == "start"]
            finished = {e["i"] for e in ev if e.get("event") == "done"}
            hung = (
                started
                and started[-1]["i"] not in finished
                and time.time() - started[-1]["t"] > 150
            )
            over = time.time() - t0 > budget
            if proc.poll() is None and not hung and not over:
                continue
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if started and started[-1]["i"] not in finished:
                lost[started[-1]["i"]] = "hung" if hung else ("budget" if over else "died")
            del procs[key]
            rest = [i for i in chunk if i not in finished and i not in lost]
            if rest and started and not over:  # past the design it stopped on
                launch(rest)
            else:  # out of time, or a shard that died before its first design
                why = "budget" if over else f"shard exited {proc.returncode} before a design"
                for i in rest:
                    lost.setdefault(i, why)
    rows = [e for s in range(serial) for e in events(str(work / f"rows{s}.jsonl")) if "case" in e]
    by = Counter(r["result"] for r in rows)
    by_label: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, str] = {}
    for r in rows:
        by_label[r["label"]][r["result"]] += 1
        if r["result"] != "exact":
            examples.setdefault(r["result"], f"{r['name']} {r['shape']}: {r.get('error', '')}"
                                f"{r.get('max_abs_err', '')}")  # fmt: skip
    designs_exact = {r["i"] for r in rows} - {r["i"] for r in rows if r["result"] != "exact"}
    return {"device_rows": rows, "gpu_counts": dict(by), "designs_run": len({r["i"] for r in rows}),
            "designs_all_exact": len(designs_exact), "gpu_examples": examples,
            "gpu_by_label": {k: dict(v) for k, v in sorted(by_label.items())},
            "designs_lost": {str(k): v for k, v in sorted(lost.items())},
            "gpu_seconds": round(time.time() - t0, 1)}  # fmt: skip


# ---------------------------------------------------------------------------- the script
def _opts(argv: list[str]) -> tuple[dict, list[str]]:
    opts: dict[str, str] = {}
    args = []
    it = iter(argv)
    for a in it:
        if a.startswith("--"):
            key, _, val = a[2:].partition("=")
            if not val and key in ("out", "draws", "seed", "from", "shards", "budget", "procs"):
                val = next(it, "")
            opts[key] = val or "1"
        else:
            args.append(a)
    return opts, args


def main(argv: list[str]) -> int:
    opts, args = _opts(argv)
    seed = int(opts["seed"]) if "seed" in opts else random.SystemRandom().randrange(2**31)
    if "shard-run" in opts:
        listfile, rows = args[0], args[1]
        return shard_main(listfile, [int(x) for x in opts["indices"].split(",")], rows, seed)
    limit = int(args[0]) if args else 0
    gpu, dry = "gpu" in opts, "dry" in opts
    if "from" in opts:
        report = json.load(open(opts["from"]))
        seed = report["seed"]
    else:
        # about 1 draw in 12 is accepted: enough draws for N accepted ones, stopping there
        draws = int(opts.get("draws", max(2000, 20 * limit) if gpu or dry else 2000))
        procs = int(opts.get("procs", min(16, os.cpu_count() or 1)))
        report = measure(draws, seed, "any-wg-layout" in opts, limit if gpu or dry else 0, procs)
    designs = report["accepted"][: limit or None] if gpu or dry else []
    if dry:
        report["cases"] = [c | {"i": i, "name": p["name"]} for i, p in enumerate(designs)
                           for c in cases(p, i, seed)]  # fmt: skip
        report["case_counts"] = {"designs": len(designs), "cases": len(report["cases"]),
                                 "partial": sum(c["partial"] for c in report["cases"])}  # fmt: skip
    if gpu:
        shards = int(opts.get("shards", max(1, min(12, (os.cpu_count() or 2) - 2))))
        report |= gpu_main(designs, opts.get("out", "design_acceptance.json"), seed, shards,
                           float(opts.get("budget", 330)))  # fmt: skip
    report["commit_digest"] = _digest()
    report["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if "out" in opts:
        json.dump(report, open(opts["out"], "w"), indent=1)
        print(json.dumps(summary(report), indent=1))
    else:
        print(json.dumps(report, indent=1))
    bad = report["counts"].get("bare", 0) + report.get("gpu_counts", {}).get("bare", 0)
    wrong = report.get("gpu_counts", {}).get("wrong", 0)
    crashed = [v for v in report.get("designs_lost", {}).values() if v in ("died", "hung")]
    return 1 if bad or wrong or crashed else 0


def summary(report: dict) -> dict:
    """The figures of a report without its lists (what the script prints)."""
    keys = ("seed", "draws", "counts", "within_limits", "accepted_share",
            "accepted_share_counting_cute", "seconds", "per_family", "case_counts",
            "gpu_counts", "designs_run", "designs_all_exact", "designs_lost", "gpu_examples",
            "gpu_by_label", "gpu_seconds")  # fmt: skip
    out = {k: report[k] for k in keys if k in report}
    for key in ("refused_by_rule", "limit_by_rule", "cute_refusals", "bare_exceptions"):
        out[key] = {rule: [row["count"], row["example"]["message"][:300]]
                    for rule, row in report.get(key, {}).items()}  # fmt: skip
    return out


def _digest() -> str | None:
    try:
        sys.path.insert(0, str(Path(__file__).parent))
        from provenance import tree_digest

        return tree_digest(Path(__file__).parents[1])
    except Exception:  # noqa: BLE001 - provenance is a note, not the result
        return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
