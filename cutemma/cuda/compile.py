"""Compile CUDA C++ to a cubin with NVRTC (cuda-python), through the disk cache.

No nvcc is needed: NVRTC comes from the pip package ``nvidia-cuda-nvrtc`` and is
driven through ``cuda.bindings.nvrtc``. A cubin can be built for any target this
NVRTC knows (sm_90a, sm_100a, sm_120a included) on a machine without a GPU.

>>> cubin = compile('extern "C" __global__ void k(float* x) { x[0] = 1.0f; }', "sm_80")
>>> cubin.arch, cubin.data[:4]
('sm_80', b'\\x7fELF')
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import site
import sys
import threading
from dataclasses import dataclass, field
from functools import cache as _memoize
from pathlib import Path
from types import ModuleType

from cutemma.cuda import cache as disk
from cutemma.errors import CompileError

# What cutemma generates code for, and why each target: the 'a' targets unlock
# the architecture-specific instructions (wgmma, tcgen05, block-scaled mma).
TARGETS: dict[str, str] = {
    "sm_80": "Ampere: mma.sync (f16, bf16, tf32, int8, int4, f64), ldmatrix, cp.async",
    "sm_89": "Ada: sm_80 plus mma.sync with fp8 (e4m3, e5m2)",
    "sm_90a": "Hopper: wgmma.mma_async with shared-memory descriptors, TMA",
    "sm_100a": "Blackwell datacenter: tcgen05.mma with tensor memory",
    "sm_120a": "Blackwell GeForce: mma.sync with fp8/fp6/fp4 and block scaling",
}


def arch_target(major: int, minor: int) -> str:
    """The compile target of a GPU of compute capability (major, minor): from sm_90 on the
    'a' target, so wgmma / tcgen05 are available.

    >>> arch_target(9, 0), arch_target(8, 9)
    ('sm_90a', 'sm_89')
    """
    return f"sm_{major}{minor}" + ("a" if major >= 9 else "")


# Options every compile gets, before the caller's own (a caller's later option wins).
DEFAULT_OPTIONS: tuple[str, ...] = ("-std=c++17",)

_ARCH = re.compile(r"^sm_(\d+)([af]?)$")
# NVRTC front-end diagnostics look like: name.cu(12): error: ...
_FRONTEND_ERROR = r"^{name}\((\d+)\): (?:catastrophic )?error"
# ptxas diagnostics name a line of the generated PTX, not of the source.
_PTXAS_ERROR = re.compile(r"ptx input, line (\d+); error")
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')


@dataclass(frozen=True)
class Cubin:
    """A compiled kernel image and how it was made.

    >>> c = Cubin(b"\\x7fELF", "sm_80", "0" * 64)
    >>> c.arch, c.cache_hit
    ('sm_80', False)
    """

    data: bytes
    arch: str
    key: str
    log: str = ""
    cache_hit: bool = False
    source: str = field(default="", repr=False)
    options: tuple[str, ...] = ()


# --- finding NVRTC -------------------------------------------------------------------


def find_nvidia_files(pattern: str) -> list[Path]:
    """Files matching ``pattern`` inside the installed ``nvidia`` pip packages.

    The CUDA wheels put their files under ``site-packages/nvidia/<pkg>/`` (cu12:
    ``nvidia/cuda_nvrtc/lib``; cu13: ``nvidia/cu13/lib``), never on the loader
    or program path, so they must be searched for.

    >>> all(p.name.startswith("libnvrtc") for p in find_nvidia_files("*/lib/libnvrtc.so*"))
    True
    """
    roots = [*site.getsitepackages(), site.getusersitepackages(), *sys.path]
    found: list[Path] = []
    for root in dict.fromkeys(roots):
        for hit in sorted(glob.glob(os.path.join(root, "nvidia", pattern))):
            path = Path(hit)
            if path not in found:
                found.append(path)
    return found


def _preload_nvrtc() -> bool:
    """dlopen libnvrtc from the pip package so cuda.bindings finds it by soname.

    Newer cuda-bindings locate it themselves; older ones only ask the loader,
    which does not search site-packages.
    """
    for lib in find_nvidia_files("*/lib/libnvrtc.so*"):
        if "builtins" in lib.name or "alt" in lib.name:
            continue
        try:
            ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
            return True
        except OSError:
            continue
    return False


@_memoize
def _nvrtc() -> ModuleType:
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise CompileError(
            f"cannot import cuda.bindings.nvrtc ({exc}); install the cuda extra: "
            "pip install 'cutemma[cuda]' (cuda-bindings and nvidia-cuda-nvrtc)"
        ) from exc
    try:
        nvrtc.nvrtcVersion()
    except Exception:
        if not _preload_nvrtc():
            raise CompileError(
                "libnvrtc could not be loaded: it is neither on the loader path nor in an "
                "installed nvidia-cuda-nvrtc pip package; pip install nvidia-cuda-nvrtc"
            ) from None
        nvrtc.nvrtcVersion()
    return nvrtc


def unavailable_reason() -> str | None:
    """Why NVRTC cannot be used here, or None when it can (for skipping tests).

    >>> unavailable_reason() is None or isinstance(unavailable_reason(), str)
    True
    """
    try:
        _nvrtc()
    except CompileError as exc:
        return str(exc)
    return None


def _check(result: tuple, what: str) -> tuple:
    """Unwrap a cuda.bindings (status, values...) tuple; raise on a bad status."""
    status, *values = result
    if int(status) != 0:
        raise CompileError(f"{what} failed: {status!r}")
    return tuple(values)


def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC in use; part of every cache key.

    >>> nvrtc_version() >= (12, 0)
    True
    """
    major, minor = _check(_nvrtc().nvrtcVersion(), "nvrtcVersion")
    return (int(major), int(minor))


@_memoize
@_memoize
def nvrtc_version_hint() -> tuple[int, int] | None:
    """(major, minor) of the nvidia-cuda-nvrtc pip package, read from its metadata without
    loading the library; None when no such package is installed.

    A cubin cached under this version was compiled by an NVRTC of this version, so
    :func:`compile` may return it without loading NVRTC to ask.

    >>> v = nvrtc_version_hint()
    >>> v is None or v >= (12, 0)
    True
    """
    import sys
    from pathlib import Path

    # the dist-info folder's name holds the version: a glob per path entry is ~1 ms, while
    # importlib.metadata scans every installed distribution (~100 ms in a large env)
    for entry in sys.path:
        for pattern in ("nvidia_cuda_nvrtc-*.dist-info", "nvidia_cuda_nvrtc_cu1?-*.dist-info"):
            for info in Path(entry or ".").glob(pattern):
                try:
                    major, minor = info.name.split("-")[1].split(".")[:2]
                    return int(major), int(minor)
                except (IndexError, ValueError):
                    continue
    return None


# The PTX ISA version each CUDA 13 NVRTC reads: 13.m shipped PTX ISA 9.m (CUDA and PTX
# ISA release notes). CUDA 12 NVRTCs read 8.x, below every 9.x an Operation may need.
_PTX_ISA_MAJOR = {12: 8, 13: 9}


def ptx_isa_version() -> tuple[int, int]:
    """The newest PTX ISA version this NVRTC compiles, as (major, minor).

    >>> ptx_isa_version() >= (9, 0)
    True
    """
    major, minor = nvrtc_version()
    if major not in _PTX_ISA_MAJOR:
        return (99, 0) if major > max(_PTX_ISA_MAJOR) else (0, 0)
    return (_PTX_ISA_MAJOR[major], minor)


def supported_archs() -> tuple[int, ...]:
    """The compute capabilities (as 80, 90, 100 ...) this NVRTC can compile for.

    >>> 80 in supported_archs()
    True
    """
    (archs,) = _check(_nvrtc().nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs")
    return tuple(int(a) for a in archs)


def check_arch(arch: str) -> str:
    """Return ``arch`` if NVRTC here can build it, else raise naming what it can.

    >>> check_arch("sm_90a")
    'sm_90a'
    """
    match = _ARCH.match(arch)
    known = supported_archs()
    if match is None or int(match.group(1)) not in known:
        names = ", ".join(f"sm_{a}" for a in known)
        v = ".".join(map(str, nvrtc_version()))
        raise CompileError(
            f"cannot compile for arch={arch!r}: NVRTC {v} builds sm_NN, sm_NNa or sm_NNf for "
            f"{names} (cutemma targets {', '.join(TARGETS)}); an instruction of an older "
            f"architecture (sm70, sm75) still runs on a newer one, so compile it for sm_80"
        )
    return arch


# --- compiling -----------------------------------------------------------------------


def _program_log(nvrtc: ModuleType, prog) -> str:
    (size,) = _check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
    # NVRTC writes into the buffer: a bytearray, never a bytes object (b" " * 1 is the
    # interpreter's one shared b" ", which an empty log would turn into b"\x00")
    buf = bytearray(size)
    _check(nvrtc.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
    return bytes(buf).rstrip(b"\x00").decode(errors="replace").strip()


def _run_nvrtc(
    source: str, name: str, options: tuple[str, ...], ptx: bool
) -> tuple[bool, bytes, str]:
    """One NVRTC compile: (succeeded, cubin or PTX bytes, log)."""
    nvrtc = _nvrtc()
    (prog,) = _check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []), "create")
    try:
        opts = [o.encode() for o in options]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = _program_log(nvrtc, prog)
        if int(status) != 0:
            return False, b"", log
        size_fn, get_fn = (
            (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
            if ptx
            else (nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
        )
        (size,) = _check(size_fn(prog), "get output size")
        buf = bytearray(size)  # written by NVRTC (see _program_log)
        _check(get_fn(prog, buf), "get output")
        return True, bytes(buf).rstrip(b"\x00") if ptx else bytes(buf), log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def numbered_lines(source: str, line: int, context: int = 3) -> str:
    """Source lines ``line-context .. line+context``, numbered, ``line`` marked with >.

    >>> print(numbered_lines("a\\nb\\nc\\nd", 2, context=1))
      1 | a
    > 2 | b
      3 | c
    """
    lines = source.splitlines()
    lo, hi = max(1, line - context), min(len(lines), line + context)
    width = len(str(hi))
    return "\n".join(
        f"{'>' if n == line else ' '} {n:>{width}} | {lines[n - 1]}" for n in range(lo, hi + 1)
    )


def _ptx_line_to_source(ptx: str, ptx_line: int, name: str) -> int | None:
    """The source line a PTX line came from, by the last ``.loc`` before it."""
    lines = ptx.splitlines()
    files = {m.group(1) for m in map(_PTX_FILE.match, lines) if m and m.group(2).endswith(name)}
    for text in reversed(lines[: ptx_line - 1]):
        loc = _PTX_LOC.match(text)
        if loc and (not files or loc.group(1) in files):
            return int(loc.group(2))
    return None


def _error_lines(source: str, name: str, options: tuple[str, ...], log: str) -> tuple[int, str]:
    """(source line or 0, extra text) for the first error in an NVRTC log.

    A front-end error names the source line itself. A ptxas error (bad inline
    asm) names a PTX line; compiling again with -lineinfo, to PTX and to cubin,
    maps it back to the source line through the PTX ``.loc`` directives.
    """
    front = re.search(_FRONTEND_ERROR.format(name=re.escape(name)), log, re.MULTILINE)
    if front:
        return int(front.group(1)), ""
    if not _PTXAS_ERROR.search(log):
        return 0, ""
    traced = tuple(o for o in options if o != "-lineinfo") + ("-lineinfo",)
    _, _, traced_log = _run_nvrtc(source, name, traced, ptx=False)
    hit = _PTXAS_ERROR.search(traced_log)
    virtual = tuple(re.sub(r"=sm_", "=compute_", o) for o in traced)
    ok, ptx, _ = _run_nvrtc(source, name, virtual, ptx=True)
    if not (hit and ok):
        return 0, ""
    ptx_text = ptx.decode(errors="replace")
    ptx_line = int(hit.group(1))
    ptx_lines = ptx_text.splitlines()
    shown = ptx_lines[ptx_line - 1].strip() if ptx_line <= len(ptx_lines) else "?"
    return _ptx_line_to_source(ptx_text, ptx_line, name) or 0, f"PTX line {ptx_line}: {shown}"


def _compile_error(source: str, name: str, options: tuple[str, ...], log: str) -> CompileError:
    line, extra = _error_lines(source, name, options, log)
    excerpt = numbered_lines(source, line) if line else ""
    # the first error leads (a log can open with warnings); the whole log follows
    first = next((ln.strip() for ln in log.splitlines() if re.search(r"\berror\b", ln)), "")
    head = f"NVRTC could not compile {name} with options {' '.join(options)}"
    parts = [f"{head}: {first}" if first else f"{head}:", log]
    if extra:
        parts.append(extra)
    if excerpt:
        parts.append(f"source around line {line}:\n{excerpt}")
    if "could not open source file" in log:
        parts.append(
            "NVRTC has no CUDA headers built in: use plain types (see cutemma.cuda.source) "
            "or pass -I<dir> naming a CUDA include folder"
        )
    err = CompileError("\n".join(parts))
    # Kept as attributes so a caller (the verify sweep) can show them its own way.
    err.log, err.source_line, err.excerpt, err.source = log, line, excerpt, source
    return err


def compile_options(arch: str, options: tuple[str, ...] | list[str] = ()) -> tuple[str, ...]:
    """The full NVRTC option list for ``arch``: the target, the defaults, then ``options``.

    >>> compile_options("sm_90a", ["-lineinfo"])
    ('--gpu-architecture=sm_90a', '-std=c++17', '-lineinfo')
    """
    return (f"--gpu-architecture={arch}", *DEFAULT_OPTIONS, *options)


def compile(
    source: str,
    arch: str = "sm_80",
    options: tuple[str, ...] | list[str] = (),
    *,
    name: str = "cutemma_kernel.cu",
    cache: bool = True,
) -> Cubin:
    """Compile CUDA C++ ``source`` to a cubin for ``arch``, reusing the disk cache.

    Kernels meant to be launched by name should be ``extern "C"`` so their
    symbol is not mangled. Raises CompileError with NVRTC's log and the
    numbered source lines around the first error.

    >>> src = 'extern "C" __global__ void k(int* x) { x[threadIdx.x] = 7; }'
    >>> compile(src, "sm_80").key == compile(src, "sm_80").key
    True
    """
    if not isinstance(source, str):
        raise CompileError(f"compile: source must be CUDA C++ text (a str), got {source!r:.60}")
    if not isinstance(arch, str):
        raise CompileError(f"compile: arch must be a str like 'sm_80' or 'sm_90a', got {arch!r}")
    if isinstance(options, str):
        raise CompileError(
            f"compile: options must be a list of option strings, e.g. ['{options}'], not a str"
        )
    check_arch(arch)
    opts = compile_options(arch, options)
    hint = nvrtc_version_hint()
    if cache and hint is not None:  # a hit needs no NVRTC (loading it costs ~0.3 s)
        key = disk.cache_key(source, opts, hint)
        if (data := disk.load(key)) is not None:
            return Cubin(data, arch, key, cache_hit=True, source=source, options=opts)
    key = disk.cache_key(source, opts, nvrtc_version())
    if not cache:
        return _compiled(source, name, opts, arch, key)
    # threads asking for one kernel at once: the first compiles, the others wait and read it
    with _key_lock(key):
        if (data := disk.load(key) or _UNSTORED.get(key)) is not None:
            return Cubin(data, arch, key, cache_hit=True, source=source, options=opts)
        cubin = _compiled(source, name, opts, arch, key)
        if disk.store(key, cubin.data) is None:  # a read-only or full cache: keep it here
            _UNSTORED[key] = cubin.data
        return cubin


def _compiled(source: str, name: str, opts: tuple[str, ...], arch: str, key: str) -> Cubin:
    ok, data, log = _run_nvrtc(source, name, opts, ptx=False)
    if not ok:
        raise _compile_error(source, name, opts, log)
    return Cubin(data, arch, key, log=log, source=source, options=opts)


# one lock per cache key (a handful of bytes each; a process compiles hundreds of kernels at
# most), and the cubins a process compiled but could not store on disk
_KEY_LOCKS: dict[str, threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()
_UNSTORED: dict[str, bytes] = {}


def _key_lock(key: str) -> threading.Lock:
    with _KEY_LOCKS_GUARD:
        return _KEY_LOCKS.setdefault(key, threading.Lock())
