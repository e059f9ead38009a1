"""Paired comparisons of estimators inside a :class:`~assay.uncertainty.UEManager`.

Two estimators scored under one generation metric and one UE metric see the same
examples and the same quality: their ``(u, q)`` rows are paired by example. A UE metric
is a :class:`~assay.metrics.Metric` over those rows, so the comparison is exactly
:func:`assay.compare` on the two sets of rows: the paired bootstrap resamples both with
the **same** indices (interval of ``score_b - score_a``, and ``p_value``, the p-value that
inverts it: the test that decides ``better`` and ``verdict``); as second tests, the
shift-method bootstrap p-value and the approximate randomization test, which swaps the two
estimators' uncertainties per example (``p_value_randomization``; their normalized ranks
when the score depends only on their order, see :func:`_order_only`). See
:mod:`assay.metrics.significance` for the formulas.

:func:`compare_to_best` is what ``assay ue`` marks: per column, the best estimator and
those whose paired-bootstrap interval of the difference to the best includes 0.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.metrics.api import compare, evaluate
from assay.metrics.significance import Comparison
from assay.validation import check_int, check_number, check_seed

__all__ = ["compare_estimators", "compare_to_best"]

_PARTS = ("level", "estimator", "gen_metric", "ue_metric")


def _check_key(man: Any, key: Any, which: str) -> tuple[str, str, str, str]:
    if not (isinstance(key, (tuple, list)) and len(key) == 4 and all(isinstance(x, str) for x in key)):
        raise InvalidParameterError(f"The {which!r} parameter of UEManager.compare must be a key "
                                    f"(level, estimator, gen_metric, ue_metric); got {key!r}.")
    key = tuple(key)
    if key not in man.metrics:
        raise InvalidParameterError(f"The {which!r} parameter of UEManager.compare is {key!r}, which is not a "
                                    "key of 'metrics' (call the manager first, or check the names).")
    return key


def _flat(values: Any, level: str) -> np.ndarray:
    if level == "sequence":
        return np.asarray(values, dtype=np.float64)
    return np.concatenate(values) if len(values) else np.zeros(0)


def compare_estimators(man: Any, key_a: Sequence[str], key_b: Sequence[str], *, n_resamples: int | None = None,
                       confidence_level: float | None = None, seed: int | None = None) -> Comparison:
    """:meth:`UEManager.compare <assay.uncertainty.UEManager.compare>` (see there)."""
    ka, kb = _check_key(man, key_a, "key_a"), _check_key(man, key_b, "key_b")
    diff = [part for i, part in enumerate(_PARTS) if ka[i] != kb[i]]
    if diff != ["estimator"]:
        raise InvalidParameterError(
            "UEManager.compare compares two estimators under one generation metric and UE metric: "
            f"'key_a' and 'key_b' must differ in the estimator only; got {ka!r} and {kb!r}"
            + (f" (they differ in {', '.join(diff)})." if diff else " (the same key).")
        )
    owner = "UEManager.compare"
    n_res = int((man.n_resamples or 1000) if n_resamples is None
                else check_int(n_resamples, "n_resamples", low=1, owner=owner))
    level_ = float(man.confidence_level if confidence_level is None else check_number(
        confidence_level, "confidence_level", low=0, high=1, closed="neither", owner=owner))
    seed_ = man.seed if seed is None else check_seed(seed, "seed", owner=owner, allow_none=False)
    level, _, gen, label = ka
    metric, score = man._score_named(label)
    q = _flat(man.gen_metrics[(level, gen)], level)
    ua, ub = _flat(man.estimations[(level, ka[1])], level), _flat(man.estimations[(level, kb[1])], level)
    ok = np.isfinite(ua) & np.isfinite(ub) & np.isfinite(q)
    if not ok.any():
        raise InvalidParameterError(f"UEManager.compare: estimators {ka[1]!r} and {kb[1]!r} have no {level} where "
                                    f"both and the quality ({gen!r}) are finite.")
    m = metric.clone()
    name = m.name or type(m).__name__
    ua, ub = ua[ok], ub[ok]
    qo: Any = q[ok]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ranked = _order_only(m, (ua, ub), qo)
        if ranked is not None:
            ua, ub = ranked
        pair: tuple[Any, Any] = (ua, ub)  # evaluate takes any array-like
        res_a = evaluate(pair[0], qo, metrics=[m], n_resamples=0)
        res_b = evaluate(pair[1], qo, metrics=[m], n_resamples=0)
        out = compare(res_a, res_b, metric=name, score=score, n_resamples=n_res, confidence_level=level_,
                      seed=seed_)
    if ranked is not None:
        out = attrs.evolve(out, notes=(*out.notes, "the randomization test swaps the estimators' normalized "
                                       "ranks per example (the score depends only on the order of the uncertainties)"))
    if not ok.all():
        note = (f"compared on the {int(ok.sum())} of {ok.size} {level}s where both estimations and the quality "
                "are finite")
        out = attrs.evolve(out, notes=(*out.notes, note))
    return out


def _normalized_ranks(u: np.ndarray) -> np.ndarray:
    """Average ranks of ``u`` divided by its size: the same order and ties, on the scale (0, 1]."""
    from scipy.stats import rankdata

    return np.asarray(rankdata(u, method="average"), dtype=np.float64) / max(u.size, 1)


def _order_only(metric: Any, us: tuple[np.ndarray, ...], q: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """Each estimator's normalized ranks, when ``metric`` scores them exactly as the raw values; else None.

    The randomization test swaps the two estimators' uncertainties example by example. Two
    estimators on different scales (an entropy in nats and a probability) would then be mixed
    into a meaningless ranking, which inflates the p-value. A metric that depends only on the
    order of the uncertainties (PRR, AURC, ROC-AUC: ties grouped) gives the same scores on the
    ranks, and swapping ranks is the meaningful exchange. The check is made on the data (the
    scores must agree to 1e-12), so a metric that reads the values themselves (a calibration
    error) keeps its raw inputs.
    """
    if getattr(metric, "requires_unit_interval", False):
        return None
    ranks = tuple(_normalized_ranks(u) for u in us)
    for u, r in zip(us, ranks, strict=True):
        raw, rk = metric.clone()(u, q), metric.clone()(r, q)
        if not (raw == rk or (math.isfinite(raw) and math.isfinite(rk) and abs(raw - rk) <= 1e-12)):
            return None
    return ranks


def compare_to_best(man: Any, level: str, gen_metric: str, ue_metric: str, **options: Any
                    ) -> tuple[str | None, dict[str, Comparison]]:
    """:meth:`UEManager.compare_to_best <assay.uncertainty.UEManager.compare_to_best>` (see there)."""
    metric, _ = man._score_named(ue_metric)
    col = {k[1]: v for k, v in man.metrics.items() if k[0] == level and k[2] == gen_metric and k[3] == ue_metric}
    finite = {e: v for e, v in col.items() if math.isfinite(v)}
    if not finite:
        return None, {}
    pick = max if metric.higher_is_better else min
    best = pick(finite, key=lambda e: finite[e])  # the first listed among equal values
    out = {}
    for est in col:
        if est != best and est in finite:
            out[est] = compare_estimators(man, (level, best, gen_metric, ue_metric),
                                          (level, est, gen_metric, ue_metric), **options)
    return best, out
