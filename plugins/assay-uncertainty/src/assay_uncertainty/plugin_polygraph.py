"""Registrations of LM-Polygraph 0.7.0's estimators on statistics (entry point ``assay.uncertainty_polygraph``).

Each estimator is registered under a snake_case name and, with ``other_names``, under
LM-Polygraph's class name (both load the same class). The table of names, statistics and tests
is docs/polygraph/information.md. Importing this module imports numpy and assay only.
"""

from __future__ import annotations

from assay import hookimpl
from assay_uncertainty import estimators_compat as compat
from assay_uncertainty import estimators_info as info
from assay_uncertainty import estimators_lmp_ensemble as ens
from assay_uncertainty import polygraph_stats, samples_polygraph

#: assay's existing estimators whose LM-Polygraph class of the same value reads the same statistics
#: (``plugin.py`` registers them with these as ``other_names``)
EXISTING_CLASS_NAMES = {
    "lexical_similarity": "LexicalSimilarity",
    "mc_sequence_entropy": "MonteCarloSequenceEntropy",
    "mc_normalized_sequence_entropy": "MonteCarloNormalizedSequenceEntropy",
}

_COMPAT = (
    (compat.MaximumSequenceProbability, "-sum log p over greedy_log_likelihoods (LM-Polygraph's statistics)"),
    (compat.Perplexity, "-mean log p over greedy_log_likelihoods (LM-Polygraph's statistics)"),
    (compat.MeanTokenEntropy, "mean of LM-Polygraph's 'entropy' (full-vocabulary entropy per step)"),
    (compat.TokenEntropy, "token level: entropy[:-1] (LM-Polygraph leaves out the last step)"),
    (compat.MaximumTokenProbability, "token level: -log p over greedy_log_likelihoods[:-1]"),
)

_INFO = (
    (info.MeanPointwiseMutualInformation, "-mean_t [log p(y_t|y_<t,x) - log p(y_t|y_<t)] (t > 1)"),
    (info.PointwiseMutualInformation, "token level: -PMI of each token but the last"),
    (info.MeanConditionalPointwiseMutualInformation, "-mean_t CPMI (van der Poel et al. 2022)"),
    (info.ConditionalPointwiseMutualInformation, "token level: -CPMI of each token but the last"),
    (info.RenyiNeg, "mean Renyi divergence of the tempered step distribution from uniform"),
    (info.FisherRao, "mean Fisher-Rao distance of the tempered step distribution from uniform"),
    (info.SelfCertainty, "-mean_t KL(uniform || p_t) over the finite log-probabilities"),
    (info.BoostedProbSequence, "-mean boosted probability (dominant-token mass) of the generated tokens"),
    (info.LabelProb, "1 - share of the samples in the largest semantic class"),
    (info.CSL, "-sum_t w_t log p_t, w from the attention of an eliciting prompt"),
    (info.RAUQ, "recurrent attention-weighted confidence, max over the middle layers"),
    (info.AttentionScore, "-mean over heads of sum log diag(attention) at one layer"),
    (info.PTrue, "-p_true (log-probability of 'True' for the answer)"),
    (info.PTrueSampling, "-p_true_sampling (P(True) with brainstormed samples)"),
    (info.PTrueEmpirical, "1 - share of sampled one-token verdicts that contain 'True'"),
    (info.Verbalized1S, "1 - the confidence a regex finds in the answer"),
    (info.Verbalized2S, "1 - the confidence a regex finds in the model's reply to a follow-up prompt"),
    (info.Linguistic1S, "1 - the confidence of the first expression found in the answer"),
)


def _class_name(cls: type) -> str:
    return cls.__name__


@hookimpl
def assay_register_estimators(register):
    for cls, desc in (*_COMPAT, *_INFO):
        register(cls.name, cls, other_names=(_class_name(cls),), description=desc, level=cls.level,
                 examples=samples_polygraph.examples_for(cls))
    for cls in (*ens.ENSEMBLE_TOKEN_CLASSES.values(), *ens.ENSEMBLE_SEQUENCE_CLASSES.values()):
        register(cls.name, cls, other_names=(_class_name(cls),), level=cls.level,
                 description=f"ensemble ({cls.mode}): {cls.measure} (LM-Polygraph's ensemble_token_scores)",
                 examples=samples_polygraph.examples_for(cls))


@hookimpl
def assay_register_stat_calculators(register):
    register(polygraph_stats.GreedyLogLikelihoods.name, polygraph_stats.GreedyLogLikelihoods,
             description="log_probs -> greedy_log_likelihoods (LM-Polygraph's name)",
             examples=[{"stats": {"log_probs": [[-0.5, -1.0], [-0.1]]}}])
    register(polygraph_stats.GreedyTexts.name, polygraph_stats.GreedyTexts,
             description="answer -> greedy_texts (LM-Polygraph's name)",
             examples=[{"stats": {"answer": ["Paris", "Rome"]}}])
