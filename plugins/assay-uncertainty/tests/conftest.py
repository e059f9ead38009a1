"""Fixtures: the peers' modules that the differential tests compare, live, without their packages' start-up.

torch-uncertainty 0.13.0 and lm-polygraph 0.7.0 are installed without their dependencies
(``make setup``, step 7: ``test-peers-no-deps.txt``). Their package ``__init__`` files import what
is not installed (``torch_uncertainty`` imports Lightning; ``lm_polygraph`` its model zoo), so:

- a torch-uncertainty metric module (it imports only torch and torchmetrics) is loaded from its
  file with ``importlib.util.spec_from_file_location``;
- lm-polygraph's ``estimators/lexical_similarity.py`` imports ``.estimator``, which imports
  ``lm_polygraph.utils.common``: the three packages on that path (``lm_polygraph``,
  ``lm_polygraph.estimators``, ``lm_polygraph.utils``) are put in ``sys.modules`` as bare
  packages pointing at the installed folders, so that only those three files run (their own
  imports: rouge-score, nltk, absl, PIL, transformers, all installed). The bare packages are
  removed again afterwards.

A peer that is not installed is a failure naming ``make setup``, never a skip.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path
from types import ModuleType

import pytest


def _root(package: str, dist: str) -> Path:
    spec = importlib.util.find_spec(package)  # finds the folder without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise AssertionError(f"{dist} is not installed: run `make setup` (it installs the peers of the differential "
                             "tests with --no-deps, scripts/setup.sh step 7)")
    return Path(next(iter(spec.submodule_search_locations)))


def torch_uncertainty_module(relative: str) -> ModuleType:
    """``torch_uncertainty/<relative>`` (e.g. ``metrics/classification/fpr.py``) loaded from its file."""
    path = _root("torch_uncertainty", "torch-uncertainty==0.13.0") / relative
    name = "_peer_torch_uncertainty_" + relative.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_uncertainty_package_module(dotted: str) -> ModuleType:
    """``torch_uncertainty.<dotted>`` imported with bare parent packages, for modules with relative imports.

    The packages on the path (``torch_uncertainty``, ``.metrics``, ``.metrics.classification``,
    ``.metrics.classification.calibration``) are put in ``sys.modules`` as bare packages pointing at
    the installed folders, so that their ``__init__`` files (Lightning, the whole metric zoo) do not
    run. The calibration modules import seaborn for their reliability-diagram plots only; where it
    is not installed an empty ``seaborn`` module stands in while they load (a plot call would fail
    on it; no test plots). Everything added is removed again afterwards.
    """
    root = _root("torch_uncertainty", "torch-uncertainty==0.13.0")
    bare = {"torch_uncertainty": root, "torch_uncertainty.metrics": root / "metrics",
            "torch_uncertainty.metrics.classification": root / "metrics" / "classification",
            "torch_uncertainty.metrics.classification.calibration": root / "metrics" / "classification" / "calibration"}
    added = []
    for name, folder in bare.items():
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
            added.append(name)
    if importlib.util.find_spec("seaborn") is None and "seaborn" not in sys.modules:
        sys.modules["seaborn"] = types.ModuleType("seaborn")
        added.append("seaborn")
    before = set(sys.modules)
    try:
        return importlib.import_module(f"torch_uncertainty.{dotted}")
    finally:
        for name in added + [m for m in set(sys.modules) - before if m.startswith("torch_uncertainty")]:
            sys.modules.pop(name, None)


def lm_polygraph_module(dotted: str) -> ModuleType:
    """``lm_polygraph.<dotted>`` imported with bare parent packages (the module docstring says why)."""
    root = _root("lm_polygraph", "lm-polygraph==0.7.0")
    bare = {"lm_polygraph": root, "lm_polygraph.estimators": root / "estimators", "lm_polygraph.utils": root / "utils"}
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


@pytest.fixture(scope="session")
def tu_fpr() -> ModuleType:
    """torch-uncertainty 0.13.0's ``metrics/classification/fpr.py`` (``FPRx``)."""
    return torch_uncertainty_module("metrics/classification/fpr.py")


@pytest.fixture(scope="session")
def tu_variation_ratio() -> ModuleType:
    """torch-uncertainty 0.13.0's ``metrics/classification/variation_ratio.py`` (``VariationRatio``)."""
    return torch_uncertainty_module("metrics/classification/variation_ratio.py")


@pytest.fixture(scope="session")
def lp_lexical_similarity() -> ModuleType:
    """lm-polygraph 0.7.0's ``estimators/lexical_similarity.py`` (``LexicalSimilarity``)."""
    return lm_polygraph_module("estimators.lexical_similarity")


@pytest.fixture(scope="session")
def lm_polygraph():
    """:func:`lm_polygraph_module` itself, for the tests of issue 28: ``lm_polygraph("estimators.renyi_neg")``."""
    return lm_polygraph_module


@pytest.fixture(scope="session")
def tu_classification() -> dict[str, ModuleType]:
    """torch-uncertainty 0.13.0's classification metric modules that the issue 24 tests compare, by file stem."""
    stems = ("risk_coverage", "scod_risk_coverage", "coverage_rate", "set_size", "calibration.calibration_error",
             "calibration.classwise_calibration_error", "calibration.smooth_calibration_error",
             "calibration.adaptive_calibration_error", "brier_score", "categorical_nll", "entropy",
             "mutual_information", "disagreement", "variation_ratio", "fpr")
    return {stem.rsplit(".", 1)[-1]: torch_uncertainty_package_module(f"metrics.classification.{stem}")
            for stem in stems}


@pytest.fixture(scope="session")
def tu_classification_grouping() -> ModuleType:
    """torch-uncertainty 0.13.0's ``metrics/classification/grouping_loss.py`` (``GroupingLoss``; it imports glest)."""
    return torch_uncertainty_module("metrics/classification/grouping_loss.py")
