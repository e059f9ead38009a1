"""Moved to :mod:`assay_segmentation.report.values_plots` (the ``assay-segmentation`` plugin).

This old path is a lazy alias of it (:mod:`assay._relocated`).
"""

from __future__ import annotations

from assay._relocated import alias_module

__getattr__, __dir__ = alias_module(__name__, "assay_segmentation.report.values_plots", "assay-segmentation")
