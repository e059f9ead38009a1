"""The data of the two-process ``AssayTorchMetric`` test (``torchmetrics_worker.py`` and ``test_torchmetrics_sync.py``).

Each case: the assay metric (a registered name, or a UE metric name for ``load_ue_metric``), the
predictions and (unless the metric scores predictions alone) the references, as numpy arrays;
rank ``r`` of 2 gets the rows ``r::2`` (interleaved, so each rank's part differs from a prefix).
"""

from __future__ import annotations

import numpy as np

N = 301  # odd: the ranks get different numbers of rows


def cases() -> dict[str, dict]:
    rng = np.random.default_rng(24)
    y2 = rng.integers(0, 2, N)
    y3 = rng.integers(0, 3, N)
    probs3 = rng.dirichlet(np.ones(3), N)
    scores = rng.random(N) + 0.4 * y2
    ens = rng.dirichlet(np.ones(2), (N, 4))  # (B, N members, C)
    conf = probs3.max(-1)
    correct = (probs3.argmax(-1) == y3).astype(np.float64)
    return {
        "accuracy": {"metric": "accuracy", "preds": probs3.argmax(-1), "target": y3},
        "f1_macro": {"metric": "f1[average=macro]", "preds": probs3.argmax(-1), "target": y3},
        "roc_auc": {"metric": "roc_auc", "preds": scores, "target": y2},
        "ece": {"metric": "ece[n_bins=15]", "preds": probs3, "target": y3},
        "aurc": {"ue_metric": "aurc[convention=torch-uncertainty]", "preds": 1 - conf, "target": correct,
                 "probs": probs3, "labels": y3},
        "disagreement": {"metric": "disagreement", "preds": ens, "target": None},
    }


def part(values: np.ndarray | None, rank: int) -> np.ndarray | None:
    return None if values is None else values[rank::2]
