"""The sm80 family: ``mma.sync`` GEMMs fed by cp.async and ldmatrix (sm_80 and newer):
``plan`` (the TiledMMA, smem layouts and copies as tables), ``ldmatrix``, ``pipeline`` (the
mainloop's schedule), ``source`` (the kernel text), ``launch`` and ``host`` (compile, launch).

>>> from cutemma.kernels.sm80.plan import GemmConfig
>>> GemmConfig().threads
128
"""
