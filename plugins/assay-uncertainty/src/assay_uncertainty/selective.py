"""torch-uncertainty's selective-classification metrics: risk-coverage of probabilities, and the SCOD variants.

torch-uncertainty 0.13.0 scores classifiers' probabilities directly (``AURC``, ``AUGRC``,
``CovAtxRisk``, ``RiskAtxCov`` and their fixed levels ``CovAt5Risk``, ``RiskAt80Cov``); its
SCOD classes (selective classification with out-of-distribution detection: ``SCODAURC``,
``SCODAUGRC``, ``SCODCovAtxRisk``, ``SCODCovAt5Risk``, ``SCODRiskAtxCov``, ``SCODRiskAt80Cov``)
score OOD scores against a cost per example. These classes are those, as assay metrics:
``update(probs, labels)`` (SCOD: ``update(ood_scores, classification_errors, is_ood)``),
``compute()`` a float, and map / reduce over gathered rows ``(uncertainty, quality)``, so
shards merge (rows concatenate) and ``assay.evaluate`` resamples them for intervals.

From probabilities (``(N, C)``, or ``(N,)`` for the positive class, read as ``(1 - p, p)``):
the confidence is the top probability and the quality ``1`` when the argmax (ties to the first
class) is the label; uncertainty is minus the confidence. SCOD: uncertainty is the OOD score
(higher = rejected first) and the risk the SCOD loss, ``ood_cost`` for an OOD example and
``(1 - ood_cost) * error`` for an in-distribution one.

The curves are :mod:`assay_uncertainty.risk_coverage`'s in its ``"torch-uncertainty"``
convention: the selective risk ``R_k`` at every ``k = 1..N``, the trapezoid over ``k / N``
divided by ``1 - 1/N``. One difference from torch-uncertainty, by design: examples tied in
confidence enter as a group (``R_k`` inside a group is the expectation over the orders of
the tied examples), where torch-uncertainty takes the order its sort happens to give; without
ties the values are torch-uncertainty's (to float32 rounding: it sums in float32).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics import Metric
from assay.validation import check_array, check_number, undefined_metric
from assay_uncertainty._curves import cumulative_at, group_ends
from assay_uncertainty.calibration import _as_inputs, top_label
from assay_uncertainty.risk_coverage import augrc, aurc

__all__ = [
    "AURCOfProbs", "AUGRCOfProbs", "CovAtxRisk", "CovAt5Risk", "RiskAtxCov", "RiskAt80Cov",
    "SCODAURC", "SCODAUGRC", "SCODCovAtxRisk", "SCODCovAt5Risk", "SCODRiskAtxCov", "SCODRiskAt80Cov",
    "coverage_at_x_risk", "risk_at_x_cov",
]


def coverage_at_x_risk(u: np.ndarray, q: np.ndarray, risk: float) -> float:
    """Largest ``k / N`` whose selective risk ``R_k`` (every ``k = 1..N``) is at most ``risk``; NaN if none.

    torch-uncertainty's ``CovAtxRisk``: ``R_k`` need not fall with ``k``, so the largest
    admissible ``k`` is taken, not the first one past the threshold.
    """
    n = u.size
    K, S = group_ends(u, 1.0 - q)
    k = np.arange(1, n + 1, dtype=np.float64)
    ok = np.flatnonzero(cumulative_at(k, K, S) / k <= risk)
    if ok.size == 0:
        return undefined_metric(f"CovAtxRisk: no coverage has a selective risk <= {risk}; NaN.")
    return float(ok[-1] + 1) / n


def risk_at_x_cov(u: np.ndarray, q: np.ndarray, coverage: float) -> float:
    """Selective risk ``R_k`` of the ``k = ceil(N * coverage)`` most confident examples (torch-uncertainty's)."""
    n = u.size
    k = math.ceil(n * coverage)  # as torch-uncertainty: no tolerance, so 0.8 * 10 gives 8 and 0.7 * 10 gives 8 too
    K, S = group_ends(u, 1.0 - q)
    return float(cumulative_at(np.array([k], dtype=np.float64), K, S)[0] / k)


#: torch-uncertainty's AURC docstring example
_EXAMPLE_P = [[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]]
#: OOD scores, classification errors and OOD flags of three examples (the last one OOD)
_SCOD_EXAMPLE: dict[str, Any] = {"predictions": [0.1, 0.5, 0.9], "references": [0, 1, 0], "task_data": [0, 0, 1]}


class _Curve(Metric):
    """A risk-coverage score of gathered ``(uncertainty, quality)`` rows; subclasses set :meth:`_of`."""

    higher_is_better = False
    per_instance = False

    def __init__(self, *, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.validate_args = bool(validate_args)
        self.main_score = self.name or type(self).__name__

    def map_batch(self, predictions, references, task_data=None):
        p, y = _as_inputs(predictions, references, validate=self.validate_args, name=self.name)
        if p.ndim == 1:  # torch-uncertainty reads (N,) as the columns (1 - p, p): argmax 1 only when p > 1/2
            pred = p > 0.5
            conf = np.where(pred, p, 1.0 - p)
            right = pred == (y == 1)
        else:
            conf, right = top_label(p, y, validate=self.validate_args, name=self.name)
        return np.column_stack([-np.asarray(conf, dtype=np.float64), right.astype(np.float64)])

    def reduce(self, intermediates):
        rows = np.asarray(intermediates, dtype=np.float64).reshape(-1, 2)
        if rows.shape[0] == 0:
            return {self.main_score: undefined_metric(f"{self.name}: no examples; NaN.")}
        return {self.main_score: self._of(rows[:, 0], rows[:, 1])}

    def _of(self, u: np.ndarray, q: np.ndarray) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


class AURCOfProbs(_Curve):
    r"""torch-uncertainty's ``AURC`` of class probabilities; lower is better.

    ``(1 / (1 - 1/N)) * trapezoid of R_k over k / N, k = 1..N`` (NaN with a warning for one
    example), the examples ranked by top-class confidence. The same number as the UE metric
    ``aurc[convention=torch-uncertainty]`` on ``(-confidence, correct)``.

    >>> m = AURCOfProbs().update([[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [0, 1, 0])
    >>> round(m.compute(), 4)  # torch-uncertainty's docstring example: tensor(0.0833)
    0.0833
    """

    name = "selective_aurc"
    # conf .8 right, .7 right, .6 wrong: R_k = 0, 0, 1/3; trapezoid over k / 3 = 1/18, / (1 - 1/3) = 1/12
    examples = [{"predictions": _EXAMPLE_P, "references": [0, 1, 0], "global_target": {"selective_aurc": 1 / 12}}]

    def _of(self, u, q):
        return aurc(u, q, convention="torch-uncertainty")


class AUGRCOfProbs(_Curve):
    r"""torch-uncertainty's ``AUGRC`` of class probabilities; lower is better.

    The generalized risk ``G_k = k / N * R_k`` integrated like :class:`AURCOfProbs` (the UE
    metric ``augrc[convention=torch-uncertainty]`` on ``(-confidence, correct)``).
    """

    name = "selective_augrc"
    # G_k = 0, 0, 1/3 (the same curve as R_k at this size): 1/12
    examples = [{"predictions": _EXAMPLE_P, "references": [0, 1, 0], "global_target": {"selective_augrc": 1 / 12}}]

    def _of(self, u, q):
        return augrc(u, q, convention="torch-uncertainty")


def _threshold(value: Any, what: str, owner: str | None) -> float:
    return check_number(value, what, low=0.0, high=1.0, owner=owner)


class CovAtxRisk(_Curve):
    r"""Coverage at a selective risk (torch-uncertainty's ``CovAtxRisk``); higher is better.

    The largest ``k / N`` with ``R_k <= risk_threshold`` over every ``k`` (``R_k`` need not
    fall with ``k``); NaN with a warning when no ``k`` qualifies. ``risk_threshold`` defaults to
    0.05 (:class:`CovAt5Risk`; torch-uncertainty requires it).
    """

    name = "cov_at_x_risk"
    # torch-uncertainty's example: conf .9 .8 .7 right, .6 .5 wrong: R_k = 0, 0, 0, 1/4, 2/5 -> k = 4 at .3
    examples = [{"predictions": [[0.9, 0.1], [0.6, 0.4], [0.8, 0.2], [0.5, 0.5], [0.7, 0.3]],
                 "references": [0, 1, 0, 1, 0], "overrides": {"risk_threshold": 0.3},
                 "global_target": {"cov_at_x_risk": 0.8}}]
    higher_is_better = True

    def __init__(self, *, risk_threshold: float = 0.05, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(validate_args=validate_args, score_prefix=score_prefix)
        self.risk_threshold = _threshold(risk_threshold, "risk_threshold", self.name)

    def _of(self, u, q):
        return coverage_at_x_risk(u, q, self.risk_threshold)


class CovAt5Risk(CovAtxRisk):
    r"""Coverage at 5 % selective risk (torch-uncertainty's ``CovAt5Risk``): :class:`CovAtxRisk` at 0.05."""

    name = "cov_at_5_risk"
    # conf .9 .8 right, .7 wrong: R_k = 0, 0, 1/3 -> k = 2
    examples = [{"predictions": [[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]], "references": [0, 1, 1],
                 "global_target": {"cov_at_5_risk": 2 / 3}}]

    def __init__(self, *, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(risk_threshold=0.05, validate_args=validate_args, score_prefix=score_prefix)


class RiskAtxCov(_Curve):
    r"""Selective risk at a coverage (torch-uncertainty's ``RiskAtxCov``); lower is better.

    ``R_k`` for ``k = ceil(N * cov_threshold)``. ``cov_threshold`` (default 0.8, :class:`RiskAt80Cov`;
    torch-uncertainty requires it) is in ``(0, 1]``:
    torch-uncertainty accepts 0 and then reads ``R_N`` (its index ``k - 1`` is -1); here 0 is
    an error.
    """

    name = "risk_at_x_cov"
    # conf .9 right, .8 wrong, .7 .6 right: k = ceil(4 * .5) = 2 -> R_2 = 1/2
    examples = [{"predictions": [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]], "references": [0, 1, 1, 0],
                 "overrides": {"cov_threshold": 0.5}, "global_target": {"risk_at_x_cov": 0.5}}]

    def __init__(self, *, cov_threshold: float = 0.8, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(validate_args=validate_args, score_prefix=score_prefix)
        self.cov_threshold = check_number(cov_threshold, "cov_threshold", low=0.0, high=1.0, closed="right",
                                          owner=self.name)

    def _of(self, u, q):
        return risk_at_x_cov(u, q, self.cov_threshold)


class RiskAt80Cov(RiskAtxCov):
    r"""Selective risk at 80 % coverage (torch-uncertainty's ``RiskAt80Cov``): :class:`RiskAtxCov` at 0.8."""

    name = "risk_at_80_cov"
    # conf .9 right, .8 wrong, .7 .6 right, .55 wrong: k = ceil(5 * .8) = 4 -> R_4 = 1/4
    examples = [{"predictions": [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.55, 0.45]],
                 "references": [0, 1, 1, 0, 1], "global_target": {"risk_at_80_cov": 0.25}}]

    def __init__(self, *, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(cov_threshold=0.8, validate_args=validate_args, score_prefix=score_prefix)


# --------------------------------------------------------------------------- SCOD
def _binary(x: np.ndarray, what: str, owner: str) -> np.ndarray:
    bad = np.flatnonzero((x != 0) & (x != 1))
    if bad.size:
        raise InvalidParameterError(f"{owner}: `{what}[{int(bad[0])}]` is {x[bad[0]]!r}; expected 0 / 1 (or bool).")
    return x


class _SCOD(_Curve):
    """SCOD rows: uncertainty = the OOD score, quality = 1 - the SCOD loss.

    ``update(ood_scores, classification_errors, is_ood)``: one value each per example
    (``classification_errors`` of OOD examples are ignored).
    """

    def __init__(self, *, ood_cost: float = 0.5, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(validate_args=validate_args, score_prefix=score_prefix)
        self.ood_cost = _threshold(ood_cost, "ood_cost", self.name)

    def update(self, ood_scores: Any, classification_errors: Any = None, is_ood: Any = None) -> _SCOD:
        """Add a batch: OOD scores (higher = more OOD), 0 / 1 classification errors, 0 / 1 OOD flags."""
        if is_ood is None:
            raise InvalidParameterError(f"{self.name}: update(ood_scores, classification_errors, is_ood) needs "
                                        "`is_ood`, one 0 / 1 flag per example; got None.")
        super().update(ood_scores, classification_errors, is_ood)
        return self

    def map_batch(self, predictions, references, task_data=None):
        owner = self.name
        s = check_array(predictions, "predictions (ood_scores)", owner=owner, ndim=1, shape="(N,)")
        err = _binary(check_array(references, "references (classification_errors)", owner=owner, ndim=1, shape="(N,)"),
                      "classification_errors", owner)
        ood = _binary(check_array(task_data, "is_ood", owner=owner, ndim=1, shape="(N,)"), "is_ood", owner)
        if not s.size == err.size == ood.size:
            raise InvalidParameterError(f"{owner}: ood_scores, classification_errors and is_ood must have one value "
                                        f"per example; got {s.size}, {err.size} and {ood.size}.")
        loss = np.where(ood == 1, self.ood_cost, err * (1.0 - self.ood_cost))
        return np.column_stack([s, 1.0 - loss])


class SCODAURC(_SCOD):
    r"""AURC of the SCOD loss ranked by OOD score (torch-uncertainty's ``SCODAURC``); lower is better."""

    name = "scod_aurc"
    # scores .1 .5 .9 -> losses 0, (1 - .5) * 1, .5 (OOD): R_k = 0, 1/4, 1/3; (1/8 + 7/24) / 3 / (2/3) = 5/24
    examples = [dict(_SCOD_EXAMPLE, global_target={"scod_aurc": 5 / 24})]

    def _of(self, u, q):
        return aurc(u, q, convention="torch-uncertainty")


class SCODAUGRC(_SCOD):
    r"""AUGRC of the SCOD loss ranked by OOD score (torch-uncertainty's ``SCODAUGRC``); lower is better."""

    name = "scod_augrc"
    # G_k = 0, 1/6, 1/3: (1/12 + 1/4) / 3 / (2/3) = 1/6
    examples = [dict(_SCOD_EXAMPLE, global_target={"scod_augrc": 1 / 6})]

    def _of(self, u, q):
        return augrc(u, q, convention="torch-uncertainty")


class SCODCovAtxRisk(_SCOD):
    r"""Coverage at a SCOD risk (torch-uncertainty's ``SCODCovAtxRisk``); higher is better."""

    name = "scod_cov_at_x_risk"
    # R_k = 0, 1/4, 1/3: k = 2 at .3
    examples = [dict(_SCOD_EXAMPLE, overrides={"risk_threshold": 0.3}, global_target={"scod_cov_at_x_risk": 2 / 3})]
    higher_is_better = True

    def __init__(self, *, risk_threshold: float = 0.05, ood_cost: float = 0.5, validate_args: bool = True,
                 score_prefix: str = "") -> None:
        super().__init__(ood_cost=ood_cost, validate_args=validate_args, score_prefix=score_prefix)
        self.risk_threshold = _threshold(risk_threshold, "risk_threshold", self.name)

    def _of(self, u, q):
        return coverage_at_x_risk(u, q, self.risk_threshold)


class SCODCovAt5Risk(SCODCovAtxRisk):
    r"""Coverage at 5 % SCOD risk (torch-uncertainty's ``SCODCovAt5Risk``)."""

    name = "scod_cov_at_5_risk"
    examples = [dict(_SCOD_EXAMPLE, global_target={"scod_cov_at_5_risk": 1 / 3})]  # only R_1 = 0

    def __init__(self, *, ood_cost: float = 0.5, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(risk_threshold=0.05, ood_cost=ood_cost, validate_args=validate_args,
                         score_prefix=score_prefix)


class SCODRiskAtxCov(_SCOD):
    r"""SCOD risk at a coverage (torch-uncertainty's ``SCODRiskAtxCov``); lower is better; ``cov_threshold`` in (0, 1].
    """

    name = "scod_risk_at_x_cov"
    # k = ceil(3 * .6) = 2: R_2 = 1/4
    examples = [dict(_SCOD_EXAMPLE, overrides={"cov_threshold": 0.6}, global_target={"scod_risk_at_x_cov": 0.25})]

    def __init__(self, *, cov_threshold: float = 0.8, ood_cost: float = 0.5, validate_args: bool = True,
                 score_prefix: str = "") -> None:
        super().__init__(ood_cost=ood_cost, validate_args=validate_args, score_prefix=score_prefix)
        self.cov_threshold = check_number(cov_threshold, "cov_threshold", low=0.0, high=1.0, closed="right",
                                          owner=self.name)

    def _of(self, u, q):
        return risk_at_x_cov(u, q, self.cov_threshold)


class SCODRiskAt80Cov(SCODRiskAtxCov):
    r"""SCOD risk at 80 % coverage (torch-uncertainty's ``SCODRiskAt80Cov``)."""

    name = "scod_risk_at_80_cov"
    examples = [dict(_SCOD_EXAMPLE, global_target={"scod_risk_at_80_cov": 1 / 3})]  # k = ceil(2.4) = 3

    def __init__(self, *, ood_cost: float = 0.5, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(cov_threshold=0.8, ood_cost=ood_cost, validate_args=validate_args,
                         score_prefix=score_prefix)
