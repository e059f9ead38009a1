"""unitxt's retrieval and ranking metrics: ``mrr``, ``map``, ``retrieval_at_k`` and ``ndcg``
(``metrics.mrr``, ``metrics.map``, ``metrics.retrieval_at_k``, ``metrics.ndcg``).

The instance metrics follow unitxt's ``RetrievalMetric``: the prediction is the ranked list of
retrieved ids, the (single) reference the list of relevant ids (duplicates dropped).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidParameterError
from assay.metrics import GlobalMetric, InstanceMetric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["MeanAveragePrecision", "MeanReciprocalRank", "Ndcg", "RetrievalAtK"]


#: unitxt's RetrievalMetric.prediction_type
RANKING = list[str] | list[int]


def _relevance(prediction: Any, references: Any) -> list[int]:
    gold = set(dict.fromkeys(references[0]))
    return [1 if doc in gold else 0 for doc in prediction]


class MeanReciprocalRank(CheckedInputs, InstanceMetric):
    """unitxt's ``MRR``: 1 / (1-based rank of the first relevant id), 0 when none is retrieved."""

    input_type = "list[label]"

    examples = [{"predictions": [["a", "b", "c"], ["x", "y"], ["q", "a"]],
                 "references": [[["b", "c"]], [["z"]], [["a"]]]}]

    main_score = "mrr"
    ci_scores = ["mrr"]
    prediction_type = RANKING
    single_reference_per_prediction = True

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        rel = _relevance(prediction, references)
        return next((1.0 / (k + 1) for k, r in enumerate(rel) if r), 0.0)


class MeanAveragePrecision(CheckedInputs, InstanceMetric):
    """unitxt's ``MAP``: the mean of precision@k over the ranks k of the relevant retrieved ids
    (divided by the number of relevant ids *retrieved*, unitxt's definition), 0 when none."""

    input_type = "list[label]"

    examples = [{"predictions": [["a", "b", "c"], ["x", "y"], ["q", "a"]],
                 "references": [[["b", "c"]], [["z"]], [["a"]]]}]

    main_score = "map"
    ci_scores = ["map"]
    prediction_type = RANKING
    single_reference_per_prediction = True

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        rel = _relevance(prediction, references)
        hits, dot = 0, 0.0
        for k, r in enumerate(rel, start=1):
            hits += r
            dot += r * hits / k
        return dot / hits if hits else 0.0


class RetrievalAtK(CheckedInputs, InstanceMetric):
    """unitxt's ``RetrievalAtK``: ``precision_at_<k>``, ``recall_at_<k>``, ``match_at_<k>`` for each
    ``k`` of ``k_list`` (a k past the end of the ranking reads the last position); main
    ``match_at_<first k>``."""

    input_type = "list[label]"

    examples = [{"predictions": [["a", "b", "c"], ["x", "y"], ["q", "a"]],
                 "references": [[["b", "c"]], [["z"]], [["a"]]]}]

    prediction_type = RANKING
    single_reference_per_prediction = True

    def __init__(self, *, k_list: Sequence[int], score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        ks = list(k_list)
        if not ks or not all(isinstance(k, int) and k > 0 for k in ks):
            raise InvalidParameterError(f"retrieval_at_k: 'k_list' must be positive integers; got {k_list!r}.")
        self.k_list = ks
        self.main_score = f"match_at_{ks[0]}"
        self.score_names = [f"{m}_at_{k}" for m in ("precision", "recall", "match") for k in ks]
        self.ci_scores = list(self.score_names)

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> dict[str, float]:
        rel = _relevance(prediction, references)
        n_refs = len(dict.fromkeys(references[0]))
        prec, recall, match = {0: 0.0}, {0: 0.0}, {0: 0.0}
        total = 0
        for k, r in enumerate(rel, start=1):
            total += r
            prec[k] = total / k
            recall[k] = total / n_refs if n_refs > 0 else 0
            match[k] = 1.0 if total > 0 else 0.0
        max_k = len(rel)
        out = {}
        for name, values in (("precision", prec), ("recall", recall), ("match", match)):
            for k in self.k_list:
                out[f"{name}_at_{k}"] = float(values[min(k, max_k)])
        return out


class Ndcg(CheckedInputs, GlobalMetric):
    """unitxt's ``metrics.ndcg`` (its ``cast_fields`` step, then ``NDCG``): predictions and the single
    reference are cast to float; instances are grouped by ``task_data["query"]``; each query with
    more than one instance gets scikit-learn's ``ndcg_score``; the score ``nDCG`` is the
    NaN-ignoring mean over queries (NaN when no query has two instances). A prediction that does
    not cast (unitxt ranks it last) is an error naming it, as is every non-finite value.
    """

    input_type = "castable"

    examples = [{"predictions": [0.9, 0.2, 0.5, 3.0, 1.0, 2.0],
                 "references": [[2.0], [0.0], [1.0], [0.0], [3.0], [1.0]],
                 "task_data": [{"query": "q1"},
                               {"query": "q1"},
                               {"query": "q1"}, {"query": "q2"}, {"query": "q2"}, {"query": "q2"}]}]

    requirements = {"sklearn": "scikit-learn"}
    main_score = "nDCG"
    single_reference_per_prediction = True

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> float:
        # scikit-learn is unitxt's implementation; deferred: heavy optional import
        from sklearn.metrics import ndcg_score  # type: ignore[import-untyped]  # deferred: heavy optional import

        per_query: dict[Any, tuple[list[float], list[float]]] = {}
        for pred, ref, td in zip(predictions, references, task_data):
            query = (td or {}).get("query")
            preds, refs = per_query.setdefault(query, ([], []))
            preds.append(float(pred))  # castable: checked by CheckedInputs
            refs.append(float(ref[0]))
        scores: list[float] = []
        for preds, refs in per_query.values():
            if len(refs) == 1:
                continue
            scores.append(float(ndcg_score([refs], [preds])))
        finite = [s for s in scores if not math.isnan(s)]
        return sum(finite) / len(finite) if finite else math.nan
