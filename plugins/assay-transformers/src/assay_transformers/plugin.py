"""Registrations of ``assay-transformers``' generation half (entry point ``assay.transformers``).

Cheap to import: torch and transformers are imported when a model is loaded.
"""

from __future__ import annotations

from assay import hookimpl
from assay_transformers.generation import HFModel
from assay_transformers.stats import EntropyCalculator


@hookimpl
def assay_register_model_backends(register):
    register("transformers", HFModel,
             description="a Hugging Face causal or seq2seq model from a local folder, or a (model, tokenizer) pair")


@hookimpl
def assay_register_stat_calculators(register):
    half = -0.6931471805599453  # log(1/2): two equally likely tokens, entropy log 2
    register("entropy", EntropyCalculator, description="greedy_log_probs -> entropy (per generated token, nats)",
             examples=[{"stats": {"greedy_log_probs": [[[half, half], [0.0, float("-inf")]]]}}])


def _run_demo(out_dir):
    from assay_transformers.demo import run

    run(out_dir)


@hookimpl
def assay_register_demo_sections(register):
    register("transformers", _run_demo, order=35,
             title="a tiny Hugging Face model generates; MSP, perplexity, entropy, semantic estimators and "
                   "LM-Polygraph's PMI, attention, P(True), EigenScore, Mahalanobis, NLI semantic entropy and "
                   "claim-level estimators, PRR with intervals")
