"""``metrics.rerank_recall``: unitxt's ``RerankRecall``, recall at k of a reranker, computed by trec_eval.

Each instance is one (query, passage) pair: ``task_data["query_id"]`` and ``task_data["passage_id"]``
name them, the prediction is the reranker's score of the pair (a number, or a string ``float()``
reads; anything else is a NaN score, as in unitxt, with a warning), the first reference is the
pair's relevance (an integer, ``1`` for the gold passage). The pairs are grouped by query and
handed to pytrec_eval (trec_eval's C library, as unitxt does: its order of tied scores is
trec_eval's), which gives ``recall_<k>`` per query for ``k`` in ``at_k``; ``recall_at_<k>`` is
the mean over the queries that have it (``recall_at_5`` main). Instance scores are the metric run
on each pair alone, as unitxt's ``GlobalMetric``; no intervals (unitxt's ``n_resamples`` is None).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from assay.errors import InvalidParameterError, MissingDependencyError
from assay.metrics import GlobalMetric
from assay.validation import undefined_metric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["RerankRecall"]


class RerankRecall(CheckedInputs, GlobalMetric):
    """unitxt's ``RerankRecall`` (see the module docstring)."""

    input_type = "label"
    examples = [{"predictions": ["0.9", "0.2", "0.4", "0.8"], "references": [["1"], ["0"], ["0"], ["1"]],
                 "task_data": [{"query_id": "q1", "passage_id": "p1"}, {"query_id": "q1", "passage_id": "p2"},
                               {"query_id": "q2", "passage_id": "p1"}, {"query_id": "q2", "passage_id": "p3"}]}]

    main_score = "recall_at_5"
    ci_scores: list[str] = []  # unitxt's n_resamples is None: no interval
    requirements = {"pytrec_eval": "pytrec-eval-terrier"}

    def __init__(self, *, query_id_field: str = "query_id", passage_id_field: str = "passage_id",
                 at_k: Sequence[int] = (1, 2, 5), score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.query_id_field = str(query_id_field)
        self.passage_id_field = str(passage_id_field)
        self.at_k = [int(k) for k in at_k]
        if not self.at_k or min(self.at_k) < 1:
            raise InvalidParameterError(f"metrics.rerank_recall: at_k must be positive integers; got {at_k!r}.")
        self.main_score = "recall_at_5" if 5 in self.at_k else f"recall_at_{self.at_k[-1]}"
        self.n_resamples = 0

    def _ids(self, data: Any, i: int) -> tuple[str, str]:
        if not isinstance(data, Mapping) or self.query_id_field not in data or self.passage_id_field not in data:
            raise InvalidParameterError(
                f"metrics.rerank_recall: instance {i} needs task_data with {self.query_id_field!r} and "
                f"{self.passage_id_field!r}; got {data!r:.80}.")
        return str(data[self.query_id_field]), str(data[self.passage_id_field])

    def compute_global(self, predictions: list[Any], references: list[Any], task_data: list[Any]) -> dict[str, float]:
        try:
            import pytrec_eval  # deferred: optional dependency (trec_eval's C library)
        except ImportError as err:
            raise MissingDependencyError("pytrec-eval-terrier", purpose="metric 'metrics.rerank_recall'") from err
        run: dict[str, dict[str, float]] = {}
        qrels: dict[str, dict[str, int]] = {}
        for i, (pred, refs, data) in enumerate(zip(predictions, references, task_data)):
            qid, pid = self._ids(data, i)
            try:
                score = float(pred)
            except (TypeError, ValueError):
                score = math.nan
            if not math.isfinite(score):  # unitxt ranks such a passage with a NaN score; assay refuses it
                raise InvalidParameterError(f"metrics.rerank_recall: predictions[{i}] = {pred!r:.40} is not a finite "
                                            "number (a passage's retrieval score).")
            try:
                relevance = int(refs[0])
            except (TypeError, ValueError):
                raise InvalidParameterError(f"metrics.rerank_recall: instance {i}'s reference {refs[0]!r:.40} is "
                                            "not an integer relevance.") from None
            run.setdefault(qid, {})[pid] = score
            qrels.setdefault(qid, {})[pid] = relevance
        measure = "recall." + ",".join(str(k) for k in self.at_k)
        per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
        out = {}
        for k in self.at_k:
            values = [q[f"recall_{k}"] for q in per_query.values()
                      if f"recall_{k}" in q and not math.isnan(q[f"recall_{k}"])]
            out[f"recall_at_{k}"] = (sum(values) / len(values) if values else
                                     undefined_metric(f"metrics.rerank_recall: no query has recall_{k}; NaN."))
        return out
