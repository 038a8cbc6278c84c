"""The runtime under both kernel families: the driver (:mod:`.driver`: load a cubin, launch
it with ctypes argument boxes), the repeated-call fast path and the launch of a prepared
call (:mod:`.fastpath`), stream-capture checks (:mod:`.capture`). It knows no family, no
policy and no call record: what a family hands it is a prepared launch.

>>> from cutemma.kernels.runtime.fastpath import fast_key_fields
>>> fast_key_fields()[:2]
('A.data_ptr', 'B.data_ptr')
"""
