"""``cutemma verify --copy``: every probed copy atom compiled, its SASS checked, and run on a GPU.

For each probe (:mod:`cutemma.cuda.probe_copy`, :mod:`cutemma.cuda.probe_copy_tma`): compile
with NVRTC, require the SASS kind the instruction must become (LDSM, STSM, LDGSTS, SHFL,
UTMALDG, UTMASTG, UTMAREDG, UBLKCP) and no local memory; with ``hardware``, launch it on the
GPU and compare every output word with the CPU emulation of the atom
(:meth:`cutemma.copy.CopyAtom.move` fed through the atom's own layouts; for TMA,
:mod:`cutemma.emulate.tma` fed the same tensor-map arguments the driver encoded).

>>> r = verify_copy(["SM50_Shuffle_U32_2x2Trans_XOR4"], hardware=False)  # doctest: +SKIP
>>> r["results"][0]["compiled"], r["results"][0]["sass"]                  # doctest: +SKIP
(True, {'SHFL': 1})
"""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence

import numpy as np

from cutemma.cuda.probe_copy import CopyProbe, copy_probe, copy_probes
from cutemma.cuda.probe_copy_tma import TmaProbe, expected, probe_buffers, tma_probes


def _check_compiled(p: CopyProbe, arch: str | None = None) -> dict:
    """Compile for ``arch`` (default the probe's own: the oldest that has the instruction)."""
    from cutemma.cuda.compile import compile as nvrtc_compile
    from cutemma.cuda.sass import count_instructions, local_memory_use, sass

    arch = arch or p.arch
    out = {"name": p.name, "arch": arch, "expect_sass": p.sass_kind}
    try:
        cubin = nvrtc_compile(p.source, arch)
    except Exception as err:  # report, do not stop the sweep
        return {**out, "compiled": False, "why": str(err)[:400]}
    counts = count_instructions(sass(cubin))
    kinds = {k: v for k, v in counts.items() if k.split(".")[0] == p.sass_kind}
    lmem = local_memory_use(cubin)
    ok = bool(kinds) and lmem.loads == 0 and lmem.stores == 0
    why = None if ok else (f"no {p.sass_kind} in SASS" if not kinds else "local memory used")
    return {**out, "compiled": True, "sass": kinds, "sass_ok": ok, "why": why, "_cubin": cubin}


def _run(p: CopyProbe, cubin, device: int = 0) -> dict:
    import torch

    from cutemma.cuda.launch import load_kernel

    x = p.inputs()
    signed = {"uint16": np.int16, "uint32": np.int32}[p.in_dtype]
    dev = f"cuda:{device}"
    t_in = torch.from_numpy(x.view(signed).copy()).to(dev)
    t_out = torch.zeros(p.n_out, dtype=t_in.dtype, device=dev)
    load_kernel(cubin, p.kernel_name)(t_in, t_out, grid=1, block=p.threads)
    torch.cuda.synchronize(device)
    got = t_out.cpu().numpy().view(x.dtype)
    want = p.expect(x)
    return _verdict(got, want)


def _verdict(got: np.ndarray, want: np.ndarray) -> dict:
    """The result of one probe run: pass, the number of mismatches and the first few."""
    bad = np.flatnonzero(got != want)
    return {
        "ran": True,
        "pass": bad.size == 0,
        "mismatches": int(bad.size),
        "first_bad": [(int(i), int(got[i]), int(want[i])) for i in bad[:4]],
    }


def _run_tma(p: TmaProbe, cubin, device: int = 0) -> dict:
    """Launch a TMA / bulk probe on buffers from :func:`probe_buffers`; the tensor map is
    encoded by the driver for the global buffer and copied to the GPU."""
    import torch

    from cutemma.copy.tma import encode_tensor_map
    from cutemma.cuda.launch import load_kernel

    x, out0 = probe_buffers(p)
    dev = f"cuda:{device}"
    t_in = torch.from_numpy(x.copy()).to(dev)
    t_out = torch.from_numpy(out0.copy()).to(dev)
    raw = bytes(128)
    if not p.kind.startswith("BULK"):
        g = t_in if p.kind.startswith("LOAD") else t_out
        raw = encode_tensor_map(p.map_args(g.data_ptr()))
    t_map = torch.frombuffer(bytearray(raw), dtype=torch.uint8).to(dev)
    load_kernel(cubin, p.kernel_name)(t_in, t_out, t_map, grid=p.grid, block=p.threads)
    torch.cuda.synchronize(device)
    got = t_out.cpu().numpy()
    want = expected(p, x, out0)
    return _verdict(got, want)


def _probe_named(name: str):
    for p in tma_probes():
        if p.name == name or p.name.split(" ")[0] == name:
            return p
    return copy_probe(name)


def verify_copy(
    names: Sequence[str] | None = None, hardware: bool = False, sm100: bool = True
) -> dict:
    """Compile (and with ``hardware`` run) the copy probes; a JSON-ready report.

    Without ``names``, and with ``sm100``, every sm100 copy atom is also compiled for
    sm_100a and its SASS kind checked (:mod:`cutemma.cuda.probe_copy_sm100`; not run).
    """
    t0 = time.time()
    probes = [_probe_named(n) for n in names] if names else copy_probes() + tma_probes()
    results = []
    device = None
    if hardware:
        from cutemma.cuda.launch import device_arch, gpu_unavailable_reason

        reason = gpu_unavailable_reason()
        if reason:
            raise RuntimeError(f"--hardware: {reason}")
        device = device_arch(0)
    for p in probes:
        # a cubin runs only on its own major architecture: compile for the GPU present
        r = _check_compiled(p, device)
        cubin = r.pop("_cubin", None)
        if hardware and cubin is not None:
            try:
                run = _run_tma if isinstance(p, TmaProbe) else _run
                r.update(run(p, cubin))
            except Exception as err:
                r.update({"ran": False, "pass": False, "why": f"launch: {str(err)[:300]}"})
        r["ok"] = bool(r.get("sass_ok")) and (r.get("pass", True) if hardware else True)
        results.append(r)
    if sm100 and not names:
        from cutemma.cuda.probe_copy_sm100 import check_all

        results += check_all()
    return {
        "what": "cutemma verify --copy" + (" --hardware" if hardware else ""),
        "device": device,
        "host": platform.node(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "seconds": round(time.time() - t0, 1),
        "passed": sum(r["ok"] for r in results),
        "failed": sum(not r["ok"] for r in results),
        "results": results,
    }


def table(report: dict) -> str:
    """One line per probe and a total.

    >>> print(table({"results": [{"name": "X", "sass": {"SHFL": 1}, "ok": True}],
    ...              "passed": 1, "failed": 0, "seconds": 0.1}))
    X  SHFL=1  ok
    copy atoms: 1 pass, 0 fail (0.1 s)
    """
    rows = []
    compile_only = [r for r in report["results"] if r.get("compile_only")]
    for r in report["results"]:
        if r.get("compile_only") and r["ok"]:
            continue
        sass = " ".join(f"{k}={v}" for k, v in (r.get("sass") or {}).items()) or "-"
        state = "ok" if r["ok"] else f"FAIL {r.get('why') or r.get('first_bad')}"
        if r.get("ran"):
            state += " (ran)"
        rows.append(f"{r['name']}  {sass}  {state}")
    if compile_only:
        kinds: dict[str, int] = {}
        for r in compile_only:
            for k, v in (r.get("sass") or {}).items():
                kinds[k] = kinds.get(k, 0) + (v > 0)
        rows.append(
            f"sm100 (compile only, {compile_only[0]['arch']}): "
            f"{sum(r['ok'] for r in compile_only)} ok of {len(compile_only)}; "
            + " ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        )
    rows.append(
        f"copy atoms: {report['passed']} pass, {report['failed']} fail ({report['seconds']} s)"
    )
    return "\n".join(rows)
