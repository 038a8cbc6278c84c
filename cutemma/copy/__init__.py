"""Copy atoms and data movement; :mod:`cutemma.copy.tma` holds the TMA (bulk tensor copy) host side.

>>> from cutemma.copy.tma import TMA_SWIZZLES
>>> TMA_SWIZZLES["SW128"].span_bytes
128
"""
