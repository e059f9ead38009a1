"""assay's own demo section (``metrics``), registered like a plugin's (a built-in plugin module)."""

from __future__ import annotations

from pathlib import Path

from assay.plugins.hookspecs import hookimpl


def _run_metrics(out_dir: Path) -> None:
    from assay.demo.metrics import run

    run(out_dir)


@hookimpl
def assay_register_demo_sections(register):
    register("metrics", _run_metrics, order=20,
             title="classification and translation scores with bootstrap intervals, and a paired comparison")
