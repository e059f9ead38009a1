"""A UEManager save written by the core's manager before it moved into this plugin (issue 23) still loads.

``data/ue_save_before_move`` was written by ``data/make_ue_save_before_move.py`` with the
code of main before the move (``assay.uncertainty.manager``). The expected values come
from the records of that script, recomputed here by hand (MSP = -sum log p, perplexity =
-mean log p) and with scikit-learn's ``roc_auc_score``, not from the manager.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from assay_uncertainty.manager import UEManager

SAVE = Path(__file__).parent / "data" / "ue_save_before_move"

#: the log-probabilities and labels of the script's records: five records, then the same five with
#: every log-probability times 1.3
LOG_PROBS = [[-0.1, -0.2], [-1.0], [-0.5, -0.5, -0.5], [-2.0, -0.3], [-0.05]]
LOG_PROBS = LOG_PROBS + [[x * 1.3 for x in lp] for lp in LOG_PROBS]
CORRECT = [1, 0, 1, 0, 1] * 2


def test_the_save_is_the_format_written_before_the_move():
    doc = json.loads((SAVE / "manager.json").read_text(encoding="utf-8"))
    assert (doc["format"], doc["version"]) == ("assay.uncertainty.UEManager", 2)


def test_a_save_written_before_the_move_loads_with_its_values():
    man = UEManager.load(SAVE)
    assert man.n_examples == 10
    assert (man.estimator_names, man.gen_metric_names, man.ue_metric_names) == (
        ["msp", "perplexity", "claim_probability"], ["accuracy", "claim_accuracy"], ["prr", "roc_auc"])
    msp = np.array([-sum(lp) for lp in LOG_PROBS])
    ppl = np.array([-np.mean(lp) for lp in LOG_PROBS])
    np.testing.assert_allclose(man.estimations[("sequence", "msp")], msp, rtol=1e-12)
    np.testing.assert_allclose(man.estimations[("sequence", "perplexity")], ppl, rtol=1e-12)
    np.testing.assert_array_equal(man.gen_metrics[("sequence", "accuracy")], CORRECT)
    failure = 1 - np.array(CORRECT)
    for est, u in (("msp", msp), ("perplexity", ppl)):
        assert man.metrics[("sequence", est, "accuracy", "roc_auc")] == pytest.approx(roc_auc_score(failure, u))
    # the resampling settings and the intervals written then come back
    assert (man.n_resamples, man.confidence_level, man.seed) == (200, 0.95, 7)
    low, high = man.intervals[("claim", "claim_probability", "claim_accuracy", "roc_auc")]
    assert low <= man.metrics[("claim", "claim_probability", "claim_accuracy", "roc_auc")] <= high
    assert str(man.signature).startswith("estimators:msp,perplexity,claim_probability|")


def test_a_loaded_old_save_rescores_and_saves_again(tmp_path):
    man = UEManager.load(SAVE)
    man.rescore(["pr_auc"])
    msp = man.estimations[("sequence", "msp")]
    expected = average_precision_score(1 - np.array(CORRECT), msp)
    assert man.metrics[("sequence", "msp", "accuracy", "pr_auc")] == pytest.approx(expected)
    man.save(tmp_path / "again")
    back = UEManager.load(tmp_path / "again")
    assert back.metrics.keys() == man.metrics.keys()
    assert back.metrics[("sequence", "msp", "accuracy", "pr_auc")] == pytest.approx(expected)
