"""One evaluation engine (issue 23, item 4): assay.evaluate, sequentialEvaluate and parallelEvaluate give
bit-identical point values and interval bounds for the same data, metrics and seed, whatever the shard count
and executor; and the sharded evaluators drop no interval that was asked for (issue 27, item 10)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from assay_interval_samples import (
    FloatMAE,
    LabelEvaluator,
    MedianScore,
    ScoreEvaluator,
    make_items,
    make_label_items,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import assay
from assay import DataPool
from assay.metrics.resample import BLOCK

N = 2 * BLOCK + 700  # shard boundaries cut blocks
R = 200


def _bits(x):
    return np.float64(x).tobytes()


def _assert_same(evaluated, sharded, keys):
    for k in keys:
        assert k in evaluated and k in sharded, k
        assert _bits(evaluated[k]) == _bits(sharded[k]), (k, evaluated[k], sharded[k])


def _ci_keys(scores):
    return [k for k in scores if k.endswith(("_ci_low", "_ci_high"))]


# ---------------------------------------------------------------- continuous additive + gathered metrics
@pytest.fixture(scope="module")
def scores_case():
    items = make_items(N, seed=11)
    preds = [s for s, _ in items]
    refs = [[float(y)] for _, y in items]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = assay.evaluate(preds, refs, metrics=[FloatMAE(), MedianScore()], n_resamples=R, seed=3)
    return items, ev.global_scores if hasattr(ev, "global_scores") else ev[0]["score"]["global"]


@pytest.mark.parametrize("executor", ["serial", "threads[workers=2]", "processes[workers=2]"])
@pytest.mark.parametrize("num_shards", [1, 3, 8])
def test_evaluate_equals_the_sharded_evaluators(scores_case, executor, num_shards):
    items, g = scores_case
    par = ScoreEvaluator().parallelEvaluate(DataPool(items), None, executor=executor, num_shards=num_shards,
                                            metrics=[FloatMAE(), MedianScore()], n_resamples=R, seed=3)
    keys = ["mae", "median", "score", "mae_ci_low", "mae_ci_high", "median_ci_low", "median_ci_high",
            "score_ci_low", "score_ci_high"]
    _assert_same(g, par.metrics, [k for k in keys if k not in ("mae", "score")])
    assert g["mae"] == pytest.approx(par.metrics["mae"], rel=1e-12)  # a float sum, added shard by shard


def test_sequential_equals_evaluate(scores_case):
    items, g = scores_case
    seq = ScoreEvaluator().sequentialEvaluate(DataPool(items, num_shards=5), None,
                                              metrics=[FloatMAE(), MedianScore()], n_resamples=R, seed=3)
    _assert_same(g, seq.metrics, _ci_keys(seq.metrics))
    assert set(_ci_keys(seq.metrics)) == {"mae_ci_low", "mae_ci_high", "median_ci_low", "median_ci_high",
                                          "score_ci_low", "score_ci_high"}


# ---------------------------------------------------------------- registered metrics, discovered labels
LABEL_METRICS = ["accuracy", "f1[average=macro]"]


@pytest.fixture(scope="module")
def label_case():
    items = make_label_items(N, seed=5)
    ev = assay.evaluate([p for p, _ in items], [[g] for _, g in items], metrics=LABEL_METRICS,
                        n_resamples=R, seed=1)
    return items, ev[0]["score"]["global"]


@pytest.mark.parametrize("executor,num_shards", [("serial", 1), ("threads[workers=2]", 3),
                                                 ("processes[workers=2]", 8)])
def test_macro_f1_intervals_through_the_sharded_evaluators(label_case, executor, num_shards):
    items, g = label_case
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing dropped, nothing warned
        par = LabelEvaluator().parallelEvaluate(DataPool(items), None, executor=executor, num_shards=num_shards,
                                                metrics=LABEL_METRICS, n_resamples=R, seed=1)
    cis = _ci_keys(g)
    assert {"f1_ci_low", "f1_ci_high"} <= set(cis), cis
    _assert_same(g, par.metrics, cis + [k for k in g if k.startswith(("accuracy", "f1")) and k not in cis])


# ---------------------------------------------------------------- any data, any sharding (hypothesis)
@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=300),
       st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_any_data_any_shard_count_same_bits(items, num_shards, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = assay.evaluate([p for p, _ in items], [[g] for _, g in items], metrics=["accuracy"],
                            n_resamples=50, seed=seed)[0]["score"]["global"]
        seq = LabelEvaluator().parallelEvaluate(DataPool(items), None, executor="serial",
                                                num_shards=min(num_shards, len(items)), metrics=["accuracy"],
                                                n_resamples=50, seed=seed)
    _assert_same(ev, seq.metrics, ["accuracy", "accuracy_ci_low", "accuracy_ci_high", "score_ci_low",
                                   "score_ci_high"])


def test_intervals_match_the_documented_scheme(label_case):
    # accuracy's statistics take few distinct rows: per block, N_v ~ Poisson(count_v) for each distinct row
    # (lexsort order), drawn from Philox keyed (seed, 0, block, 1) -- written out here with numpy
    items, g = label_case
    correct = np.array([float(p == t) for p, t in items])
    totals = np.zeros((R, 2))
    for b in range(-(-N // BLOCK)):
        part = correct[b * BLOCK:(b + 1) * BLOCK]
        values = sorted(set(part.tolist()))
        counts = [float(np.sum(part == v)) for v in values]
        draws = np.random.Generator(np.random.Philox(np.random.SeedSequence([1, 0, b, 1]))).poisson(
            counts, size=(R, len(values)))
        totals += draws @ np.array([[v, 1.0] for v in values])
    lo, hi = np.percentile(totals[:, 0] / totals[:, 1], [2.5, 97.5])
    assert g["accuracy_ci_low"] == pytest.approx(lo, rel=1e-12)
    assert g["accuracy_ci_high"] == pytest.approx(hi, rel=1e-12)
