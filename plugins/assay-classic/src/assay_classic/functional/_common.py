"""The ``zero_division`` convention and safe division of the kernels: the core's :mod:`assay.functional`.

Re-exported here so the classic kernels import them from one place; the formulas live once, in the core.
"""

from __future__ import annotations

from assay.errors import UndefinedMetricWarning
from assay.functional import ZeroDivision, check_zero_division, divide

__all__ = ["UndefinedMetricWarning", "ZeroDivision", "check_zero_division", "divide"]
