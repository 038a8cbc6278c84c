"""Generated kernel sources stay byte-identical: a sample of the corpus in
tests/kernels/source_corpus.py regenerated and compared with the committed sha256 digests
(tests/kernels/source_digests.json), so a refactor of how the kernel text is written
cannot change what is written.

When the kernel text is MEANT to change, regenerate the digests on purpose and commit them
with the change (``PYTHONPATH=$PWD python tests/kernels/source_corpus.py --write``); before
that, ``--check`` compares every case, not only this sample.
"""

import pytest
from source_corpus import load

SAMPLE = 60
_STORED = load()
# evenly spaced through the corpus: every section (sm90 candidates by dtype, the rarer sm90
# options, sm80) has cases in the sample
_PICKED = _STORED[:: max(1, len(_STORED) // SAMPLE)]


def test_corpus_is_large_and_varied():
    assert len(_STORED) >= 500
    assert len({d for _, d in _STORED}) >= 0.9 * len(_STORED)
    assert {c.family for c, _ in _PICKED} == {"sm90", "sm80"}


@pytest.mark.parametrize(
    ("case", "digest"), _PICKED, ids=lambda v: "" if isinstance(v, str) else None
)
def test_source_is_byte_identical(case, digest):
    assert case.digest() == digest, f"{case}: the generated source changed"
