"""Binned calibration error by norm, top-label and class-wise (torch-uncertainty's ``CalibrationError`` and
``ClasswiseCalibrationError``).

:class:`CalibrationError` is the top-label binned error of :mod:`assay_uncertainty.calibration`
with torch-uncertainty's ``norm`` option: ``"l1"`` is the ECE, ``"l2"`` the RMSCE, ``"max"`` the
MCE. :class:`ClasswiseCalibrationError` scores each class one-vs-rest, as torch-uncertainty
does (Kull et al. 2019): for class ``c`` the confidence is ``p_c`` and the outcome
``[y == c]``, binned into ``n_bins`` equal-width bins (torch-uncertainty: ``num_bins``); the ``C``
errors are then averaged
(``reduction="mean"``), summed (``"sum"``) or kept (``"none"``).

Bins are assay's, ``((m - 1) / M, m / M]`` (:func:`assay.functional.equal_width_bins`);
torchmetrics, under torch-uncertainty, bins ``[m / M, (m + 1) / M)`` with 1.0 in a bin of its
own, so a confidence exactly on an edge lands one bin apart. Everything else is the same
arithmetic: the values agree wherever no confidence sits on an edge.

Both keep additive per-bin tallies (counts and sums of ``outcome - confidence``), so shards add.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.functional import equal_width_bins
from assay.metrics import Metric
from assay.validation import check_choice, check_int
from assay_uncertainty.calibration import _as_inputs, _Binned, _binned_scores, binned_tallies, check_rows

__all__ = ["CalibrationError", "ClasswiseCalibrationError", "NORM_SCORES"]

#: torch-uncertainty's / torchmetrics' ``norm`` and the binned score it is
NORM_SCORES = {"l1": "ece", "l2": "rmsce", "max": "mce"}


class CalibrationError(_Binned):
    r"""Top-label binned calibration error by ``norm`` (torch-uncertainty's ``CalibrationError``); lower is better.

    ``norm="l1"`` (default): ``sum_b (n_b / N) |acc_b - conf_b|`` (the ECE); ``"l2"``:
    ``sqrt(sum_b (n_b / N) (acc_b - conf_b)^2)``; ``"max"``: ``max_b |acc_b - conf_b|``.
    ``n_bins`` defaults to 15 (torch-uncertainty's ``CalibrationError`` to ``num_bins=10``: give
    it). Inputs as :class:`assay_uncertainty.calibration.ECE`.
    """

    name = "calibration_error"
    # 2 bins: .9, .8 -> bin 1 (conf .85, acc 1/2); .3 -> bin 0 (conf .3, acc 0): 2/3 * .35 + 1/3 * .3
    examples = [{"predictions": [0.9, 0.8, 0.3], "references": [1, 0, 0], "overrides": {"n_bins": 2},
                 "global_target": {"calibration_error": 2 / 3 * 0.35 + 1 / 3 * 0.3}}]

    def __init__(self, *, n_bins: int = 15, norm: str = "l1", validate_args: bool = True,
                 score_prefix: str = "") -> None:
        self.norm = check_choice(norm, "norm", tuple(NORM_SCORES), owner=self.name)
        self.score = NORM_SCORES[self.norm]
        super().__init__(n_bins=n_bins, validate_args=validate_args, score_prefix=score_prefix)
        self.main_score = self.name

    def reduce(self, totals):
        scores = _binned_scores(np.asarray(totals, dtype=np.float64).reshape(2, self.n_bins))
        return {self.name: scores[self.score]}


class ClasswiseCalibrationError(Metric):
    r"""Class-wise calibration error (torch-uncertainty's ``ClasswiseCalibrationError``); lower is better.

    For every class ``c``, the binned calibration error (``norm``: ``"l1"``, ``"l2"``,
    ``"max"``, as :class:`CalibrationError`) of the confidences ``p_c`` against the outcomes
    ``[y == c]``; then ``reduction="mean"`` (default) or ``"sum"`` over the ``num_classes``
    classes, or ``"none"``: ``compute()`` returns the ``C`` errors (``compute_scores`` reports
    their mean as the score, and each as ``classwise_calibration_error_<c>``).
    Inputs: ``update(probs, labels)`` with ``probs`` of shape ``(N, num_classes)``; ``num_classes=None``
    (default; torch-uncertainty requires it) takes ``C`` from the first batch's columns, and a later
    batch (or shard) with another number of columns is an error.
    Reference: Kull et al., "Beyond temperature scaling", NeurIPS 2019.
    """

    name = "classwise_calibration_error"
    main_score = "classwise_calibration_error"
    # 2 bins; class 0: p_0 = .9 (outcome 1, gap .1), .2 (outcome 0, gap .2) -> (.1 + .2) / 2; class 1 the same
    examples = [{"predictions": [[0.9, 0.1], [0.2, 0.8]], "references": [0, 1],
                 "overrides": {"num_classes": 2, "n_bins": 2}, "global_target": {"classwise_calibration_error": 0.15}}]
    higher_is_better = False
    additive = True
    vectorized = False
    per_instance = False

    def __init__(self, *, num_classes: int | None = None, n_bins: int = 15, norm: str = "l1",
                 reduction: str | None = "mean", validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.num_classes = check_int(num_classes, "num_classes", low=2, owner=self.name, allow_none=True)
        self.n_bins = check_int(n_bins, "n_bins", low=1, owner=self.name)
        self.norm = check_choice(norm, "norm", tuple(NORM_SCORES), owner=self.name)
        self.reduction = check_choice("none" if reduction is None else reduction, "reduction",
                                      ("mean", "sum", "none"), owner=self.name)
        self.validate_args = bool(validate_args)
        self.n_stats = None if self.num_classes is None else 2 * self.num_classes * self.n_bins

    def _inputs(self, probs: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
        p, y = _as_inputs(probs, labels, validate=self.validate_args, name=self.name)
        if p.size == 0:  # no examples ([] reads as shape (0,))
            return np.zeros((0, self.num_classes or 0)), y
        if p.ndim == 2 and self.num_classes is None and p.shape[1] >= 2:  # C from the first batch
            self.num_classes = p.shape[1]
            self.n_stats = 2 * self.num_classes * self.n_bins
        if p.ndim != 2 or p.shape[1] != self.num_classes:
            raise InvalidParameterError(f"{self.name}: expected `probs` of shape (N, {self.num_classes}) "
                                        f"(num_classes={self.num_classes}); got {p.shape}.")
        if self.validate_args and p.size:
            check_rows(p, 0, self.name)
        return p, y

    def _tallies(self, p: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``(C, 2, n_bins)``: per class, per bin, the count and the sum of ``[y == c] - p_c``."""
        return np.stack([binned_tallies(p[:, c], (y == c).astype(np.float64), self.n_bins)
                         for c in range(p.shape[1])])

    def map_batch(self, predictions, references, task_data=None):
        p, y = self._inputs(predictions, references)
        n, nb = p.shape[0], self.n_bins
        rows = np.zeros((n, 2 * p.shape[1] * nb))  # one instance's tallies per row (the intervals resample these)
        idx = np.arange(n)
        for c in range(self.num_classes):
            b = equal_width_bins(p[:, c], nb)
            rows[idx, 2 * nb * c + b] = 1.0
            rows[idx, 2 * nb * c + nb + b] = (y == c) - p[:, c]
        return rows

    def update(self, probs, labels=None, task_data=None):  # fast path: bincounts per class, no per-instance rows
        p, y = self._inputs(probs, labels)
        st = self.state
        if p.shape[0]:
            t = self._tallies(p, y).reshape(-1)
            st.totals = t if st.totals is None else st.totals + t
        st.n += p.shape[0]
        return self

    def per_class(self, totals: Any) -> np.ndarray:
        """The ``C`` class errors of summed tallies."""
        t = np.asarray(totals, dtype=np.float64)
        t = t.reshape(t.size // (2 * self.n_bins), 2, self.n_bins)  # C from the tallies (num_classes may be None)
        score = NORM_SCORES[self.norm]
        return np.array([_binned_scores(t[c])[score] for c in range(t.shape[0])])

    def reduce(self, totals):
        errors = self.per_class(totals)
        value = errors.sum() if self.reduction == "sum" else errors.mean()
        out = {self.name: float(value)}
        if self.reduction == "none":
            out.update({f"{self.name}_{c}": float(e) for c, e in enumerate(errors)})
        return out

    def compute(self) -> Any:
        """The reduced error (a float); with ``reduction="none"`` the ``C`` class errors (a float64 array)."""
        if self.reduction == "none":
            totals = self.state.totals
            return self.per_class(totals if totals is not None else np.zeros(self.n_stats or 0))
        return super().compute()
