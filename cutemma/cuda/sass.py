"""Read the machine code (SASS) of a cubin: disassembly, instruction counts, spills.

The disassemblers come from the pip packages ``nvidia-cuda-cuobjdump`` and
``nvidia-cuda-nvdisasm``, so this works on a machine with no GPU and no CUDA
toolkit. Tensor-core instructions are the kinds ending in ``MMA``: HMMA, IMMA,
DMMA, BMMA (mma.sync), QMMA (fp8 mma.sync on sm_89/sm_120), HGMMA, IGMMA,
QGMMA (wgmma on sm_90a) and UTCHMMA, UTCQMMA ... (tcgen05.mma on sm_100a).

>>> text = "        /*0060*/   HMMA.16816.F32 R8, R8, R6, RZ ;\\n        /*0070*/   @P0 EXIT ;"
>>> count_instructions(text)
{'HMMA': 1, 'EXIT': 1}
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cutemma.cuda.compile import Cubin, find_nvidia_files
from cutemma.errors import CompileError

# Which pip package ships each tool, for the message when it is missing.
_TOOL_PACKAGES = {"cuobjdump": "nvidia-cuda-cuobjdump", "nvdisasm": "nvidia-cuda-nvdisasm"}
# How each tool is asked for the disassembly of a cubin file.
_SASS_ARGS = {"cuobjdump": ["-sass"], "nvdisasm": ["-c"]}

# One instruction line: /*0060*/  [@!P0] OPCODE.MODS operands ;
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)")
# The encoding columns cuobjdump prints beside and below each instruction.
_ENCODING = re.compile(r"\s*/\* 0x[0-9a-f]{16} \*/")
_RESOURCE = re.compile(r"(\w+(?:\[\d+\])?):(\d+)")


def find_tool(name: str) -> Path:
    """Path of ``cuobjdump`` or ``nvdisasm``: pip package first, then PATH, then CUDA_HOME.

    The pip copy comes first because its version is the one cutemma pins.

    >>> find_tool("cuobjdump").name
    'cuobjdump'
    """
    candidates = [*find_nvidia_files(f"*/bin/{name}")]
    if on_path := shutil.which(name):
        candidates.append(Path(on_path))
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates.append(Path(home) / "bin" / name)
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    package = _TOOL_PACKAGES.get(name, name)
    raise CompileError(
        f"{name} not found in the nvidia pip packages, on PATH or under CUDA_HOME; "
        f"pip install {package} (part of the cutemma[cuda] extra)"
    )


def _cubin_bytes(cubin: Cubin | bytes) -> bytes:
    data = cubin.data if isinstance(cubin, Cubin) else cubin
    if not isinstance(data, (bytes, bytearray)) or not data.startswith(b"\x7fELF"):
        raise CompileError(
            f"expected a cubin (ELF bytes or a cutemma.cuda.Cubin), got {type(cubin).__name__} "
            "that does not start with the ELF magic b'\\x7fELF'"
        )
    return bytes(data)


def _run_tool(args: list[str], cubin: Cubin | bytes) -> str:
    """Run a tool on the cubin written to a temporary file; return its stdout."""
    data = _cubin_bytes(cubin)
    with tempfile.TemporaryDirectory(prefix="cutemma-sass-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(data)
        done = subprocess.run([*args, str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CompileError(f"{Path(args[0]).name} failed on the cubin: {done.stderr.strip()}")
    return done.stdout


def _disassembler() -> list[str]:
    for tool in ("cuobjdump", "nvdisasm"):
        try:
            return [str(find_tool(tool)), *_SASS_ARGS[tool]]
        except CompileError:
            continue
    raise CompileError(
        "neither cuobjdump nor nvdisasm was found; pip install nvidia-cuda-cuobjdump "
        "nvidia-cuda-nvdisasm (part of the cutemma[cuda] extra)"
    )


@lru_cache(maxsize=32)
def _disassembled(data: bytes) -> str:
    # the same cubin disassembles to the same text; tests and sass_summary ask several
    # times per kernel, and each cuobjdump run costs ~0.5 s
    return _run_tool(_disassembler(), data)


def sass(cubin: Cubin | bytes, raw: bool = False) -> str:
    """The SASS disassembly of ``cubin``; encodings stripped unless ``raw``.

    >>> from cutemma.cuda.compile import compile
    >>> "EXIT" in sass(compile('extern "C" __global__ void k() {}', "sm_80"))
    True
    """
    text = _disassembled(_cubin_bytes(cubin))  # refuses what is not a cubin first
    if raw:
        return text
    lines = (_ENCODING.sub("", line).rstrip() for line in text.splitlines())
    return "\n".join(line for line in lines if line.strip()) + "\n"


def instructions(sass_text: str) -> list[str]:
    """Every instruction's opcode with its modifiers, in program order.

    >>> instructions("  /*0000*/  HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ ;")
    ['HGMMA.64x8x16.F32']
    """
    if not isinstance(sass_text, str):
        raise CompileError(
            f"expected SASS text (a str from cutemma.cuda.sass(cubin)), got {type(sass_text).__name__}"
        )
    return [m.group(1) for m in map(_INSTRUCTION.match, sass_text.splitlines()) if m]


def count_instructions(sass_text: str) -> dict[str, int]:
    """How many instructions of each kind (the opcode before its first '.').

    >>> count_instructions("/*0000*/ LDSM.16.M88.4 R4, [R2] ;\\n/*0010*/ LDSM.16.MT88.2 R8, [R3] ;")
    {'LDSM': 2}
    """
    return dict(Counter(op.split(".", 1)[0] for op in instructions(sass_text)))


def tensor_core_counts(sass_text: str) -> dict[str, int]:
    """Only the tensor-core kinds of :func:`count_instructions` (those ending in MMA).

    >>> tensor_core_counts("/*0080*/ UTCHMMA gdesc[UR8], gdesc[UR10], tmem[UR6] ;\\n/*0090*/ EXIT ;")
    {'UTCHMMA': 1}
    """
    return {k: n for k, n in count_instructions(sass_text).items() if k.endswith("MMA")}


def resource_usage(cubin: Cubin | bytes) -> dict[str, dict[str, int]]:
    """Per kernel, the compiler's resource report: REG, STACK, SHARED, LOCAL, ...

    >>> from cutemma.cuda.compile import compile
    >>> resource_usage(compile('extern "C" __global__ void k() {}', "sm_80"))["k"]["LOCAL"]
    0
    """
    _cubin_bytes(cubin)  # refuse what is not a cubin before looking for the tool
    report = _run_tool([str(find_tool("cuobjdump")), "-res-usage"], cubin)
    usage: dict[str, dict[str, int]] = {}
    kernel = None
    for line in report.splitlines():
        if line.strip().startswith("Function "):
            kernel = line.strip()[len("Function ") :].rstrip(":")
        elif kernel is not None and ":" in line:
            usage[kernel] = {k: int(v) for k, v in _RESOURCE.findall(line)}
            kernel = None
    return usage


@dataclass(frozen=True)
class LocalMemoryUse:
    """Local-memory traffic of a kernel: spill instructions and reserved bytes.

    ``stack_bytes``/``local_bytes`` are None when only SASS text was given.
    True in a boolean context when the kernel touches local memory at all.

    >>> bool(LocalMemoryUse(loads=0, stores=0)), bool(LocalMemoryUse(loads=2, stores=1))
    (False, True)
    """

    loads: int
    stores: int
    stack_bytes: int | None = None
    local_bytes: int | None = None

    def __bool__(self) -> bool:
        return bool(self.loads or self.stores or self.stack_bytes or self.local_bytes)


def local_memory_use(cubin_or_sass: Cubin | bytes | str) -> LocalMemoryUse:
    """Count LDL/STL in the SASS; for a cubin also read STACK/LOCAL bytes of every kernel.

    A register array indexed at run time, or too many live values, lands in
    local memory: slow, and in an MMA probe a sign that the layout codegen
    produced run-time indices.

    >>> local_memory_use("/*0000*/ STL [R1], R4 ;\\n/*0010*/ LDL R5, [R1] ;")
    LocalMemoryUse(loads=1, stores=1, stack_bytes=None, local_bytes=None)
    """
    if isinstance(cubin_or_sass, str):
        counts = count_instructions(cubin_or_sass)
        return LocalMemoryUse(loads=counts.get("LDL", 0), stores=counts.get("STL", 0))
    counts = count_instructions(sass(cubin_or_sass))
    usage = resource_usage(cubin_or_sass).values()
    return LocalMemoryUse(
        loads=counts.get("LDL", 0),
        stores=counts.get("STL", 0),
        stack_bytes=sum(u.get("STACK", 0) for u in usage),
        local_bytes=sum(u.get("LOCAL", 0) for u in usage),
    )
