"""Poisson bootstrap intervals on Dask equal the sequential ones to the last bit (issue 12)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from assay import DataPool

SAMPLES = Path(__file__).resolve().parents[1] / "metrics"
if str(SAMPLES) not in sys.path:  # before the cluster starts: its spawned workers inherit sys.path
    sys.path.insert(0, str(SAMPLES))

from assay_interval_samples import FloatMAE, PairAUC, ScoreEvaluator, make_items  # noqa: E402 - after sys.path

ITEMS = make_items(600, seed=3)


def test_dask_intervals_same_bits_as_sequential(client):
    seq = ScoreEvaluator().sequentialEvaluate(DataPool(ITEMS), None, metrics=[FloatMAE(), PairAUC()],
                                              n_resamples=1000, seed=0)
    for k in (3, 8):
        on_dask = ScoreEvaluator().parallelEvaluate(DataPool(ITEMS), None, client, num_shards=k,
                                                    metrics=[FloatMAE(), PairAUC()], n_resamples=1000, seed=0)
        keys = [key for key in seq.metrics if key.endswith(("_ci_low", "_ci_high"))]
        assert len(keys) == 6
        for key in keys:
            assert np.float64(on_dask.metrics[key]).tobytes() == np.float64(seq.metrics[key]).tobytes(), key


def test_dask_intervals_same_bits_as_assay_evaluate(client):
    # issue 23: assay.evaluate is a one-shard run of the same engine, so a Dask run gives its bounds to the bit
    import warnings

    import assay

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = assay.evaluate([s for s, _ in ITEMS], [[float(y)] for _, y in ITEMS], metrics=[FloatMAE(), PairAUC()],
                            n_resamples=1000, seed=0)
    g = ev.global_scores if hasattr(ev, "global_scores") else ev[0]["score"]["global"]
    for k in (1, 3, 8):
        on_dask = ScoreEvaluator().parallelEvaluate(DataPool(ITEMS), None, client, num_shards=k,
                                                    metrics=[FloatMAE(), PairAUC()], n_resamples=1000, seed=0)
        keys = [key for key in on_dask.metrics if key.endswith(("_ci_low", "_ci_high"))]
        assert len(keys) == 6
        for key in keys:
            assert np.float64(on_dask.metrics[key]).tobytes() == np.float64(g[key]).tobytes(), (k, key)
