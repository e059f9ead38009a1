"""Metrics carried through :class:`~assay.EvaluatorBase` runs (``metrics=[...]``).

The evaluator maps each pool item to a metric instance with its ``metric_inputs(sent,
w_vector)`` method (returning ``(prediction, references)`` or ``(prediction,
references, task_data)``). Each shard's worker updates empty copies of the metrics with
its items, and returns their states with the shard's tally; the parent merges the
states in shard order (additive states by summation), so a sharded run gives the same
scores as a sequential one.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import attrs

from assay.errors import EvaluationError, InvalidParameterError
from assay.metrics.base import Metric
from assay.metrics.catalog import resolve_metrics

__all__ = ["STATES_KEY", "evaluate_shard_metrics", "merge_shard_metrics", "prepare_metrics"]

#: key of the per-shard metric states inside a shard result's ``metrics`` (removed after merging)
STATES_KEY = "__metric_states__"


def prepare_metrics(metrics: Any, evaluator: Any) -> list[Metric]:
    """Resolve names to metrics (empty state) and check that the evaluator can feed them."""
    ms = [m.clone() for m in resolve_metrics(metrics)]
    if not callable(getattr(evaluator, "metric_inputs", None)):
        raise InvalidParameterError(
            f"The 'metrics' parameter needs {type(evaluator).__name__}.metric_inputs(sent, w_vector) returning "
            "(prediction, references) for each pool item."
        )
    return ms


def evaluate_shard_metrics(shard: Any, shared: tuple[Callable[..., Any], Any, Callable[..., Any], Sequence[Metric]]
                           ) -> Any:
    """The task function for runs with metrics: the shard's tally plus its metric states.

    ``shared`` is ``(sentence_evaluator, w_vector, metric_inputs, metrics)``.
    """
    from assay.core.evaluator import evaluate_shard

    sentence_evaluator, w_vector, metric_inputs, metrics = shared
    tally = evaluate_shard(shard, (sentence_evaluator, w_vector))
    preds: list[Any] = []
    refs: list[Any] = []
    tds: list[Any] = []
    for offset, sent in enumerate(shard.items()):
        try:
            value = metric_inputs(sent, w_vector)
            pred, ref, *rest = value
        except Exception as exc:
            raise EvaluationError(
                f"metric_inputs raised or returned no (prediction, references) pair on {shard.describe(offset)} "
                f"(shard {shard.index}): {exc}", shard=shard.index, item=shard.pool_index(offset),
            ) from exc
        preds.append(pred)
        refs.append(ref)
        tds.append(rest[0] if rest else None)
    has_td = any(t is not None for t in tds)
    states = [m.clone().update(preds, refs, tds if has_td else None) if preds else m.clone() for m in metrics]
    return attrs.evolve(tally, metrics={STATES_KEY: states})


def merge_shard_metrics(parts: Sequence[Any]) -> tuple[list[Any], dict[str, Any]]:
    """Merge the shards' metric states in shard order: (shard results with their own scores, total scores)."""
    states = [p.metrics[STATES_KEY] for p in parts]
    if not states:
        return list(parts), {}
    totals = [s.clone().merge(*[shard_states[i] for shard_states in states]) for i, s in enumerate(states[0])]
    scores: dict[str, Any] = {}
    for i, m in enumerate(totals):
        out = m.compute()
        if i == 0:
            scores["score"], scores["score_name"] = out["score"], out["score_name"]
        scores.update({k: v for k, v in out.items() if k not in ("score", "score_name")})
    cleaned = []
    for p, shard_states in zip(parts, states):
        own: dict[str, Any] = {}
        for m in shard_states:
            if m.state.n:
                own.update({k: v for k, v in m.compute().items() if k not in ("score", "score_name")})
        cleaned.append(attrs.evolve(p, metrics=own))
    return cleaned, scores
