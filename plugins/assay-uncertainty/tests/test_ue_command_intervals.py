"""``assay ue``: intervals, marks of the estimators not significantly worse than the best, the flags."""

from __future__ import annotations

import json

import pytest

from assay.cli import main


def _files(tmp_path, n=30):
    # msp (-sum log p) puts every failure (ten tokens of p = e^-0.1: msp 1.0) above every success (one token,
    # msp 0.5): ROC-AUC 1; perplexity (-mean log p: 0.1 against 0.5) the reverse: ROC-AUC 0
    rows = [{"log_probs": [-0.5], "correct": 1} if i % 2 else {"log_probs": [-0.1] * 10, "correct": 0}
            for i in range(n)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text("data: d.jsonl\nestimators: [msp, perplexity]\ngen_metrics: [accuracy]\n"
                                     "ue_metrics: [roc_auc]\nsave_path: out\nplots: false\n")
    return tmp_path / "c.yaml"


def test_table_prints_intervals_and_marks_with_the_test_in_the_notes(tmp_path, capsys):
    assert main(["ue", str(_files(tmp_path)), "--n-resamples", "200", "--seed", "3",
                 "--confidence-level", "0.9"]) == 0
    out = capsys.readouterr().out
    table = (tmp_path / "out" / "table.md").read_text()
    assert "| msp | **1.0000 [1.0000, 1.0000]** |" in table
    assert "| perplexity | 0.0000 [0.0000, 0.0000] |" in table  # significantly worse: not bold
    assert "90% percentile bootstrap interval (200 resamples of the examples, seed 3)" in table
    assert "paired bootstrap of the difference to the best on shared resample indices, 200 resamples" in table
    assert "90% interval of the difference excludes 0" in table
    assert "| msp | **1.0000 [1.0000, 1.0000]** |" in out


def test_json_carries_intervals_marks_and_settings(tmp_path, capsys):
    assert main(["ue", str(_files(tmp_path)), "--n-resamples", "100", "--json", "-o", str(tmp_path / "o")]) == 0
    data = json.loads(capsys.readouterr().out)
    by_est = {s["estimator"]: s for s in data["scores"]}
    assert by_est["msp"]["not_worse_than_best"] is True and by_est["perplexity"]["not_worse_than_best"] is False
    assert (by_est["msp"]["ci_low"], by_est["msp"]["ci_high"]) == (1.0, 1.0)
    assert data["resampling"] == {"n_resamples": 100, "confidence_level": 0.95, "seed": 0,
                                  "interval": "percentile bootstrap", "test": data["resampling"]["test"]}
    assert "paired bootstrap" in data["resampling"]["test"]


def test_no_resamples_no_intervals_no_marks(tmp_path, capsys):
    assert main(["ue", str(_files(tmp_path)), "--n-resamples", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(s["ci_low"] is None and s["not_worse_than_best"] is None for s in data["scores"])
    table = (tmp_path / "out" / "table.md").read_text()
    assert "| msp | 1.0000 |" in table and "Bold" not in table and "[" not in table.split("Signature")[0]


@pytest.mark.parametrize("argv, flag", [
    (["--n-resamples", "-1"], "--n-resamples"),
    (["--n-resamples", "1.5"], "--n-resamples"),
    (["--confidence-level", "1"], "--confidence-level"),
    (["--confidence-level", "high"], "--confidence-level"),
    (["--seed", "-2"], "--seed"),
    (["--seed=x"], "--seed"),
])
def test_bad_resampling_flags_name_the_flag(tmp_path, capsys, argv, flag):
    with pytest.raises(SystemExit) as info:  # argparse's usage error: status 2, the error line first
        main(["ue", str(_files(tmp_path)), *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
