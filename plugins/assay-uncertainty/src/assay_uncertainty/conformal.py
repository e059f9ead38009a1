"""Conformal prediction sets: coverage rate and set size (torch-uncertainty's ``CoverageRate`` and ``SetSize``).

A prediction set is a row of ``C`` 0 / 1 (or bool) indicators, ``sets[i, c] = 1`` when class
``c`` is in the set of example ``i``; ``sets`` is ``(N, C)``. Both metrics keep additive tallies,
so shards add and the intervals resample summed statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics import Metric, divide
from assay.validation import check_array, check_choice, check_int, check_labels
from assay_uncertainty.ensemble import _EnsembleMetric

__all__ = ["CoverageRate", "SetSize"]


def _sets(predictions: Any, owner: str) -> np.ndarray:
    """``(N, C)`` prediction sets as a bool array; a value other than 0 / 1 is an error naming it."""
    s = check_array(predictions, "predictions", owner=owner, ndim=2, shape="(N, C) set indicators", dtype=None)
    if s.dtype != bool:
        bad = np.argwhere((s != 0) & (s != 1))
        if bad.size:
            i, c = (int(v) for v in bad[0])
            raise InvalidParameterError(f"{owner}: `sets[{i}, {c}]` is {s[i, c]!r}; a prediction set holds 0 / 1 "
                                        "(or bool) indicators, one per class.")
        s = s != 0
    return s


class CoverageRate(Metric):
    r"""Empirical coverage of prediction sets: the share of examples whose label is in their set; higher is better.

    ``average="micro"`` (default): ``mean_i [y_i in C(x_i)]``. ``"macro"``: the coverage of each
    class (over the examples of that label), averaged over the ``num_classes`` classes, as
    torch-uncertainty's ``CoverageRate(average="macro")``: a class with no example counts as
    coverage 0 in the mean (torchmetrics' ``_safe_divide``). ``"macro"`` needs ``num_classes``.
    Inputs: ``update(sets, labels)``, ``sets`` of shape ``(N, C)`` (see the module docstring).
    """

    name = "coverage_rate"
    # sets {0, 1}, {2}, {} against labels 1, 0, 2: covered 1, 0, 0
    examples = [{"predictions": [[1, 1, 0], [0, 0, 1], [0, 0, 0]], "references": [1, 0, 2],
                 "global_target": {"coverage_rate": 1 / 3}}]
    main_score = "coverage_rate"
    additive = True
    vectorized = True

    def __init__(self, *, num_classes: int | None = None, average: str = "micro", score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.average = check_choice(average, "average", ("micro", "macro"), owner=self.name)
        self.num_classes = check_int(num_classes, "num_classes", low=2, owner=self.name, allow_none=True)
        if self.average == "macro" and self.num_classes is None:
            raise InvalidParameterError(f"{self.name}: average='macro' needs num_classes (the classes to average "
                                        "over); got None.")
        self.n_stats = 2 if self.num_classes is None or self.average == "micro" else 2 * self.num_classes

    def map_batch(self, predictions, references, task_data=None):
        s = _sets(predictions, self.name)
        n, c = s.shape
        if self.num_classes is not None and c != self.num_classes:
            raise InvalidParameterError(f"{self.name}: `sets` has {c} columns; num_classes is {self.num_classes}.")
        y = check_labels(references, "labels", owner=self.name, integer=True, n_classes=c)
        if y.shape != (n,):
            raise InvalidParameterError(f"{self.name}: expected `labels` of shape ({n},); got {y.shape}.")
        covered = s[np.arange(n), y].astype(np.float64)
        if self.average == "micro":
            return np.column_stack([covered, np.ones(n)])
        rows = np.zeros((n, 2 * c))
        rows[np.arange(n), y] = covered
        rows[np.arange(n), c + y] = 1.0
        return rows

    def reduce(self, totals):
        t = np.asarray(totals, dtype=np.float64)
        if self.average == "micro":
            return {self.main_score: divide(t[..., 0], t[..., 1])}
        c = self.num_classes
        hit, total = t[..., :c], t[..., c:]
        with np.errstate(invalid="ignore", divide="ignore"):
            per_class = np.where(total > 0, hit / np.where(total > 0, total, 1.0), 0.0)
        return {self.main_score: per_class.mean(axis=-1)}


class SetSize(_EnsembleMetric):
    r"""Size of prediction sets (torch-uncertainty's ``SetSize``): ``|C(x_i)|``; lower is better.

    ``reduction="mean"`` (default) averages over the examples, ``"sum"`` sums, ``"none"``
    keeps the size of each (``compute`` returns them). ``update(sets)``: ``(N, C)`` indicators;
    labels are not needed (given, they are ignored, as torch-uncertainty's ``targets``).
    """

    name = "set_size"
    examples = [{"predictions": [[1, 1, 0], [0, 0, 1], [0, 0, 0]], "global_target": {"set_size": 1.0}}]

    def __init__(self, *, reduction: str | None = "mean", score_prefix: str = "") -> None:
        super().__init__(reduction=reduction, score_prefix=score_prefix)  # the 0 / 1 check always runs

    def map_batch(self, predictions, references=None, task_data=None):
        size = _sets(predictions, self.name).sum(axis=1).astype(np.float64)
        if self.additive:
            return np.column_stack([size, np.ones_like(size)])
        return size
