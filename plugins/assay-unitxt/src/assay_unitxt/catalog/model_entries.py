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

from assay.plugins.deps import require

__all__ = ["MODEL_BUILDERS", "NOT_LOADED"]


def _model_metric(module: str, name: str) -> Callable[..., Any]:
    def make(*, entry: str, **args: Any) -> Any:
        require("assay_transformers", package="assay-transformers",
                purpose=f"{entry} (a model entry; pip install 'assay-unitxt[models]')")
        cls = getattr(importlib.import_module(f"assay_unitxt.catalog.{module}"), name)
        return cls(entry=entry, **args)
    return make


#: unitxt class -> builder ``make(entry=<name>, **entry_arguments)``
MODEL_BUILDERS: dict[str, Callable[..., Any]] = {
    "bert_score": _model_metric("bert_score", "BertScore"),
    "sentence_bert": _model_metric("sentence_bert", "SentenceBert"),
    "reward": _model_metric("reward", "Reward"),
    "perplexity": _model_metric("perplexity", "Perplexity"),
}

#: unitxt class -> why its entries are not loaded (the reason column of docs/unitxt-catalog-entries.md)
NOT_LOADED: dict[str, str] = {}
