"""unitxt's ``MultiTurnMetric`` (``metrics.multi_turn.accuracy``, ``metrics.multi_turn.sequential_success_accuracy``).

Each instance is one assistant turn of a conversation: ``task_data["conversation"]["id"]`` names
the conversation, and the turn is ``assistant_turn_<len(task_data["conversation"]["dialog"]) // 2>``
(a later instance with the same conversation and turn replaces the earlier one, as in unitxt).
A wrapped metric scores each turn; the turns' scores are reduced within each conversation --
their mean, or ``sequential_success``: the share of the conversation's turns, in turn order,
scored above ``threshold`` before the first that is not (turns ordered by their names as text,
as unitxt sorts them) -- and the conversations' results are averaged (NaN left out). Instance
scores are the wrapped metric's; no intervals (unitxt's ``n_resamples`` is None).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidParameterError
from assay.metrics import GlobalMetric, Metric
from assay.validation import undefined_metric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["MultiTurn"]


def _nan_mean(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else float("nan")


class MultiTurn(CheckedInputs, GlobalMetric):
    """Turn scores of ``metric`` reduced within conversations (``"mean"`` or ``"sequential_success"``), then
    averaged over conversations."""

    examples = [{"predictions": ["a", "b", "c"], "references": [["a"], ["x"], ["c"]],
                 "task_data": [{"conversation": {"id": "c1", "dialog": [{}, {}]}},
                               {"conversation": {"id": "c1", "dialog": [{}, {}, {}, {}]}},
                               {"conversation": {"id": "c2", "dialog": [{}, {}]}}]}]

    ci_scores: list[str] = []

    def __init__(self, *, metric: Metric, in_group: str = "mean", threshold: float = 0.5,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        if in_group not in ("mean", "sequential_success"):
            raise InvalidParameterError(
                f"multi_turn_metric: the in-conversation reduction must be 'mean' or 'sequential_success'; "
                f"got {in_group!r}.")
        self.metric = metric
        self.in_group = in_group
        self.threshold = float(threshold)
        self.main_score = metric.main_score
        self.input_type = getattr(metric, "input_type", "label")
        self.prediction_type = getattr(metric, "prediction_type", None)

    @staticmethod
    def _ids(task_data: Any) -> tuple[str, str]:
        conv = task_data.get("conversation") if isinstance(task_data, Mapping) else None
        if not isinstance(conv, Mapping) or "id" not in conv or not hasattr(conv.get("dialog"), "__len__"):
            raise InvalidParameterError(
                "metrics.multi_turn.* needs task_data {'conversation': {'id': ..., 'dialog': [...]}} per instance; "
                f"got {task_data!r:.80}.")
        return str(conv["id"]), f"assistant_turn_{len(conv['dialog']) // 2}"

    def _turn_scores(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> list[dict]:
        inner = self.metric.clone()
        return list(inner.instance_scores(inner.map_all(predictions, references, task_data)))

    def _reduce_turns(self, turns: list[tuple[str, float]]) -> float:
        if self.in_group == "mean":
            return _nan_mean([v for _, v in turns])
        ok = 0
        for _, value in sorted(turns, key=lambda t: t[0]):
            if not value > self.threshold:
                break
            ok += 1
        return ok / len(turns)

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        if not predictions:
            return {self.main_score: undefined_metric(f"metrics.multi_turn: no instances; {self.main_score} is NaN.")}
        ids = [self._ids(td) for td in task_data]
        scores = self._turn_scores(predictions, references, task_data)
        conversations: dict[str, dict[str, dict[str, float]]] = {}
        for (conv, turn), sc in zip(ids, scores):
            conversations.setdefault(conv, {})[turn] = sc
        per_conv: list[dict[str, float]] = []
        for turns in conversations.values():
            keys = list(dict.fromkeys(k for sc in turns.values() for k in sc))
            per_conv.append({k: self._reduce_turns([(t, sc[k]) for t, sc in turns.items() if k in sc])
                             for k in keys})
        keys = list(dict.fromkeys(k for c in per_conv for k in c))
        return {k: _nan_mean([c[k] for c in per_conv if k in c]) for k in keys}

    def instance_scores(self, intermediates: Any) -> list[dict[str, float]]:
        """The wrapped metric's score of each turn (unitxt's instance scores)."""
        preds, refs, tds = ([t[i] for t in intermediates] for i in range(3))
        for td in tds:
            self._ids(td)
        return self._turn_scores(preds, refs, tds)
