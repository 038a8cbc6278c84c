"""The sm90 family: warp-specialised wgmma + TMA GEMMs (sm_90a): ``config``, ``plan`` (GMMA
TiledMMA, stage layouts, descriptors, TMA boxes), ``ring`` (the stage ring as data),
``mainloop``, ``epilogue``, ``batched``, ``source`` (the kernel text), ``tma_maps``,
``launch`` and ``host`` (compile, launch).

>>> from cutemma.kernels.sm90.config import Sm90Config
>>> Sm90Config().threads
384
"""
