"""Ranking metrics of uncertainty against quality: ROC-AUC, PR-AUC, FPR at recall, Spearman, Kendall, RPP.

Failure detection (``roc_auc``, ``pr_auc``, ``fpr_at_recall``): the uncertainty ``u`` scores
each example as a detector of failure; the positive class is failure (quality 0), so
these need binary quality. Ties in ``u`` are grouped (a tied positive / negative pair
counts one half in ROC-AUC, as in the Mann-Whitney statistic).

Correlations (``spearman``, ``kendall``) follow LM-Polygraph's orientation: they correlate
``u`` with ``-normalize(q)`` (so a good estimator scores near +1); computed with
``scipy.stats`` (Kendall's tau-b). ``rpp`` is LM-Polygraph's reversed-pair proportion.
"""

from __future__ import annotations

import math

import numpy as np

from assay.errors import MissingDependencyError
from assay.functional import roc_auc_from_split
from assay.uncertainty.base import UEMetric
from assay.validation import check_choice, check_number, undefined_metric
from assay_uncertainty._curves import group_ends
from assay_uncertainty._xp import TensorUEMetric, diff0, f64, flatnonzero, is_tensor, namespace, scalar

__all__ = ["FPR_CONVENTIONS", "FPRAtRecall", "KendallTau", "PRAUC", "ROCAUC", "RPP", "SpearmanR"]


def _two_classes(n_fail: float, n: int, name: str) -> bool:
    """Whether failures and successes are both present; else warn (the score is NaN)."""
    if 0 < n_fail < n:
        return True
    which = "no failure (all quality 1)" if n_fail == 0 else "only failures (all quality 0)"
    undefined_metric(f"{name}: {which}; the score is undefined, NaN.", stacklevel=4)
    return False


def _failure_groups(u: np.ndarray, q: np.ndarray, name: str):
    """Per tie group (increasing u): counts and failures; None (after a warning) for one class only."""
    fail = 1.0 - q
    K, S = group_ends(u, fail, binary=True)
    n = u.shape[0]
    n_pos = float(S[-1])
    n_neg = n - n_pos
    if not _two_classes(n_pos, n, name):
        return None
    pos = diff0(S)
    cnt = f64(diff0(K))
    return K, S, pos, cnt - pos, n_pos, n_neg


def _roc_auc_of_groups(u, q, name: str) -> float:
    """ROC-AUC from the tie groups: the integer pair counts of :func:`assay.functional.roc_auc_from_split`.

    ``L`` (a failure above a success) and ``E`` (tied pairs) are exact int64 sums, so the value
    ``(2L + E) / (2PN)`` is the numpy path's to the last bit (the torch path of :class:`ROCAUC`).
    """
    g = _failure_groups(u, q, name)
    if g is None:
        return math.nan
    K, S, pos, neg, n_pos, n_neg = g
    xp = namespace(S)
    pos_i, neg_i = xp.astype(pos, xp.int64), xp.astype(neg, xp.int64)
    above = int(n_pos) - xp.astype(S, xp.int64)  # failures in the groups above each group
    low = int(xp.sum(neg_i * above))
    equal = int(xp.sum(pos_i * neg_i))
    return (2 * low + equal) / (2.0 * n_pos * n_neg)


class ROCAUC(TensorUEMetric):
    r"""Area under the ROC curve of uncertainty as a failure detector; higher is better.

    ``AUC = P(u_fail > u_ok) + 0.5 P(u_fail = u_ok)`` over failure / success pairs
    (quality must be binary; :func:`assay.functional.roc_auc_from_split`, the ROC AUC kernel
    shared with ``assay_classic`` and ``assay_segmentation``). One class only gives NaN with a warning.
    """

    name = "roc_auc"
    requires_binary = True

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        if is_tensor(u):  # on the tensor's device: the same integer pair counts from one sort
            return _roc_auc_of_groups(u, q, self.name)
        fail = q == 0
        if not _two_classes(int(fail.sum()), u.size, self.name):
            return math.nan
        return roc_auc_from_split(u[fail], u[~fail])


class PRAUC(TensorUEMetric):
    r"""Average precision of uncertainty as a failure detector (scikit-learn's step definition); higher is better.

    Thresholds run over the distinct uncertainty values from high to low;
    ``AP = sum_t (recall_t - recall_{t-1}) precision_t``. No failure gives NaN with a
    warning; no success gives 1.
    """

    name = "pr_auc"
    requires_binary = True

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        fail = 1.0 - q
        K, S = group_ends(u, fail, binary=True)
        n_pos = float(S[-1])
        if n_pos == 0:
            return undefined_metric(f"{self.name}: no failure (all quality 1); average precision is undefined, NaN.")
        n = u.shape[0]
        pos = diff0(S)
        tp = n_pos - (S - pos)  # failures at or above this group's threshold
        predicted = f64(n - (K - diff0(K)))
        return float(namespace(S).sum(pos / n_pos * tp / predicted))


#: the conventions of :class:`FPRAtRecall`
FPR_CONVENTIONS = ("standard", "torch-uncertainty", "torch-uncertainty-0.12")


class FPRAtRecall(TensorUEMetric):
    r"""False-positive rate of failure detection at a recall level; lower is better.

    The uncertainty ``u`` flags failures (the positives, quality 0); thresholds run over the
    distinct values of ``u`` from high to low, whole tie groups at a time.

    ``convention="standard"`` (default): the first threshold, going from high to low
    uncertainty, whose recall of failures reaches ``recall`` (up to 1e-12); FPR there.
    ``convention="torch-uncertainty"``: torch-uncertainty 0.13's ``FPRx``,
    ``tau = sup{tau : TPR(tau) >= recall}`` and the FPR at ``tau``: the first threshold whose
    recall, ``TP / P`` in float64, is at least ``recall`` (no tolerance). That is the standard
    convention without its 1e-12 margin. torch-uncertainty divides and compares in torch's
    default dtype, float32, so a level within float32's rounding of a reachable ``k / P``
    (``0.95 + 1e-9`` with 20 failures) counts there as reached; assay compares in float64.
    ``convention="torch-uncertainty-0.12"``: torch-uncertainty up to 0.12 (after Hendrycks'
    anomaly-seg): among the thresholds up to recall 1, the one whose recall is nearest to
    ``recall`` (ties: the lower threshold); before issue 27 this was ``"torch-uncertainty"``.
    One class only gives NaN with a warning.
    """

    name = "fpr_at_recall"
    higher_is_better = False
    requires_binary = True

    def __init__(self, *, recall: float = 0.95, convention: str = "standard") -> None:
        self.recall = check_number(recall, "recall", low=0.0, high=1.0, closed="right", owner=self.name)
        check_choice(convention, "convention", FPR_CONVENTIONS, owner=self.name)
        self.convention = convention

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        g = _failure_groups(u, q, self.name)
        if g is None:
            return math.nan
        K, S, pos, neg, n_pos, n_neg = g
        xp = namespace(S)
        # thresholds from high to low uncertainty: group g and everything above it flagged
        tp = xp.flip(n_pos - (S - pos))
        fp = xp.flip(n_neg - ((f64(K) - S) - neg))
        rec = tp / n_pos
        if self.convention == "standard":
            i = int(flatnonzero(rec >= self.recall - 1e-12)[0])
        elif self.convention == "torch-uncertainty":
            i = int(flatnonzero(rec >= self.recall)[0])  # rec[-1] == 1.0 >= recall: never empty
        else:
            last = int(flatnonzero(tp == n_pos)[0])
            d = xp.abs(rec[: last + 1] - self.recall)
            i = int(flatnonzero(d == xp.min(d))[-1])
        return scalar(fp[i]) / n_neg


def _scipy_stats():
    try:
        import scipy.stats
    except ImportError:  # pragma: no cover - scipy is a requirement of this plugin
        raise MissingDependencyError("scipy", purpose="Spearman / Kendall UE metrics") from None
    return scipy.stats


class SpearmanR(UEMetric):
    r"""Spearman rank correlation of ``u`` with ``-normalize(q)`` (scipy.stats.spearmanr); higher is better.

    A constant ``u`` or ``q`` gives NaN with a warning.
    """

    name = "spearman"

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        if u.size < 2 or np.all(u == u[0]) or np.all(q == q[0]):
            return undefined_metric(f"{self.name}: needs two examples and non-constant inputs; NaN.")
        return float(_scipy_stats().spearmanr(u, -q).statistic)


class KendallTau(UEMetric):
    r"""Kendall's tau-b of ``u`` with ``-normalize(q)`` (scipy.stats.kendalltau); higher is better.

    A constant ``u`` or ``q`` gives NaN with a warning.
    """

    name = "kendall"

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        if u.size < 2 or np.all(u == u[0]) or np.all(q == q[0]):
            return undefined_metric(f"{self.name}: needs two examples and non-constant inputs; NaN.")
        return float(_scipy_stats().kendalltau(u, -q).statistic)


def _tie_pairs(*arrays: np.ndarray) -> float:
    """Number of unordered pairs tied in every given array."""
    if len(arrays) == 1:
        _, counts = np.unique(arrays[0], return_counts=True)
    else:
        _, counts = np.unique(np.stack(arrays, axis=1), axis=0, return_counts=True)
    counts = counts.astype(np.float64)
    return float(np.sum(counts * (counts - 1) / 2.0))


class RPP(UEMetric):
    r"""Reversed-pair proportion (LM-Polygraph); lower is better.

    ``RPP = #{(i, j) : u_i < u_j and q_i < q_j} / N^2``: ordered pairs where the more
    confident example has the lower quality. Pairs tied in ``u`` or ``q`` are not reversed.
    The count is exact for ``N`` up to ~10^7: it is recovered from Kendall's tau-b
    (scipy, O(N log N)) and the tie counts, then rounded to an integer.
    """

    name = "rpp"
    higher_is_better = False

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        n = u.size
        if n < 2 or np.all(u == u[0]) or np.all(q == q[0]):
            return 0.0
        n0 = n * (n - 1) / 2.0
        n1, n2, n3 = _tie_pairs(u), _tie_pairs(q), _tie_pairs(u, q)
        tau = float(_scipy_stats().kendalltau(u, q).statistic)
        c_minus_d = tau * math.sqrt(n0 - n1) * math.sqrt(n0 - n2)
        c_plus_d = n0 - n1 - n2 + n3
        concordant = round((c_plus_d + c_minus_d) / 2.0)
        return float(concordant) / (n * n)
