"""Device memory a kernel's CTAs share within one launch (the stream-K fix-up: partial
tiles and their flags), owned by the runtime and written into the launch's boxes at each
launch, on the launch's stream.

A launch that needs one carries a :class:`WorkspaceArgs` (its boxes, grid and partial-tile
size); :meth:`WorkspaceArgs.write` fills them from the stream's :class:`Workspace` just
before ``cuLaunchKernel``.

>>> WorkspaceArgs(132, 128 * 128).grid, FLAG_BYTES
(132, 8)
"""

from __future__ import annotations

import ctypes
import threading

from cutemma.errors import TiledMmaError

FLAG_BYTES = 8  # one u64 flag per CTA (the epoch a slot was written in)
MAX_GRID = 1024  # flags kept per workspace and set: more than any GPU's SMs
# sets of flags: a CTA's slot is written, and (stream-K's fix-up together) its part of
# the others' slots is added (cutemma.kernels.sm90.streamk._fixup_together)
FLAG_SETS = 2
FLAGS = MAX_GRID * FLAG_SETS * FLAG_BYTES  # the flags' bytes, ahead of the partial tiles


class Workspace:
    """One stream's workspace: device memory from the driver (``cuMemAlloc``: outside
    torch's allocator, so no CUDA-graph pool ever holds it and torch.compile's graph trees
    see no stray tensor) holding FLAG_SETS flags for each of up to MAX_GRID CTAs, then the partial tiles;
    grown to the largest launch seen, never freed (a captured graph may still point at an
    outgrown one). The flags are zeroed once, on the launch's stream (``cuMemsetD8Async``:
    under capture a memset node of the graph, ahead of its kernel); every launch leaves
    them zero, and launches on one stream run in order, so they share it. ``epoch``: the
    counter of its launches (the value their flags are set to).
    """

    __slots__ = ("ptr", "size", "epoch", "device")

    def __init__(self, device: int) -> None:
        self.ptr, self.size, self.epoch, self.device = 0, 0, 0, device

    def pointers(self, grid: int, slot_floats: int, stream: int) -> tuple[int, int]:
        """(partials, flags) addresses for a launch of ``grid`` CTAs whose partial tiles
        are ``slot_floats`` floats each, on CUstream ``stream``."""
        if grid > MAX_GRID:
            raise TiledMmaError(f"stream-K: a grid of {grid} CTAs; at most {MAX_GRID} flags")
        need = FLAGS + grid * slot_floats * 4
        if self.size < need:
            size = max(need, 2 * self.size)
            self.ptr, self.size = _device_zeroed(self.device, size, FLAGS, stream)
        return self.ptr + FLAGS, self.ptr

    def next_epoch(self) -> int:
        """A new nonzero epoch for the next launch (the value its flags are set to)."""
        self.epoch = (self.epoch + 1) % (1 << 64) or 1
        return self.epoch


def _device_zeroed(device: int, size: int, zeroed: int, stream: int) -> tuple[int, int]:
    """``size`` bytes of device memory, the first ``zeroed`` set to zero on ``stream``."""
    from cutemma.libcuda import alloc_zeroed

    return alloc_zeroed(device, size, zeroed, stream), size


_WORKSPACES: dict[tuple[int, int], Workspace] = {}
_WS_LOCK = threading.Lock()


def workspace(device: int, stream: int) -> Workspace:
    """The workspace of ``stream`` on ``device`` (made on first use)."""
    ws = _WORKSPACES.get((device, stream))
    if ws is None:
        with _WS_LOCK:
            ws = _WORKSPACES.setdefault((device, stream), Workspace(device))
    return ws


class WorkspaceArgs:
    """A launch's workspace boxes (partials ``ws``, ``flags``, ``epoch``), for ``grid`` CTAs
    whose partial tiles are ``slot`` floats; :meth:`write` fills them per launch."""

    __slots__ = ("ws", "flags", "epoch", "grid", "slot")

    def __init__(self, grid: int, slot: int) -> None:
        self.ws, self.flags, self.epoch = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        self.grid, self.slot = grid, slot

    def write(self, device: int, stream: int) -> None:
        """This launch's workspace (the stream's) and a new epoch."""
        ws = workspace(device, stream)
        self.ws.value, self.flags.value = ws.pointers(self.grid, self.slot, stream)
        self.epoch.value = ws.next_epoch()
