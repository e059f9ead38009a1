"""Metrics carried through :class:`~assay.EvaluatorBase` runs (``metrics=[...]``).

The evaluator maps each pool item to a metric instance with its ``metric_inputs(sent,
w_vector)`` method (returning ``(prediction, references)`` or ``(prediction,
references, task_data)``), in the same pass over the shard's items as the sentence
evaluator (a path shard's files are read once). Each shard's worker updates empty copies
of the metrics with its items and returns ONE state, an :class:`~assay.EvaluationResult`
whose ``metric_tally`` is a :class:`MetricsTally`: the metrics with their
:class:`~assay.metrics.MetricState`, and (``n_resamples > 0``) the shard's part of every
Poisson bootstrap replicate (:mod:`assay.metrics.resample`). The parent merges the states
in shard order, so a sharded run gives the same scores and the same intervals as a
sequential one, for any shard count and executor.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from assay.core.protocols import ShardLike
from assay.core.tally import Tally, merged_by
from assay.errors import EvaluationError, InvalidParameterError, UndefinedMetricWarning
from assay.metrics.base import Metric, metric_name
from assay.metrics.catalog import resolve_metrics
from assay.metrics.intervals import percentile_interval
from assay.metrics.resample import (
    UNPOSITIONED,
    PoissonReplicates,
    Resampler,
    Resampling,
    additive_scores,
    check_cost,
    empty_note,
    merge_replicates,
    replicate_scores,
    shard_replicates,
)

__all__ = ["MetricsTally", "check_metric_inputs", "prepare_metrics", "tally_shard_metrics"]


def prepare_metrics(metrics: Any, evaluator: Any, resampling: Any = None) -> list[Metric]:
    """Resolve names to metrics (empty state) and check that the evaluator can feed them."""
    ms = [m.clone() for m in resolve_metrics(metrics)]
    grouped = [metric_name(m) for m in ms if getattr(m, "resample_groups_by", None)]
    if grouped and resampling is not None and resampling.n_resamples:
        raise InvalidParameterError(
            f"Metric(s) {grouped} resample their task_data groups as units (unitxt's 'group_mean' with agg_func[2] "
            "True), but the sharded evaluators' Poisson bootstrap resamples items one by one; use assay.evaluate "
            "(a cluster bootstrap on group_id) or pass n_resamples=0.")
    if not callable(getattr(evaluator, "metric_inputs", None)):
        raise InvalidParameterError(
            f"The 'metrics' parameter needs {type(evaluator).__name__}.metric_inputs(sent, w_vector) returning "
            "(prediction, references) for each pool item."
        )
    return ms


def check_metric_inputs(value: Any, shard: ShardLike, offset: int) -> tuple[Any, Any, Any]:
    """One ``metric_inputs`` return value as ``(prediction, references, task_data or None)``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)) or len(value) not in (2, 3):
        raise EvaluationError(
            f"metric_inputs returned {value!r:.80} on {shard.describe(offset)} (shard {shard.index}); expected "
            "a tuple (prediction, references) or (prediction, references, task_data).",
            shard=shard.index, item=shard.pool_index(offset),
        )
    pred, ref, *rest = value
    return pred, ref, rest[0] if rest else None


def _merge_metric_states(a: tuple[Metric, ...], b: tuple[Metric, ...]) -> tuple[Metric, ...]:
    if len(a) != len(b) or any(type(x) is not type(y) for x, y in zip(a, b)):
        raise InvalidParameterError(
            f"Cannot add results computed with different metrics ({[metric_name(m) for m in a]} and "
            f"{[metric_name(m) for m in b]})."
        )
    return tuple(x.clone().merge(x, y) for x, y in zip(a, b))


def _metrics_equal(a: tuple[Metric, ...], b: tuple[Metric, ...]) -> bool:
    return len(a) == len(b) and all(type(x) is type(y) and x.score_prefix == y.score_prefix and x.state == y.state
                                    for x, y in zip(a, b))


@attrs.frozen
class MetricsTally(Tally):
    """The metrics of a run with their states, and the Poisson replicate tallies: a :class:`Tally`.

    ``metrics`` (merged metric by metric, in shard order) holds metric objects whose
    ``state`` is the tally; ``replicates`` (a :class:`~assay.metrics.resample.PoissonReplicates`
    or None) merges when the two sides tally disjoint positions in order (else it becomes
    :data:`~assay.metrics.resample.DROPPED` and the total has no intervals).
    :meth:`scores` turns the tally into the scores and intervals printed to users.
    """

    metrics: tuple[Metric, ...] = merged_by(_merge_metric_states, default=(), converter=tuple,
                                            eq=attrs.cmp_using(eq=_metrics_equal))
    replicates: PoissonReplicates | str | None = merged_by(merge_replicates, default=None)

    def scores(self, *, own: bool = False) -> dict[str, Any]:
        """Global scores of every metric: ``score``, ``score_name``, the named scores, and intervals.

        With replicates, each score in a metric's ``ci_scores`` gets ``<name>_ci_low`` /
        ``<name>_ci_high`` (prefixed as the score), and the first metric's main score also
        ``score_ci_low`` / ``score_ci_high`` -- the names :func:`assay.evaluate` uses.
        ``own=True`` (a shard's own scores): metrics without data are left out, and so are
        ``score`` / ``score_name`` and intervals.
        """
        out: dict[str, Any] = {}
        computed: list[dict[str, Any] | None] = []
        for i, m in enumerate(self.metrics):
            if own and not m.state.n:
                computed.append(None)
                continue
            sc = m.compute_scores()
            computed.append(sc)
            if i == 0 and not own:
                out["score"], out["score_name"] = sc["score"], sc["score_name"]
            out.update({k: v for k, v in sc.items() if k not in ("score", "score_name")})
        reps = self.replicates
        if reps == UNPOSITIONED and not own:
            warnings.warn("No confidence intervals: a shard does not know the pool positions of its items (neither "
                          "'start' nor 'first_file'); the Poisson bootstrap keys its weights by position.",
                          UndefinedMetricWarning, stacklevel=3)
        if own or not isinstance(reps, PoissonReplicates) or not reps.resampling.n_resamples:
            return out  # none asked, or dropped (DROPPED) when two separate runs were added
        out.update(self._intervals(reps, computed))
        return out

    def _intervals(self, reps: PoissonReplicates, computed: Sequence[Any]) -> dict[str, Any]:
        rs = reps.resampling
        level = rs.confidence_level
        cols: list[slice | None] = []
        widths = iter(reps.parts)
        at = 0
        for m in self.metrics:
            if m.additive:
                width = next(widths, None)
                if width is None:  # no shard had items: no rows
                    width = m.state.totals.shape[0] if m.state.totals is not None else (m.n_stats or 0)
                cols.append(slice(at, at + width))
                at += width
            else:
                cols.append(None)
        n = reps.n
        check_cost(rs.n_resamples, n, at, owner="the evaluator's n_resamples")
        sums = reps.sums() if n and at else None
        parts = iter(range(len(reps.parts)))
        out: dict[str, Any] = {}
        undefined, skipped = [], []
        for i, (m, sc) in enumerate(zip(self.metrics, computed)):
            pre = m.score_prefix or ""
            names = [s for s in m.score_names_for_ci if sc is not None and pre + s in sc]
            if n and names and not m.additive and len(m.state.intermediates()) != m.state.n:
                skipped.append(metric_name(m))  # keeps its own state (e.g. a torchmetrics wrapper): no rows to weight
                continue
            part = next(parts, None) if m.additive else None
            boots, dropped = self._replicates(m, reps, cols[i], sums, part, names) if n else ({}, 0)
            for s in names:
                if n:
                    lo, hi, why = percentile_interval(boots[s], level)
                    if dropped:
                        why = "; ".join(filter(None, [why, empty_note(dropped, rs.n_resamples)]))
                else:
                    lo, hi, why = math.nan, math.nan, "no instances to resample"
                out[f"{pre}{s}_ci_low"], out[f"{pre}{s}_ci_high"] = lo, hi
                if i == 0 and s == m.main_score:
                    out["score_ci_low"], out["score_ci_high"] = lo, hi
                if math.isnan(lo) and why:
                    undefined.append(f"{pre}{s} ({why})")
        if skipped:
            warnings.warn(f"No confidence intervals for metric(s) {skipped}: they keep their own state (their own "
                          "update()), so the bootstrap has no per-item rows to weight; use assay.evaluate for "
                          "their intervals.", UndefinedMetricWarning, stacklevel=4)
        if undefined:
            warnings.warn("Confidence intervals are undefined (NaN) for: " + "; ".join(undefined) + ".",
                          UndefinedMetricWarning, stacklevel=4)
        return out

    @staticmethod
    def _replicates(m: Metric, reps: PoissonReplicates, cols: slice | None, sums: Any, part: int | None,
                    names: list[str]) -> tuple[dict[str, Any], int]:
        """Replicate values of ``names``: a gathered metric with an additive twin once the data is seen
        (macro-F1's discovered labels) is resampled through the twin, as :func:`assay.evaluate` does."""
        if not m.additive and names:
            twin = m.additive_for_intervals(m.state.intermediates())
            if twin is not None:
                tm, rows = twin
                rows = np.asarray(rows, dtype=float)
                rs = reps.resampling
                if reps.unit == "block":  # positions 0..n-1 of stream 0: the in-memory engine's numbers
                    totals, size = Resampler(reps.n, n_resamples=rs.n_resamples, seed=rs.seed).sums(rows)
                else:
                    totals, size = shard_replicates(rs, rows, start=None, parts=(rows.shape[1],),
                                                    file_counts=[(f, c) for f, _, c in reps.segments]).sums()
                return additive_scores(tm, totals, size[:, 0], names)
        return replicate_scores(m, reps, cols, sums, part, names)


def tally_shard_metrics(metrics: Sequence[Metric], shard: ShardLike, preds: list[Any], refs: list[Any], tds: list[Any],
                        resampling: Resampling | None,
                        file_counts: Sequence[tuple[int, int]] | None = ()) -> MetricsTally:
    """The shard's :class:`MetricsTally`: each metric updated with the shard's instances, plus replicates.

    ``preds`` / ``refs`` / ``tds`` are the shard's ``metric_inputs`` in order; for a path
    shard ``file_counts`` gives ``(file index in the pool, items)`` per file; None when the
    shard's pool positions are unknown (its replicates are then
    :data:`~assay.metrics.resample.UNPOSITIONED`: the run gets no intervals, with a warning).
    """
    has_td = any(t is not None for t in tds)
    start = shard.pool_index(0) if len(preds) else None
    states = []
    rows = []
    parts: list[int] = []
    for m in metrics:
        state = m.clone()
        if start is not None:
            state.state.start = start  # messages name pool positions, not positions in the shard
        if preds:
            own_update = type(m).update is not Metric.update  # e.g. a torchmetrics wrapper keeps its own state
            resampled = m.additive and resampling is not None and resampling.n_resamples
            try:
                if own_update:
                    state.update(preds, refs, tds if has_td else None)
                    if resampled:  # its own update keeps totals only: the replicates need the rows too
                        inter = state.map_all(preds, refs, tds if has_td else None, offset=state.state.start)
                else:
                    inter = state.map_all(preds, refs, tds if has_td else None, offset=state.state.start)
                    state.absorb(inter)
            except Exception as exc:
                raise _metric_error(exc, m, shard, start, len(preds)) from exc
            if resampled:
                rows.append(np.asarray(inter, dtype=float).reshape(len(preds), -1))
                parts.append(rows[-1].shape[1])
        states.append(state)
    replicates: PoissonReplicates | str | None = None
    if resampling is not None and resampling.n_resamples and file_counts is None:
        replicates = UNPOSITIONED
    elif resampling is not None and resampling.n_resamples:
        stats = np.concatenate(rows, axis=1) if rows else np.zeros((len(preds), 0))
        start = getattr(shard, "start", None)  # an in-memory shard's pool offset; None for a shard of files
        replicates = shard_replicates(resampling, stats, start=start if isinstance(start, int) else None,
                                      file_counts=file_counts or (), parts=parts)
    return MetricsTally(tuple(states), replicates)


def _metric_error(exc: Exception, metric: Metric, shard: ShardLike, start: int | None, n: int) -> EvaluationError:
    item = getattr(exc, "item", None)
    text = str(exc)
    if start is None:
        where = f"{shard.describe(0)} onwards; instance numbers below count within the shard"
    elif item is None:  # the metric's own message: its instance numbers count from the shard's start
        where = f"pool items {start}..{start + n - 1}"
        text, found = _INSTANCE.subn(lambda m: f"{m.group(0)} (pool position {start + int(m.group(2))})", text)
        if not found:
            where += f"; an instance number below counts from item {start}"
    else:
        where = f"pool items {start}..{start + n - 1}"
    return EvaluationError(f"Metric {metric_name(metric)!r} failed on shard {shard.index} ({where}): {text}",
                           shard=shard.index, item=item)


#: "instance 23" / "item 23" in a metric's own message: a position within the shard (annotated with the pool's)
_INSTANCE = re.compile(r"\b(instance|item) (\d+)\b")
