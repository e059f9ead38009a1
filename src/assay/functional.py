"""The numeric kernels several parts of assay share: safe division, ROC AUC, equal-width and equal-mass bins.

Each formula here exists once; the core, the metrics and the plugins call these functions
(``assay_classic`` for ``roc_auc`` and its classification scores, ``assay_uncertainty`` for
the ROC-AUC UE metric and the calibration errors, ``assay_segmentation`` for the ValUES
detection and calibration scores, :mod:`assay_uncertainty.manager.plots` for reliability
diagrams). They take plain numpy arrays, check nothing beyond what the formula needs
(the callers validate their inputs with :mod:`assay.validation`) and return plain floats
or arrays.

Conventions
-----------
**Division** (:func:`divide`): a zero denominator gives ``zero_division`` (NaN by default,
or ``"warn"``: 0.0 plus an :class:`~assay.errors.UndefinedMetricWarning`, scikit-learn's
convention), never a ``ZeroDivisionError`` or a ``RuntimeWarning``.

**ROC AUC** (:func:`roc_auc_from_split`): the Mann-Whitney statistic with ties counting
one half, equal to ``sklearn.metrics.roc_auc_score``; the value depends only on the two
multisets of scores, never on their order.

**Equal-width bins** (:func:`equal_width_bins`): bin ``m`` (``1 .. M``, index ``m - 1``) of
``M = n_bins`` holds the values in ``((m - 1) / M, m / M]`` (Guo et al. 2017, sec. 2; torchmetrics'
binning), 0.0 goes to the first bin. A value is compared with the edges themselves
(:func:`bin_edges`: ``m / M`` rounded once, in the value's float dtype), never binned by the
rounded product ``M x``: ``floor(10 * 0.3)`` is 3, yet 0.3 is the upper edge of bin 3 of 10
(index 2). ``closed="left"`` gives ``[(m - 1) / M, m / M)`` bins (1.0 in the last one).

**Equal-mass bins** (:func:`equal_mass_bins`): the values sorted (stable, ties broken by an
optional second key), cut into ``n_bins`` contiguous runs whose sizes differ by at most one,
the first ``N mod n_bins`` runs one larger (``numpy.array_split``'s sizes).

>>> divide([1.0, 2.0], [4.0, 0.0])
array([0.25,  nan])
>>> roc_auc_from_split(np.array([0.35, 0.8]), np.array([0.1, 0.4]))
0.75
>>> equal_width_bins(np.array([0.0, 0.5, 0.99, 1.0]), 2)
array([0, 0, 1, 1])
>>> equal_width_bins(np.array([0.3, 0.25]), 10)  # 0.3 is bin (0.2, 0.3]'s upper edge
array([2, 2])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError, UndefinedMetricWarning

__all__ = [
    "BIN_SIDES",
    "ECE_NORMS",
    "ZeroDivision",
    "adaptive_ece",
    "bin_edges",
    "check_zero_division",
    "divide",
    "equal_mass_bins",
    "equal_width_bins",
    "roc_auc_from_split",
]

#: the values ``zero_division=`` accepts: ``"warn"``, 0.0, 1.0 or NaN
ZeroDivision = str | float


def check_zero_division(value: ZeroDivision, *, metric: str = "metric") -> ZeroDivision:
    """Validate ``zero_division`` as scikit-learn does: ``"warn"``, ``0.0``, ``1.0`` or NaN.

    ``"warn"`` means 0.0 plus an :class:`~assay.errors.UndefinedMetricWarning`; the string
    ``"nan"`` is read as NaN. Returns ``"warn"`` or a float.

    >>> check_zero_division(1)
    1.0
    """
    if isinstance(value, str):
        if value == "warn":
            return value
        if value.lower() == "nan":
            return math.nan
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and (math.isnan(value) or value in (0, 1)):
        return float(value)
    raise InvalidParameterError(
        f"The 'zero_division' parameter of {metric} must be one of 'warn', 0.0, 1.0 or nan. Got {value!r} instead."
    )


def divide(num: Any, den: Any, zero_division: ZeroDivision = math.nan, *, what: str = "The ratio",
           warn: bool = True) -> Any:
    """``num / den`` elementwise; where ``den == 0`` the value is ``zero_division``.

    Parameters
    ----------
    num, den : array-like
        Broadcastable numerators and denominators (read as float64).
    zero_division : float or "warn", default NaN
        The value where the denominator is zero. ``"warn"``: 0.0 and one
        :class:`~assay.errors.UndefinedMetricWarning` naming ``what`` (unless ``warn=False``,
        for batches of bootstrap resamples).
    what : str
        The quantity's name in the warning ("Precision").
    warn : bool
        Whether ``"warn"`` warns.

    Returns
    -------
    float or numpy.ndarray
        A float when the result is 0-dimensional (scalar inputs), else an array. Never a
        ``RuntimeWarning``: ``inf / inf`` and ``nan`` numerators give NaN quietly.

    Examples
    --------
    >>> divide(1, 0, zero_division=0.0)
    0.0
    """
    num_a = np.asarray(num, dtype=np.float64)
    den_a = np.asarray(den, dtype=np.float64)
    zero = den_a == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num_a / np.where(zero, 1.0, den_a)
    if zero.any():
        out = np.where(zero, 0.0 if zero_division == "warn" else float(zero_division), out)
        if zero_division == "warn" and warn:
            warnings.warn(
                f"{what} is ill-defined (a zero denominator) and set to 0.0; "
                "use zero_division= to choose the value and silence this warning.",
                UndefinedMetricWarning,
                stacklevel=3,
            )
    return float(out) if out.ndim == 0 else out


def roc_auc_from_split(positives: np.ndarray, negatives: np.ndarray) -> float:
    r"""Area under the ROC curve from the scores of the positives and of the negatives.

    .. math::

        AUC = \frac{1}{P N} \sum_{i \in pos} \sum_{j \in neg}
              \left( [s_i > s_j] + \tfrac12 [s_i = s_j] \right) = \frac{2L + E}{2 P N}

    with :math:`L` the pairs whose negative lies strictly below the positive and :math:`E`
    the tied pairs (integers, so the value does not depend on the input order). Equal to
    ``sklearn.metrics.roc_auc_score`` on the same labels and scores, ties included. Scores
    may be infinite but not NaN (the callers check). An empty class gives NaN with an
    :class:`~assay.errors.UndefinedMetricWarning`.

    How it is fast and small: ``np.sort`` of each class (SIMD sorts, several times faster than
    one ``np.argsort`` of all scores), then ``np.searchsorted(neg, pos, side="left")``: the
    number of negatives strictly below each positive (sorted needles walk the sorted
    negatives cache-friendly). Beyond the two sorted copies the only temporary is that count
    array: at 10 million scores the peak is about 1.3x the scores' bytes (the former merge of
    the two runs by a stable ``argsort`` of their concatenation needed 4x). :math:`E` is
    counted only where a positive equals a negative: per distinct tied value, (positives at
    it) x (negatives at it), from run lengths and one more ``searchsorted``.

    Examples
    --------
    >>> roc_auc_from_split(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    0.875
    """
    positives = np.asarray(positives, dtype=np.float64)
    negatives = np.asarray(negatives, dtype=np.float64)
    n_pos, n_neg = positives.size, negatives.size
    if n_pos == 0 or n_neg == 0:
        warnings.warn(
            "Only one class is present in the references; ROC AUC is not defined in that case (NaN).",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return math.nan
    pos = np.sort(positives)
    neg = np.sort(negatives)
    # negatives strictly below each positive: a binary search of the sorted positives in the sorted
    # negatives (no merged copy, no argsort permutation: the only large temporaries are the two sorts)
    below = np.searchsorted(neg, pos, side="left")
    low = int(below.sum(dtype=np.int64))
    # tied pairs: for each distinct positive value equal to some negative, (#pos) * (#neg) at that value
    inside = np.flatnonzero(below < n_neg)
    tied = inside[neg[below[inside]] == pos[inside]]
    equal = 0
    if tied.size:
        values = pos[tied]
        starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
        multiplicity = np.diff(np.append(starts, values.size))
        neg_equal = np.searchsorted(neg, values[starts], side="right") - below[tied[starts]]
        equal = int(np.dot(multiplicity, neg_equal))
    return (2 * low + equal) / (2.0 * n_pos * n_neg)


def _check_bins(n_bins: Any) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InvalidParameterError(f"The 'n_bins' parameter must be an integer >= 1. Got {n_bins!r} instead.")
    return int(n_bins)


def bin_edges(n_bins: int, dtype: Any = "float64") -> np.ndarray:
    """The ``n_bins + 1`` edges ``m / n_bins`` of equal-width bins on [0, 1], each the correctly rounded quotient.

    In ``dtype`` (float32 or float64; another dtype gives float64 edges): an IEEE division of two
    exactly represented integers, so each edge is the float of that dtype nearest ``m / n_bins``
    and no float of it lies between an edge and the true ``m / n_bins``.

    >>> bin_edges(3)
    array([0.        , 0.33333333, 0.66666667, 1.        ])
    """
    n_bins = _check_bins(n_bins)
    dt = np.dtype(dtype) if np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float64)
    return np.arange(n_bins + 1, dtype=dt) / dt.type(n_bins)


#: the sides :func:`equal_width_bins` closes its bins on
BIN_SIDES = ("right", "left")


def equal_width_bins(x: np.ndarray, n_bins: int, *, closed: str = "right") -> np.ndarray:
    """The equal-width bin index (``0 .. n_bins - 1``) of each value ``x`` in [0, 1].

    ``closed="right"`` (default): index ``m - 1`` for ``x`` in ``((m - 1) / M, m / M]``
    (Guo et al. 2017; torchmetrics' ``calibration_error``), 0.0 in the first bin.
    ``closed="left"``: index ``m - 1`` for ``x`` in ``[(m - 1) / M, m / M)``, 1.0 in the last bin.
    ``x`` is compared with the :func:`bin_edges` of its own float dtype (float64 for
    another dtype): the truncated product ``M x`` is off by one where it rounds onto an
    integer (``10 * 0.3 == 3.0000000000000004``), and is only the first guess, corrected
    by one comparison with an edge (two for ``"left"``). Values outside [0, 1] are the
    caller's to refuse (they land in the first or the last bin). Returns ``intp`` indices,
    ready for ``np.bincount(..., minlength=n_bins)``.
    """
    n_bins = _check_bins(n_bins)
    if closed not in BIN_SIDES:
        raise InvalidParameterError(f"'closed' must be one of {', '.join(map(repr, BIN_SIDES))}; got {closed!r}.")
    x = np.asarray(x)
    if x.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        x = x.astype(np.float64)
    edges = bin_edges(n_bins, x.dtype)
    b = np.clip(np.multiply(x, n_bins).astype(np.intp), 0, n_bins)
    if closed == "right":
        # an exact product needs no fix but x on an edge (bin below); a product rounded up onto
        # an integer k has x <= edges[k] too (no float lies between edges[k] and k / M)
        b -= x <= edges[b]
        return np.clip(b, 0, n_bins - 1, out=b)
    b -= x < edges[b]
    b += x >= edges[np.minimum(b + 1, n_bins)]
    return np.clip(b, 0, n_bins - 1, out=b)


def equal_mass_bins(x: np.ndarray, n_bins: int, *, tiebreak: np.ndarray | None = None,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Equal-mass bins: the sort order of ``x`` and the start of each of ``n_bins`` runs in it.

    ``order`` sorts ``x`` ascending; ties are ordered by ``tiebreak`` (ascending) when given,
    else kept in input order (a stable sort). The sorted values are cut into ``n_bins``
    contiguous runs whose sizes differ by at most one, the first ``N mod n_bins`` one larger
    (the sizes of ``numpy.array_split``); ``starts[b]`` is the position in ``order`` where run
    ``b`` begins, so ``np.add.reduceat(v[order], starts)`` sums ``v`` per bin. Fewer values
    than bins is an :class:`~assay.errors.InvalidParameterError` (a run would be empty).

    Returns
    -------
    order : numpy.ndarray of intp, shape (N,)
    starts : numpy.ndarray of intp, shape (n_bins,)
    """
    n_bins = _check_bins(n_bins)
    x = np.asarray(x)
    n = x.size
    if n < n_bins:
        raise InvalidParameterError(f"equal-mass bins need at least n_bins={n_bins} values; got {n}.")
    order = np.argsort(x, kind="stable") if tiebreak is None else np.lexsort((tiebreak, x))
    sizes = np.full(n_bins, n // n_bins, dtype=np.intp)
    sizes[: n % n_bins] += 1
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.intp)
    return order, starts


#: the norms :func:`adaptive_ece` accepts (torchmetrics' and torch-uncertainty's names)
ECE_NORMS = ("l1", "l2", "max")


def adaptive_ece(conf: np.ndarray, acc: np.ndarray, n_bins: int, norm: str = "l1") -> float:
    r"""Adaptive (equal-mass) expected calibration error of confidences ``conf`` and correctness ``acc``.

    With bin accuracy :math:`\bar a_b`, mean confidence :math:`\bar c_b` and size :math:`n_b`:

    .. math::

        \mathrm{l1} = \sum_b \frac{n_b}{N} \left| \bar a_b - \bar c_b \right|, \quad
        \mathrm{l2} = \sqrt{\sum_b \frac{n_b}{N} (\bar a_b - \bar c_b)^2}, \quad
        \mathrm{max} = \max_b \left| \bar a_b - \bar c_b \right|

    (the ``norm`` names and formulas of torchmetrics' ``calibration_error`` and
    torch-uncertainty's ``AdaptiveCalibrationError``, without its optional debiasing), over the
    :func:`equal_mass_bins` of ``conf`` with ties in confidence ordered incorrect-first
    (``tiebreak=acc``), so the bins never depend on the input order. Reference: Nixon et al.,
    "Measuring Calibration in Deep Learning", 2019. Fewer examples than bins, or another
    ``norm``, is an :class:`~assay.errors.InvalidParameterError`.

    Examples
    --------
    >>> round(adaptive_ece(np.array([0.6, 0.6, 0.7, 0.8, 0.9]), np.array([0.0, 0.0, 1.0, 1.0, 1.0]), 2), 12)
    0.24
    """
    if norm not in ECE_NORMS:
        raise InvalidParameterError(f"'norm' must be one of {', '.join(map(repr, ECE_NORMS))}; got {norm!r}.")
    conf = np.asarray(conf, dtype=np.float64)
    acc = np.asarray(acc, dtype=np.float64)
    order, starts = equal_mass_bins(conf, n_bins, tiebreak=acc)
    cs = np.add.reduceat(conf[order], starts)
    as_ = np.add.reduceat(acc[order], starts)
    if norm == "l1":
        return float(np.sum(np.abs(as_ - cs)) / conf.size)
    sizes = np.diff(np.append(starts, conf.size)).astype(np.float64)
    gap = (as_ - cs) / sizes
    if norm == "max":
        return float(np.max(np.abs(gap)))
    return float(np.sqrt(np.sum(sizes * gap * gap) / conf.size))
