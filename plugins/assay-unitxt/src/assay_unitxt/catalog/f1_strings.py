"""``metrics.f1_strings``: unitxt's ``F1Strings``, token F1 of the prediction against the joined references.

unitxt tokenizes with spaCy's ``en_core_web_sm`` pipeline, which it downloads at run time; assay
never downloads: ``spacy_model`` names an installed spaCy pipeline package (``"en_core_web_sm"``,
the default), a local pipeline folder, or ``"blank:en"`` (``spacy.blank("en")``: spaCy's English
tokenizer rules, which ``en_core_web_sm`` ships as its tokenizer; only the tokens' texts are used,
and the model's other components do not change them). Per instance, with the lower-cased token
counts of the prediction and of the references joined by a space (multisets), ``tp`` their overlap,
``fp`` the reference tokens not matched and ``fn`` the prediction tokens not matched,
``f1_strings`` is the harmonic mean of ``tp/(tp+fp)`` and ``tp/(tp+fn)`` (0 when ``tp`` is 0); the
mean over instances. No intervals: unitxt's instance score is a one-element list and its entry
reports none.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Any

from assay.errors import InvalidParameterError, MissingDependencyError
from assay.metrics import InstanceMetric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["F1Strings", "SpacyPipelineNotFoundError"]


class SpacyPipelineNotFoundError(MissingDependencyError):
    """``spacy_model`` is neither an installed spaCy pipeline nor a local folder (assay downloads nothing)."""

    def __init__(self, message: str, *, name: str) -> None:
        Exception.__init__(self, message)
        self.package = name
        self.hint = f"python -m spacy download {name} (where there is network), or spacy_model=FOLDER or blank:en"


@functools.lru_cache(maxsize=4)
def _pipeline(spacy_model: str) -> Any:
    try:
        import spacy  # deferred: optional dependency (a tokenizer of this metric only)
    except ImportError as err:
        raise MissingDependencyError("spacy", purpose="metric 'metrics.f1_strings'") from err
    if spacy_model == "blank:en":
        return spacy.blank("en")
    if not (Path(spacy_model).is_dir() or spacy.util.is_package(spacy_model)):
        raise SpacyPipelineNotFoundError(
            f"metrics.f1_strings: spacy_model {spacy_model!r} is neither an installed spaCy pipeline package nor a "
            "local pipeline folder (assay downloads nothing); install it, pass a folder, or pass "
            "spacy_model='blank:en' for spaCy's English tokenizer.", name=spacy_model)
    return spacy.load(spacy_model, disable=["tagger", "parser", "ner", "lemmatizer"])


class F1Strings(CheckedInputs, InstanceMetric):
    """unitxt's ``F1Strings`` (see the module docstring)."""

    input_type = "text"
    # the conformance checks run on spaCy's English tokenizer (no pipeline package is installed by the tests)
    examples = [{"predictions": ["the cat's hat", "hello"], "references": [["The cat's hat is red"], ["hello"]],
                 "overrides": {"spacy_model": "blank:en"}}]

    main_score = "f1_strings"
    ci_scores: list[str] = []  # unitxt reports no interval for this entry
    prediction_type = str
    requirements = {"spacy": "spacy"}

    def __init__(self, *, spacy_model: str = "en_core_web_sm", score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        if not isinstance(spacy_model, str) or not spacy_model:
            raise InvalidParameterError(f"metrics.f1_strings: spacy_model must be a name or a folder; got "
                                        f"{spacy_model!r}.")
        self.spacy_model = spacy_model
        self.n_resamples = 0

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        nlp = _pipeline(self.spacy_model)
        ref = Counter(t.text.lower() for t in nlp(" ".join(references)))
        pred = Counter(t.text.lower() for t in nlp(prediction))
        tp = sum((ref & pred).values())
        if tp == 0:
            return 0.0
        precision = tp / (tp + sum((ref - pred).values()))
        recall = tp / (tp + sum((pred - ref).values()))
        return 2 * precision * recall / (precision + recall)
