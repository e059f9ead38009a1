"""ROC AUC as a metric: predictions are real scores, references binary labels."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics import Metric
from assay.validation import check_array, check_labels
from assay_classic._inputs import one_reference_each
from assay_classic.functional.ranking import binary_labels, roc_auc_from_split

__all__ = ["RocAuc"]


class RocAuc(Metric):
    r"""Area under the ROC curve of scores (predictions) against binary labels (references).

    .. math::

        AUC = \frac{1}{P N} \sum_{i \in pos} \sum_{j \in neg}
              \left( [s_i > s_j] + \tfrac12 [s_i = s_j] \right)

    the Mann-Whitney statistic with average ranks, equal to the trapezoid area under
    scikit-learn's ROC curve with tie groups (``sklearn.metrics.roc_auc_score``). Computed by
    sorting each class and merging (our own numpy; see
    :mod:`assay_classic.functional.ranking`). The positive label is ``pos_label``, or the
    greater of the two labels (scikit-learn's rule; labels must then be numbers or booleans).
    A single class gives NaN with a warning. Not additive: the state keeps the
    ``(score, label)`` pairs; no instance scores.

    References
    ----------
    Hanley & McNeil (1982), "The meaning and use of the area under a ROC curve";
    Fawcett (2006), "An introduction to ROC analysis".
    """

    main_score = "roc_auc"
    prediction_type = float
    per_instance = False
    examples = [{"predictions": [0.1, 0.4, 0.35, 0.8], "references": [[0], [0], [1], [1]],
                 "global_target": {"roc_auc": 0.75}}]

    def __init__(self, *, pos_label: Hashable | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.pos_label = pos_label

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None, task_data: Any) -> np.ndarray:
        labels = one_reference_each(references, metric="roc_auc")
        # finite scores, as scikit-learn's roc_auc_score asks (an error names the first NaN or inf)
        scores = check_array(predictions, "predictions", owner="roc_auc", ndim=1, shape="(n,) (one score per instance)",
                             what="scores")
        check_labels(labels, "references", owner="roc_auc")
        if self.pos_label is not None:
            coded = np.fromiter((lab == self.pos_label for lab in labels), dtype=np.float64, count=len(labels))
        else:
            try:
                coded = check_array(labels, "references", owner="roc_auc", ndim=1, what="labels")
            except InvalidParameterError as exc:
                raise InvalidParameterError(
                    f"{exc} roc_auc references must be numbers or booleans unless pos_label= names the positive "
                    "label."
                ) from None
        return np.column_stack([scores, coded])

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> np.ndarray:
        return self.map_batch([prediction], [references], None)[0]

    def reduce(self, intermediates: Any) -> dict[str, float]:
        arr = np.asarray(intermediates, dtype=np.float64).reshape(-1, 2)
        positive = binary_labels(arr[:, 1], 1.0 if self.pos_label is not None else None)
        return {"roc_auc": roc_auc_from_split(arr[positive, 0], arr[~positive, 0])}
