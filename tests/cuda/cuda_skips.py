"""Skip markers for the CUDA tests, each with the reason and the fix."""

from __future__ import annotations

import pytest

from cutemma.cuda.compile import unavailable_reason

NVRTC_MISSING = unavailable_reason()
needs_nvrtc = pytest.mark.skipif(
    NVRTC_MISSING is not None,
    reason=f"needs NVRTC from the cuda extra: {NVRTC_MISSING}",
)


def _tool_missing() -> str | None:
    from cutemma.cuda.sass import find_tool

    try:
        find_tool("cuobjdump")
    except Exception as exc:  # a CompileError naming the package to install
        return str(exc)
    return None


TOOL_MISSING = _tool_missing()
needs_cuobjdump = pytest.mark.skipif(
    TOOL_MISSING is not None, reason=f"needs cuobjdump from the cuda extra: {TOOL_MISSING}"
)
