"""Multiclass and multilabel ROC AUC (one-vs-rest) against scikit-learn and torchmetrics."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import sklearn.metrics as sklearn_metrics
import torch  # the test extra; scripts/setup.sh installs the CPU build first
import torchmetrics.functional.classification as tmf
from hypothesis import given, settings
from hypothesis import strategies as st

import assay
from assay.errors import InvalidParameterError, UndefinedMetricWarning
from assay.plugins import load_metric


def score(name, predictions, references):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return load_metric(name).update(predictions, references).compute_scores()


def multiclass_data(draw_seed, n, c, ties=False):
    rng = np.random.default_rng(draw_seed)
    raw = rng.integers(1, 4, size=(n, c)).astype(float) if ties else rng.random((n, c)) + 1e-3
    probs = raw / raw.sum(axis=1, keepdims=True)
    labels = np.concatenate([np.arange(c), rng.integers(0, c, n - c)])  # every class present
    return probs, rng.permutation(labels)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 60), c=st.integers(2, 6), ties=st.booleans())
def test_multiclass_equals_sklearn_for_every_average(seed, n, c, ties):
    probs, labels = multiclass_data(seed, n, c, ties)
    if c == 2:  # scikit-learn reads two columns as a binary problem: compare per class instead
        got = score("roc_auc_multiclass", probs, labels)
        assert got["roc_auc_1"] == pytest.approx(sklearn_metrics.roc_auc_score(labels, probs[:, 1]))
        return
    for average in ("macro", "weighted", "micro"):
        got = score(f"roc_auc_multiclass[average={average}]", probs, labels)
        expected = sklearn_metrics.roc_auc_score(labels, probs, multi_class="ovr", average=average)
        assert got["roc_auc"] == pytest.approx(expected, abs=1e-12), average
    per_class = sklearn_metrics.roc_auc_score(labels, probs, multi_class="ovr", average=None)
    assert [got[f"roc_auc_{k}"] for k in range(c)] == pytest.approx(list(per_class), abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 60), c=st.integers(2, 6), logits=st.booleans())
def test_multiclass_equals_torchmetrics_for_macro_and_weighted(seed, n, c, logits):
    probs, labels = multiclass_data(seed, n, c)
    scores = np.log(probs) * 3 if logits else probs  # logits: torchmetrics applies a softmax
    for average in ("macro", "weighted"):
        got = score(f"roc_auc_multiclass[average={average}, convention=torchmetrics]", scores, labels)
        expected = float(tmf.multiclass_auroc(torch.tensor(scores), torch.tensor(labels), num_classes=c,
                                              average=average, thresholds=None))
        assert got["roc_auc"] == pytest.approx(expected, abs=1e-6), average


def test_a_class_without_instances_under_each_convention():
    probs, labels = multiclass_data(3, 30, 4)
    labels[labels == 3] = 0  # class 3 has no positive instance
    with pytest.warns(UndefinedMetricWarning, match=r"class\(es\) \[3\]"):
        got = load_metric("roc_auc_multiclass").update(probs, labels).compute_scores()
    assert math.isnan(got["roc_auc"]) and math.isnan(got["roc_auc_3"])
    with warnings.catch_warnings():  # scikit-learn, told the four labels: NaN as well
        warnings.simplefilter("ignore")
        assert math.isnan(sklearn_metrics.roc_auc_score(labels, probs, multi_class="ovr", labels=[0, 1, 2, 3]))
    for average in ("macro", "weighted"):
        with pytest.warns(UndefinedMetricWarning, match="counts as 0"):
            got = load_metric(f"roc_auc_multiclass[average={average}, convention=torchmetrics]").update(
                probs, labels).compute_scores()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = float(tmf.multiclass_auroc(torch.tensor(probs), torch.tensor(labels), num_classes=4,
                                                  average=average))
        assert got["roc_auc"] == pytest.approx(expected, abs=1e-6), average


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 60), c=st.integers(2, 6), logits=st.booleans())
def test_multilabel_equals_sklearn_and_torchmetrics(seed, n, c, logits):
    rng = np.random.default_rng(seed)
    truth = (rng.random((n, c)) < 0.4).astype(int)
    truth[0], truth[1] = 1, 0  # every label has a positive and a negative
    scores = rng.normal(size=(n, c)) if logits else rng.random((n, c))
    for average in ("macro", "weighted", "micro"):
        got = score(f"roc_auc_multilabel[average={average}]", scores, truth)
        assert got["roc_auc"] == pytest.approx(sklearn_metrics.roc_auc_score(truth, scores, average=average),
                                               abs=1e-12)
        got_tm = score(f"roc_auc_multilabel[average={average}, convention=torchmetrics]", scores, truth)
        expected = float(tmf.multilabel_auroc(torch.tensor(scores), torch.tensor(truth), num_labels=c,
                                              average=average, thresholds=None))
        assert got_tm["roc_auc"] == pytest.approx(expected, abs=1e-6), average


def test_the_documented_examples_by_hand():
    got = load_metric("roc_auc_multilabel").update([[0.9, 0.2], [0.3, 0.8], [0.6, 0.4], [0.1, 0.7]],
                                                   [[1, 0], [0, 1], [[0, 0]], [1, 1]]).compute_scores()
    # label 0: positives .9 .1 against negatives .3 .6: pairs won 2 of 4; label 1: all 4 won
    assert (got["roc_auc_0"], got["roc_auc_1"], got["roc_auc"]) == (0.5, 1.0, 0.75)


def test_merged_shards_equal_one_pass_and_evaluate_gives_an_interval():
    probs, labels = multiclass_data(5, 80, 3)
    whole = load_metric("roc_auc_multiclass").update(probs, labels).compute_scores()
    a = load_metric("roc_auc_multiclass").update(probs[:30], labels[:30])
    b = load_metric("roc_auc_multiclass").update(probs[30:], labels[30:])
    assert a.merge(b).compute_scores() == whole
    res = assay.evaluate(list(probs), list(labels), metrics=["roc_auc_multiclass"], n_resamples=200, seed=1)
    g = res[0]["score"]["global"]
    assert g["roc_auc"] == whole["roc_auc"]
    assert g["roc_auc_ci_low"] < g["roc_auc"] < g["roc_auc_ci_high"]


@pytest.mark.parametrize("name, predictions, references, match", [
    ("roc_auc_multiclass", [[0.5, 0.5], [0.2, 0.7]], [0, 1], r"predictions\[1\] sums to 0.9"),
    ("roc_auc_multiclass", [[0.5, 0.5], [0.3, 0.7]], [0, 2], "references"),
    ("roc_auc_multiclass", [[0.5, 0.5], [0.3, 0.7]], [0, -1], "references"),
    ("roc_auc_multiclass", [[0.5, 0.5], [0.3, 0.7]], [0, 1.5], "references"),
    ("roc_auc_multiclass", [0.5, 0.3], [0, 1], "n_classes"),
    ("roc_auc_multiclass", [[1.0], [1.0]], [0, 0], "at least 2 columns"),
    ("roc_auc_multiclass", [[0.5, float("nan")], [0.3, 0.7]], [0, 1], "predictions"),
    ("roc_auc_multilabel", [[0.5, 0.5], [0.3, 0.7]], [[0, 1], [1, 2]], r"references\[1\]\[1\] is 2"),
    ("roc_auc_multilabel", [[0.5, 0.5], [0.3, 0.7]], [[0, 1, 0], [1, 0, 0]], r"shape \(2, 2\)"),
    ("roc_auc_multilabel", [[0.5, 0.5], [0.3, 0.7]], None, "references"),
])
def test_bad_input_is_an_error_naming_the_place(name, predictions, references, match):
    with pytest.raises(InvalidParameterError, match=match):
        load_metric(name).update(predictions, references)


@pytest.mark.parametrize("spec, match", [
    ("roc_auc_multiclass[average=samples]", "average"), ("roc_auc_multiclass[average=none]", "average"),
    ("roc_auc_multiclass[convention=sk]", "convention"),
    ("roc_auc_multiclass[average=micro, convention=torchmetrics]", "no micro average"),
    ("roc_auc_multilabel[average=None]", "average"),
])
def test_options_are_honoured_or_rejected(spec, match):
    with pytest.raises(InvalidParameterError, match=match):
        load_metric(spec)
