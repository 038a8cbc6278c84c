"""Call records as the policy (cutemma.kernels.policy.choose) reads them, for the policy's
tests: :func:`record` of any operands with ``shape`` and ``stride()`` (torch tensors, or
:class:`Strided` stand-ins where torch is not installed)."""

from __future__ import annotations

import types

import pytest

from cutemma.kernels.call import rows16


class Strided:
    """What the policy reads of a tensor: shape, strides, element size, base address."""

    def __init__(self, shape: tuple, stride: tuple, eb: int = 2) -> None:
        self.shape, self._stride, self.eb = tuple(shape), tuple(stride), eb

    def stride(self, d: int | None = None):
        return self._stride if d is None else self._stride[d]

    def t(self) -> Strided:
        return Strided(self.shape[::-1], self._stride[::-1], self.eb)

    def dim(self) -> int:
        return len(self.shape)

    def element_size(self) -> int:
        return self.eb

    def data_ptr(self) -> int:
        return 1 << 20  # (16-byte aligned)


def record(A, B, **kw) -> types.SimpleNamespace:
    """A checked 2-D call's fields as the policy reads them (an sm_90a device of 132 SMs; an
    H100 unless ``gpu`` says otherwise), ``kw`` over the defaults; the majors and rows16 as
    make_call derives them."""
    fields = dict(A=A, B=B, M=A.shape[-2], N=B.shape[-1], K=A.shape[-1], batch=None,
                  dtype="bf16", arch="sm_90a", sms=132, gpu="NVIDIA H100", device=0, design=None,
                  config=None, epilogue=None, C=None, out_type="bf16", c_type="bf16")  # fmt: skip
    fields.update(kw)
    wide = fields["dtype"] in ("bf16", "f16")  # the majors the record holds (make_call's rule)
    fields["a_major"] = "K" if not wide or A.stride(-1) == 1 else "M"
    fields["b_major"] = "N" if wide and B.stride(-1) == 1 else "K"
    fields["rows16"] = rows16(types.SimpleNamespace(**fields))  # (make_call's, too)
    return types.SimpleNamespace(**fields)


@pytest.fixture(autouse=True)
def nothing_tuned(monkeypatch, tmp_path):
    """No tuned winner on disk: the policy's built-in pick (autouse where imported)."""
    from cutemma.kernels import tuned

    monkeypatch.setenv("CUTEMMA_CACHE_DIR", str(tmp_path))
    tuned.reload()
    yield
    tuned.reload()
