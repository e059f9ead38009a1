"""Wrote tests/data/ue_save_before_move with the code of main before the move of issue 23 (kept for the record).

Run: python make_ue_save_before_move.py OUT_DIR. Do not regenerate the committed save: it stands for a
save written by the old core UEManager (assay.uncertainty.manager), which the moved one must still load.
"""
import sys
from pathlib import Path

from assay.uncertainty import UEManager

RECORDS = [
    {"id": "a", "answer": "x", "log_probs": [-0.1, -0.2], "correct": 1, "claim_spans": [[0, 1], [1, 2]],
     "claim_correct": [1, 0], "top_logprobs": [[-0.1, -3.0], [-0.2]]},
    {"id": "b", "answer": "y", "log_probs": [-1.0], "correct": 0, "claim_spans": [[0, 1]], "claim_correct": [0],
     "top_logprobs": [[-1.0, -1.5, -2.0]]},
    {"id": "c", "answer": "z", "log_probs": [-0.5, -0.5, -0.5], "correct": 1, "claim_spans": [[0, 3]],
     "claim_correct": [1], "top_logprobs": [[-0.5], [-0.6, -0.9], [-0.5]]},
    {"id": "d", "answer": "w", "log_probs": [-2.0, -0.3], "correct": 0, "claim_spans": [[0, 2]],
     "claim_correct": [0], "top_logprobs": [[-2.0, -0.2], [-0.3, -1.4]]},
    {"id": "e", "answer": "v", "log_probs": [-0.05], "correct": 1, "claim_spans": [[0, 1]],
     "claim_correct": [1], "top_logprobs": [[-0.05, -3.1]]},
]
RECORDS += [dict(r, id=r["id"] + "2", log_probs=[x * 1.3 for x in r["log_probs"]]) for r in RECORDS]
man = UEManager(RECORDS, estimators=["msp", "perplexity", "claim_probability"],
                gen_metrics=["accuracy", "claim_accuracy"], ue_metrics=["prr", "roc_auc"],
                n_resamples=200, seed=7)
man()
man.save(Path(sys.argv[1]))
print(man.metrics)
print(man.intervals)
