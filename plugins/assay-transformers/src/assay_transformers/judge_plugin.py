"""Registrations of the model-judged metrics (entry point ``assay.transformers-judge``).

``llm_as_judge`` (a judge model's score of each prediction, :class:`~assay_transformers.judge.LLMJudge`)
and unitxt's RAG judges as ``rag_judge.<unitxt main score>`` (faithfulness, context relevance,
answer correctness; :data:`~assay_transformers.judge.RAG_DEFINITIONS`). Importing this module is
cheap: torch and transformers are imported when a judge model first answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay import hookimpl
from assay_transformers.judge import RAG_CLASSES, RAG_DEFINITIONS, LLMJudge


@hookimpl
def assay_register_metrics(register: Callable[..., Any]) -> None:
    register("llm_as_judge", LLMJudge,
             description="a judge model's score of each prediction (model=local Hugging Face folder or engine; "
                         "template=, parser=, cache_dir= to resume)")
    for main_score, cls in RAG_CLASSES.items():
        d = RAG_DEFINITIONS[main_score]
        register(f"rag_judge.{main_score}", cls,
                 description=f"unitxt's {d.catalog_name}: a judge model with the {d.template} template "
                             "(model=local folder or engine)")
