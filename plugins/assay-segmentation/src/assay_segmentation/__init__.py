"""assay-segmentation: ValUES downstream tasks for uncertainty maps, as an assay plugin.

Registered aggregations: ``image_mean``, ``image_sum``, ``patch_max[patch_size=10,
mean=false]``, ``threshold_mean[threshold=...]``; tasks: ``ood_detection``,
``failure_detection``, ``calibration``, ``ambiguity_modeling``,
``segmentation_performance``, ``al_improvement`` (and ``al_split_files``). The building
blocks are plain functions here.

>>> from assay_segmentation import dice
>>> dice([[1, 1], [0, 0]], [[1, 1], [0, 0]])
1.0
"""

from __future__ import annotations

from assay_segmentation.aggregations import find_threshold
from assay_segmentation.measures import al_improvement, dice, ged, ncc

__all__ = ["al_improvement", "dice", "find_threshold", "ged", "ncc"]
__version__ = "0.1.0"
