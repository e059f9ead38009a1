"""scikit-learn functions as assay metrics: the library's own values, intervals, compare, errors, CLI."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from sklearn import metrics as skm

import assay
from assay.errors import InvalidParameterError, MissingDependencyError, UnknownNameError


def _data(n=120, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    a = np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n))
    b = np.where(rng.random(n) < 0.8, y, rng.integers(0, k, n))
    return y.tolist(), a.tolist(), b.tolist()


@pytest.mark.parametrize("spec, function, options", [
    ("sklearn:balanced_accuracy_score", skm.balanced_accuracy_score, {}),
    ("sklearn:f1_score[average=macro]", skm.f1_score, {"average": "macro"}),
    ("sklearn:cohen_kappa_score[weights=quadratic]", skm.cohen_kappa_score, {"weights": "quadratic"}),
    ("sklearn:matthews_corrcoef", skm.matthews_corrcoef, {}),
])
def test_values_equal_sklearn(system, spec, function, options):
    y, a, _ = _data()
    expected = function(y, a, **options)
    m = assay.load_metric(spec)
    assert m.update(a, [[v] for v in y]).compute_scores()["score"] == expected
    res = assay.evaluate(a, [[v] for v in y], metrics=[spec], n_resamples=200, seed=3)
    g = res.global_scores
    assert g["score"] == expected
    assert g["score_ci_low"] <= expected <= g["score_ci_high"]
    assert g["score_ci_low"] < g["score_ci_high"]


def test_probabilities_and_lower_is_better(system):
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(4), 80)
    y = rng.integers(0, 4, 80)
    m = assay.load_metric("sklearn:log_loss[labels=[0, 1, 2, 3]]")
    assert m.higher_is_better is False
    assert m.update(list(probs), [[v] for v in y]).compute_scores()["log_loss"] == pytest.approx(
        skm.log_loss(y, probs, labels=[0, 1, 2, 3]), rel=1e-12)
    assert assay.load_metric("sklearn:roc_auc_score").higher_is_better is True


def test_shards_merge_to_one_pass(system):
    y, a, _ = _data(90)
    refs = [[v] for v in y]
    whole = assay.load_metric("sklearn:f1_score[average=weighted]").update(a, refs).compute_scores()
    parts = [assay.load_metric("sklearn:f1_score[average=weighted]").update(a[s:s + 30], refs[s:s + 30])
             for s in (0, 30, 60)]
    assert parts[0].merge(*parts[1:]).compute_scores() == whole
    assert whole["score"] == skm.f1_score(y, a, average="weighted")


@pytest.mark.slow
def test_compare_on_an_sklearn_metric(system):
    y, a, b = _data(150)
    refs = [[v] for v in y]
    spec = "sklearn:balanced_accuracy_score"
    ra = assay.evaluate(a, refs, metrics=[spec], n_resamples=0)
    rb = assay.evaluate(b, refs, metrics=[spec], n_resamples=0)
    c = assay.compare(ra, rb, metric=spec, n_resamples=300, seed=0)
    sa, sb = skm.balanced_accuracy_score(y, a), skm.balanced_accuracy_score(y, b)
    assert (c.score_a, c.score_b) == (sa, sb)
    assert c.difference == pytest.approx(sb - sa)
    assert c.ci_low <= c.difference <= c.ci_high
    # the verdict's p-value inverts the interval (0 when every resampled difference is above 0); randomization's
    # carries the +1 correction, so it is never 0
    assert 0 <= c.p_value < 0.05 and 0 < c.p_value_randomization <= 1
    assert c.better == "b"  # b is right 80 % of the time, a 60 %: a clear difference on 150 instances


def test_unknown_names_and_options(system):
    with pytest.raises(UnknownNameError, match="balanced_accuracy_score"):
        assay.load_metric("sklearn:balanced_acuracy_score")
    with pytest.raises(InvalidParameterError, match="confusion_matrix cannot be an assay metric"):
        assay.load_metric("sklearn:confusion_matrix")
    with pytest.raises(InvalidParameterError, match=r"Unknown option 'averag'.*Did you mean: average"):
        assay.load_metric("sklearn:f1_score[averag=macro]")
    m = assay.load_metric("sklearn:f1_score[average=mean]")
    with pytest.raises(InvalidParameterError, match=r"sklearn:f1_score\[average=mean\].*'average' parameter"):
        m.update([0, 1], [[0], [1]]).compute_scores()


def test_missing_library_hint(system, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.metrics", None)
    with pytest.raises(MissingDependencyError, match="pip install scikit-learn"):
        assay.load_metric("sklearn:balanced_accuracy_score")


def test_cli_evaluate(system, tmp_path, capsys):
    from assay.cli import main

    y, a, _ = _data(60)
    (tmp_path / "p.jsonl").write_text("".join(f"{v}\n" for v in a))
    (tmp_path / "r.jsonl").write_text("".join(f"{v}\n" for v in y))
    rc = main(["evaluate", "-m", "sklearn:balanced_accuracy_score", "-p", str(tmp_path / "p.jsonl"),
               "-r", str(tmp_path / "r.jsonl"), "--n-resamples", "100", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["global"]["balanced_accuracy_score"] == skm.balanced_accuracy_score(y, a)
    assert out["global"]["score_ci_low"] <= out["global"]["score"] <= out["global"]["score_ci_high"]
