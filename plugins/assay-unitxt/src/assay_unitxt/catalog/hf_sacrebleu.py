"""``metrics.sacrebleu``: unitxt's ``metric_pipeline`` around Hugging Face evaluate's ``sacrebleu`` module.

unitxt's pipeline copies ``task_data["target_language"]`` (``"en"`` when absent) to a ``tokenize``
field, maps it strictly (``"en"`` -> evaluate's default tokenizer, ``"ja"`` -> ``"ja-mecab"``; any
other language is an error) and passes that one value, which must be the same for every
instance, to evaluate's ``sacrebleu`` module. unitxt fetches the module from the Hub at run time;
assay computes it offline with its ``evaluate:sacrebleu`` metric (assay-interop's ``evaluate:``
namespace), loaded through :func:`assay.load_metric`. ``sacrebleu`` is the corpus BLEU on
sacreBLEU's **0-100** scale (the entry's ``scale`` is 1.0); ``bp``, ``sys_len`` and ``ref_len``
are reported; the module's list-valued ``counts``, ``totals`` and ``precisions`` are not scores
in assay. Instance scores are the module run on each instance alone, as unitxt's ``GlobalMetric``
does. It needs assay-interop (in the ``catalog`` extra); Japanese needs sacreBLEU's MeCab
tokenizer (``pip install mecab-python3 ipadic``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

import assay
from assay.errors import InvalidParameterError, MissingDependencyError, UnknownNameError
from assay.metrics import Metric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["HfSacrebleu"]

#: unitxt's map_instance_values step of the catalog entry (strict): target language -> sacreBLEU tokenizer
TOKENIZERS = {"en": "", "ja": "ja-mecab"}
_KEYS = {"score": "sacrebleu", "bp": "bp", "sys_len": "sys_len", "ref_len": "ref_len"}


class HfSacrebleu(CheckedInputs, Metric):
    """The pipeline of ``metrics.sacrebleu`` (see the module docstring)."""

    input_type = "text"
    examples = [{"predictions": ["the cat sat on the mat", "a dog ran"],
                 "references": [["the cat sat on a mat"], ["a dog ran fast"]]}]

    main_score = "sacrebleu"
    prediction_type = str
    ci_scores = ["sacrebleu"]
    requirements = {"sacrebleu": "sacrebleu"}

    def _inner(self, tokenize: str) -> Any:
        cache = self.__dict__.setdefault("_inner_cache", {})
        if tokenize not in cache:
            try:
                cache[tokenize] = assay.load_metric("evaluate:sacrebleu",
                                                    **({"tokenize": tokenize} if tokenize else {}))
            except UnknownNameError as err:  # the evaluate: namespace is assay-interop's
                raise MissingDependencyError(
                    "assay-interop", purpose="metrics.sacrebleu (evaluate's sacrebleu module, offline)") from err
        return cache[tokenize]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_inner_cache", None)
        return state

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> tuple[str, Any]:
        language = task_data.get("target_language", "en") if isinstance(task_data, Mapping) else "en"
        if language not in TOKENIZERS:
            raise InvalidParameterError(
                f"metrics.sacrebleu: task_data['target_language'] {language!r} has no tokenizer in unitxt's "
                f"pipeline (it maps {sorted(TOKENIZERS)} only); use metrics.normalized_sacrebleu for other languages.")
        tokenize = TOKENIZERS[language]
        if tokenize == "ja-mecab" and importlib.util.find_spec("MeCab") is None:
            raise MissingDependencyError(
                "mecab-python3 ipadic", purpose="metrics.sacrebleu's Japanese tokenizer (target_language 'ja')")
        return tokenize, self._inner(tokenize).map(prediction, references)

    def reduce(self, intermediates: Any) -> dict[str, float]:
        items = list(intermediates)
        if not items:
            raise InvalidParameterError("metrics.sacrebleu: predictions is empty: corpus BLEU needs at least one "
                                        "instance.")
        tokenizers = {tok for tok, _ in items}
        if len(tokenizers) > 1:
            raise InvalidParameterError(
                "metrics.sacrebleu: the instances have several target languages (tokenizers "
                f"{sorted(tokenizers)}); unitxt's pipeline passes one value to the module: score each language "
                "apart.")
        tokenize = next(iter(tokenizers)) if tokenizers else ""
        out = self._inner(tokenize).reduce([item for _, item in items])
        return {ours: float(out[theirs]) for theirs, ours in _KEYS.items()}
