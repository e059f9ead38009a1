"""Moved: ``HuggingfaceMetric`` now lives in the assay-interop plugin,
:mod:`assay_interop.huggingface`.

This module keeps the old import path working (and catalog entries that name
``assay.metrics.huggingface.<name>`` loading): each name is imported from
:mod:`assay_interop.huggingface` when first read, and without the plugin reading it raises
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-interop``.
"""

from __future__ import annotations

from typing import Any

from assay.plugins.deps import moved_to_plugin

__all__ = ["HuggingfaceMetric", "load_evaluate_module"]

_moved = moved_to_plugin(__name__, dict.fromkeys(__all__, "assay_interop.huggingface"), package="assay-interop")


def __getattr__(name: str) -> Any:
    return _moved(name)
