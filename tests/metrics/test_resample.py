"""The resampling engine: both paths draw the ordinary bootstrap; clusters, strata, chunks."""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay.metrics.resample import Resampler


def _index_path_totals(rs, stats):
    seen = []
    totals = rs.run(stats, lambda b, idx: seen.append(np.bincount(idx, minlength=rs.n)))
    return totals, np.array(seen)


def test_multinomial_path_matches_bootstrap_moments():
    # 0/1 scores, n = 50, p = 0.3: the bootstrap mean has mean p_hat and variance p_hat (1 - p_hat) / n
    x = np.zeros((50, 1))
    x[:15] = 1
    rs = Resampler(50, n_resamples=40_000, seed=1)
    totals = rs.run(x)  # few distinct rows: multinomial path
    means = totals[:, 0] / 50
    assert means.mean() == pytest.approx(0.3, abs=0.002)
    assert means.var() == pytest.approx(0.3 * 0.7 / 50, rel=0.03)
    assert np.all(totals == np.round(totals))  # counts of ones


def test_index_path_counts_are_a_bootstrap_draw():
    stats = np.arange(10, dtype=float).reshape(-1, 1)
    rs = Resampler(10, n_resamples=200, seed=3)
    totals, counts = _index_path_totals(rs, stats)
    assert np.all(counts.sum(axis=1) == 10)  # n draws per resample
    np.testing.assert_allclose(totals[:, 0], counts @ np.arange(10))  # totals come from the same indices


def test_same_seed_same_draw_and_chunk_size_does_not_matter():
    x = np.random.default_rng(0).normal(size=(3000, 1))
    a = Resampler(3000, n_resamples=50, seed=7).run(x)
    b = Resampler(3000, n_resamples=50, seed=7, max_bytes=1).run(x)  # one resample per chunk
    np.testing.assert_array_equal(a, b)
    c = Resampler(3000, n_resamples=50, seed=8).run(x)
    assert not np.array_equal(a, c)


def test_many_statistics_use_counts_times_stats():
    x = np.random.default_rng(0).normal(size=(500, 4))
    totals, counts = _index_path_totals(Resampler(500, n_resamples=30, seed=2), x)
    np.testing.assert_allclose(totals, counts @ x)


def test_strata_keep_their_sizes():
    strata = ["a"] * 7 + ["b"] * 3
    stats = np.column_stack([np.r_[np.ones(7), np.zeros(3)], np.ones(10)])
    # few distinct rows: multinomial per stratum; the number drawn from stratum a is always 7
    totals = Resampler(10, n_resamples=500, seed=0, strata=strata).run(stats)
    assert np.all(totals[:, 0] == 7) and np.all(totals[:, 1] == 10)
    rs = Resampler(10, n_resamples=100, seed=0, strata=strata)
    _, counts = _index_path_totals(rs, np.arange(10.0).reshape(-1, 1))
    assert np.all(counts[:, :7].sum(axis=1) == 7) and np.all(counts[:, 7:].sum(axis=1) == 3)


def test_clusters_are_drawn_whole():
    groups = [0, 0, 1, 1, 1, 2]
    rs = Resampler(6, n_resamples=300, seed=0, groups=groups)
    _, counts = _index_path_totals(rs, np.arange(6.0).reshape(-1, 1))
    # members of one cluster are always drawn equally often
    assert np.all(counts[:, 0] == counts[:, 1])
    assert np.all((counts[:, 2] == counts[:, 3]) & (counts[:, 3] == counts[:, 4]))
    # three clusters drawn per resample
    assert np.all(counts[:, 0] + counts[:, 2] + counts[:, 5] == 3)
    np.testing.assert_allclose(rs.unit_stats(np.ones((6, 1)))[:, 0], [2, 3, 1])


def test_cluster_must_lie_in_one_stratum():
    with pytest.raises(InvalidParameterError, match="one stratum"):
        Resampler(4, n_resamples=10, seed=0, groups=[0, 0, 1, 1], strata=[0, 1, 1, 1])


def test_label_length_checked():
    with pytest.raises(InvalidParameterError, match="'groups' must have one label per instance"):
        Resampler(4, n_resamples=10, seed=0, groups=[0, 1])


def test_memory_bounded_chunks():
    rs = Resampler(1_000_000, n_resamples=1000, seed=0)
    assert rs._chunk(1) * 1_000_000 * 16 <= rs.max_bytes


def test_jackknife_blocks():
    blocks, note = Resampler(5, n_resamples=1, seed=0).jackknife_blocks()
    assert [b.tolist() for b in blocks] == [[0], [1], [2], [3], [4]] and note is None
    blocks, note = Resampler(50, n_resamples=1, seed=0).jackknife_blocks(max_blocks=10)
    assert len(blocks) == 10 and sorted(np.concatenate(blocks).tolist()) == list(range(50)) and "grouped" in note


@pytest.mark.parametrize("kind", ["small_ints", "floats", "wide_ints", "constant"])
def test_distinct_rows_matches_numpy_unique(kind):
    from assay.metrics.resample import distinct_rows

    rng = np.random.default_rng(0)
    if kind == "small_ints":
        rows = rng.integers(0, 3, size=(1000, 4)).astype(float)
    elif kind == "floats":
        rows = rng.choice([0.25, -1.5, 3.125], size=(1000, 2))
    elif kind == "wide_ints":  # large ranges force the 1-D unique coding and key compaction
        rows = rng.choice([0.0, 2.0**30, 2.0**40], size=(1000, 3))
    else:
        rows = np.ones((50, 2))
    uniq, counts = distinct_rows(rows)
    ref_u, ref_c = np.unique(rows, axis=0, return_counts=True)
    order = np.lexsort(uniq.T[::-1])
    np.testing.assert_array_equal(uniq[order], ref_u)
    np.testing.assert_array_equal(counts[order], ref_c)


def test_distinct_rows_gives_up_on_many_values():
    from assay.metrics.resample import distinct_rows

    assert distinct_rows(np.random.default_rng(0).normal(size=(5000, 1))) is None
