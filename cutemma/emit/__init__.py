"""Emitting cutemma objects as code a kernel author pastes: CuTe DSL (``to_cute_dsl``).

>>> from cutemma import Layout
>>> to_cute_dsl(Layout(8, 2))
'cute.make_layout(8, stride=2)'
"""

from cutemma.emit.dsl import to_cute_dsl

__all__ = ["to_cute_dsl"]
