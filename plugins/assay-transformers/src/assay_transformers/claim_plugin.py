"""Registrations of the claim-level NLI stat calculators (entry point ``assay.transformers-claim``).

Importing this module is cheap (numpy): torch and transformers load with the NLI model, on first use.
"""

from __future__ import annotations

from assay import hookimpl
from assay_transformers.claim_nli import ClaimToSamplesNLICalculator, GreedyAlternativesFactPrefNLICalculator


@hookimpl
def assay_register_stat_calculators(register):
    register(ClaimToSamplesNLICalculator.name, ClaimToSamplesNLICalculator,
             other_names=("SemanticClassesClaimToSamplesCalculator",),
             description="claims, sample_texts -> nli_to_sample_texts: NLI of each claim against each sampled answer "
                         "(frequency_scoring_claim; local NLI model)")
    register(GreedyAlternativesFactPrefNLICalculator.name, GreedyAlternativesFactPrefNLICalculator,
             other_names=("GreedyAlternativesFactPrefNLICalculator",),
             description="greedy_tokens_alternatives, greedy_tokens, claims -> "
                         "greedy_tokens_alternatives_fact_pref_nli "
                         "(CCP with the claim prefix; local NLI model)")
