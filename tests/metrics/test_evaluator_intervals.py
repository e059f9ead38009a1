"""Shard-invariant Poisson bootstrap intervals of EvaluatorBase runs with metrics (issue 12)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from assay_interval_samples import FloatMAE, PairAUC, ScoreEvaluator, make_items, reference_totals
from hypothesis import given, settings
from hypothesis import strategies as st

from assay import DataPool
from assay.errors import InvalidParameterError
from assay.metrics.resample import BLOCK, Resampling, poisson_weights, shard_replicates

N = 600  # more than two blocks of weights, so shard boundaries cut blocks
ITEMS = make_items(N, seed=3)
CI_KEYS = ("mae_ci_low", "mae_ci_high", "auc_ci_low", "auc_ci_high", "score_ci_low", "score_ci_high")


def _metrics():
    return [FloatMAE(), PairAUC()]


@pytest.fixture(scope="module")
def sequential():
    return ScoreEvaluator().sequentialEvaluate(DataPool(ITEMS), None, metrics=_metrics(), n_resamples=1000, seed=0)


def _same_bits(a, b):
    """Intervals identical to the last bit; point scores of float statistics equal to rounding (shard sums)."""
    assert set(a) == set(b)
    for k in a:
        if k.endswith(("_ci_low", "_ci_high")):
            assert np.float64(a[k]).tobytes() == np.float64(b[k]).tobytes(), k
        elif isinstance(a[k], float):
            assert a[k] == pytest.approx(b[k], rel=1e-12), k
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("executor", ["serial", "threads[workers=2]", "processes[workers=2]"])
@pytest.mark.parametrize("num_shards", [1, 3, 8])
def test_same_intervals_to_the_last_bit(sequential, executor, num_shards):
    par = ScoreEvaluator().parallelEvaluate(DataPool(ITEMS), None, executor=executor, num_shards=num_shards,
                                            metrics=_metrics(), n_resamples=1000, seed=0)
    _same_bits(dict(par.metrics), dict(sequential.metrics))
    assert all(k in par.metrics for k in CI_KEYS)


def test_shards_smaller_than_a_block_and_uneven(sequential):
    par = ScoreEvaluator().parallelEvaluate(DataPool(ITEMS), None, executor="serial", num_shards=37,
                                            metrics=_metrics(), n_resamples=1000, seed=0)
    _same_bits(dict(par.metrics), dict(sequential.metrics))


def test_intervals_match_a_second_implementation(sequential):
    # the documented method, written out: weights Poisson(1) per item from Philox keyed by (seed, 0, block)
    R = 1000
    # (uniforms inverted through the Poisson(1) CDF, written here with scipy)
    from scipy.stats import poisson

    cdf = poisson(1.0).cdf(np.arange(30))
    w = np.concatenate([np.searchsorted(cdf, np.random.Generator(np.random.Philox(np.random.SeedSequence([0, 0, b])))
                                        .random((R, BLOCK)), side="right") for b in range(-(-N // BLOCK))],
                       axis=1)[:, :N]
    scores = np.array([s for s, _ in ITEMS])
    labels = np.array([y for _, y in ITEMS])
    err = np.abs(scores - labels)
    mae_b = (w @ err) / w.sum(axis=1)
    lo, hi = np.percentile(mae_b, [2.5, 97.5])
    assert sequential.metrics["mae_ci_low"] == pytest.approx(lo, rel=1e-12)
    assert sequential.metrics["mae_ci_high"] == pytest.approx(hi, rel=1e-12)
    assert sequential.metrics["score_ci_low"] == sequential.metrics["mae_ci_low"]
    auc_b = []
    for b in range(R):
        idx = np.repeat(np.arange(N), w[b])
        s, y = scores[idx], labels[idx]
        pos, neg = s[y == 1], s[y == 0]
        auc_b.append(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
                     / (len(pos) * len(neg)))
    lo, hi = np.percentile(auc_b, [2.5, 97.5])
    assert sequential.metrics["auc_ci_low"] == pytest.approx(lo, rel=1e-12)
    assert sequential.metrics["auc_ci_high"] == pytest.approx(hi, rel=1e-12)
    assert sequential.metrics["auc_ci_low"] < sequential.metrics["auc"] < sequential.metrics["auc_ci_high"]


def test_path_pool_same_bits_for_any_shard_count(tmp_path):
    sizes = [100, 0, 300, 50, 150]  # an empty file too
    paths, at = [], 0
    for i, size in enumerate(sizes):
        p = tmp_path / f"f{i}.jsonl"
        p.write_text("".join(json.dumps(list(item)) + "\n" for item in ITEMS[at:at + size]))
        at += size
        paths.append(str(p))
    runs = [ScoreEvaluator().parallelEvaluate(DataPool.from_paths(paths, format="jsonl"), None, executor="threads",
                                              num_shards=k, metrics=_metrics(), n_resamples=300, seed=5)
            for k in (1, 2, 5)]
    for r in runs[1:]:
        _same_bits(dict(r.metrics), dict(runs[0].metrics))
    assert runs[0].metrics["mae_ci_low"] < runs[0].metrics["mae"] < runs[0].metrics["mae_ci_high"]


def test_weights_are_poisson_one():
    w = poisson_weights(7, 50, 0, 0, 4000).astype(float)  # 200,000 draws
    n = w.size
    # CLT: mean of Poisson(1) has sd 1/sqrt(n); the sample variance has sd sqrt((mu4 - 1) / n), mu4 = 4
    assert abs(w.mean() - 1) < 5 / math.sqrt(n)
    assert abs(w.var() - 1) < 5 * math.sqrt(3 / n)
    # P(W = 0) = P(W = 1) = e^-1
    assert abs((w == 0).mean() - math.exp(-1)) < 5 * math.sqrt(math.exp(-1) * (1 - math.exp(-1)) / n)


def test_weights_depend_only_on_the_position():
    whole = poisson_weights(1, 20, 0, 0, 1000)
    assert np.array_equal(poisson_weights(1, 20, 0, 300, 777), whole[:, 300:777])
    assert not np.array_equal(poisson_weights(1, 20, 1, 0, 1000), whole)  # another stream (file)
    assert not np.array_equal(poisson_weights(2, 20, 0, 0, 1000), whole)  # another seed


def test_coverage_near_nominal():
    # accuracy-like proportion p = 0.3 on n = 150 items; the 90% interval should cover p about 90% of the time
    covered, reps = 0, 80
    for r in range(reps):
        rng = np.random.default_rng(1000 + r)
        items = [(1.0 if x else 0.0, 0) for x in rng.random(150) < 0.3]  # |score - label| = 1 with prob 0.3
        res = ScoreEvaluator().sequentialEvaluate(DataPool(items), None, metrics=[FloatMAE()], n_resamples=200,
                                                  confidence_level=0.9, seed=r)
        covered += res.metrics["mae_ci_low"] <= 0.3 <= res.metrics["mae_ci_high"]
    # binomial sd of the coverage estimate: sqrt(0.9 * 0.1 / 80) = 0.034; allow 4 sd
    assert abs(covered / reps - 0.9) < 4 * math.sqrt(0.09 / reps)


def test_no_intervals_with_zero_resamples():
    r = ScoreEvaluator().sequentialEvaluate(DataPool(ITEMS[:20]), None, metrics=_metrics(), n_resamples=0)
    assert not any(k.endswith(("_ci_low", "_ci_high")) for k in r.metrics)


@pytest.mark.parametrize("options, name", [
    ({"n_resamples": -1}, "n_resamples"), ({"n_resamples": 1.5}, "n_resamples"), ({"n_resamples": True}, "n_resamples"),
    ({"confidence_level": 0}, "confidence_level"), ({"confidence_level": 1.0}, "confidence_level"),
    ({"confidence_level": "0.9"}, "confidence_level"), ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
    ({"seed": None}, "seed"),
])
@pytest.mark.parametrize("method", ["sequentialEvaluate", "parallelEvaluate"])
def test_resampling_options_are_validated(options, name, method):
    ev = ScoreEvaluator()
    extra = {"executor": "serial"} if method == "parallelEvaluate" else {}
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {method}"):
        getattr(ev, method)(DataPool(ITEMS[:5]), None, metrics=_metrics(), **options, **extra)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 900), cuts=st.lists(st.integers(0, 900), max_size=9), k=st.integers(1, 3))
def test_replicate_totals_same_bits_for_any_cut(n, cuts, k):
    rows = np.random.default_rng(n).normal(size=(n, k))
    rs = Resampling(n_resamples=7, confidence_level=0.9, seed=11)
    bounds = [0] + sorted(min(c, n) for c in cuts) + [n]
    parts = [shard_replicates(rs, rows[a:b], start=a) for a, b in itertools.pairwise(bounds)]
    whole = shard_replicates(rs, rows, start=0)
    merged = parts[0].merge(*parts[1:])
    assert merged.totals().tobytes() == whole.totals().tobytes()
    # and it is the documented draw (to rounding)
    assert np.allclose(whole.totals(), reference_totals(11, 7, rows) if n else np.zeros((7, k)))


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(0, 600), min_size=1, max_size=7), cuts=st.lists(st.integers(0, 7), max_size=4))
def test_file_replicate_totals_same_bits_for_any_grouping(sizes, cuts):
    rows = np.random.default_rng(len(sizes)).normal(size=(sum(sizes), 2))
    rs = Resampling(n_resamples=5, confidence_level=0.9, seed=3)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)

    def shard(f0, f1):
        return shard_replicates(rs, rows[starts[f0]:starts[f1]], start=None,
                                file_counts=[(f, sizes[f]) for f in range(f0, f1)])

    bounds = [0] + sorted(min(c, len(sizes)) for c in cuts) + [len(sizes)]
    merged = shard(bounds[0], bounds[1]).merge(*[shard(a, b) for a, b in itertools.pairwise(bounds[1:])])
    whole = shard(0, len(sizes))
    assert merged.totals().tobytes() == whole.totals().tobytes()
    want = sum((reference_totals(3, 5, rows[starts[f]:starts[f + 1]], stream=f) for f in range(len(sizes))),
               np.zeros((5, 2)))
    assert np.allclose(whole.totals(), want)
