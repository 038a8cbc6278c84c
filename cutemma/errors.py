"""The one hierarchy of cutemma errors.

Every error a user can cause is a :class:`CutemmaError`; its message names the
inputs involved and what would have been accepted.

>>> issubclass(LayoutParseError, LayoutError) and issubclass(LayoutError, ValueError)
True
"""

from __future__ import annotations


class CutemmaError(Exception):
    """Base of every error cutemma raises on bad input."""


class LayoutError(CutemmaError, ValueError):
    """A layout, int-tuple or algebra operation got operands it cannot take."""


class LayoutParseError(LayoutError):
    """Layout text could not be read; the message names the column and what was expected."""


class NotALayoutError(LayoutError):
    """A (thread, value) -> coordinate table is not expressible as one CuTe layout."""


class AtomError(CutemmaError, ValueError):
    """An MMA operation name, shape, type combination or parameter is not valid."""


class TiledMmaError(CutemmaError, ValueError):
    """A TiledMMA was built or used with incompatible atom layout, permutation or tensor."""


class DescriptorError(CutemmaError, ValueError):
    """A shared-memory layout is not canonical, or descriptor fields are out of range."""


class CompileError(CutemmaError, RuntimeError):
    """NVRTC rejected generated source; carries the log and the numbered source lines."""


class LaunchError(CutemmaError, RuntimeError):
    """A kernel could not be launched: no GPU, wrong device, dtype or memory layout."""


class CopyError(CutemmaError, ValueError):
    """A copy operation name, value type, TiledCopy construction or copied tensor is not valid."""


class TmaError(CutemmaError, ValueError):
    """A shared-memory layout TMA cannot fill, or tensor-map arguments break the driver's rules."""


class CliError(CutemmaError, ValueError):
    """A command-line argument or option is not valid; the message names it and what is accepted."""


class EmitError(CutemmaError, ValueError):
    """An object the target language (CuTe C++ or CuTe DSL) cannot express, or a bad emit option."""


class ConfigRuleError(TiledMmaError):
    """A kernel family's config whose fields break named rules of its table
    (:mod:`cutemma.kernels.common.config_rules`): ``subject`` names the config, ``broken``
    holds (rule name, what would satisfy it) for each rule it breaks."""

    def __init__(self, subject: str, broken: tuple[tuple[str, str], ...]) -> None:
        self.subject = subject
        self.broken = tuple(broken)
        super().__init__(
            f"{subject}: " + "; ".join(f"rule {name}: need {need}" for name, need in broken)
        )

    def __reduce__(self) -> tuple:  # pickles (worker processes) keep the two fields
        return (type(self), (self.subject, self.broken))


class DesignError(TiledMmaError):
    """A GEMM design (TiledMMA, tile, smem layouts, copies, schedule, epilogue) that cannot run;
    the message names the rule that failed and what would satisfy it."""


class ArchError(CutemmaError, ValueError):
    """An architecture name cutemma does not know; the message lists the known ones."""


class SoftwareAtomWarning(UserWarning):
    """A design's MMA atom compiles, on the target architecture, to a called software routine
    instead of tensor-core instructions: correct, but far slower than its native target."""


class CacheWarning(UserWarning):
    """A disk-cache entry was damaged (wrong digest or length, not a regular file) and is
    being rebuilt; said once per entry and process."""


class DrawError(CutemmaError, TypeError):
    """A picture function (to_svg, to_html, to_latex, to_text) got an object it cannot draw;
    the message names its type and what can be drawn."""
