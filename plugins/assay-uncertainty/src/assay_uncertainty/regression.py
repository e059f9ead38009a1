r"""Probabilistic-regression metrics (torch-uncertainty 0.13.0's ``metrics/regression`` and ``sparsification.py``).

- ``DistributionNLL``: mean negative log-likelihood of the targets under a predicted distribution;
- ``QuantileCalibrationError``: gap between the nominal and the empirical coverage of central
  credible intervals at ``num_bins`` levels in [0.05, 0.95];
- ``IntervalCoverage`` (PICP), ``MeanIntervalWidth`` (MPIW), ``IntervalScore`` (Winkler):
  central prediction intervals ``[lower, upper]``;
- ``AUSE``: area under the sparsification-error curve of uncertainty scores against errors.

They are uncertainty-quality metrics (they judge a predictive distribution, an interval or an
uncertainty score), so they live in assay-uncertainty; the depth errors, point-prediction errors
like MAE, are in assay-classic (:mod:`assay_classic.depth`).

Inputs. torch-uncertainty's ``DistributionNLL`` and ``QuantileCalibrationError`` take a
``torch.distributions.Distribution``; here a prediction is the distribution's parameters, one row
per target, of the family named by ``distribution``:

======================  =========================  =======================================
``distribution``        a prediction row           torch's class
======================  =========================  =======================================
``"normal"``            ``(loc, scale)``           ``Normal(loc, scale)``
``"laplace"``           ``(loc, scale)``           ``Laplace(loc, scale)``
``"cauchy"``            ``(loc, scale)``           ``Cauchy(loc, scale)``
``"student_t"``         ``(loc, scale, df)``       ``StudentT(df, loc, scale)`` (NLL only)
======================  =========================  =======================================

A multivariate target (torch's ``Independent``) is passed one scalar target per row, as
torch-uncertainty counts it (its mean divides by ``target.numel()``). The interval metrics take a
prediction ``(lower, upper)`` per target, ``lower <= upper``. ``AUSE`` takes the uncertainty score
as the prediction and the (non-negative) error as the reference. Formulas: ``docs/uncertainty.md``
("Regression metrics").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics import Metric, divide
from assay.validation import check_array, check_choice, check_int, check_number, check_same_length, undefined_metric

__all__ = [
    "AUSE", "DISTRIBUTIONS", "DistributionNLL", "IntervalCoverage", "IntervalScore", "MeanIntervalWidth",
    "QuantileCalibrationError", "log_prob", "quantile",
]

#: distribution family -> the columns of a prediction row
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "normal": ("loc", "scale"), "laplace": ("loc", "scale"), "cauchy": ("loc", "scale"),
    "student_t": ("loc", "scale", "df"),
}
#: the families with a closed-form quantile function (torch's ``icdf``; its ``StudentT`` has none)
QUANTILE_DISTRIBUTIONS = ("normal", "laplace", "cauchy")


def _params(metric: Metric, predictions: Any, distribution: str) -> np.ndarray:
    """``(n, k)`` parameter rows of ``distribution``: finite, scale (and df) > 0, or an error naming the row."""
    cols = DISTRIBUTIONS[distribution]
    name = metric.main_score
    if len(predictions) == 0:
        return np.zeros((0, len(cols)))
    a = check_array(predictions, "predictions", owner=name, ndim=2, what="distribution parameters",
                    shape=f"(n, {len(cols)}) rows ({', '.join(cols)}) of a {distribution} distribution")
    if a.shape[1] != len(cols):
        raise InvalidParameterError(f"{name}: expected `predictions` rows ({', '.join(cols)}) of a {distribution} "
                                    f"distribution, {len(cols)} columns; got shape {a.shape}.")
    bad = ~(a[:, 1:] > 0).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(f"{name}: instance {i} has parameters {a[i].tolist()}; expected "
                                    f"{' and '.join(cols[1:])} > 0.")
    return a


def _targets(metric: Metric, references: Any, n: int, *, what: str = "targets") -> np.ndarray:
    """One finite real target per instance (a reference may be ``x`` or ``[x]``)."""
    if n == 0 and references is not None and len(references) == 0:
        return np.zeros(0)
    r = check_array(references, "references", owner=metric.main_score, what=what)
    if r.ndim == 2 and r.shape[1] == 1:
        r = r[:, 0]
    if r.ndim != 1:
        raise InvalidParameterError(f"{metric.main_score}: expected `references` of shape (n,), one real number "
                                    f"per instance; got shape {r.shape}.")
    check_same_length(metric.main_score, predictions=np.empty(n), references=r)
    return r


def log_prob(distribution: str, params: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``log p(y)`` of each row's distribution (torch.distributions' ``log_prob``, in float64)."""
    loc, scale = params[:, 0], params[:, 1]
    z = (y - loc) / scale
    if distribution == "normal":
        return -0.5 * z * z - np.log(scale) - 0.5 * math.log(2 * math.pi)
    if distribution == "laplace":
        return -np.abs(z) - np.log(2 * scale)
    if distribution == "cauchy":
        return -math.log(math.pi) - np.log(scale) - np.log1p(z * z)
    from scipy.special import gammaln  # scipy is a dependency of the plugin; only student_t needs it

    df = params[:, 2]
    return (gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * np.log(df * math.pi) - np.log(scale)
            - (df + 1) / 2 * np.log1p(z * z / df))


def quantile(distribution: str, params: np.ndarray, q: float) -> np.ndarray:
    """The ``q``-quantile of each row's distribution (torch.distributions' ``icdf``)."""
    loc, scale = params[:, 0], params[:, 1]
    if distribution == "normal":
        from scipy.special import ndtri  # scipy is a dependency of the plugin

        return loc + scale * ndtri(q)
    if distribution == "laplace":
        t = q - 0.5
        return loc - scale * np.sign(t) * np.log1p(-2 * abs(t))
    if distribution == "cauchy":
        return loc + scale * math.tan(math.pi * (q - 0.5))
    raise InvalidParameterError(f"quantiles of a {distribution} distribution are not available; "
                                f"expected one of {QUANTILE_DISTRIBUTIONS}.")


class DistributionNLL(Metric):
    r"""Negative log-likelihood of the targets under predicted distributions (torch-uncertainty ``DistributionNLL``).

    .. math:: \mathrm{NLL} = -\frac1n \sum_i \log p_{\theta_i}(y_i)

    ``reduction="mean"`` (default) or ``"sum"``; the per-instance values are assay's instance
    scores (torch-uncertainty's ``reduction="none"``). Statistics ``(-log p, 1)``.
    """

    main_score = "distribution_nll"
    higher_is_better = False
    additive = True
    vectorized = True
    n_stats = 2
    examples = [{"predictions": [[0.0, 1.0], [1.0, 2.0]], "references": [[0.0], [1.0]],
                 "global_target": {"distribution_nll": 0.5 * math.log(2 * math.pi) + 0.5 * math.log(2.0)}}]

    def __init__(self, *, distribution: str = "normal", reduction: str = "mean", score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.distribution = check_choice(distribution, "distribution", tuple(DISTRIBUTIONS), owner=self.main_score)
        if reduction == "none" or reduction is None:
            raise InvalidParameterError(f"{self.main_score}: reduction='none' is not a global score here; the "
                                        "per-instance values are the instance scores (assay.evaluate's instances).")
        self.reduction = check_choice(reduction, "reduction", ("mean", "sum"), owner=self.main_score)

    def map_batch(self, predictions: Any, references: Any, task_data: Any) -> np.ndarray:
        params = _params(self, predictions, self.distribution)
        y = _targets(self, references, len(params))
        nll = -log_prob(self.distribution, params, y)
        return np.column_stack([nll, np.ones_like(nll)])

    def reduce(self, totals: Any) -> dict[str, Any]:
        t = np.asarray(totals, dtype=np.float64)
        value = t[..., 0] if self.reduction == "sum" else divide(t[..., 0], t[..., 1])
        return {"distribution_nll": value}


class QuantileCalibrationError(Metric):
    r"""Quantile calibration error of predicted distributions (torch-uncertainty ``QuantileCalibrationError``).

    At the levels :math:`\alpha_k`, ``num_bins`` points evenly spaced in [0.05, 0.95], the empirical
    coverage of the central credible intervals is

    .. math:: \hat c(\alpha_k) = \frac1n \sum_i \Big[F_i^{-1}\big(\tfrac{1-\alpha_k}{2}\big) \le y_i
              \le F_i^{-1}\big(\tfrac{1+\alpha_k}{2}\big)\Big]

    and the error is the ``norm`` of the gaps :math:`|\hat c(\alpha_k) - \alpha_k|`: their mean
    (``"l1"``, default), root mean square (``"l2"``) or maximum (``"max"``). Targets equal to
    ``ignore_index`` are left out. Statistics: one covered count per level and the count.
    """

    main_score = "quantile_calibration_error"
    higher_is_better = False
    additive = True
    vectorized = True
    n_stats = 16
    examples = [{"predictions": [[0.0, 1.0], [0.0, 1.0]], "references": [[0.0], [10.0]],
                 "overrides": {"num_bins": 3},  # levels .05, .5, .95: coverage 1/2 each; gaps .45, 0, .45
                 "global_target": {"quantile_calibration_error": 0.3}}]

    def __init__(self, *, num_bins: int = 15, norm: str = "l1", distribution: str = "normal",
                 ignore_index: float | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        owner = self.main_score
        self.num_bins = check_int(num_bins, "num_bins", low=1, owner=owner)
        self.norm = check_choice(norm, "norm", ("l1", "l2", "max"), owner=owner)
        self.distribution = check_choice(distribution, "distribution", QUANTILE_DISTRIBUTIONS, owner=owner)
        self.ignore_index = check_number(ignore_index, "ignore_index", owner=owner, allow_none=True)
        self.n_stats = self.num_bins + 1
        self.levels = np.linspace(0.05, 0.95, self.num_bins)

    def map_batch(self, predictions: Any, references: Any, task_data: Any) -> np.ndarray:
        params = _params(self, predictions, self.distribution)
        y = _targets(self, references, len(params))
        valid = np.ones(len(y), dtype=bool) if self.ignore_index is None else y != self.ignore_index
        out = np.empty((len(y), self.num_bins + 1))
        for k, level in enumerate(self.levels):
            lo = quantile(self.distribution, params, (1 - level) / 2)
            hi = quantile(self.distribution, params, (1 + level) / 2)
            out[:, k] = (y >= lo) & (y <= hi) & valid
        out[:, -1] = valid
        return out

    def reduce(self, totals: Any) -> dict[str, Any]:
        t = np.asarray(totals, dtype=np.float64)
        n = t[..., -1:]
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.abs(t[..., :-1] / n - self.levels)
        if self.norm == "l1":
            value = gap.mean(axis=-1)
        elif self.norm == "l2":
            value = np.sqrt((gap * gap).mean(axis=-1))
        else:
            value = gap.max(axis=-1)
        if t.ndim == 1 and t[-1] == 0:
            undefined_metric(f"{self.main_score}: no target (all ignored or no data); NaN.")
        return {"quantile_calibration_error": value}


def _intervals(metric: Metric, predictions: Any) -> np.ndarray:
    """``(n, 2)`` finite ``(lower, upper)`` rows with ``lower <= upper``, or an error naming the instance."""
    if len(predictions) == 0:
        return np.zeros((0, 2))
    a = check_array(predictions, "predictions", owner=metric.main_score, ndim=2, what="interval bounds",
                    shape="(n, 2) rows (lower, upper)")
    if a.shape[1] != 2:
        raise InvalidParameterError(f"{metric.main_score}: expected `predictions` rows (lower, upper), 2 columns; "
                                    f"got shape {a.shape}.")
    bad = a[:, 0] > a[:, 1]
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(f"{metric.main_score}: instance {i} has lower bound {a[i, 0]} above upper bound "
                                    f"{a[i, 1]}; expected lower <= upper.")
    return a


class _IntervalMetric(Metric):
    """Additive ``(value, 1)`` of a central prediction interval per target; the mean is the score."""

    higher_is_better = False
    additive = True
    vectorized = True
    n_stats = 2

    def _values(self, iv: np.ndarray, y: np.ndarray | None) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def map_batch(self, predictions: Any, references: Any, task_data: Any) -> np.ndarray:
        iv = _intervals(self, predictions)
        y = _targets(self, references, len(iv)) if self.needs_references else None
        v = self._values(iv, y).astype(np.float64)
        return np.column_stack([v, np.ones_like(v)])

    def reduce(self, totals: Any) -> dict[str, Any]:
        t = np.asarray(totals, dtype=np.float64)
        return {self.main_score: divide(t[..., 0], t[..., 1])}


class IntervalCoverage(_IntervalMetric):
    r"""Prediction interval coverage probability, PICP (torch-uncertainty ``IntervalCoverage``).

    .. math:: \mathrm{PICP} = \frac1n \sum_i [\hat l_i \le y_i \le \hat u_i]

    Read it with a width (``mean_interval_width``) or ``interval_score``: a wide interval covers
    everything. ``higher_is_better`` is True here (torch-uncertainty leaves it unset): the target
    is the nominal coverage.
    """

    main_score = "interval_coverage"
    higher_is_better = True
    examples = [{"predictions": [[0.0, 2.0], [1.0, 3.0], [2.0, 4.0], [3.0, 5.0]],
                 "references": [[1.0], [5.0], [3.0], [4.0]], "global_target": {"interval_coverage": 0.75}}]

    def _values(self, iv: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        assert y is not None
        return (y >= iv[:, 0]) & (y <= iv[:, 1])


class MeanIntervalWidth(_IntervalMetric):
    r"""Mean prediction interval width, MPIW (torch-uncertainty ``MeanIntervalWidth``).

    .. math:: \mathrm{MPIW} = \frac1n \sum_i (\hat u_i - \hat l_i)

    Needs no references (the intervals alone).
    """

    main_score = "mean_interval_width"
    needs_references = False
    examples = [{"predictions": [[0.0, 2.0], [1.0, 3.0], [2.0, 5.0]], "references": None,
                 "global_target": {"mean_interval_width": 7 / 3}}]

    def _values(self, iv: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        return iv[:, 1] - iv[:, 0]


class IntervalScore(_IntervalMetric):
    r"""Interval (Winkler) score of central prediction intervals (torch-uncertainty ``IntervalScore``).

    For nominal coverage :math:`1 - \alpha` (``coverage``; torch-uncertainty requires it, here 0.9
    by default):

    .. math:: S_\alpha = (\hat u - \hat l) + \frac2\alpha (\hat l - y)[y < \hat l]
              + \frac2\alpha (y - \hat u)[y > \hat u]

    averaged over the targets (Gneiting & Raftery, 2007, eq. 43).
    """

    main_score = "interval_score"
    examples = [{"predictions": [[0.0, 2.0], [1.0, 3.0]], "references": [[1.0], [5.0]],
                 "global_target": {"interval_score": 22.0}}]  # (2 + 2 + 2 / 0.1 * 2) / 2

    def __init__(self, *, coverage: float = 0.9, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.coverage = check_number(coverage, "coverage", low=0.0, high=1.0, closed="neither",
                                     owner=self.main_score)

    def _values(self, iv: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        assert y is not None
        alpha = 1.0 - self.coverage
        below = np.maximum(iv[:, 0] - y, 0.0)
        above = np.maximum(y - iv[:, 1], 0.0)
        return (iv[:, 1] - iv[:, 0]) + (2.0 / alpha) * (below + above)


def _rejection_curve(scores: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """Mean error of the kept instances after dropping the k most uncertain, k = 0 .. n-1, over the mean error."""
    ordered = errors[np.argsort(scores, kind="stable")]
    n = len(errors)
    rates = np.cumsum(ordered)[::-1] / np.arange(n, 0, -1, dtype=np.float64)
    initial = ordered.mean()
    return np.zeros(n) if initial == 0 else rates / initial


class AUSE(Metric):
    r"""Area under the sparsification-error curve (torch-uncertainty ``AUSE``; Ilg et al., 2018).

    Sort the instances by uncertainty score, drop the :math:`k` most uncertain (:math:`k = 0 ..
    n-1`) and take the mean error of the rest over the mean error of all, :math:`e(k)`; the
    oracle :math:`e^*(k)` drops by error instead. With :math:`x_k = k / n`,

    .. math:: \mathrm{AUSE} = \int (e - e^*)\,dx \quad \text{(trapezoid rule over } x_0 .. x_{n-1})

    A prediction is the uncertainty score, a reference the instance's error (finite, >= 0).
    Lower is better. Ties of scores keep the input order (a stable sort; torch's ``argsort``
    does not promise an order among ties). Fewer than two instances: NaN with a warning.
    Gathered ``(score, error)`` pairs: shards concatenate, intervals resample the pairs.
    """

    main_score = "ause"
    higher_is_better = False
    per_instance = False
    # errors in score order (3, 2, 1): e = (1, 1.25, 1.5); oracle order (1, 2, 3): e* = (1, .75, .5);
    # e - e* = (0, .5, 1) at x = (0, 1/3, 2/3): (1/3) ((0 + .5) / 2 + (.5 + 1) / 2) = 1/3
    examples = [{"predictions": [0.1, 0.2, 0.3], "references": [[3.0], [2.0], [1.0]], "global_target": {"ause": 1 / 3}}]

    def map_batch(self, predictions: Sequence[Any], references: Any, task_data: Any) -> np.ndarray:
        name = self.main_score
        s = check_array(predictions, "predictions", owner=name, ndim=1, shape="(n,) uncertainty scores",
                        what="uncertainty scores")
        e = _targets(self, references, len(s), what="errors")
        bad = e < 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(f"{name}: instance {i} has error {e[i]}; expected errors >= 0.")
        return np.column_stack([s, e])

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> np.ndarray:
        return self.map_batch([prediction], [references], None)[0]

    def reduce(self, intermediates: Any) -> dict[str, float]:
        arr = np.asarray(intermediates, dtype=np.float64).reshape(-1, 2)
        n = len(arr)
        if n < 2:
            return {"ause": undefined_metric(f"{self.main_score}: needs at least two instances; got {n}. NaN.")}
        curve = _rejection_curve(arr[:, 0], arr[:, 1]) - _rejection_curve(arr[:, 1], arr[:, 1])
        x = np.arange(n, dtype=np.float64) / n
        return {"ause": float(np.sum((curve[1:] + curve[:-1]) * np.diff(x)) / 2)}  # the trapezoid rule
