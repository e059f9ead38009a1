"""Compile a standalone LaTeX table with pdflatex (installed by ``make setup``: scripts/ensure-latex.sh)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def compile_latex(tex: str, folder: Path) -> str:
    """Compile ``tex`` in ``folder``; the log when it gave a one-page PDF without an error, else an AssertionError."""
    exe = shutil.which("pdflatex")
    if exe is None:
        raise AssertionError("pdflatex is not installed; `make setup` installs it (scripts/ensure-latex.sh)")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "table.tex").write_text(tex, encoding="utf-8")
    run = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "table.tex"],
                         cwd=folder, capture_output=True, text=True, timeout=300)
    log = (folder / "table.log").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, f"pdflatex failed:\n{log[-3000:]}"
    assert "Output written on table.pdf (1 page" in log, log[-1500:]
    for problem in ("Undefined control sequence", "Missing character", "LaTeX Error", "Overfull \\hbox"):
        assert problem not in log, f"{problem} in the LaTeX log:\n{log[-3000:]}"
    return log
