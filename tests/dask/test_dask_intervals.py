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
