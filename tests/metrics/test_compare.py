"""assay.compare: paired bootstrap and approximate randomization against exact derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from assay_metric_samples import SampleAccuracy, SampleMedianAE

import assay
from assay.errors import InvalidParameterError
from assay.metrics.api import load_results


def _pair(n_disc, n_same=20):
    refs = [[1]] * (n_disc + n_same)
    a = [0] * n_disc + [1] * n_same   # b is right where a is wrong on n_disc instances
    b = [1] * (n_disc + n_same)
    return a, b, refs


def test_randomization_matches_the_exact_sign_flip_p_value():
    a, b, refs = _pair(5)
    ra = assay.evaluate(a, refs, metrics=[SampleAccuracy()], n_resamples=0)
    rb = assay.evaluate(b, refs, metrics=[SampleAccuracy()], n_resamples=0)
    c = assay.compare(ra, rb, n_resamples=20_000, seed=0)
    # only the 5 discordant instances matter; |delta_r| >= |delta| iff all 5 swaps agree: 2 / 2^5
    assert c.difference == pytest.approx(5 / 25)
    assert c.p_value_randomization == pytest.approx(2 / 32, abs=0.005)
    assert c.score_a == pytest.approx(20 / 25) and c.score_b == 1.0 and c.seed == 0


def test_non_additive_path_gives_the_same_exact_p_value():
    a, b, refs = _pair(5)

    class MeanMatch(SampleMedianAE):
        main_score = "match"
        prediction_type = None

        def compute_global(self, predictions, references, task_data):
            return float(np.mean([p == r[0] for p, r in zip(predictions, references)]))

    ra = assay.evaluate(a, refs, metrics=[MeanMatch()], n_resamples=0)
    rb = assay.evaluate(b, refs, metrics=[MeanMatch()], n_resamples=0)
    c = assay.compare(ra, rb, n_resamples=4000, seed=1)
    assert c.p_value_randomization == pytest.approx(2 / 32, abs=0.012)
    # paired bootstrap: delta_b = (#b-wins drawn) / n; the one-point or undefined cases do not occur
    assert c.ci_low >= 0 and c.ci_high <= 0.5


def test_identical_systems():
    a, _, refs = _pair(5)
    ra = assay.evaluate(a, refs, metrics=[SampleAccuracy()], n_resamples=0)
    c = assay.compare(ra, ra, n_resamples=200)
    assert c.difference == 0 and c.p_value_bootstrap == 1.0 and c.p_value_randomization == 1.0
    assert c.ci_low == c.ci_high == 0.0


def test_bootstrap_interval_of_the_difference():
    rng = np.random.default_rng(0)
    n = 3000
    a = (rng.random(n) < 0.7).astype(int).tolist()
    b = [x if rng.random() < 0.8 else 1 - x for x in a]
    refs = [[1]] * n
    ra = assay.evaluate(a, refs, metrics=[SampleAccuracy()], n_resamples=0)
    rb = assay.evaluate(b, refs, metrics=[SampleAccuracy()], n_resamples=0)
    c = assay.compare(ra, rb, n_resamples=4000, seed=0)
    d = np.array(b) - np.array(a)
    half = 1.959964 * d.std() / math.sqrt(n)  # normal approximation of the paired mean difference
    assert c.difference == pytest.approx(d.mean())
    assert c.ci_low == pytest.approx(d.mean() - half, abs=0.003)
    assert c.ci_high == pytest.approx(d.mean() + half, abs=0.003)
    z = abs(d.mean()) / (d.std() / math.sqrt(n))
    p_normal = 2 * (1 - 0.5 * (1 + math.erf(z / math.sqrt(2))))
    assert c.p_value_bootstrap == pytest.approx(p_normal, abs=0.03)


def test_compare_from_saved_results_by_name(tmp_path, samples_system):
    a, b, refs = _pair(4)
    ra = assay.evaluate(a, refs, metrics=["sample_accuracy"], n_resamples=0)
    rb = assay.evaluate(b, refs, metrics=["sample_accuracy"], n_resamples=0)
    ra.save(tmp_path / "a.json")
    rb.save(tmp_path / "b.json")
    live = assay.compare(ra, rb, metric="sample_accuracy", n_resamples=500, seed=3)
    saved = assay.compare(load_results(tmp_path / "a.json"), load_results(tmp_path / "b.json"),
                          metric="sample_accuracy", n_resamples=500, seed=3)
    assert live == saved
    other = assay.compare(ra, rb, metric="sample_f1", n_resamples=100)  # any metric, from the predictions
    assert other.score_name == "f1"


def test_compare_rejects_unpaired_results():
    ra = assay.evaluate([1, 0], [[1], [1]], metrics=[SampleAccuracy()], n_resamples=0)
    rb = assay.evaluate([1, 0], [[1], [0]], metrics=[SampleAccuracy()], n_resamples=0)
    with pytest.raises(InvalidParameterError, match="different references"):
        assay.compare(ra, rb)
    rc = assay.evaluate([1], [[1]], metrics=[SampleAccuracy()], n_resamples=0)
    with pytest.raises(InvalidParameterError, match="same instances"):
        assay.compare(ra, rc)


def test_seed_none_is_recorded_and_reproduces():
    a, b, refs = _pair(3)
    ra = assay.evaluate(a, refs, metrics=[SampleAccuracy()], n_resamples=0)
    rb = assay.evaluate(b, refs, metrics=[SampleAccuracy()], n_resamples=0)
    c = assay.compare(ra, rb, n_resamples=300, seed=None)
    assert isinstance(c.seed, int)
    assert assay.compare(ra, rb, n_resamples=300, seed=c.seed) == c
    assert "p-value" in str(c) and c.to_dict()["seed"] == c.seed
