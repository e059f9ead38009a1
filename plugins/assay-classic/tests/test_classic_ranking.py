"""ROC AUC against hand-counted pairs and scikit-learn, ties included."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from assay.errors import InvalidParameterError
from assay_classic.functional import UndefinedMetricWarning, roc_auc
from assay_classic.ranking import RocAuc

ATOL = 1e-9


def pair_count_auc(labels, scores):
    """Independent definition: the share of (positive, negative) pairs ranked right, ties half."""
    pos = [s for y, s in zip(labels, scores) if y]
    neg = [s for y, s in zip(labels, scores) if not y]
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def test_hand_cases():
    # pairs (pos, neg): (0.35, 0.1) right, (0.35, 0.4) wrong, (0.8, *) right -> 3 / 4
    assert roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
    # every score tied: each pair counts one half
    assert roc_auc([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]) == 0.5
    # a positive tied with one negative of two: (1 + 0.5) / 2
    assert roc_auc([1, 0, 0], [0.5, 0.5, 0.1]) == 0.75
    # perfect and reversed
    assert roc_auc([0, 0, 1], [1, 2, 3]) == 1.0
    assert roc_auc([1, 0, 0], [1, 2, 3]) == 0.0


def test_metric_and_references_layout():
    m = RocAuc().update([0.1, 0.4], [[0], [0]]).update([0.35, 0.8], [1, [1]])
    assert m.compute_scores()["roc_auc"] == 0.75
    assert RocAuc().per_instance is False and RocAuc().additive is False


def test_labels_greater_is_positive_and_pos_label():
    # labels 2 / 5: 5 is the positive class (scikit-learn's rule)
    labels, scores = [2, 2, 5, 5], [0.1, 0.4, 0.35, 0.8]
    assert roc_auc(labels, scores) == pytest.approx(roc_auc_score(labels, scores))
    m = RocAuc(pos_label="yes").update([0.1, 0.4, 0.35, 0.8], ["no", "no", "yes", "yes"])
    assert m.compute_scores()["roc_auc"] == 0.75
    with pytest.raises(InvalidParameterError, match="pos_label"):
        RocAuc().update([0.1, 0.2], ["no", "yes"])
    with pytest.raises(InvalidParameterError, match="two distinct labels"):
        roc_auc([0, 1, 2], [0.1, 0.2, 0.3])


def test_degenerate_inputs():
    with pytest.warns(UndefinedMetricWarning, match="one class"):
        assert math.isnan(roc_auc([1, 1, 1], [0.1, 0.2, 0.3]))
    with pytest.raises(InvalidParameterError, match="NaN"):
        roc_auc([0, 1], [0.1, math.nan])
    with pytest.raises(InvalidParameterError, match="NaN at instance|is NaN"):
        RocAuc().update([0.1, math.nan], [0, 1])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rounding", [None, 1, 0])
def test_equals_sklearn(seed, rounding):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3000))
    labels = rng.random(n) < rng.uniform(0.05, 0.95)
    labels[0], labels[1] = True, False
    scores = rng.normal(size=n) + labels * rng.uniform(0, 2)
    if rounding is not None:  # heavy ties
        scores = np.round(scores, rounding)
    assert roc_auc(labels, scores) == pytest.approx(roc_auc_score(labels, scores), abs=ATOL)


def test_infinite_scores_rank_like_values():
    labels = [0, 1, 0, 1]
    scores = [-np.inf, np.inf, 0.0, np.inf]
    assert roc_auc(labels, scores) == pytest.approx(pair_count_auc(labels, scores), abs=ATOL)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(-3, 3)), min_size=2, max_size=40))
def test_pair_definition_property(pairs):
    labels = [y for y, _ in pairs]
    scores = [float(s) for _, s in pairs]
    if all(labels) or not any(labels):
        return
    assert roc_auc(labels, scores) == pytest.approx(pair_count_auc(labels, scores), abs=ATOL)
    # order does not matter
    perm = np.random.default_rng(len(pairs)).permutation(len(pairs))
    assert roc_auc(np.array(labels)[perm], np.array(scores)[perm]) == roc_auc(labels, scores)
