"""Grouping loss (Perez-Lebel et al., ICLR 2023): torch-uncertainty's ``GroupingLoss``, through glest.

The estimator is the paper authors' library, glest (``pip install assay-uncertainty[grouping]``),
as torch-uncertainty uses it: the top-label confidences are the "classifier" (an array of
probabilities), the outcome is whether the top label is right, and glest partitions the
feature space (a decision tree per confidence bin, fitted on half of the examples) and
estimates the debiased grouping loss of the Brier score on the other half. The metric keeps
``(confidence, correct, features ...)`` rows (gathered: shards concatenate, intervals resample
the rows and refit). Before glest splits them the rows are sorted by their values, so the
value does not depend on the order the examples came in (torch-uncertainty's does: glest's
split picks positions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics import Metric
from assay.validation import check_array, check_int, undefined_metric
from assay_uncertainty.calibration import _as_inputs, top_label

__all__ = ["GroupingLoss"]


class GroupingLoss(Metric):
    r"""Top-label grouping loss of the Brier score (torch-uncertainty's ``GroupingLoss``); lower is better.

    ``update(probs, labels, features)``: probabilities ``(N, C)`` (top label: confidence
    ``max_c p_c``, correct when the argmax is the label), ``(N,)`` (binary: the prediction is
    ``p > 0.5`` and the confidence ``p``, as torch-uncertainty) or ``(N, M, C)`` (an ensemble:
    the mean over the ``M`` members); ``labels`` ``(N,)`` class indices or ``(N, C)`` one-hot
    rows; ``features`` ``(N, F)`` or ``(N, M, F)`` (the first member's are used, as
    torch-uncertainty).

    ``random_state`` seeds glest's split of the examples and its trees: an int (default 0) gives
    the same value on every call; ``None`` draws from numpy's global generator, as
    torch-uncertainty does (it passes none). Fewer than two examples of either outcome is
    undefined (NaN with a warning).
    Reference: Perez-Lebel, Le Morvan & Varoquaux, "Beyond calibration: estimating the grouping
    loss of modern neural networks", ICLR 2023.
    """

    name = "grouping_loss"
    main_score = "grouping_loss"
    higher_is_better = False
    per_instance = False
    requirements = {"glest": "glest", "sklearn": "scikit-learn"}
    # 64 examples whose last feature decides whether the top label is right: no hand value (glest's split and
    # trees); the conformance suite checks order, shards and streaming on it. The probabilities are an ensemble
    # of two members, (N, M, C), so a batch one level deeper is a shape error (an (N, C) batch one level deeper,
    # (N, 1, C), is a valid ensemble of one member)
    examples = [{"predictions": [[[0.5 + 0.4 * ((7 * i) % 11) / 10, 0.5 - 0.4 * ((7 * i) % 11) / 10]] * 2
                                 for i in range(64)],
                 "references": [int(i % 4 == 0 or (i % 3 == 0 and i % 2 == 0)) for i in range(64)],
                 "task_data": [[float(i % 4 == 0), float((7 * i) % 11), float(i % 3)] for i in range(64)]}]

    def __init__(self, *, random_state: int | None = 0, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.random_state = check_int(random_state, "random_state", low=0, owner=self.name, allow_none=True)
        self.validate_args = bool(validate_args)

    def update(self, probs: Any, labels: Any = None, features: Any = None) -> GroupingLoss:
        """Add a batch of probabilities, labels and features (returns ``self``)."""
        if features is None:
            raise InvalidParameterError(f"{self.name}: update(probs, labels, features) needs `features`, one row per "
                                        "example; got None.")
        super().update(probs, labels, features)
        return self

    def map_batch(self, predictions, references, task_data=None):
        owner = self.name
        p = check_array(predictions, "probs", owner=owner, ndim=(1, 2, 3), shape="(N, C), (N,) or (N, M, C)",
                        finite=False, what="probabilities")
        if p.ndim == 3:  # (N, M, C): the ensemble's mean, as torch-uncertainty
            p = p.mean(axis=1)
        y = check_array(references, "labels", owner=owner, ndim=(1, 2), shape="(N,) or (N, C) one-hot", dtype=None,
                        finite=False, what="labels")
        if y.ndim == 2:  # one-hot rows
            y = y.argmax(axis=1)
        p, y = _as_inputs(p, y, validate=self.validate_args, name=owner)
        if p.ndim == 1:
            conf, right = p, (p > 0.5) == (y == 1)
        else:
            conf, right = top_label(p, y, validate=self.validate_args, name=owner)
        f = check_array(task_data, "features", owner=owner, ndim=(2, 3), shape="(N, F) or (N, M, F)")
        if f.ndim == 3:
            f = f[:, 0, :]
        if f.shape[0] != conf.shape[0]:
            raise InvalidParameterError(f"{owner}: `features` has {f.shape[0]} rows for {conf.shape[0]} examples.")
        return np.column_stack([np.asarray(conf, dtype=np.float64), right.astype(np.float64), f])

    def reduce(self, intermediates):
        rows = np.asarray(intermediates, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[0] == 0:
            return {self.name: undefined_metric(f"{self.name}: no examples; NaN.")}
        right = rows[:, 1].astype(np.int64)
        n_right = int(right.sum())
        if min(n_right, right.size - n_right) < 2:
            return {self.name: undefined_metric(f"{self.name}: needs at least two right and two wrong top labels "
                                                f"(got {n_right} right of {right.size}); NaN.")}
        from glest import GLEstimator  # deferred: glest imports scikit-learn and matplotlib

        order = np.lexsort(rows.T[::-1])  # canonical order: by confidence, then outcome, then the features
        rows, right = rows[order], right[order]
        try:
            estimator = GLEstimator(rows[:, 0], random_state=self.random_state).fit(rows[:, 2:], right)
        except ValueError as exc:  # glest's own checks, e.g. a confidence bin holding a single example
            raise InvalidParameterError(f"{self.name}: glest cannot estimate the grouping loss of these "
                                        f"{right.size} examples: {exc}") from None
        return {self.name: float(estimator.metrics("brier")["GL"])}
