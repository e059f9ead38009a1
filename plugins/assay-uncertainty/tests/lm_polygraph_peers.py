"""lm-polygraph 0.7.0's modules for the density-estimator and text-metric tests, imported with bare parent packages.

As :func:`conftest.lm_polygraph_module`, for any of its subpackages (``estimators``,
``generation_metrics``): ``lm_polygraph/__init__`` imports its model zoo, which is not installed,
so the packages on the path are put in ``sys.modules`` as bare packages pointing at the installed
folders for the import, and removed again afterwards. A peer that is not installed is a failure
naming ``make setup``, never a skip.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path
from types import ModuleType


def lm_polygraph_module(dotted: str) -> ModuleType:
    """``lm_polygraph.<dotted>`` (e.g. ``estimators.rde``, ``generation_metrics.rouge``)."""
    spec = importlib.util.find_spec("lm_polygraph")
    if spec is None or not spec.submodule_search_locations:
        raise AssertionError("lm-polygraph==0.7.0 is not installed: run `make setup` (it installs the peers of the "
                             "differential tests with --no-deps, scripts/setup.sh step 7)")
    root = Path(next(iter(spec.submodule_search_locations)))
    sub = dotted.split(".")[0]
    bare = {"lm_polygraph": root, f"lm_polygraph.{sub}": root / sub, "lm_polygraph.utils": root / "utils"}
    added = []
    for name, folder in bare.items():
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
            added.append(name)
    try:
        return importlib.import_module(f"lm_polygraph.{dotted}")
    finally:
        for name in added:
            sys.modules.pop(name, None)
