"""Registration of the ``openai`` model backend: a black-box model behind an OpenAI-compatible endpoint.

Entry point ``assay.transformers-blackbox``. Cheap to import: the ``openai`` package loads
with the first client (:mod:`assay_transformers.openai_api`).
"""

from __future__ import annotations

from assay import hookimpl
from assay_transformers.blackbox import OpenAIModel


@hookimpl
def assay_register_model_backends(register):
    register("openai", OpenAIModel,
             description="a black-box model behind an OpenAI-compatible HTTP endpoint (sampled texts; "
                         "log-probabilities where the server returns them)")
