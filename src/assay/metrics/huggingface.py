"""Moved: ``HuggingfaceMetric`` now lives in the assay-interop plugin,
:mod:`assay_interop.huggingface`.

This module keeps the old import path working (and catalog entries that name
``assay.metrics.huggingface.<name>`` loading): each name is imported from
:mod:`assay_interop.huggingface` when first read, and without the plugin reading it raises
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-interop``.
"""

from __future__ import annotations

from assay._relocated import alias_module

__all__ = ["HuggingfaceMetric", "load_evaluate_module"]

__getattr__, __dir__ = alias_module(__name__, "assay_interop.huggingface", "assay-interop", names=__all__)
