"""The ``metrics`` demo section: runs end to end, and names the plugin when a metric is missing."""

from __future__ import annotations

import json

import pytest

from assay.demo import metrics as demo


def test_generated_data_is_deterministic_and_as_described():
    a, b, refs = demo.classification_data()
    assert (a, b, refs) == demo.classification_data()
    gold = [r[0] for r in refs]
    acc_a = sum(x == g for x, g in zip(a, gold)) / len(gold)
    acc_b = sum(x == g for x, g in zip(b, gold)) / len(gold)
    assert 0.69 < acc_a < 0.75 and 0.75 < acc_b < 0.81


def test_missing_metrics_name_their_plugin(tmp_path, assay_empty_system, capsys):
    demo.run(tmp_path, n_classification=30, n_translation=5)
    out = capsys.readouterr().out
    assert "metric 'accuracy' is not installed: install the assay-classic plugin" in out
    assert "metric 'bleu' is not installed" in out


def test_runs_with_the_classic_metrics(tmp_path, capsys):
    demo.run(tmp_path, n_classification=300, n_translation=40)
    out = capsys.readouterr().out
    assert "paired comparison, b against a" in out and "approximate randomization" in out
    saved = json.loads((tmp_path / "accuracy_a.json").read_text())
    a, _, refs = demo.classification_data(300)
    assert saved["global"]["accuracy"] == pytest.approx(sum(x == r[0] for x, r in zip(a, refs)) / len(a))
    assert saved["global"]["accuracy_ci_low"] < saved["global"]["accuracy"] < saved["global"]["accuracy_ci_high"]
