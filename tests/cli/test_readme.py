"""The README works for a newcomer (issue 13): its links name files the repository has, its
Quickstart block is what .ci/run runs, and the test command installs what the suite needs."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def quickstart() -> list[str]:
    section = README.split("## Quickstart", 1)[1]
    block = section.split("```", 2)[1]
    return [line for line in block.splitlines() if line.strip()]


def test_every_relative_link_and_path_in_the_readme_exists():
    targets = re.findall(r"\]\(([^)#]+)\)", README)  # markdown links and images
    targets += re.findall(r"`((?:docs|bench|tests|cutemma)/[\w./-]+)`", README)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links nothing local?"
    assert [t for t in local if not (ROOT / t).exists()] == []
    assert "../" not in README  # nothing outside the repository


def test_the_quickstart_says_what_it_assumes_and_installs_the_cuda_extra():
    assert "Python >= 3.10" in README and "venv" in README
    cmds = quickstart()
    test_cmd = next(c for c in cmds if "pytest" in c)
    assert test_cmd == 'pip install -e ".[test,cuda]" && pytest -q'


def test_ci_runs_the_readme_block_itself():
    import shutil
    import subprocess

    ci = (ROOT / ".ci" / "run").read_text()
    extract = next(line for line in ci.splitlines() if line.startswith("commands=$(awk"))
    if shutil.which("awk"):  # the script's own extraction gives the README's block
        script = extract.removeprefix("commands=$(").removesuffix(")")
        out = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True)
        assert [ln for ln in out.stdout.splitlines() if ln.strip()] == quickstart()
    assert "## Quickstart" in ci and "python3 -m venv" in ci
    # the test command itself comes from the README, never written into the script
    assert "pytest -q" not in ci and 'pip install -e ".[test' not in ci


def test_the_emit_section_prints_what_it_shows():
    # issue 19: the README's `cutemma emit` command prints the block under it
    import contextlib
    import io
    import shlex

    from cutemma.cli import main

    section = README.split("## Into your kernel", 1)[1].split("\n## ", 1)[0]
    command = section.split("```bash\n", 1)[1].split("```", 1)[0].strip()
    shown = section.split("```text\n", 1)[1].split("```", 1)[0].strip()
    assert command.startswith("cutemma emit cpp ")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(shlex.split(command)[1:]) == 0
    assert out.getvalue().strip() == shown


def test_the_design_section_runs():
    # the README's design example (its CPU part) runs and prints explain's report
    block = README.split("## Your own kernel", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    report = out.getvalue()
    assert all(w in report for w in ("shared memory", "registers", "conflict", "occupancy"))
