"""CUDA-graph capture and cutemma's GEMMs: what a capture may hold and what it refuses.

A GEMM launch is a stream operation: ``cutemma.gemm`` launches on torch's current stream, so
under ``torch.cuda.graph`` the launch is captured and a replay runs it again on whatever
the captured buffers then hold (the kernel's arguments, tensor maps included, are fixed at
capture: same pointers, shapes and strides). Loading a kernel's module is not a stream
operation: the first call of a kernel variant in a process (it compiles or reads the
cubin from the disk cache, then loads it) must come before the capture, as torch's own
warm-up advice for graphs says; during one it is refused here with a LaunchError rather
than left to invalidate the capture.

>>> capturing()  # no torch CUDA context in this process: nothing captures
False
"""

from __future__ import annotations

import sys

from cutemma.errors import LaunchError


def capturing() -> bool:
    """Whether torch's current CUDA stream is capturing a graph now (False when torch or its
    CUDA context is not in use: no capture can be under way then)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return False
    return bool(torch.cuda.is_current_stream_capturing())


def refuse_during_capture(what: str) -> None:
    """Raise a LaunchError naming ``what`` (a kernel load) when a graph is being captured."""
    if capturing():
        raise LaunchError(
            f"gemm: {what} while torch.cuda.graph captures the current stream; a module load "
            "cannot be captured. Call cutemma.gemm once with these shapes, dtypes, majors and "
            "config before the capture (a warm-up: it compiles, loads and prepares the "
            "launch), then capture: a captured call only launches"
        )
