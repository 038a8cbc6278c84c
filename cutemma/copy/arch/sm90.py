"""sm90: ``stmatrix`` (CuTe's STSM atoms, cute/arch/copy_sm90.hpp).

``SM90_U32x<n>_STSM_N`` / ``SM90_U16x<2n>_STSM_T`` are ``stmatrix.m8n8.x<n>[.trans].b16``,
the mirror of ldmatrix: the register side is the source, the 16-byte rows (one address
per lane ``< 8n``) the destination, and the reference is the register side.

>>> from cutemma.copy import copy_traits
>>> t = copy_traits('SM90_U16x8_STSM_T')
>>> str(t.src_layout), str(t.dst_layout)
('((4,8),(16,2,4)):((256,16),(1,128,1024))', '(32,128):(128,1)')
"""

from __future__ import annotations

from cutemma.copy.arch import m8n8_family

STSM = m8n8_family(90, "STSM", (7, 8))
