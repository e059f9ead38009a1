"""The builders of unitxt's catalog entries that run a Hugging Face model, on a local folder.

:data:`MODEL_BUILDERS` maps a unitxt class (the catalog's ``__type__``) to the function that builds
assay's metric from the entry's arguments and the entry's name (for the folder lookup and the
messages, :mod:`assay_unitxt.catalog.models`). The metrics run the model through
assay-transformers (``pip install 'assay-unitxt[models]'``), imported when the metric is built.
:data:`NOT_LOADED` says why the other model entries are not loaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from assay.errors import MissingDependencyError
from assay.plugins.deps import require

__all__ = ["MODEL_BUILDERS", "NOT_LOADED"]


def _sample_overrides(module: str) -> dict[str, Any] | None:
    """The options that run a model entry's sample inputs: assay-transformers' packaged all-MiniLM-L6-v2
    (BERTScore at its layer 4, sentence-BERT) when it is installed, a tiny seeded model for the reward and
    perplexity entries (:mod:`assay_unitxt.catalog.sample_models`); None otherwise."""
    if module in ("reward", "perplexity"):
        from assay_unitxt.catalog.sample_models import sample_model

        folder = sample_model("reward" if module == "reward" else "seq2seq")
        return None if folder is None else {"model": folder}
    from assay_transformers.embeddings import default_model_path

    try:
        path = str(default_model_path())
    except MissingDependencyError:
        return None
    return {"model": path, "model_layer": 4} if module == "bert_score" else {"model": path}


def _model_metric(module: str, name: str) -> Callable[..., Any]:
    def make(*, entry: str, **args: Any) -> Any:
        require("assay_transformers", package="assay-transformers",
                purpose=f"{entry} (a model entry; pip install 'assay-unitxt[models]')")
        cls = getattr(importlib.import_module(f"assay_unitxt.catalog.{module}"), name)
        metric = cls(entry=entry, **args)
        overrides = _sample_overrides(module)
        if overrides is not None:  # the conformance suite's samples run on a model that is installed
            metric.examples = [{**ex, "overrides": overrides} for ex in cls.examples]
        return metric
    return make


#: unitxt class -> builder ``make(entry=<name>, **entry_arguments)``
MODEL_BUILDERS: dict[str, Callable[..., Any]] = {
    "bert_score": _model_metric("bert_score", "BertScore"),
    "sentence_bert": _model_metric("sentence_bert", "SentenceBert"),
    "reward": _model_metric("reward", "Reward"),
    "perplexity": _model_metric("perplexity", "Perplexity"),
}

#: unitxt class -> why its entries are not loaded (the reason column of docs/unitxt-catalog-entries.md)
NOT_LOADED: dict[str, str] = {
    "faithfulness_hhem": (
        "not loaded: unitxt scores with `model.predict`, Python shipped inside the HHEM-2.1 model folder (its "
        "`auto_map`, run with trust_remote_code=True), which itself loads `google/flan-t5-base` by Hub id; assay runs "
        "no model folder's own code from a catalog name"),
    "regard_metric": (
        "not loaded yet: a regard classifier (`sasha/regardv3`) over JSON references with per-category bias scores "
        "named after the data's categories; no assay builder yet"),
    "safety_metric": (
        "not loaded yet: a reward model over `task_data` input and label, with severity and `category_<label>` scores "
        "named after the data's labels; no assay builder yet"),
    "is_code_mixed": (
        "not loaded: prompts a 7B instruction model (`Nexusflow/Starling-LM-7B-beta`) through unitxt's inference "
        "engine and its own task, template and format catalog entries"),
    "meteor_fast": (
        "not loaded yet: needs NLTK's WordNet corpus on disk (unitxt calls nltk.download at run time); no assay "
        "builder yet"),
    "metrics_list": ("not loaded: a list of several metrics (assay loads one metric per name), one of them a "
                     "model entry"),
}
