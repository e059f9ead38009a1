"""Registrations of the ``assay-uncertainty`` plugin (entry point ``assay.uncertainty``).

Importing this module is cheap: the metric and estimator modules import only numpy and
assay; scipy is imported inside the Spearman / Kendall / RPP metrics.
"""

from __future__ import annotations

from assay import hookimpl
from assay_uncertainty import calibration as cal
from assay_uncertainty import classwise, conformal, grouping, ranking, regression, rejection, samples, smooth_ece, stats
from assay_uncertainty import ensemble as ens
from assay_uncertainty import estimators as est
from assay_uncertainty import risk_coverage as rc
from assay_uncertainty import selective as sel
from assay_uncertainty.plugin_polygraph import EXISTING_CLASS_NAMES


@hookimpl
def assay_register_estimators(register):
    for cls, desc in (
        (est.MaximumSequenceProbability, "-sum log p of the generated tokens (maximum sequence probability)"),
        (est.Perplexity, "-mean log p of the generated tokens"),
        (est.MeanTokenEntropy, "mean token entropy"),
        (est.MaxTokenEntropy, "max token entropy"),
        (est.MonteCarloSequenceEntropy, "-mean log P(s) over sampled answers"),
        (est.MonteCarloNormalizedSequenceEntropy, "-mean log P(s)/|s| over sampled answers"),
        (est.LexicalSimilarity, "-mean pairwise ROUGE-L of sampled answers"),
        (est.NumDistinctAnswers, "number of distinct sampled answers"),
        (est.EigValLaplacian, "sum max(0, 1 - eigenvalue) of the similarity graph Laplacian"),
        (est.TokenEntropy, "token level: entropy of each token"),
        (est.TokenMaxProb, "token level: 1 - p of each generated token"),
        (est.ClaimProbability, "claim level: 1 - product of the span's token probabilities"),
        (est.PredictiveEntropy, "ensemble: entropy of the mean distribution"),
        (est.ExpectedEntropy, "ensemble: mean entropy of the members"),
        (est.MutualInformation, "ensemble: predictive minus expected entropy"),
        (est.VariationRatio, "ensemble: 1 - share of members voting for the mean's class"),
        (est.Disagreement, "ensemble: 1 - agreeing member pairs / all pairs"),
    ):
        # LM-Polygraph's class name where its class gives the same value on the same statistics (issue 28)
        other = {"other_names": (EXISTING_CLASS_NAMES[cls.name],)} if cls.name in EXISTING_CLASS_NAMES else {}
        register(cls.name, cls, description=desc, level=cls.level, examples=samples.STATISTICS, **other)


@hookimpl
def assay_register_stat_calculators(register):
    register("token_entropies", stats.TokenEntropies, description="top_logprobs -> token_entropies",
             examples=samples.STATISTICS)
    register("sample_likelihoods", stats.SampleLikelihoods,
             description="sample_log_probs -> sample_log_likelihoods, sample_lengths", examples=samples.STATISTICS)


@hookimpl
def assay_register_ue_metrics(register):
    register("prr", rejection.PRR, description="prediction-rejection area (raw; normalize=true: vs oracle and random)")
    register("rcc_auc", rc.RCCAUC, description="LM-Polygraph RCC-AUC (lower is better)")
    register("roc_auc", ranking.ROCAUC, description="ROC-AUC of uncertainty as a failure detector",
             orientation="complement")
    register("pr_auc", ranking.PRAUC, description="average precision of uncertainty as a failure detector")
    register("spearman", ranking.SpearmanR, description="Spearman correlation of u with -quality", orientation="negate")
    register("kendall", ranking.KendallTau, description="Kendall tau-b of u with -quality", orientation="negate")
    register("rpp", ranking.RPP, description="reversed-pair proportion (lower is better)")
    register("aurc", rc.AURC, description="area under the risk-coverage curve (convention=...)")
    register("e_aurc", rc.EAURC, description="excess AURC over the optimal ranking")
    register("aurc_achievable", rc.AURCAchievable,
             description="fd-shifts' achievable AURC (dominant points, non-linear interpolation)")
    register("e_aurc_achievable", rc.EAURCAchievable, description="fd-shifts' achievable E-AURC")
    register("augrc", rc.AUGRC, description="area under the generalized risk-coverage curve")
    register("e_augrc", rc.EAUGRC, description="excess AUGRC")
    register("fpr_at_recall", ranking.FPRAtRecall, description="FPR of failure detection at a recall level",
             other_names=("FPRx", "FPR95"))
    register("risk_at_coverage", rc.RiskAtCoverage, description="selective risk at a coverage")
    register("coverage_at_risk", rc.CoverageAtRisk, description="largest coverage within a selective risk",
             examples=samples.COVERAGE_AT_RISK)
    # orientation (the conformance suite): relabelling the binary outcome, (u, q) -> (1 - u, 1 - q), is a symmetry
    # of equal-width binning; not of equal-mass bins, which are cut by sort position (ties, n not divisible)
    for name, cls in (("ece", cal.ECE), ("mce", cal.MCE), ("rmsce", cal.RMSCE), ("adaptive_ece", cal.AdaptiveECE)):
        register(name, cal._calibration_ue_factory(cls), description=f"{name} of 1 - u against binary quality",
                 orientation="monotone" if name == "adaptive_ece" else "reflect")
    for name, cls in (("brier", cal.BrierScore), ("nll", cal.NLL)):
        register(name, cal._plain_ue_factory(cls), description=f"{name} of 1 - u against binary quality",
                 orientation="reflect")


@hookimpl
def assay_register_metrics(register):
    # other_names: torch-uncertainty 0.13.0's class names (docs/uncertainty.md lists where a default differs)
    register("ece", cal.ECE, description="expected calibration error (equal-width bins)")
    register("mce", cal.MCE, description="maximum calibration error")
    register("rmsce", cal.RMSCE, description="root-mean-square calibration error")
    register("calibration_error", classwise.CalibrationError,
             description="top-label binned calibration error, norm l1 (ECE) / l2 (RMSCE) / max (MCE)",
             other_names=("CalibrationError",))
    register("classwise_calibration_error", classwise.ClasswiseCalibrationError,
             description="one-vs-rest binned calibration error of every class, reduced over the classes",
             other_names=("ClasswiseCalibrationError",))
    register("smooth_ece", smooth_ece.SmoothCalibrationError,
             description="smooth ECE: kernel-smoothed calibration error (Blasiok & Nakkiran)",
             other_names=("SmoothCalibrationError",))
    register("adaptive_ece", cal.AdaptiveECE, description="adaptive (equal-mass) ECE",
             other_names=("AdaptiveCalibrationError",))
    register("brier", cal.BrierScore, description="Brier score", other_names=("BrierScore",))
    register("nll", cal.NLL, description="negative log-likelihood", other_names=("CategoricalNLL",))
    register("disagreement", ens.Disagreement, description="ensemble disagreement, probs (B, N, C)",
             other_names=("Disagreement",))
    register("mutual_information", ens.MutualInformation, description="ensemble mutual information",
             other_names=("MutualInformation",))
    register("ensemble_entropy", ens.Entropy, description="ensemble expected entropy", other_names=("Entropy",))
    register("variation_ratio", ens.VariationRatio, description="ensemble variation ratio",
             other_names=("VariationRatio",))
    register("grouping_loss", grouping.GroupingLoss, description="top-label grouping loss of the Brier score (glest)",
             other_names=("GroupingLoss",))
    register("coverage_rate", conformal.CoverageRate, description="share of labels inside their prediction sets",
             other_names=("CoverageRate",))
    register("set_size", conformal.SetSize, description="size of prediction sets", other_names=("SetSize",))
    for cls, peer, desc in (
        (sel.AURCOfProbs, "AURC", "AURC of top-label confidence (torch-uncertainty's convention)"),
        (sel.AUGRCOfProbs, "AUGRC", "AUGRC of top-label confidence (torch-uncertainty's convention)"),
        (sel.CovAtxRisk, "CovAtxRisk", "largest coverage within a selective risk"),
        (sel.CovAt5Risk, "CovAt5Risk", "largest coverage within 5 % selective risk"),
        (sel.RiskAtxCov, "RiskAtxCov", "selective risk at a coverage"),
        (sel.RiskAt80Cov, "RiskAt80Cov", "selective risk at 80 % coverage"),
        (sel.SCODAURC, "SCODAURC", "AURC of the SCOD loss by OOD score"),
        (sel.SCODAUGRC, "SCODAUGRC", "AUGRC of the SCOD loss by OOD score"),
        (sel.SCODCovAtxRisk, "SCODCovAtxRisk", "largest coverage within a SCOD risk"),
        (sel.SCODCovAt5Risk, "SCODCovAt5Risk", "largest coverage within 5 % SCOD risk"),
        (sel.SCODRiskAtxCov, "SCODRiskAtxCov", "SCOD risk at a coverage"),
        (sel.SCODRiskAt80Cov, "SCODRiskAt80Cov", "SCOD risk at 80 % coverage"),
    ):
        register(cls.name, cls, description=desc, other_names=(peer,))
    # probabilistic regression (torch-uncertainty 0.13.0's metrics/regression and sparsification.py), the peer's
    # class name as a second name
    for name, cls, desc in (
        ("distribution_nll", regression.DistributionNLL, "NLL of targets under predicted distributions (parameters)"),
        ("quantile_calibration_error", regression.QuantileCalibrationError,
         "gap between nominal and empirical coverage of central credible intervals"),
        ("interval_coverage", regression.IntervalCoverage, "share of targets inside (lower, upper), PICP"),
        ("mean_interval_width", regression.MeanIntervalWidth, "mean upper - lower of prediction intervals, MPIW"),
        ("interval_score", regression.IntervalScore, "interval (Winkler) score at a nominal coverage"),
        ("ause", regression.AUSE, "area under the sparsification-error curve of scores against errors"),
    ):
        register(name, cls, description=desc, other_names=(cls.__name__,))


@hookimpl
def assay_register_generation_metrics(register):
    from assay_uncertainty.gen_metrics import GENERATION_METRICS

    about = {
        "accuracy": "binary correctness: the stored 'correct' label, else exact match with the reference(s), "
                    "else the ensemble's argmax against 'label'",
        "quality": "the stored continuous 'quality' (higher = better)",
        "claim_accuracy": "the stored 'claim_correct' labels, one per claim",
        "token_accuracy": "the stored 'token_correct' labels, one per token",
    }
    for name, cls in GENERATION_METRICS.items():
        register(name, cls, level=cls.level, description=about[name])


def _run_ue(args):
    from assay_uncertainty.command import ue

    return ue.run(args)


def _ue_arguments(parser):
    from assay_uncertainty.command import ue

    ue.add_arguments(parser)


@hookimpl
def assay_register_commands(register):
    from assay_uncertainty.command import ue

    register("ue", _run_ue, help=ue.HELP, description=ue.DESCRIPTION, add_arguments=_ue_arguments)


def _run_demo(out_dir):
    from assay_uncertainty.demo import run

    run(out_dir)


@hookimpl
def assay_register_demo_sections(register):
    register("uncertainty", _run_demo, order=30,
             title="uncertainty estimators and UE metrics (PRR, AURC, ROC-AUC ...) on generated model outputs")
