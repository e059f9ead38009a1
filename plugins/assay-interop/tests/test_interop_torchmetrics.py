"""torchmetrics classes as assay metrics: the library's own values, merge_state sharding, intervals, errors."""

from __future__ import annotations

import math
import pickle
import sys

import numpy as np
import pytest
import torch
import torchmetrics
import torchmetrics.functional.classification as FC
from torchmetrics.functional.text import char_error_rate

import assay
from assay.errors import (
    EvaluationError,
    InvalidParameterError,
    MissingDependencyError,
    UndefinedMetricWarning,
    UnknownNameError,
)

AP = "torchmetrics:MulticlassAveragePrecision[num_classes=5]"


def _probs(n=150, k=5, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return probs, y


def test_average_precision_equals_torchmetrics(system):
    probs, y = _probs()
    expected = FC.multiclass_average_precision(torch.from_numpy(probs), torch.from_numpy(y), num_classes=5).item()
    m = assay.load_metric(AP)
    assert m.main_score == "multiclass_average_precision" and m.higher_is_better is True
    assert m.update(list(probs), [[v] for v in y]).compute_scores()["score"] == expected
    res = assay.evaluate(list(probs), [[v] for v in y], metrics=[AP], n_resamples=100, seed=0)
    g = res.global_scores
    assert g["multiclass_average_precision"] == expected
    assert g["score_ci_low"] <= expected <= g["score_ci_high"]
    assert g["score_ci_low"] < g["score_ci_high"]


def test_resample_reruns_the_library_on_the_resampled_instances(system):
    probs, y = _probs(40)
    m = assay.load_metric(AP)
    rows = m.map_all(list(probs), [[v] for v in y])
    index = np.random.default_rng(5).integers(0, 40, 40)
    expected = FC.multiclass_average_precision(torch.from_numpy(probs[index]), torch.from_numpy(y[index]),
                                              num_classes=5).item()
    assert m.reduce(rows[index])["multiclass_average_precision"] == expected


@pytest.mark.parametrize("spec, exact", [
    (AP, True),                                                                # concatenated states
    ("torchmetrics:MulticlassAccuracy[num_classes=5, average=macro]", True),  # integer counts
    ("torchmetrics:MeanSquaredError", False),                                 # float sums
])
def test_sharded_merge_equals_one_pass(system, spec, exact):
    probs, y = _probs(90)
    preds = list(probs) if "Multiclass" in spec else probs[:, 0].tolist()
    refs = [[v] for v in y] if "Multiclass" in spec else probs[:, 1].tolist()
    whole = assay.load_metric(spec).update(preds, refs).compute_scores()
    template = assay.load_metric(spec)
    shards = [template.clone().update(preds[s:s + 30], refs[s:s + 30]) for s in (0, 30, 60)]
    shards = [pickle.loads(pickle.dumps(s)) for s in shards]  # as a process executor returns them
    merged = template.clone().merge(*shards).compute_scores()
    if exact:
        assert merged == whole
    else:
        assert merged["score"] == pytest.approx(whole["score"], rel=1e-12)
    assert template.state.n == 0 and template.clone().state.n == 0  # clones start empty
    with pytest.warns(UndefinedMetricWarning, match="no data"):
        assert math.isnan(template.compute_scores()["score"])


def test_merge_keeps_shard_order(system):
    m1 = assay.load_metric("torchmetrics:CatMetric").update([1.0, 2.0], [0, 0])
    m2 = assay.load_metric("torchmetrics:CatMetric").update([3.0], [0])
    joined = m1.merge(m2)._tm.compute()
    assert joined.tolist() == [1.0, 2.0, 3.0]


def test_text_metric_keeps_references(system):
    preds = ["the cat sat", "a dog barked loudly"]
    refs = [["the cat sat down"], ["a dog barked"]]
    expected = char_error_rate(preds, ["the cat sat down", "a dog barked"]).item()
    m = assay.load_metric("torchmetrics:CharErrorRate")
    assert m.higher_is_better is False
    assert m.update(preds, refs).compute_scores()["char_error_rate"] == pytest.approx(expected, rel=1e-12)


def test_package_qualified_and_dict_outputs(system):
    assert assay.load_metric("torchmetrics:classification.BinaryAccuracy").main_score == "binary_accuracy"
    probs, y = _probs(30, k=3)
    per_class = assay.load_metric("torchmetrics:MulticlassAccuracy[num_classes=3, average=none]")
    with pytest.raises(EvaluationError, match=r"shape \(3,\).*average"):
        per_class.update(list(probs), [[v] for v in y]).compute_scores()


def test_unknown_names_bad_options_and_inputs(system):
    with pytest.raises(UnknownNameError, match="Did you mean: MulticlassAccuracy"):
        assay.load_metric("torchmetrics:MulticlasAccuracy")
    with pytest.raises(InvalidParameterError, match=r"torchmetrics:MulticlassAccuracy\[num_classes=-1\].*num_classes"):
        assay.load_metric("torchmetrics:MulticlassAccuracy[num_classes=-1]")
    m = assay.load_metric("torchmetrics:MulticlassAccuracy[num_classes=3]")
    with pytest.raises(InvalidParameterError, match=r"torchmetrics:MulticlassAccuracy\[num_classes=3\].*inputs"):
        m.update([[0.1, 0.9]], [[5]])


def test_missing_library_hint(system, monkeypatch):
    monkeypatch.setitem(sys.modules, "torchmetrics", None)
    with pytest.raises(MissingDependencyError, match="pip install torchmetrics"):
        assay.load_metric(AP)


def test_plugin_import_is_light():
    import subprocess

    code = ("import sys, assay_interop.plugin; "
            "print(any(m in sys.modules for m in ('torch', 'torchmetrics', 'sklearn')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert torchmetrics.Metric  # the library itself is installed for the other tests


class _Classifier(assay.EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        return int(np.argmax(sent[0]) == sent[1]), 1

    def metric_inputs(self, sent, w_vector):
        return sent[0], [sent[1]]


def test_evaluator_base_shards_merge_with_merge_state(system):
    probs, y = _probs(120)
    items = list(zip(probs.tolist(), y.tolist()))
    expected = FC.multiclass_average_precision(torch.tensor(probs.tolist(), dtype=torch.float64),
                                               torch.from_numpy(y), num_classes=5).item()
    result = _Classifier().parallelEvaluate(assay.DataPool(items, num_shards=4), None, executor="threads",
                                            metrics=[AP])
    assert result.metrics["multiclass_average_precision"] == expected


@pytest.mark.slow
def test_compare_on_a_torchmetrics_metric(system):
    probs, y = _probs(100)
    better = 0.5 * probs + 0.5 * np.eye(5)[y]
    refs = [[v] for v in y]
    ra = assay.evaluate(list(probs), refs, metrics=[AP], n_resamples=0)
    rb = assay.evaluate(list(better), refs, metrics=[AP], n_resamples=0)
    c = assay.compare(ra, rb, metric=AP, n_resamples=100, seed=0)
    expected_b = FC.multiclass_average_precision(torch.from_numpy(better), torch.from_numpy(y), num_classes=5).item()
    assert c.score_b == expected_b
    assert c.ci_low <= c.difference <= c.ci_high and c.better == "b"
