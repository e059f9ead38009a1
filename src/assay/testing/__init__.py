"""Testing kit for metric authors: :func:`test_metric`, the invariance checks, pytest fixtures.

>>> from assay.testing import test_metric  # safe to import into a test module: not collected

The pytest plugin (:mod:`assay.testing.pytest_plugin`, loaded through the ``pytest11``
entry point) provides the fixtures ``assay_plugin_system`` (a fresh plugin system
without entry points, installed for the test) and ``register_assay_plugin`` (register a
plugin object on it and get its registry entries by name).
"""

from __future__ import annotations

from assay.testing.kit import check_invariances, check_scores, test_metric

__all__ = ["check_invariances", "check_scores", "test_metric"]
