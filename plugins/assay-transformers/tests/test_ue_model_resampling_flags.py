"""`assay ue` with a model: section honours --n-resamples, --confidence-level and --seed (issue 27, item 17).

The references are chosen from a first greedy run so that half the answers are right: ROC-AUC
and PRR are then defined, and their point values are checked against scikit-learn on the saved
estimations; the intervals must exist for every score, hold the point value, and narrow as
the level drops (24 prompts, so that no resample is undefined).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from assay.cli import main
from assay.uncertainty import UEManager

_WORDS = ["the", "capital", "of", "france", "is", "what", "who", "river", "city", "big", "small", "red", "blue"]
# 24 prompts: with half of the answers right, a resample holds one class only with probability 2 * 2**-24
QUESTIONS = [" ".join(_WORDS[(3 * i + k) % len(_WORDS)] for k in range(1 + i % 4)) for i in range(24)]


def _config(tmp_path, model_dir, rows, **extra):
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = {"model": {"path": str(model_dir), "max_new_tokens": 3, "samples_n": 2, "batch_size": 4},
           "dataset": {"path": "qa.jsonl", "text_column": "question", "label_column": "answers"},
           "estimators": ["msp", "perplexity"], "gen_metrics": ["accuracy"], "ue_metrics": ["roc_auc"],
           "save_path": "out", "plots": False, **extra}
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps(cfg))
    return path


@pytest.fixture(scope="module")
def half_right(model_dirs, tmp_path_factory):
    """Rows whose references make every other greedy answer right (greedy answers do not depend on the seed)."""
    tmp = tmp_path_factory.mktemp("first-run")
    rows = [{"question": q, "answers": ["nothing at all"]} for q in QUESTIONS]
    assert main(["ue", str(_config(tmp, model_dirs["causal"], rows)), "--n-resamples", "0"]) == 0
    answers = UEManager.load(tmp / "out").stats["answer"]
    return [{"question": q, "answers": [a if i % 2 == 0 else "nothing at all"]}
            for i, (q, a) in enumerate(zip(QUESTIONS, answers))]


def test_model_run_saves_the_resampling_flags_and_intervals(model_dirs, half_right, tmp_path, capsys):
    path = _config(tmp_path, model_dirs["causal"], half_right, seed=[4])
    assert main(["ue", str(path), "--n-resamples", "300", "--confidence-level", "0.8", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    man = UEManager.load(tmp_path / "out" / "seed-4")
    assert (man.n_resamples, man.confidence_level, man.seed) == (300, 0.8, 4)
    assert set(man.intervals) == set(man.metrics) and len(man.metrics) == 2
    correct = np.array([1.0 if i % 2 == 0 else 0.0 for i in range(len(QUESTIONS))])
    assert man.gen_metrics[("sequence", "accuracy")].tolist() == correct.tolist()
    for est in ("msp", "perplexity"):
        u = np.asarray(man.estimations[("sequence", est)], dtype=float)
        expected = roc_auc_score(1 - correct, u)  # errors are the positives: higher uncertainty should flag them
        key = ("sequence", est, "accuracy", "roc_auc")
        assert man.metrics[key] == pytest.approx(expected, abs=1e-12)
        low, high = man.intervals[key]
        assert low <= man.metrics[key] <= high and low < high
    run = report["runs"][0]
    assert run["seed"] == 4 and run["resampling"]["n_resamples"] == 300
    assert run["resampling"]["confidence_level"] == 0.8
    assert all(s["ci_low"] is not None for s in run["scores"])
    table = (tmp_path / "out" / "seed-4" / "table.md").read_text()
    assert "80% percentile bootstrap interval (300 resamples of the examples, seed 4)" in table


def test_the_level_changes_the_interval(model_dirs, half_right, tmp_path):
    widths = {}
    for level in ("0.5", "0.99"):
        folder = tmp_path / level
        folder.mkdir()
        assert main(["ue", str(_config(folder, model_dirs["causal"], half_right, seed=2)), "--n-resamples", "400",
                     "--confidence-level", level]) == 0
        man = UEManager.load(folder / "out" / "seed-2")
        low, high = man.intervals[("sequence", "msp", "accuracy", "roc_auc")]
        widths[level] = high - low
    assert widths["0.5"] < widths["0.99"]


def test_seed_flag_seeds_a_config_without_seed_and_clashes_with_one(model_dirs, half_right, tmp_path, capsys):
    assert main(["ue", str(_config(tmp_path, model_dirs["causal"], half_right)), "--n-resamples", "50",
                 "--seed", "7"]) == 0
    man = UEManager.load(tmp_path / "out")
    assert (man.seed, man.n_resamples) == (7, 50)
    capsys.readouterr()
    assert main(["ue", str(_config(tmp_path, model_dirs["causal"], half_right, seed=[1, 2])), "--seed", "7"]) == 2
    err = capsys.readouterr().err
    assert "--seed 7" in err and "seed: [1, 2]" in err, err
