"""Testing kit for metric authors: :func:`test_metric`, the invariance checks, pytest fixtures.

>>> from assay.testing import test_metric  # safe to import into a test module: not collected

The pytest plugin (:mod:`assay.testing.pytest_plugin`, loaded through the ``pytest11``
entry point) provides the fixtures ``assay_plugin_system`` (a fresh plugin system
without entry points, installed for the test) and ``register_assay_plugin`` (register a
plugin object on it). The kit itself is imported on first use, so loading the pytest
plugin costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["INVARIANCES", "check_evaluate_matches", "check_invariance", "check_invariances", "check_scores",
           "test_metric"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from assay.testing import kit

        return getattr(kit, name)
    raise AttributeError(f"module 'assay.testing' has no attribute {name!r}")


if TYPE_CHECKING:  # pragma: no cover
    from assay.testing.kit import (
        INVARIANCES,
        check_evaluate_matches,
        check_invariance,
        check_invariances,
        check_scores,
        test_metric,
    )
