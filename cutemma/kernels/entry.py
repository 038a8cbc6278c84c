"""What ``cutemma.gemm`` is: the dispatcher's :func:`~cutemma.kernels.dispatch.gemm`, or, where
``CUTEMMA_AUTOTUNE=1`` is set when ``cutemma.gemm`` is first looked up, the autotuning front
above it (:func:`cutemma.kernels.autotune.gemm`: the first call of each new shape bucket tunes
it). Tuning is a layer over the call path, not a branch in it: the dispatcher knows nothing
of it.

>>> gemm.__module__ in ("cutemma.kernels.dispatch", "cutemma.kernels.autotune")
True
"""

from __future__ import annotations

from cutemma.kernels import autotune, dispatch

gemm = autotune.gemm if autotune.enabled() else dispatch.gemm

__all__ = ["gemm"]
