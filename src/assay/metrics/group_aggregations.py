"""Moved: unitxt's ``group_mean`` aggregations now live in the assay-unitxt plugin,
:mod:`assay_unitxt.group_aggregations`.

This module keeps the old import path working (and catalog entries that name
``assay.metrics.group_aggregations.<name>`` loading): each name is imported from
:mod:`assay_unitxt.group_aggregations` when first read, and without the plugin reading it raises
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-unitxt``.
"""

from __future__ import annotations

from assay._relocated import alias_module

__all__ = [
    "interpret_effect_size", "mean_subgroup_score", "nan_max", "nan_mean", "nan_std", "normalized_cohens_h",
    "normalized_hedges_g", "performance_drop_rate", "validate_subgroup_types",
]

__getattr__, __dir__ = alias_module(__name__, "assay_unitxt.group_aggregations", "assay-unitxt", names=__all__)
