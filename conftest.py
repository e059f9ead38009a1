"""Project-wide pytest settings (every test path: tests/, plugins/*/tests, examples/).

Hypothesis: no per-example deadline. The suite runs on shared, noisy machines, where a
timing deadline fails a correct property at random; the properties check values, not speed
(speed is measured under bench/, never asserted in tests).
"""

from hypothesis import settings

settings.register_profile("assay", deadline=None, print_blob=True)
settings.load_profile("assay")


# --------------------------------------------------------------------------- torch-uncertainty, live
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
import types  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

#: the packages on the import paths of torch-uncertainty's metric modules, put in sys.modules bare
_TU_BARE = ("", ".metrics", ".metrics.classification", ".metrics.regression", ".metrics.segmentation", ".utils")
#: names those modules import from a package ``__init__`` (which would import Lightning and torchvision)
_TU_NAMES = {"torch_uncertainty.metrics": {"CategoricalNLL": "metrics.classification.categorical_nll"},
             "torch_uncertainty.utils": {"check_interval_shapes": "utils.checks"}}


def _torch_uncertainty(dotted: str) -> types.ModuleType:
    """``torch_uncertainty.<dotted>`` imported with bare parent packages, without their ``__init__`` files.

    torch-uncertainty 0.13.0 is installed without its dependencies (``make setup``, step 8); its
    ``__init__`` files import Lightning and torchvision. The metric modules import only torch,
    torchmetrics, matplotlib and two of its own names (``CategoricalNLL``, ``check_interval_shapes``),
    which the bare packages get from their own files. The bare packages are removed afterwards.
    """
    spec = importlib.util.find_spec("torch_uncertainty")  # finds the folder without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise AssertionError("torch-uncertainty==0.13.0 is not installed: run `make setup` (it installs the peers "
                             "of the differential tests with --no-deps)")
    root = Path(next(iter(spec.submodule_search_locations)))
    before = set(sys.modules)
    try:
        for suffix in _TU_BARE:
            pkg = types.ModuleType("torch_uncertainty" + suffix)
            pkg.__path__ = [str(root / suffix.lstrip(".").replace(".", "/"))]
            sys.modules[pkg.__name__] = pkg
        for package, names in _TU_NAMES.items():
            for name, module in names.items():
                setattr(sys.modules[package], name,
                        getattr(importlib.import_module(f"torch_uncertainty.{module}"), name))
        return importlib.import_module(f"torch_uncertainty.{dotted}")
    finally:
        for name in set(sys.modules) - before:
            if name == "torch_uncertainty" or name.startswith("torch_uncertainty."):
                del sys.modules[name]


@pytest.fixture(scope="session")
def torch_uncertainty():
    """A loader of torch-uncertainty 0.13.0's modules: ``torch_uncertainty("metrics.regression.depth")``."""
    return _torch_uncertainty
