"""Moved to :mod:`assay_segmentation.downstream.grid` (the ``assay-segmentation`` plugin).

This old path is a lazy alias of it (:mod:`assay._relocated`).
``ExperimentVersion`` is the core's own (:mod:`assay.downstream.task`).
"""

from __future__ import annotations

from assay._relocated import alias_module
from assay.downstream.task import ExperimentVersion as ExperimentVersion  # the task contract stays in the core

__getattr__, __dir__ = alias_module(__name__, "assay_segmentation.downstream.grid", "assay-segmentation",
                                    own=globals())
