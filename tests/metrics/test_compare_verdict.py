"""``assay.compare`` names a better system only when the interval excludes zero (issue 10)."""

from __future__ import annotations

import json

import pytest
from assay_metric_samples import SampleAbsError, SampleAccuracy

import assay


def _results(a_hits, b_hits, metric=SampleAccuracy):
    refs = [[1]] * len(a_hits)
    ra = assay.evaluate([1 if h else 0 for h in a_hits], refs, metrics=[metric()], n_resamples=0)
    rb = assay.evaluate([1 if h else 0 for h in b_hits], refs, metrics=[metric()], n_resamples=0)
    return ra, rb


def test_a_difference_whose_interval_spans_zero_is_no_significant_difference():
    # b right on 2 instances where a is wrong, a right on 1 where b is wrong, 17 ties: delta = 1/20.
    # A resample draws the a-favouring instance at least as often as the two b-favouring ones with
    # probability about 0.3, so the 2.5th percentile of delta is <= 0: the interval contains 0.
    a = [0, 0, 1] + [1] * 17
    b = [1, 1, 0] + [1] * 17
    ra, rb = _results(a, b)
    c = assay.compare(ra, rb, n_resamples=2000, seed=0)
    assert c.difference == pytest.approx(1 / 20)
    assert c.ci_low <= 0 <= c.ci_high
    assert not c.significant and c.better is None
    assert "no significant difference" in c.verdict
    text = str(c)
    assert "is better" not in text and "no significant difference on accuracy at the 95% level" in text
    # with 3 discordant instances, every sign flip gives |delta_r| in {1/20, 3/20} >= 1/20: p = 1 exactly
    assert c.p_value_randomization == 1.0
    # the headline p-value is the interval's: not below 0.05, since the interval contains 0
    assert c.p_value == c.p_value_percentile and 0.05 <= c.p_value <= 1


@pytest.mark.parametrize("metric,better", [(SampleAccuracy, "b"), (SampleAbsError, "a")])
def test_an_interval_excluding_zero_names_the_better_system(metric, better):
    # b differs from a on every one of 30 instances in the same direction: every resample has delta = +1
    a, b = [0] * 30, [1] * 30
    if metric is SampleAbsError:
        # abs error of prediction vs reference 1.0: a predicts 1.0 (error 0), b predicts 0.0 (error 1):
        # b's error is higher by 1 everywhere and lower is better, so a is better
        refs = [[1.0]] * 30
        ra = assay.evaluate([1.0] * 30, refs, metrics=[metric()], n_resamples=0)
        rb = assay.evaluate([0.0] * 30, refs, metrics=[metric()], n_resamples=0)
    else:
        ra, rb = _results(a, b, metric)
    c = assay.compare(ra, rb, n_resamples=500, seed=1)
    assert c.ci_low == c.ci_high == pytest.approx(1.0)
    assert c.p_value == 0.0  # every resampled difference is +1: every interval excludes 0
    assert c.verdict.endswith("excludes 0; every resampled difference is above 0, p = 0 < 0.05)")
    assert c.significant and c.better == better
    assert c.verdict.startswith(f"{better} is better on ") and "excludes 0" in c.verdict
    assert c.verdict in str(c) and c.summary() == str(c)


def test_to_dict_carries_the_headline_p_value_and_the_verdict():
    ra, rb = _results([0, 0, 1] + [1] * 17, [1, 1, 0] + [1] * 17)
    d = assay.compare(ra, rb, n_resamples=200, seed=0).to_dict()
    assert d["p_value"] == d["p_value_percentile"] and d["p_value"] >= 0.05
    assert d["better"] is None and d["significant"] is False and "no significant difference" in d["verdict"]
    json.dumps(d)


def test_cli_prints_the_verdict(tmp_path, samples_system, capsys):
    from assay.cli import main

    (tmp_path / "a.jsonl").write_text("0\n0\n1\n" + "1\n" * 17)
    (tmp_path / "b.jsonl").write_text("1\n1\n0\n" + "1\n" * 17)
    (tmp_path / "refs.jsonl").write_text("[1]\n" * 20)
    for name in ("a", "b"):
        assert main(["evaluate", "-m", "sample_accuracy", "-p", str(tmp_path / f"{name}.jsonl"),
                     "-r", str(tmp_path / "refs.jsonl"), "--n-resamples", "0",
                     "-o", str(tmp_path / f"{name.upper()}.json")]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "A.json"), str(tmp_path / "B.json"), "--n-resamples", "300"]) == 0
    out = capsys.readouterr().out
    # before: "b is better on accuracy" although the interval spans 0 and p = 1
    assert "no significant difference" in out and "is better" not in out
