"""Metrics carried through :class:`~assay.EvaluatorBase` runs (``metrics=[...]``).

The evaluator maps each pool item to a metric instance with its ``metric_inputs(sent,
w_vector)`` method (returning ``(prediction, references)`` or ``(prediction,
references, task_data)``). Each shard's worker updates empty copies of the metrics with
its items, and returns their states with the shard's tally; the parent merges the
states in shard order (additive states by summation), so a sharded run gives the same
scores as a sequential one.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import attrs

from assay.errors import EvaluationError, InvalidParameterError
from assay.metrics.base import Metric, metric_name
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
    from assay.core.evaluator import evaluate_shard, wrap_item_error

    sentence_evaluator, w_vector, metric_inputs, metrics = shared
    tally = evaluate_shard(shard, (sentence_evaluator, w_vector))
    preds: list[Any] = []
    refs: list[Any] = []
    tds: list[Any] = []
    for offset, sent in enumerate(shard.items()):
        try:
            value = metric_inputs(sent, w_vector)
        except BaseException as exc:  # noqa: BLE001 - SystemExit & co. must name the item too
            err = wrap_item_error(exc, "metric_inputs", shard, offset)
            if err is exc:
                raise
            raise err from exc
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (tuple, list)) \
                or len(value) not in (2, 3):
            raise EvaluationError(
                f"metric_inputs returned {value!r:.80} on {shard.describe(offset)} (shard {shard.index}); expected "
                "a tuple (prediction, references) or (prediction, references, task_data).",
                shard=shard.index, item=shard.pool_index(offset),
            )
        pred, ref, *rest = value
        preds.append(pred)
        refs.append(ref)
        tds.append(rest[0] if rest else None)
    has_td = any(t is not None for t in tds)
    start = shard.pool_index(0) if len(preds) else None
    states = []
    for m in metrics:
        state = m.clone()
        if start is not None:
            state.state.start = start  # messages name pool positions, not positions in the shard
        if preds:
            try:
                state.update(preds, refs, tds if has_td else None)
            except Exception as exc:
                item = getattr(exc, "item", None)
                if start is None:
                    where = f"{shard.describe(0)} onwards; instance numbers below count within the shard"
                elif item is None:  # the metric's own message: its instance numbers count from the shard's start
                    where = (f"pool items {start}..{start + len(preds) - 1}; an instance number below counts from "
                             f"item {start}")
                else:
                    where = f"pool items {start}..{start + len(preds) - 1}"
                raise EvaluationError(
                    f"Metric {metric_name(m)!r} failed on shard {shard.index} ({where}): {exc}",
                    shard=shard.index, item=item,
                ) from exc
        states.append(state)
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
