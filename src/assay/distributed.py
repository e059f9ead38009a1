"""Moved: ``sync`` (merging metric states across ``torch.distributed`` processes) now lives in the
assay-interop plugin, :mod:`assay_interop.distributed`.

This module keeps the old import path working (and catalog entries that name
``assay.distributed.<name>`` loading): each name is imported from :mod:`assay_interop.distributed`
when first read, and without the plugin reading it raises
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-interop``.
"""

from __future__ import annotations

from assay._relocated import alias_module

__all__ = ["sync"]

__getattr__, __dir__ = alias_module(__name__, "assay_interop.distributed", "assay-interop", names=__all__)
