"""Throwaway distributions on sys.path, discovered through real ``assay`` entry points."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

GOOD = '''
from assay import hookimpl

class CountingMetric:
    """Counts instances (a throwaway test metric)."""
    def __init__(self, scale=1):
        self.scale = scale

@hookimpl
def assay_register_metrics(register):
    register("throwaway_metric", CountingMetric, description="counts things")
'''

BROKEN_IMPORT = '''
raise RuntimeError("this plugin is broken on purpose")
'''

DUPLICATE = '''
from assay import hookimpl

@hookimpl
def assay_register_metrics(register):
    register("zz_unique_metric", dict)
    register("throwaway_metric", dict)   # already taken by throwaway-good

@hookimpl
def assay_register_executors(register):
    register("zz_never_registered", dict)
'''

RAISING_HOOK = '''
from assay import hookimpl

@hookimpl
def assay_register_tasks(register):
    raise ValueError("hook failed on purpose")
'''


def make_distribution(root: Path, dist: str, module: str, source: str, ep_name: str | None = None) -> None:
    """Write ``module.py`` and a ``*.dist-info`` with an ``assay`` entry point into ``root``."""
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[assay]\n{ep_name or module} = {module}\n")


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A folder on sys.path with four throwaway distributions: good, broken, duplicate, raising."""
    make_distribution(tmp_path, "throwaway-good", "throwaway_good", GOOD)
    make_distribution(tmp_path, "throwaway-broken", "throwaway_broken", BROKEN_IMPORT)
    make_distribution(tmp_path, "zz-throwaway-duplicate", "zz_throwaway_duplicate", DUPLICATE)
    make_distribution(tmp_path, "throwaway-raising", "throwaway_raising", RAISING_HOOK)
    monkeypatch.syspath_prepend(str(tmp_path))
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path
