"""A small Hugging Face ``evaluate`` metric for assay's HuggingfaceMetric tests (kept under test data).

``match``: the share of predictions found among their references, each weighted by ``weights``
(one value per instance, passed with ``hf_additional_input_fields_pass``), plus ``bonus`` (one
value for the whole call, passed with ``hf_additional_input_fields_pass_one_value``).
``n`` counts the instances; ``tokens`` is a list (not a score).
"""

import datasets
import evaluate


class SumMatch(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="weighted share of predictions found among the references",
            citation="",
            inputs_description="predictions: strings; references: lists of strings",
            features=datasets.Features(
                {"predictions": datasets.Value("string"),
                 "references": datasets.Sequence(datasets.Value("string"))}
            ),
        )

    def _compute(self, predictions, references, weights=None, bonus=0.0):
        if weights is None:
            weights = [1.0] * len(predictions)
        hits = sum(w for p, r, w in zip(predictions, references, weights) if p in r)
        return {"match": hits / sum(weights) + bonus, "n": len(predictions), "tokens": list(predictions)}
