"""Seeds and metric options are validated where they enter (issue 10)."""

from __future__ import annotations

import numpy as np
import pytest
from assay_metric_samples import SampleAccuracy

import assay
from assay.errors import InvalidParameterError
from assay.metrics.ci import intervals
from assay.metrics.resample import Resampler

PREDS, REFS = [1, 2, 3, 1, 2], [[1], [2], [1], [1], [3]]
BAD_SEEDS = [1.9, 1.0, -1, True, "1", np.float64(2.0), [1], np.bool_(True)]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_evaluate_rejects_a_bad_seed(seed):
    # before: 1.9 and 1.0 ran as seed 1, -1 failed inside numpy
    with pytest.raises(InvalidParameterError, match=r"'seed' parameter of assay.evaluate must be an integer >= 0"):
        assay.evaluate(PREDS, REFS, metrics=[SampleAccuracy()], n_resamples=20, seed=seed)


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_compare_rejects_a_bad_seed(seed):
    r = assay.evaluate(PREDS, REFS, metrics=[SampleAccuracy()], n_resamples=0)
    with pytest.raises(InvalidParameterError, match=r"'seed' parameter of assay.compare"):
        assay.compare(r, r, n_resamples=20, seed=seed)


@pytest.mark.parametrize("seed", [1.5, -3, None, False])
def test_resampler_and_intervals_reject_a_bad_seed(seed):
    with pytest.raises(InvalidParameterError, match="'seed'"):
        Resampler(5, n_resamples=10, seed=seed)
    m = SampleAccuracy()
    inter = m.map_all(PREDS, REFS)
    with pytest.raises(InvalidParameterError, match="'seed'"):
        intervals([m], [inter], [m.scores_of(inter)], n=5, n_resamples=10, confidence_level=0.9,
                  method="percentile", seed=seed)


def test_a_numpy_integer_seed_is_the_same_as_the_int():
    a = assay.evaluate(PREDS, REFS, metrics=[SampleAccuracy()], n_resamples=50, seed=np.int64(7))
    b = assay.evaluate(PREDS, REFS, metrics=[SampleAccuracy()], n_resamples=50, seed=7)
    assert a.info["seed"] == 7 and type(a.info["seed"]) is int
    assert a[0]["score"]["global"]["score_ci_low"] == b[0]["score"]["global"]["score_ci_low"]


@pytest.mark.parametrize("kwargs,name", [
    ({"n_resamples": True}, "n_resamples"), ({"n_resamples": 2.0}, "n_resamples"), ({"n_resamples": -1}, "n_resamples"),
    ({"confidence_level": True}, "confidence_level"), ({"confidence_level": float("nan")}, "confidence_level"),
    ({"confidence_level": 1}, "confidence_level"), ({"confidence_level": "0.9"}, "confidence_level"),
    ({"ci_method": "bogus", "n_resamples": 0}, "ci_method"), ({"ci_method": None}, "ci_method"),
])
def test_evaluate_rejects_bad_resampling_options(kwargs, name):
    with pytest.raises(InvalidParameterError, match=name):
        assay.evaluate(PREDS, REFS, metrics=[SampleAccuracy()], **kwargs)


@pytest.mark.parametrize("spec,kwargs", [("accuracy[score_prefix=123]", {}), ("accuracy", {"score_prefix": 123}),
                                         ("accuracy[score_prefix=1.5]", {}), ("accuracy[score_prefix=true]", {}),
                                         ("accuracy[score_prefix=[a]]", {})])
def test_score_prefix_is_checked_when_the_metric_loads(spec, kwargs):
    # before: the metric loaded and evaluate failed later with a TypeError
    with pytest.raises(InvalidParameterError, match="'score_prefix' parameter of metric"):
        assay.load_metric(spec, **kwargs)
    with pytest.raises(InvalidParameterError, match="'score_prefix'"):
        assay.evaluate(PREDS, REFS, metrics=[spec], n_resamples=0) if not kwargs else \
            SampleAccuracy(score_prefix=kwargs["score_prefix"])


def test_load_metric_rejects_a_none_prefix():
    # (in an evaluate() metric list, score_prefix=none means "no prefix", as before)
    with pytest.raises(InvalidParameterError, match="'score_prefix' parameter of metric"):
        assay.load_metric("accuracy[score_prefix=none]")


def test_a_quoted_numeric_prefix_is_a_string():
    res = assay.evaluate(PREDS, REFS, metrics=["accuracy[score_prefix='123']"], n_resamples=0)
    assert res[0]["score"]["global"]["123accuracy"] == pytest.approx(3 / 5)


def test_catalog_prefix_of_a_registered_sample_metric_is_checked(samples_system):
    from assay.metrics.catalog import resolve_metric

    with pytest.raises(InvalidParameterError, match="'score_prefix'"):
        resolve_metric("sample_accuracy[score_prefix=7]")
