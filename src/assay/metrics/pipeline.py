"""Moved: ``MetricPipeline`` now lives in the assay-unitxt plugin, :mod:`assay_unitxt.pipeline`.

This module keeps the old import path working (and catalog entries that name
``assay.metrics.pipeline.<name>`` loading): each name is imported from :mod:`assay_unitxt.pipeline`
when first read, and without the plugin reading it raises
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-unitxt``.
"""

from __future__ import annotations

from typing import Any

from assay.plugins.deps import moved_to_plugin

__all__ = ["MetricPipeline"]

_moved = moved_to_plugin(__name__, dict.fromkeys(__all__, "assay_unitxt.pipeline"), package="assay-unitxt")


def __getattr__(name: str) -> Any:
    return _moved(name)
