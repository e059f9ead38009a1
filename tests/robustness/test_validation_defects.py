"""The defects of issue 10 ("undefined inputs that give a number"), each pinned by a test.

Each test failed before the fix (the old behaviour is in its comment). Expected values
are derived by hand in the comments.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import assay
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay_classic.classification import F1, Accuracy, MatthewsCorrcoef, Precision, Recall
from assay_classic.ranking import RocAuc
from assay_classic.regression import MeanAbsoluteError, Pearson
from assay_segmentation.aggregations import ImageMean, ImageSum, PatchMax, ThresholdMean
from assay_segmentation.measures import dice
from assay_uncertainty.calibration import ECE, NLL, AdaptiveECE, BrierScore
from assay_uncertainty.ensemble import Disagreement, Entropy, MutualInformation, VariationRatio

NAN = math.nan


def _ensemble_with_nan():
    p = np.full((4, 3, 2), 0.5)
    p[2, 1, 0] = NAN  # example 2, member 1, class 0
    return p


@pytest.mark.parametrize("cls", [Disagreement, Entropy, MutualInformation, VariationRatio])
def test_nan_ensemble_probabilities_name_example_member_class(cls):
    # before: Disagreement returned 1.0 (NaN passed the range and sum checks)
    with pytest.raises(InvalidParameterError, match=r"`probs\[2, 1, 0\]` \(example 2, member 1, class 0\) is NaN"):
        cls().update(_ensemble_with_nan()).compute()


def test_inf_ensemble_probabilities_are_errors():
    p = np.full((2, 2, 2), 0.5)
    p[1, 0, 1] = np.inf
    with pytest.raises(InvalidParameterError, match=r"probs\[1, 0, 1\].*is inf; expected finite"):
        Disagreement().update(p)


def test_ensemble_without_members_or_classes_is_an_error():
    # before: numpy's "attempt to get argmax of an empty sequence"
    with pytest.raises(InvalidParameterError, match="at least one member and one class"):
        Disagreement().update(np.zeros((2, 3, 0)))


@pytest.mark.parametrize("cls", [ECE, BrierScore, NLL, AdaptiveECE])
def test_nan_class_probabilities_name_example_and_class(cls):
    # before: brier gave NaN without a word; ece failed inside numpy (bincount of a NaN bin)
    probs = [[0.2, 0.8], [0.5, 0.5], [0.6, NAN], [0.1, 0.9]]
    metric = cls(n_bins=2) if cls in (ECE, AdaptiveECE) else cls()
    with pytest.raises(InvalidParameterError, match=r"`probs\[2, 1\]` is NaN; expected finite probabilities"):
        metric.update(probs, [1, 0, 0, 1]).compute()


@pytest.mark.parametrize("cls", [ECE, BrierScore, NLL])
def test_nan_binary_probability_is_an_error(cls):
    metric = cls(n_bins=2) if cls is ECE else cls()
    with pytest.raises(InvalidParameterError, match=r"`probs\[1\]` is NaN"):
        metric.update([0.2, NAN, 0.7], [0, 1, 1]).compute()


def test_nan_inside_a_large_multiclass_batch_is_found_in_the_fused_ece_pass():
    # the fused block pass (multiclass_tallies) screened row sums with "greater than": NaN slipped through
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(10), size=300_000)
    p[250_123, 7] = NAN
    with pytest.raises(InvalidParameterError, match=r"`probs\[250123, 7\]` is NaN"):
        ECE().update(p, rng.integers(0, 10, 300_000))


def _label_metrics():
    return [Accuracy(), F1(average="micro"), F1(average="macro"), Precision(average="macro"),
            Recall(average="macro"), MatthewsCorrcoef()]


@pytest.mark.parametrize("bad", [NAN, None, math.inf])
@pytest.mark.parametrize("metric", _label_metrics(), ids=lambda m: f"{m.main_score}-{getattr(m, 'average', '')}")
def test_label_metrics_reject_missing_labels(metric, bad):
    # before, on identical data [1, 2, nan]: macro-F1 = precision = MCC = 1.0 but micro-F1 = accuracy = 2/3
    # (NaN != NaN: a miss for the pooled counts, a label of its own for the per-label averages)
    preds = [1, 2, bad]
    refs = [[1], [2], [bad]]
    with pytest.raises(InvalidParameterError, match=r"`(predictions|references)(\[2\]|\[2\]\[0\])` is"):
        metric.update(preds, refs).compute()


def test_accuracy_needs_references():
    # before: assay.evaluate(preds, None, metrics=["accuracy"]) returned 0.0
    with pytest.raises(InvalidParameterError, match="accuracy.* needs references"):
        assay.evaluate([1, 2], None, metrics=["accuracy"], n_resamples=0)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, NAN])
def test_regression_rejects_infinity_and_nan(bad):
    # before: inf gave mae = inf silently (only NaN was checked)
    with pytest.raises(InvalidParameterError, match="at instance 1"):
        MeanAbsoluteError().update([1.0, bad], [[1.0], [2.0]]).compute()
    with pytest.raises(InvalidParameterError, match="at instance 1"):
        Pearson().update([1.0, 2.0, 3.0], [[1.0], [bad], [3.0]]).compute()


def test_roc_auc_rejects_infinite_scores_and_non_numeric_labels():
    with pytest.raises(InvalidParameterError, match=r"`predictions\[1\]` is inf"):
        RocAuc().update([0.1, math.inf, 0.3], [[0], [1], [0]]).compute()
    # before: b"1" was read as the number 1 and the AUC computed (1/2 here)
    with pytest.raises(InvalidParameterError, match="references"):
        RocAuc().update([0.1, 0.9, 0.3], [[0], [b"1"], [0]]).compute()


@pytest.mark.parametrize("agg", [ImageMean(), ImageSum(), PatchMax(patch_size=2), ThresholdMean(threshold=0.5)],
                         ids=lambda a: type(a).__name__)
@pytest.mark.parametrize("bad", [NAN, math.inf])
def test_aggregations_reject_non_finite_maps(agg, bad):
    # before: threshold_mean dropped the NaN (u >= t is False) and returned a finite mean
    u = np.full((4, 5), 0.75)
    u[2, 3] = bad
    with pytest.raises(InvalidParameterError, match=r"`uncertainty_map\[2, 3\]` is (NaN|inf)"):
        agg(u)


def test_masks_reject_nan():
    # before: NaN != 0, so a NaN voxel counted as foreground (dice 1.0 here)
    with pytest.raises(InvalidParameterError, match=r"`pred\[0, 1\]` is NaN"):
        dice([[1, NAN]], [[1, 1]])


def test_empty_input_is_nan_with_the_one_warning():
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(assay.load_ue_metric("aurc")([], []))
    with pytest.warns(UndefinedMetricWarning, match="empty uncertainty map"):
        assert math.isnan(ImageMean()(np.zeros((0, 3))))
    # the core's and the classic plugin's warning are that one class
    from assay.core.result import UndefinedMetricWarning as core_warning
    from assay_classic.functional import UndefinedMetricWarning as classic_warning
    assert core_warning is classic_warning is UndefinedMetricWarning is assay.UndefinedMetricWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMetricWarning)
        with pytest.raises(UndefinedMetricWarning, match="two ensemble members"):
            Disagreement().update(np.full((2, 1, 2), 0.5))


def test_find_threshold_rejects_nan_maps():
    # before: np.quantile of values holding NaN gave a NaN threshold (and threshold_mean then matched nothing)
    from assay_segmentation.aggregations import find_threshold

    with pytest.raises(InvalidParameterError, match=r"`val_maps\[1\]\[0, 1\]` is NaN"):
        find_threshold([np.zeros((2, 2)), np.array([[0.0, NAN]])], [np.ones((2, 2))] * 2)
