"""Confidence intervals for several metrics from one shared resampling draw.

:func:`bootstrap_scores` resamples every metric of an evaluation with the one scheme of
:mod:`assay.metrics.resample` (additive metrics through their summed statistics, the others
by re-running ``reduce`` on the resampled intermediates) and returns, per metric, the
bootstrap values of its ``ci_scores``; :func:`intervals` turns
them into percentile, BCa or Wilson intervals (see :mod:`assay.metrics.intervals`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics._params import check_confidence_level, check_n_resamples, check_seed
from assay.metrics.base import Metric, take
from assay.metrics.intervals import bca_interval, percentile_interval, wilson_interval
from assay.metrics.resample import Resampler, empty_note

__all__ = ["CI_METHODS", "bootstrap_scores", "intervals", "jackknife_scores"]

CI_METHODS = ("percentile", "bca", "wilson")


def bootstrap_scores(resampler: Resampler, metrics: Sequence[Metric], inters: Sequence[Any],
                     names: Sequence[Sequence[str]]) -> list[tuple[dict[str, np.ndarray], int]]:
    """Bootstrap values of the scores ``names[i]`` of ``metrics[i]`` and how many empty replicates were left
    out (:func:`~assay.metrics.resample.drop_empty`): arrays of shape ``(B - dropped,)``.

    Each metric is resampled on its own from the shared scheme (an additive metric through
    its summed statistics, the others by re-running ``reduce``): a metric's interval does not
    depend on which other metrics are evaluated beside it, and equals a sharded run's.
    """
    return [resampler.scores(m, inter, nm) if nm else ({}, 0) for m, inter, nm in zip(metrics, inters, names)]


def jackknife_scores(resampler: Resampler, metric: Metric, inter: Any, names: Sequence[str]
                     ) -> tuple[dict[str, np.ndarray], str | None]:
    """Leave-one-unit-out values of ``names`` (a grouped jackknife beyond the block limit)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if metric.additive:
            su = resampler.unit_stats(np.asarray(inter, dtype=float))
            blocks, note = resampler.jackknife_blocks(max_blocks=200_000)
            total = su.sum(axis=0)
            if note is None:
                jack = total - su
            else:
                jack = np.stack([total - su[b].sum(axis=0) for b in blocks])
            many = metric.reduce_totals_many(jack)
            return {n: np.asarray(many[n], dtype=float) for n in names}, note
        blocks, note = resampler.jackknife_blocks()
        vals = {n: np.empty(len(blocks)) for n in names}
        for j, b in enumerate(blocks):
            sc = metric.reduce(take(inter, resampler.instances_without(b)))
            for n in names:
                vals[n][j] = float(sc[n])
        return vals, note


def intervals(metrics: Sequence[Metric], inters: Sequence[Any], estimates: Sequence[dict[str, float]], *,
              n: int, n_resamples: int, confidence_level: float, method: str, seed: int,
              groups: Any = None, strata: Any = None, owner: str = "assay.evaluate",
              ) -> tuple[list[dict[str, tuple[float, float]]], dict[str, str]]:
    """Intervals of every metric's ``ci_scores``; returns (per metric ``{raw name: (low, high)}``, notes).

    Notes are keyed by the prefixed score name and explain NaN or one-point intervals.
    """
    if not isinstance(method, str) or method not in CI_METHODS:
        raise InvalidParameterError(f"'ci_method' must be one of {', '.join(CI_METHODS)}; got {method!r}.")
    check_seed(seed, allow_none=False)
    check_n_resamples(n_resamples, minimum=1)
    check_confidence_level(confidence_level)
    names = []
    for m, est in zip(metrics, estimates):
        wanted = [s for s in m.score_names_for_ci if s in est]
        missing = [s for s in m.score_names_for_ci if s not in est]
        if missing:
            raise InvalidParameterError(
                f"Metric {m.name!r} asks for intervals of {missing}, which it does not report ({sorted(est)})."
            )
        names.append(wanted)
    notes: dict[str, str] = {}
    result: list[dict[str, tuple[float, float]]] = [{} for _ in metrics]
    need_boot = [list(nm) for nm in names]
    if method == "wilson":
        for i, (m, inter) in enumerate(zip(metrics, inters)):
            props = m.proportions(inter) if groups is None and strata is None else {}
            for s in names[i]:
                if s in props:
                    lo, hi, why = wilson_interval(*props[s], confidence_level)
                    result[i][s] = (lo, hi)
                    need_boot[i].remove(s)
                    if why:
                        notes[(m.score_prefix or "") + s] = why
                else:
                    notes[(m.score_prefix or "") + s] = ("Wilson applies to proportions of independent trials only; "
                                                        "percentile bootstrap used")
    if n == 0 or not any(need_boot):
        for i, m in enumerate(metrics):
            for s in need_boot[i]:
                result[i][s] = (math.nan, math.nan)
                notes[(m.score_prefix or "") + s] = "no instances to resample"
        return result, notes
    rs = Resampler(n, n_resamples=n_resamples, seed=seed, groups=groups, strata=strata, owner=owner)
    # metrics whose gathered state has an additive twin once the data is seen (label discovery)
    twins = [m.additive_for_intervals(inter) if not m.additive and any(need_boot[i]) else None
             for i, (m, inter) in enumerate(zip(metrics, inters))]
    if any(t is not None for t in twins):
        metrics = [t[0] if t is not None else m for m, t in zip(metrics, twins)]
        inters = [t[1] if t is not None else inter for inter, t in zip(inters, twins)]
    boots = bootstrap_scores(rs, metrics, inters, need_boot)
    for i, m in enumerate(metrics):
        values, dropped = boots[i]
        jack: dict[str, np.ndarray] | None = None
        if method == "bca" and need_boot[i]:
            jack, jnote = jackknife_scores(rs, m, inters[i], need_boot[i])
            if jnote:
                for s in need_boot[i]:
                    notes.setdefault((m.score_prefix or "") + s, jnote)
        for s in need_boot[i]:
            if jack is not None:  # method == "bca"
                lo, hi, why = bca_interval(values[s], estimates[i][s], jack[s], confidence_level)
            else:
                lo, hi, why = percentile_interval(values[s], confidence_level)
            result[i][s] = (lo, hi)
            if dropped:
                why = "; ".join(filter(None, [why, empty_note(dropped, n_resamples)]))
            if why:
                key = (m.score_prefix or "") + s
                notes[key] = f"{notes[key]}; {why}" if key in notes else why
    return result, notes
