"""Moved: ``MetricPipeline`` now lives in the assay-unitxt plugin, :mod:`assay_unitxt.pipeline`.

This module keeps the old import path working (and catalog entries that name
``assay.metrics.pipeline.<name>`` loading): each name is imported from :mod:`assay_unitxt.pipeline`
when first read, and without the plugin reading it raises
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-unitxt``.
"""

from __future__ import annotations

from assay._relocated import alias_module

__all__ = ["MetricPipeline"]

__getattr__, __dir__ = alias_module(__name__, "assay_unitxt.pipeline", "assay-unitxt", names=__all__)
