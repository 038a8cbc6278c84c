"""The repeated-call path of ``cutemma.gemm``: one prepared launch per argument signature,
for both kernel families (sm90: wgmma + TMA; sm80: mma.sync).

A call of ``cutemma.gemm`` that launched a kernel with its operands as given leaves
behind a prepared launch (a :class:`BoxedLaunch`: the family's argument boxes) and a
:class:`FastEntry` that says when a later call may reuse it. The entry is found by
``(A's pointer, B's pointer, whether out was given, config asked for)`` and accepted
only when its guard says that A, B (and ``out``, when given) still have the dtype,
device, shape and strides they had: a tensor restrided, resized or re-pointed in place,
or a new tensor at a freed one's address, is checked like any other. Everything the
checked path decided from (family, config, majors, alignment, tensor maps) is a function
of what the key and the guard pin, the device's arch and the tuned table (``cutemma.tune``
clears :data:`FAST`). A hit skips the checks, the dispatch, the plan and the tensor-map
encoding: it writes what may change (alpha; C's and D's pointers, strides and D's map
when ``out`` moved) into argument boxes that already exist and calls ``cuLaunchKernel``
of libcuda directly (ctypes), on torch's current stream.

The guard is torch's own C++ tensor check (``torch._C._dynamo.guards.TensorGuards``: one
call compares dtype, device, sizes and strides of every tensor, ~3x cheaper than asking
each tensor from Python) when this torch has one that passes a self-test, else
:class:`MetaGuard` (the same comparisons from Python).

A call with a fused epilogue (:func:`cutemma.kernels.dispatch.try_fast_epilogue`) adds two
things to the key and the guard: the key the op list as given and which tensor keywords
were None; the guard every epilogue tensor's dtype, device, shape and strides (so the
kernel variant, the lengths and a residual's row stride, which stay in the argument boxes,
still hold). Every hit writes each
epilogue tensor's pointer into its box: a tensor changed in place is read anew, and another
tensor with the same metadata is read at its own address. A call whose tensors had to be
copied (a strided vector) or whose op list is unhashable leaves no entry
(:attr:`cutemma.kernels.epilogue.Bound.fast`).

>>> fast_key_fields()
('A.data_ptr', 'B.data_ptr', 'out given', 'config')
>>> key_fields()
('A.data_ptr', 'B.data_ptr', 'out given', 'config', 'epilogue as given', 'absent tensors')
>>> guard_fields()
('dtype', 'device', 'shape', 'stride')
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cutemma.libcuda import launcher as _launcher
from cutemma.libcuda import pdl_launcher

if TYPE_CHECKING:  # the record's type only: the epilogue's ops live above the runtime
    from cutemma.kernels.epilogue import FastRecord

_I32, _I64, _F32, _U64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_float, ctypes.c_uint64
FAST: dict[tuple, tuple[FastEntry, ...]] = {}  # fast_key -> entries, newest first
FAST_MAX = 256  # keys kept (oldest dropped)
FAST_PER_KEY = 4  # entries per key: e.g. views of one buffer with different shapes
_TENSOR_GUARDS: Any = None  # torch's TensorGuards once it passed its self-test, or False
_empty: Any = None  # torch.empty, bound once torch is in use (a hit makes new outputs)
# held from writing a shared prepared launch's boxes to its cuLaunchKernel (which copies
# them): two threads reusing one launch with other outputs or streams must not interleave
LAUNCH_LOCK = threading.Lock()


def fast_key_fields() -> tuple[str, ...]:
    """What the key of a prepared launch holds (documentation and a test's check)."""
    return ("A.data_ptr", "B.data_ptr", "out given", "config")


def guard_fields() -> tuple[str, ...]:
    """What a guard compares per tensor (A, B, and out when given), beside the key."""
    return ("dtype", "device", "shape", "stride")


def _stream_getter():
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device: torch.cuda.current_stream(device).cuda_stream


class MetaGuard:
    """``check(*tensors)``: True while each tensor has the dtype, device, shape and strides
    the tensors given at construction had (tensor queries from Python: the fallback where
    torch's C++ check is missing, and what a test's stand-in tensors get).

    >>> class T:  # a stand-in with the four queries
    ...     def __init__(self, shape, stride): self.shape, self._st = shape, stride
    ...     def stride(self): return self._st
    ...     dtype = "bfloat16"
    ...     def get_device(self): return 0
    >>> g = MetaGuard((T((4, 6), (6, 1)),))
    >>> g.check(T((4, 6), (6, 1))), g.check(T((4, 6), (8, 1))), g.check(T((6, 4), (6, 1)))
    (True, False, False)
    """

    __slots__ = ("sig", "n")

    def __init__(self, tensors: tuple) -> None:
        self.n = len(tensors)
        self.sig = sum(((t.dtype, t.get_device(), tuple(t.shape), t.stride()) for t in tensors), ())

    def check(self, *tensors: Any) -> bool:
        """Whether ``tensors`` match the signature (one per tensor of the construction).
        One flat tuple compared at once: the two- and three-tensor calls of the fast path
        are spelled out (a loop costs more than the queries)."""
        if len(tensors) != self.n:
            return False
        if self.n == 3:
            a, b, c = tensors
            return (a.dtype, a.get_device(), a.shape, a.stride(), b.dtype, b.get_device(),
                    b.shape, b.stride(), c.dtype, c.get_device(), c.shape,
                    c.stride()) == self.sig  # fmt: skip
        if self.n == 2:
            a, b = tensors
            return (a.dtype, a.get_device(), a.shape, a.stride(), b.dtype, b.get_device(),
                    b.shape, b.stride()) == self.sig  # fmt: skip
        got = ((t.dtype, t.get_device(), t.shape, t.stride()) for t in tensors)
        return sum(got, ()) == self.sig


def _tensor_guards() -> Any:
    """torch's C++ TensorGuards class when it exists and behaves as this module needs
    (checked once per process on CPU tensors: equal metadata passes; another shape,
    strides only, dtype, a transposed view, a restrided one, a count mismatch fail),
    else None. It is internal to torch (dynamo's guards), hence the self-test."""
    global _TENSOR_GUARDS
    if _TENSOR_GUARDS is None:
        found = False  # published once the self-test is over (another thread may be asking)
        try:
            import torch

            tg = torch._C._dynamo.guards.TensorGuards
            a = torch.zeros(4, 6)
            g = tg(a, dynamic_dims_sizes=None, dynamic_dims_strides=None)
            wrong = (torch.zeros(4, 7), torch.zeros(4, 8)[:, :6], torch.zeros(4, 6).double(),
                     torch.zeros(6, 4).t(), torch.zeros(24).as_strided((4, 6), (1, 4)),
                     torch.zeros(1, 4, 6))  # fmt: skip
            if g.check(torch.zeros(4, 6)) and not any(g.check(w) for w in wrong):
                found = tg
        except Exception:  # no dynamo in this torch, another signature: the Python guard
            pass
        _TENSOR_GUARDS = found
    return _TENSOR_GUARDS or None


def make_guard(*tensors: Any) -> Callable[..., bool]:
    """The cheapest check(*tensors) -> bool available for these tensors: True while each
    has the dtype, device, shape and strides it has now (never on other tensor counts).

    >>> import torch                                                  # doctest: +SKIP
    >>> a = torch.zeros(4, 6); check = make_guard(a)                  # doctest: +SKIP
    >>> check(a), check(a.t()), check(torch.zeros(4, 6))              # doctest: +SKIP
    (True, False, True)
    """
    tg = _tensor_guards()
    if tg is not None:
        try:
            g = tg(*tensors, dynamic_dims_sizes=None, dynamic_dims_strides=None)
            if g.check(*tensors):
                return g.check
        except Exception:  # a tensor kind it does not take: the Python guard
            pass
    return MetaGuard(tensors).check


class FastEntry:
    """When a call may reuse ``prepared``: ``check`` (the guard of A, B and a given out),
    and what a hit needs of the output without asking it: its strides (pinned by the
    guard, or those of a new output) and, for new outputs, shape, dtype and device.

    >>> class T:
    ...     shape, dtype, device = (4, 6), "bfloat16", "cuda:0"
    ...     def stride(self): return (6, 1)
    >>> e = FastEntry(lambda *t: True, "a prepared launch", T())
    >>> e.strides, e.shape, e.check(T(), T())
    ((6, 1), (4, 6), True)
    """

    __slots__ = ("check", "prepared", "strides", "shape", "dtype", "device", "epi", "new")

    def __init__(self, check: Callable[..., bool], prepared: BoxedLaunch, out: Any) -> None:
        self.check, self.prepared = check, prepared
        self.epi = ()  # a fused epilogue's (box, tensor) pairs (try_fast_epilogue)
        self.strides, self.shape = out.stride(), tuple(out.shape)
        self.dtype, self.device = out.dtype, out.device
        self.new = _empty  # makes a hit's new output: torch.empty (None for stand-ins)


class BoxedLaunch:
    """Argument boxes, the function handle and the grid of one kernel signature, launched
    by ``cuLaunchKernel`` of libcuda directly (ctypes, no argtypes) on torch's current
    stream of the device; each family's prepared launch builds its boxes on this
    (:class:`cutemma.kernels.sm90.launch.PreparedLaunch`,
    :class:`cutemma.kernels.sm80.launch.Sm80Launch`).

    ``kern`` is a :class:`~cutemma.kernels.runtime.driver.DriverKernel`; ``alpha`` the box
    :func:`~cutemma.kernels.dispatch.try_fast` writes per call; ``at`` and ``ptr``: the
    fast-path entry and output pointer the boxes were last written for (None after any
    other write), so a repeated call writes only alpha; ``work``: a
    :class:`~cutemma.kernels.runtime.workspace.WorkspaceArgs` where the kernel's CTAs share
    device memory (written at each launch), else None. A subclass sets ``args`` with :meth:`set_args` and says how a
    new output is written (:meth:`write_out`).

    >>> BoxedLaunch(None, 0, 4, 2).grid, BoxedLaunch(None, 0, 4, 2).grid_y
    (4, 2)
    """

    __slots__ = ("kern", "device", "grid", "grid_y", "args", "ptrs", "launch_ptrs", "alpha",
                 "at", "ptr", "fn", "cu", "stream", "stream_box", "stream_of", "threads",
                 "shared", "epi", "work")  # fmt: skip

    def __init__(self, kern: Any, device: int, grid: int, grid_y: int = 1) -> None:
        self.kern, self.device, self.grid, self.grid_y = kern, device, grid, grid_y
        self.alpha = _F32()
        self.fn = self.cu = None
        self.stream, self.stream_box = None, None
        self.stream_of = None  # torch's stream query, bound at the first launch
        self.at, self.ptr = None, None
        self.args: list = []
        self.epi: list = []  # a fused epilogue's boxes (add_epilogue)
        self.work = None  # a WorkspaceArgs where the kernel's CTAs share device memory

    def set_args(self, args: list) -> None:
        """The kernel's parameters in order, one ctypes box each (kept alive here)."""
        self.args = args
        self.ptrs = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        self.launch_ptrs = ctypes.c_void_p(ctypes.addressof(self.ptrs))

    def add_epilogue(self, params: list) -> None:
        """Boxes for a fused epilogue's parameters (``Epilogue.params()``: pointers, then
        64-bit strides), after the family's own; call before the family writes any slot of
        ``ptrs`` by hand (this rebuilds it). Their values are written per call
        (:meth:`set_epilogue`): a prepared launch is shared by calls whose tensors differ.

        >>> b = BoxedLaunch(None, 0, 1); b.set_args([_I32(7)])
        >>> from cutemma.cuda.source import Param
        >>> b.add_epilogue([Param("const float*", "ep_bias")]); b.set_epilogue((0x100,))
        >>> [a.value for a in b.args]
        [7, 256]
        """
        self.epi = [_U64() if p.is_pointer else _I64() for p in params]
        self.set_args(self.args + self.epi)

    def set_epilogue(self, values: tuple) -> None:
        """This call's epilogue tensors' pointers and strides (see :meth:`add_epilogue`)."""
        for box, v in zip(self.epi, values, strict=True):
            box.value = v

    def write_out(self, ptr: int, st: tuple, out: Any) -> None:
        """C = D = ``out`` (at ``ptr``, element strides ``st``), beta 0: the family's boxes."""
        raise NotImplementedError

    def launch(self) -> None:
        """``cuLaunchKernel`` on torch's current stream of the device."""
        f = self.cu
        if f is None:
            f = self._resolve()
        stream = self.stream_of(self.device)
        if stream != self.stream:  # the pointer argument boxed once per stream
            self.stream, self.stream_box = stream, ctypes.c_void_p(stream)
        if self.work is not None:  # this stream's workspace, a new epoch
            self.work.write(self.device, stream)
        if f:
            status = f(self.fn, self.grid, self.grid_y, 1, self.threads, 1, 1, self.shared,
                       self.stream_box, self.launch_ptrs, None)  # fmt: skip
            if status == 0:
                return
        # no libcuda via ctypes, no current context on this thread, or an error: the
        # checked launch makes the context current and names the driver's status
        self.kern.launch_checked(self.device, self.grid, self.grid_y, stream,
                                 self.launch_ptrs.value)  # fmt: skip

    def _resolve(self) -> Any:
        """The first launch: the function handle (module loaded), libcuda's entry and
        torch's stream query."""
        self.stream_of = _stream_getter()
        f = pdl_launcher() if getattr(self.kern, "pdl", False) else _launcher()
        self.fn = self.kern.handle(self.device) if f else None
        self.grid, self.grid_y = int(self.grid), int(self.grid_y)
        self.threads, self.shared = int(self.kern.threads), int(self.kern.shared)
        self.cu = f or False
        return f


def fast_key(A: Any, B: Any, given: bool, config: Any) -> tuple:
    """The key under which a call's entries are kept: the operands' pointers, whether
    ``out`` was given, the config asked for (None: the built-in or tuned one).

    >>> class T:  # a stand-in: the key asks only for the pointer
    ...     def __init__(self, ptr): self.ptr = ptr
    ...     def data_ptr(self): return self.ptr
    >>> fast_key(T(0x100), T(0x200), True, None)
    (256, 512, True, None)
    """
    return (A.data_ptr(), B.data_ptr(), given, config)


def remember(A: Any, B: Any, out: Any, given: bool, config: Any, prepared: BoxedLaunch) -> None:
    """Keep ``prepared`` for later calls of ``cutemma.gemm(A, B, out=out if given, config=
    config)`` whose operands (and given out) match these in dtype, device, shape and
    strides. ``out`` is the call's output (a new one when not given): a hit makes new
    outputs like it. Example: :func:`find`."""
    global _empty
    if _empty is None and type(out).__module__.startswith("torch"):
        import torch

        _empty = torch.empty
    key = fast_key(A, B, given, config)
    entry = FastEntry(make_guard(A, B, out) if given else make_guard(A, B), prepared, out)
    with _TABLES_LOCK:
        old = FAST.pop(key, ())
        put_bounded(FAST, key, (entry, *old[: FAST_PER_KEY - 1]), FAST_MAX)


# held while a bounded table drops its oldest entry and takes a new one: two threads doing it
# at once could drop one key twice (KeyError) or iterate a table the other changes
_TABLES_LOCK = threading.RLock()


def put_bounded(table: dict, key: Any, value: Any, limit: int) -> Any:
    """``table[key] = value``, first dropping the oldest entries past ``limit - 1``; safe
    with other threads doing the same (readers need no lock: a dict read is atomic).

    >>> t = {}
    >>> [put_bounded(t, k, k * k, 2) for k in range(3)], t
    ([0, 1, 4], {1: 1, 2: 4})
    """
    with _TABLES_LOCK:
        while table and len(table) >= limit:
            table.pop(next(iter(table)), None)
        table[key] = value
    return value


def find(A: Any, B: Any, out: Any, config: Any) -> FastEntry | None:
    """The entry a call ``gemm(A, B, out=out, config=config)`` would reuse, or None (what
    :func:`~cutemma.kernels.dispatch.try_fast` looks up, for benchmarks and tests).

    >>> class T:  # a stand-in tensor: what the key and the guard ask
    ...     def __init__(self, ptr, shape, stride):
    ...         self.ptr, self.shape, self.st, self.dtype, self.device = ptr, shape, stride, "bf16", "cuda:0"
    ...     def data_ptr(self): return self.ptr
    ...     def stride(self): return self.st
    ...     def get_device(self): return 0
    >>> A, B, D = T(1 << 40, (64, 32), (32, 1)), T(2 << 40, (32, 16), (16, 1)), T(0, (64, 16), (16, 1))
    >>> remember(A, B, D, True, None, "a prepared launch")
    >>> find(A, B, D, None).prepared
    'a prepared launch'
    >>> A.st = (1, 64)  # restrided in place: the guard refuses it
    >>> find(A, B, D, None) is None
    True
    >>> _ = FAST.clear()
    """
    try:
        for e in FAST.get(fast_key(A, B, out is not None, config), ()):
            if e.check(A, B) if out is None else e.check(A, B, out):
                return e
    except (AttributeError, TypeError):
        pass
    return None


def key_fields() -> tuple[str, ...]:
    """What the key of an epilogue call's prepared launch holds."""
    return (*fast_key_fields(), "epilogue as given", "absent tensors")


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
    >>> A, B, b1 = T(1 << 40, (64, 32)), T(2 << 40, (32, 16)), T(3 << 40, (16,), (1,))
    >>> from cutemma.kernels.epilogue import FastRecord
    >>> rec = FastRecord(("bias",), (True, True, False, True, True), (b1,), ((0, 0),))
    >>> remember_epilogue(A, B, T(4 << 40, (64, 16)), True, None, "a prepared launch", rec)
    >>> [e.prepared for e in FAST[(1 << 40, 2 << 40, True, None, ("bias",), rec.absent)]]
    ['a prepared launch']
    >>> _ = FAST.clear()
    """
    global _empty
    if _empty is None and type(out).__module__.startswith("torch"):
        import torch

        _empty = torch.empty
    key = (*fast_key(A, B, given, config), record.names, record.absent)
    ops = (A, B, out, *record.tensors) if given else (A, B, *record.tensors)
    entry = FastEntry(make_guard(*ops), prepared, out)
    entry.epi = record.slots
    with _TABLES_LOCK:  # as remember: another thread may be dropping the oldest key
        old = FAST.pop(key, ())
        put_bounded(FAST, key, (entry, *old[: FAST_PER_KEY - 1]), FAST_MAX)


def run(
    prepared: BoxedLaunch,
    C: Any,
    D: Any,
    alpha: float,
    beta: float,
    epilogue: Any,
    kept: tuple | None = None,
) -> None:
    """Launch a family's prepared launch for one call: C and D (C is D without a C), the
    scalars and a bound epilogue's tensors (:class:`~cutemma.kernels.epilogue.Bound`, or
    None) written into its boxes, under :data:`LAUNCH_LOCK` (the boxes are shared with
    other calls of the signature, and threads). ``kept``: ``(A, B, out, given, asked)`` of a
    call whose repeats may reuse the launch, kept first (:func:`keep`), else None."""
    if kept is not None:
        keep(*kept, prepared, epilogue)
    with LAUNCH_LOCK:
        if epilogue is not None:
            prepared.set_epilogue(epilogue.values)
        prepared.set_operands(C, D, alpha, beta)
        prepared.launch()


def keep(A: Any, B: Any, out: Any, given: bool, asked: Any, prepared: Any, epilogue: Any) -> None:
    """Keep a call's launch for its repeats: :func:`remember` for a plain call,
    :func:`remember_epilogue` for a fused one whose tensors a repeat can pass as they are
    (``epilogue.fast``); a key that cannot be hashed keeps nothing."""
    try:
        if epilogue is None:
            remember(A, B, out, given, asked, prepared)
        elif epilogue.fast is not None:
            remember_epilogue(A, B, out, given, asked, prepared, epilogue.fast)
    except TypeError:  # an unhashable config asked for: every call takes the checked path
        pass
