"""Moved: ``sync`` (merging metric states across ``torch.distributed`` processes) now lives in the
assay-interop plugin, :mod:`assay_interop.distributed`.

This module keeps the old import path working (and catalog entries that name
``assay.distributed.<name>`` loading): each name is imported from :mod:`assay_interop.distributed`
when first read, and without the plugin reading it raises
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-interop``.
"""

from __future__ import annotations

from typing import Any

from assay.plugins.deps import moved_to_plugin

__all__ = ["sync"]

_moved = moved_to_plugin(__name__, dict.fromkeys(__all__, "assay_interop.distributed"), package="assay-interop")


def __getattr__(name: str) -> Any:
    return _moved(name)
