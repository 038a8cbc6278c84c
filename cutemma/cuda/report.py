"""The verification sweep's record: per-atom results, the report, its JSON and a progress bar.

>>> r = Report([AtomResult('X', 'f')], wall_s=0.5)
>>> r.table().splitlines()[1].split()
['f', '1', '0', '0']
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path


@dataclass
class AtomResult:
    """One atom's outcome: ``status`` is 'pass', 'fail' or 'skip'; ``detail`` says why."""

    name: str
    family: str
    status: str = "pass"
    stages: dict = field(default_factory=dict)
    max_err: float | None = None
    detail: str = ""

    def fail(self, stage: str, why: str) -> None:
        self.stages[stage] = "fail"
        self.status = "fail"
        self.detail = self.detail or f"{stage}: {why}"

    def skip(self, stage: str, why: str) -> None:
        self.stages[stage] = "skip"
        if self.status == "pass" and stage in ("hardware", "compile"):
            self.status = "skip"
            self.detail = self.detail or f"{stage}: {why}"


@dataclass
class Report:
    """The sweep's results, counts and the per-family table.

    >>> r = Report([AtomResult('X', 'f'), AtomResult('Y', 'f', status='fail')], wall_s=1.0)
    >>> r.passed, r.failed, r.skipped
    (1, 1, 0)
    """

    atoms: list[AtomResult]
    wall_s: float = 0.0
    device: str = "cpu (no hardware stage)"
    hardware: bool = False
    stage_s: dict = field(default_factory=dict)
    stages_run: tuple = ("layout", "compile")  # plus "hardware" when run

    def _count(self, status: str) -> int:
        return sum(a.status == status for a in self.atoms)

    @property
    def passed(self) -> int:
        return self._count("pass")

    @property
    def failed(self) -> int:
        return self._count("fail")

    @property
    def skipped(self) -> int:
        return self._count("skip")

    def table(self) -> str:
        """Pass / fail / skip per family, failures named below the table."""
        fams: dict[str, Counter] = {}
        for a in self.atoms:
            fams.setdefault(a.family, Counter())[a.status] += 1
        width = max([len(f) for f in fams] + [6])
        lines = [f"{'family':<{width}}  pass  fail  skip"]
        for fam in sorted(fams):
            c = fams[fam]
            lines.append(f"{fam:<{width}}  {c['pass']:4d}  {c['fail']:4d}  {c['skip']:4d}")
        lines.append(
            f"{'total':<{width}}  {self.passed:4d}  {self.failed:4d}  {self.skipped:4d}"
            f"   ({self.wall_s:.1f} s)"
        )
        ran = self.stages_run + (("hardware",) if self.hardware else ())
        lines.append(f"stages run: {', '.join(ran)}")
        failures = [a for a in self.atoms if a.status == "fail"]
        lines += [f"FAIL {a.name}: {a.detail}" for a in failures[:50]]
        if len(failures) > 50:
            lines.append(f"... and {len(failures) - 50} more failures")
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The JSON record: device, commit, date, counts, wall time, one entry per atom."""
        return {
            "device": self.device,
            "commit": _commit(),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "hardware": self.hardware,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "wall_s": round(self.wall_s, 2),
            "stage_s": {k: round(v, 2) for k, v in self.stage_s.items()},
            "stages_run": list(self.stages_run + (("hardware",) if self.hardware else ())),
            "atoms": [
                {
                    "name": a.name,
                    "family": a.family,
                    "status": a.status,
                    "max_err": a.max_err,
                    "stages": a.stages,
                    **({"detail": a.detail} if a.detail else {}),
                }
                for a in self.atoms
            ],
        }


def _commit() -> str:
    """HEAD's short hash; $CUTEMMA_COMMIT wins (a copied tree without .git, e.g. the GPU machine)."""
    if env := os.environ.get("CUTEMMA_COMMIT"):
        return env
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
            timeout=10,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class Progress:
    """A one-line progress bar on stderr (silent when ``enabled`` is False)."""

    def __init__(self, total: int, label: str, enabled: bool = True):
        self.total, self.label, self.enabled, self.done = max(total, 1), label, enabled, 0

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.enabled:
            filled = int(30 * self.done / self.total)
            bar = "#" * filled + "." * (30 - filled)
            sys.stderr.write(f"\r{self.label:<9} [{bar}] {self.done}/{self.total}")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
