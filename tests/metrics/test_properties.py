"""Property tests: sharding never changes a score; distinct rows and strata are exact."""

from __future__ import annotations

import numpy as np
from assay_metric_samples import SampleAUC, SampleF1
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.metrics.resample import Resampler

labels = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(labels, st.lists(st.integers(0, 40), max_size=4))
def test_integer_tallies_merge_exactly(pairs, cuts):
    preds = [p for p, _ in pairs]
    refs = [[r] for _, r in pairs]
    bounds = sorted({0, len(pairs), *[min(c, len(pairs)) for c in cuts]})
    shards = [SampleF1().update(preds[a:b], refs[a:b]) for a, b in zip(bounds, bounds[1:])]
    one = SampleF1().update(preds, refs).compute_scores()
    assert shards[0].clone().merge(*shards).compute_scores() == one  # exactly, not approximately
    tp = sum(p == 1 and r == 1 for p, r in pairs)
    fp = sum(p == 1 and r != 1 for p, r in pairs)
    fn = sum(p != 1 and r == 1 for p, r in pairs)
    assert one["f1"] == (2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1)), min_size=2, max_size=30),
       st.integers(1, 29))
def test_gathered_intermediates_merge_exactly(rows, cut):
    cut = min(cut, len(rows) - 1)
    preds = [s for s, _ in rows]
    refs = [[y] for _, y in rows]
    a = SampleAUC().update(preds[:cut], refs[:cut])
    b = SampleAUC().update(preds[cut:], refs[cut:])
    one = SampleAUC().update(preds, refs).compute_scores()
    merged = a.merge(b).compute_scores()
    assert merged == one or (np.isnan(merged["auc"]) and np.isnan(one["auc"]))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=40), st.integers(0, 2**32 - 1))
def test_strata_sizes_are_kept_on_the_index_path(strata, seed):
    n = len(strata)
    seen = []
    Resampler(n, n_resamples=5, seed=seed, strata=strata).run(None, lambda b, idx: seen.append(idx))
    want = np.bincount(strata, minlength=4)
    for idx in seen:
        assert len(idx) == n
        np.testing.assert_array_equal(np.bincount(np.asarray(strata)[idx], minlength=4), want)
