"""Poisson bootstrap intervals on Spark equal the sequential ones to the last bit (issue 12)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from assay import DataPool

SAMPLES = Path(__file__).resolve().parents[1] / "metrics"
if str(SAMPLES) not in sys.path:
    sys.path.insert(0, str(SAMPLES))

from assay_interval_samples import FloatMAE, PairAUC, ScoreEvaluator, make_items  # noqa: E402 - after sys.path

ITEMS = make_items(600, seed=3)


@pytest.fixture(scope="module")
def samples(sc):
    sc.addPyFile(str(SAMPLES / "assay_interval_samples.py"))


@pytest.mark.parametrize("num_shards", [1, 3, 8])
def test_spark_intervals_same_bits_as_sequential(sc, samples, num_shards):
    seq = ScoreEvaluator().sequentialEvaluate(DataPool(ITEMS), None, metrics=[FloatMAE(), PairAUC()],
                                              n_resamples=1000, seed=0)
    spark = ScoreEvaluator().parallelEvaluate(DataPool(ITEMS), None, sparkContext=sc, num_shards=num_shards,
                                              metrics=[FloatMAE(), PairAUC()], n_resamples=1000, seed=0)
    keys = [k for k in seq.metrics if k.endswith(("_ci_low", "_ci_high"))]
    assert len(keys) == 6
    for k in keys:
        assert np.float64(spark.metrics[k]).tobytes() == np.float64(seq.metrics[k]).tobytes(), k


def test_spark_path_pool_intervals_same_bits(sc, samples, tmp_path):
    import json

    sizes, paths, at = [200, 0, 250, 150], [], 0
    for i, size in enumerate(sizes):
        p = tmp_path / f"f{i}.jsonl"
        p.write_text("".join(json.dumps(list(item)) + "\n" for item in ITEMS[at:at + size]))
        at += size
        paths.append(str(p))
    seq = ScoreEvaluator().sequentialEvaluate(DataPool.from_paths(paths, format="jsonl"), None,
                                              metrics=[FloatMAE(), PairAUC()], n_resamples=200, seed=4)
    spark = ScoreEvaluator().parallelEvaluate(DataPool.from_paths(paths, format="jsonl"), None, sparkContext=sc,
                                              num_shards=3, metrics=[FloatMAE(), PairAUC()], n_resamples=200, seed=4)
    keys = [k for k in seq.metrics if k.endswith(("_ci_low", "_ci_high"))]
    assert len(keys) == 6
    for k in keys:
        assert np.float64(spark.metrics[k]).tobytes() == np.float64(seq.metrics[k]).tobytes(), k


@pytest.mark.parametrize("num_shards", [1, 3, 8])
def test_spark_intervals_same_bits_as_assay_evaluate(sc, samples, num_shards):
    # issue 23: assay.evaluate is a one-shard run of the same engine, so a Spark run gives its bounds to the bit
    import warnings

    import assay

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = assay.evaluate([s for s, _ in ITEMS], [[float(y)] for _, y in ITEMS], metrics=[FloatMAE(), PairAUC()],
                            n_resamples=1000, seed=0)
    g = ev.global_scores if hasattr(ev, "global_scores") else ev[0]["score"]["global"]
    spark = ScoreEvaluator().parallelEvaluate(DataPool(ITEMS), None, sparkContext=sc, num_shards=num_shards,
                                              metrics=[FloatMAE(), PairAUC()], n_resamples=1000, seed=0)
    keys = [k for k in spark.metrics if k.endswith(("_ci_low", "_ci_high"))]
    assert len(keys) == 6
    for k in keys:
        assert np.float64(spark.metrics[k]).tobytes() == np.float64(g[k]).tobytes(), k
