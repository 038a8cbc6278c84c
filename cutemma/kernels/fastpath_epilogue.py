"""The repeated-call path of ``cutemma.gemm`` calls with a fused epilogue.

Like :func:`cutemma.kernels.fastpath.try_fast`, with two more things in the key and the
guard: the key adds the op list as given and which tensor keywords were None; the guard
adds every epilogue tensor's dtype, device, shape and strides (so the kernel variant, the
lengths and a residual's row stride, which stay in the argument boxes, still hold). Every
hit writes each epilogue tensor's pointer into its box: a tensor changed in place is read
anew by the launch, and another tensor with the same metadata is read at its own address.
A call whose tensors had to be copied (a strided vector) or whose op list is unhashable
leaves no entry (:attr:`cutemma.kernels.epilogue.Bound.fast`).

>>> key_fields()
('A.data_ptr', 'B.data_ptr', 'out given', 'config', 'epilogue as given', 'absent tensors')
"""

from __future__ import annotations

from typing import Any

from cutemma.kernels import fastpath as fp
from cutemma.kernels.epilogue import FastRecord


def key_fields() -> tuple[str, ...]:
    """What the key of an epilogue call's prepared launch holds."""
    return (*fp.fast_key_fields(), "epilogue as given", "absent tensors")


def remember_epilogue(
    A: Any, B: Any, out: Any, given: bool, config: Any, prepared: Any, record: FastRecord
) -> None:
    """Keep ``prepared`` (whose epilogue boxes exist: ``add_epilogue``) for repeats of an
    epilogue call with these operands, this op list and tensors like ``record.tensors``.

    >>> class T:  # a stand-in tensor: what the key and the guard ask
    ...     def __init__(self, ptr, shape, stride=None):
    ...         self.ptr, self.shape, self.dtype, self.device = ptr, shape, "bf16", "cuda:0"
    ...         self.st = stride or (shape[-1], 1)[-len(shape):]
    ...     def data_ptr(self): return self.ptr
    ...     def stride(self): return self.st
    ...     def get_device(self): return 0
    >>> import ctypes
    >>> class P:  # a stand-in prepared launch: its boxes and launches
    ...     at = ptr = None; alpha = ctypes.c_float(); epi = [ctypes.c_uint64()]; runs = []
    ...     def write_out(self, ptr, st, out): pass
    ...     def launch(self): self.runs.append(self.epi[0].value)
    >>> A, B, b1 = T(1 << 40, (64, 32)), T(2 << 40, (32, 16)), T(3 << 40, (16,), (1,))
    >>> rec = FastRecord(("bias",), (True, True, False, True, True), (b1,), ((0, 0),))
    >>> D = T(4 << 40, (64, 16))
    >>> remember_epilogue(A, B, D, True, None, P(), rec)
    >>> b2 = T(5 << 40, (16,), (1,))  # another bias with the same metadata: its own address
    >>> t = (None, None, b2, None, None)
    >>> try_fast_epilogue(A, B, D, 1.0, None, ("bias",), t) is D, P.runs == [b2.ptr]
    (True, True)
    >>> try_fast_epilogue(A, B, D, 1.0, None, ("bias", "relu"), t) is None  # other ops
    True
    >>> short = (None, None, T(6 << 40, (8,), (1,)), None, None)  # another length: refused
    >>> try_fast_epilogue(A, B, D, 1.0, None, ("bias",), short) is None
    True
    >>> _ = fp.FAST.clear()
    """
    if fp._empty is None and type(out).__module__.startswith("torch"):
        import torch

        fp._empty = torch.empty
    key = (*fp.fast_key(A, B, given, config), record.names, record.absent)
    ops = (A, B, out, *record.tensors) if given else (A, B, *record.tensors)
    entry = fp.FastEntry(fp.make_guard(*ops), prepared, out)
    entry.epi = record.slots
    old = fp.FAST.pop(key, ())
    if len(fp.FAST) >= fp.FAST_MAX:
        fp.FAST.pop(next(iter(fp.FAST)))
    fp.FAST[key] = (entry, *old[: fp.FAST_PER_KEY - 1])


def try_fast_epilogue(
    A: Any, B: Any, out: Any, alpha: float, config: Any, names: Any, tensors: tuple
) -> Any:
    """D = epilogue(alpha * A @ B) through a prepared launch, or None (the caller takes the
    checked path, which prepares one). ``tensors``: the call's epilogue keywords in
    :data:`cutemma.kernels.epilogue.ARGS` order, None where not given."""
    try:
        absent = tuple(t is None for t in tensors)
        entries = fp.FAST.get((A.data_ptr(), B.data_ptr(), out is not None, config, names, absent))
        if entries is None:
            return None
        given = [t for t in tensors if t is not None]
        if out is None:
            for e in entries:
                if e.check(A, B, *given):
                    break
            else:
                return None
            out = fp._empty(e.shape, dtype=e.dtype, device=e.device)
        else:
            for e in entries:
                if e.check(A, B, out, *given):
                    break
            else:
                return None
        ptr = out.data_ptr()
        ptrs = [(i, given[j].data_ptr()) for i, j in e.epi]
    except (AttributeError, TypeError):  # not tensors, unhashable ops: the checked path
        return None
    p = e.prepared
    with fp.LAUNCH_LOCK:
        if p.at is not e or p.ptr != ptr:
            p.write_out(ptr, e.strides, out)
            p.at, p.ptr = e, ptr
        for i, v in ptrs:
            p.epi[i].value = v
        try:
            p.alpha.value = alpha
        except TypeError:
            return None
        p.launch()
    return out
