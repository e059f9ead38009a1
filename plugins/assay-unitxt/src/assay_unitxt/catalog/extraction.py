"""unitxt's ``KeyValueExtraction`` (``metrics.key_value_extraction.accuracy`` and ``.token_overlap``).

Predictions and (single) references are dicts of key to value. For every key found in some
reference, each instance where the key is in the reference or the prediction contributes one
value: the inner metric's global score of that value pair (0 when one side lacks the key). Scores
``<inner>_<key>`` (mean per key), ``<inner>_micro`` (main: the mean over all contributions),
``<inner>_macro`` (the mean of the per-key means) and ``<inner>_legal_keys_in_predictions`` (the
share of predicted keys that some reference has), ``<inner>`` being the inner metric's main score.
"""

from __future__ import annotations

from typing import Any

import assay
from assay.metrics import GlobalMetric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["KeyValueExtraction", "ToolCallKeyValueExtraction", "flatten_tool_call"]


class KeyValueExtraction(CheckedInputs, GlobalMetric):
    """unitxt's ``KeyValueExtraction``; ``metric`` is the inner metric's catalog name."""

    input_type = "mapping"

    examples = [{"predictions": [{"name": "John", "age": "31"}, {"age": "40", "zip": "1"}],
                 "references": [[{"name": "John", "age": "30"}], [{"age": "40"}]]}]

    single_reference_per_prediction = False
    prediction_type = dict[str, Any]

    def __init__(self, *, metric: str, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.metric = metric
        self._inner = assay.load_metric(metric)
        self.inner_main = self._inner.main_score
        self.main_score = f"{self.inner_main}_micro"

    def _pair_score(self, prediction: Any, reference: Any) -> float:
        res = assay.evaluate([prediction], [[reference]], metrics=[self._inner.clone()], n_resamples=0)
        return float(res.global_scores["score"])

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        refs = [r[0] for r in references]
        keys: list[Any] = list(dict.fromkeys(k for ref in refs for k in ref))
        stats: dict[Any, list[float]] = {k: [] for k in keys}
        n_pred_keys = illegal = 0
        for ref, pred in zip(refs, predictions):
            for key in keys:
                if key in ref and key in pred:
                    stats[key].append(self._pair_score(pred[key], ref[key]))
                elif key in ref or key in pred:
                    stats[key].append(0.0)
            n_pred_keys += len(pred)
            illegal += sum(1 for k in pred if k not in stats)
        name = self.inner_main
        out: dict[str, float] = {}
        total = 0
        average = weighted = 0.0
        for key, values in stats.items():
            mean = sum(values) / len(values) if values else float("nan")
            total += len(values)
            average += mean
            weighted += mean * len(values)
            out[f"{name}_{key}"] = mean
        out[f"{name}_micro"] = weighted / total if total else float("nan")
        out[f"{name}_macro"] = average / len(stats) if stats else float("nan")
        out[f"{name}_legal_keys_in_predictions"] = 1 - illegal / n_pred_keys if n_pred_keys else 0.0
        return out


def flatten_tool_call(nested: Any, parent: str = "", sep: str = ".") -> dict[str, Any]:
    """unitxt's ``ToolCallKeyValueExtraction.flatten_dict``: nested keys joined with ``.``; a list of
    dicts is indexed (``args.addresses.0.city``), unless each dict has one key and the keys are
    distinct (``args.addresses.home.city``)."""
    flat: dict[str, Any] = {}
    for k, v in nested.items():
        key = f"{parent}{sep}{k}" if parent else k
        if isinstance(v, list) and v and all(isinstance(d, dict) for d in v):
            if all(len(d) == 1 for d in v):
                keys = [next(iter(d)) for d in v]
                if len(keys) == len(set(keys)):
                    for e in v:
                        flat.update(flatten_tool_call(e, key, sep))
                    continue
            for i, e in enumerate(v):
                flat.update(flatten_tool_call(e, f"{key}{sep}{i}", sep))
        elif isinstance(v, dict):
            flat.update(flatten_tool_call(v, key, sep))
        else:
            flat[key] = v
    return flat


class ToolCallKeyValueExtraction(KeyValueExtraction):
    """unitxt's ``ToolCallKeyValueExtraction`` (``metrics.tool_calling.key_value.accuracy`` and
    ``.token_overlap``): tool calls ``{"name": ..., "arguments": {...}}`` flattened into key-value
    pairs (:func:`flatten_tool_call`), then :class:`KeyValueExtraction`."""

    examples = [{"predictions": [{"name": "f", "arguments": {"a": "1", "b": {"c": "x"}}}],
                 "references": [[{"name": "f", "arguments": {"a": "2", "b": {"c": "x"}}}]]}]

    input_type = "tool_call"

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        return super().compute_global([flatten_tool_call(p) for p in predictions],
                                      [[flatten_tool_call(r) for r in ref] for ref in references], task_data)
