"""The one resampling engine: the Poisson bootstrap, its few-distinct-rows draw, clusters, strata, bounds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import poisson

from assay.errors import InvalidParameterError
from assay.metrics.resample import BLOCK, FEW, Resampler, block_weights, check_cost


def _index_path_totals(rs, stats):
    seen = []
    totals = rs.run(stats, lambda b, idx: seen.append(np.bincount(idx, minlength=rs.n)))
    return totals, np.array(seen)


def _reference_weights(seed, R, n, stream=0):
    """The documented per-position weights, written out with scipy's Poisson(1) CDF."""
    cdf = poisson(1.0).cdf(np.arange(30))
    return np.concatenate([
        np.searchsorted(cdf, np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, stream, b])))
                        .random((R, BLOCK)), side="right") for b in range(-(-n // BLOCK))], axis=1)[:, :n]


def _reference_few_totals(seed, R, rows):
    """The documented few-distinct-rows draw: per block, Poisson(count) per distinct row (lexsort order)."""
    out = np.zeros((R, rows.shape[1]))
    for b in range(-(-len(rows) // BLOCK)):
        part = rows[b * BLOCK:(b + 1) * BLOCK]
        uniq, counts = [], []
        for row in sorted({tuple(r) for r in part.tolist()}, key=lambda t: t[::-1]):  # last column first
            uniq.append(row)
            counts.append(sum(tuple(r) == row for r in part.tolist()))
        draws = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, 0, b, 1]))).poisson(
            np.array(counts, dtype=float), size=(R, len(counts)))
        out += draws @ np.array(uniq)
    return out


def test_few_distinct_rows_totals_follow_the_documented_draw():
    rng = np.random.default_rng(4)
    x = np.column_stack([(rng.random(3 * BLOCK + 17) < 0.7).astype(float), np.ones(3 * BLOCK + 17)])
    totals = Resampler(len(x), n_resamples=300, seed=5).totals(x)
    np.testing.assert_allclose(totals, _reference_few_totals(5, 300, x), rtol=1e-12)


def test_many_distinct_rows_totals_are_the_position_weights():
    x = np.random.default_rng(0).normal(size=(BLOCK + 500, 2))
    totals = Resampler(len(x), n_resamples=40, seed=2).totals(x)
    w = _reference_weights(2, 40, len(x))
    np.testing.assert_allclose(totals, w @ x, rtol=1e-10)
    # the indices visited are those weights too
    _, counts = _index_path_totals(Resampler(len(x), n_resamples=40, seed=2), None)
    np.testing.assert_array_equal(counts, w)


def test_poisson_moments():
    # 0/1 scores, n = 50, 15 ones: a Poisson bootstrap total has mean 15 and variance sum x_i^2 = 15
    x = np.zeros((50, 1))
    x[:15] = 1
    totals = Resampler(50, n_resamples=40_000, seed=1).totals(x)[:, 0]
    assert totals.mean() == pytest.approx(15, abs=0.1)
    assert totals.var() == pytest.approx(15, rel=0.03)
    assert np.all(totals == np.round(totals))


def test_block_weights_skip_ahead_to_a_replicate_range():
    full = block_weights(3, 50, 0, 2)
    np.testing.assert_array_equal(block_weights(3, 17, 0, 2, first=20), full[20:37])


class _Words:
    """A bit generator stand-in that hands out given raw 64-bit words."""

    def __init__(self, words):
        self.words = words

    def random_raw(self, size):
        return self.words.reshape(size)


def test_raw_words_give_the_weights_of_their_uniforms_near_every_cdf_value():
    # the engine inverts the raw Philox words; numpy's uniform of a word is (raw >> 11) * 2**-53. Words
    # drawn inside the 2**48-wide buckets (top 16 bits) that hold a CDF value -- where the engine leaves
    # its lookup table for an exact search -- and anywhere else must give the uniform's CDF inversion.
    from assay.metrics.resample import _weights8

    cdf = poisson(1.0).cdf(np.arange(30))
    rng = np.random.default_rng(0)
    buckets = np.unique(np.floor(cdf[cdf < 1] * 2**16).astype(np.uint64))
    near = (rng.choice(buckets, 3 * BLOCK) << np.uint64(48)) | rng.integers(0, 2**48, 3 * BLOCK, dtype=np.uint64)
    words = np.concatenate([near, rng.integers(0, 2**64 - 1, BLOCK, dtype=np.uint64, endpoint=True)])
    w = _weights8(_Words(words), 4)
    expected = np.searchsorted(cdf, (words >> np.uint64(11)) * 2.0**-53, side="right").reshape(4, BLOCK)
    np.testing.assert_array_equal(w, expected)
    assert w.max() >= 6  # the buckets reached the tail


def test_same_seed_same_draw_and_chunk_size_does_not_matter():
    x = np.random.default_rng(0).normal(size=(3000, 1))
    a = Resampler(3000, n_resamples=50, seed=7).run(x)
    seen_a, seen_b = [], []
    Resampler(3000, n_resamples=50, seed=7).run(None, lambda b, i: seen_a.append(i))
    Resampler(3000, n_resamples=50, seed=7, max_bytes=1).run(None, lambda b, i: seen_b.append(i))
    assert all(np.array_equal(p, q) for p, q in zip(seen_a, seen_b, strict=True))
    c = Resampler(3000, n_resamples=50, seed=8).run(x)
    assert not np.array_equal(a, c)


def test_a_metric_is_resampled_on_its_own():
    # column groups are independent draws: adding a second statistic does not change the first's totals
    rng = np.random.default_rng(1)
    a = (rng.random((700, 1)) < 0.5).astype(float)
    b = rng.integers(0, 3, size=(700, 2)).astype(float)
    alone = Resampler(700, n_resamples=100, seed=0).totals(a)
    from assay.metrics.resample import Resampling, shard_replicates

    both = shard_replicates(Resampling(100, 0.95, 0), np.hstack([a, b]), start=0, parts=(1, 2)).totals()
    np.testing.assert_array_equal(both[:, :1], alone)


def test_strata_keep_their_sizes():
    strata = ["a"] * 7 + ["b"] * 3
    rs = Resampler(10, n_resamples=200, seed=0, strata=strata)
    _, counts = _index_path_totals(rs, None)
    assert np.all(counts[:, :7].sum(axis=1) == 7) and np.all(counts[:, 7:].sum(axis=1) == 3)
    stats = np.column_stack([np.r_[np.ones(7), np.zeros(3)], np.ones(10)])
    totals = Resampler(10, n_resamples=200, seed=0, strata=strata).totals(stats)
    assert np.all(totals[:, 0] == 7) and np.all(totals[:, 1] == 10)


def test_clusters_are_drawn_whole():
    groups = [0, 0, 1, 1, 1, 2]
    rs = Resampler(6, n_resamples=300, seed=0, groups=groups)
    _, counts = _index_path_totals(rs, None)
    assert np.all(counts[:, 0] == counts[:, 1])
    assert np.all((counts[:, 2] == counts[:, 3]) & (counts[:, 3] == counts[:, 4]))
    # one Poisson(1) weight per cluster: the documented unit weights, clusters in first-seen order
    np.testing.assert_array_equal(counts[:, [0, 2, 5]], _reference_weights(0, 300, 3))
    np.testing.assert_allclose(rs.unit_stats(np.ones((6, 1)))[:, 0], [2, 3, 1])
    # additive statistics are summed per cluster, then drawn as positions (few distinct rows: Poisson(count))
    totals = rs.totals(np.arange(6.0).reshape(-1, 1))
    np.testing.assert_allclose(totals, _reference_few_totals(0, 300, np.array([[1.0], [9.0], [5.0]])))


def test_cluster_must_lie_in_one_stratum():
    with pytest.raises(InvalidParameterError, match="one stratum"):
        Resampler(4, n_resamples=10, seed=0, groups=[0, 0, 1, 1], strata=[0, 1, 1, 1])


def test_label_length_checked():
    with pytest.raises(InvalidParameterError, match="'groups' must have one label per instance"):
        Resampler(4, n_resamples=10, seed=0, groups=[0, 1])


@pytest.mark.parametrize("n_resamples", [10**9, 2**63])
def test_absurd_resample_counts_are_refused_before_allocating(n_resamples):
    with pytest.raises(InvalidParameterError, match="'n_resamples' parameter of Resampler is too large"):
        Resampler(10, n_resamples=n_resamples, seed=0)
    with pytest.raises(InvalidParameterError, match="too large"):
        check_cost(n_resamples)


def test_cost_bound_counts_the_instances():
    check_cost(1000, 10**7)  # the everyday case passes
    with pytest.raises(InvalidParameterError, match="weights"):
        check_cost(10**6, 10**7)


def test_jackknife_blocks():
    blocks, note = Resampler(5, n_resamples=1, seed=0).jackknife_blocks()
    assert [b.tolist() for b in blocks] == [[0], [1], [2], [3], [4]] and note is None
    blocks, note = Resampler(50, n_resamples=1, seed=0).jackknife_blocks(max_blocks=10)
    assert len(blocks) == 10 and sorted(np.concatenate(blocks).tolist()) == list(range(50)) and "grouped" in note


def test_few_threshold_is_a_function_of_the_block():
    # a block with more than FEW distinct rows falls back to the position weights
    x = np.arange(FEW + 1, dtype=float).repeat(2)[:, None]
    totals = Resampler(len(x), n_resamples=30, seed=9).totals(x)
    np.testing.assert_allclose(totals, _reference_weights(9, 30, len(x)) @ x, rtol=1e-12)
