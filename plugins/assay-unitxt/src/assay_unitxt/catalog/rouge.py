"""unitxt's ``Rouge`` (``metrics.rouge``): assay-classic's ``rouge`` (rouge-score, no stemmer,
best reference per instance, mean over instances) behind unitxt's sentence splitting.

unitxt joins the sentences NLTK finds (``nltk.sent_tokenize`` of the stripped text) with
newlines before scoring, which changes ``rougeLsum`` only; that needs NLTK's ``punkt_tab``
sentence model on disk. assay never downloads it: without it the metric is a
``EvaluationError`` saying how to install it, or ``sent_split_newline=False`` skips the
split (then ``rougeLsum`` reads the text's own newlines). Every ROUGE type gets an interval, as
in unitxt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import assay
from assay.errors import EvaluationError, MissingDependencyError

__all__ = ["split_sentences", "unitxt_rouge"]


def split_sentences(text: str) -> str:
    """unitxt's ``"\\n".join(nltk.sent_tokenize(text.strip()))``."""
    try:
        import nltk  # type: ignore[import-untyped]  # deferred: heavy optional import
    except ImportError as err:
        raise MissingDependencyError("nltk", purpose="metric 'metrics.rouge' (unitxt splits sentences)") from err

    try:
        return "\n".join(nltk.sent_tokenize(text.strip()))
    except LookupError as err:
        raise EvaluationError(
            "metrics.rouge splits sentences as unitxt does (for rougeLsum) with NLTK's punkt_tab model, which is "
            "not on disk and which assay never downloads: run `python -m nltk.downloader punkt_tab` where there is "
            "network (or copy an nltk_data folder and set NLTK_DATA), or load "
            "'metrics.rouge[sent_split_newline=false]'.") from err


def _split_instance(instance: dict[str, Any]) -> dict[str, Any]:
    return {**instance, "prediction": split_sentences(instance["prediction"]),
            "references": [split_sentences(r) for r in instance["references"]]}


def unitxt_rouge(*, rouge_types: Sequence[str], sent_split_newline: bool = True, score_prefix: str = "") -> Any:
    from assay_unitxt.pipeline import MetricPipeline

    inner = assay.load_metric("rouge", rouge_types=list(rouge_types))
    inner.ci_scores = list(inner.score_names)
    if not sent_split_newline:
        inner.score_prefix = score_prefix
        metric = inner
    else:
        metric = MetricPipeline(inner, preprocess=[_split_instance], score_prefix=score_prefix)
    # sample inputs for assay's conformance suite: without the sentence split, which needs punkt_tab on disk
    metric.examples = [{"overrides": {"sent_split_newline": False},
                        "predictions": ["the cat sat on the mat", "a dog"],
                        "references": [["the cat sat"], ["a dog ran"]],
                        "global_target": {"rouge1": (2 * 0.5 * 1 / 1.5 + 2 * 1 * (2 / 3) / (5 / 3)) / 2}}]
    return metric
