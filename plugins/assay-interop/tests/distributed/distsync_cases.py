"""The data of the two-process ``sync`` tests, shared by the worker script and the tests.

Each case: a catalog name, the whole data, the split point (rank 0 takes ``[:split]``,
rank 1 the rest) and how each rank batches its updates.
"""

from __future__ import annotations

import numpy as np


def cases() -> dict[str, dict]:
    rng = np.random.default_rng(20261123)
    labels = rng.integers(0, 4, 61).tolist()
    guesses = [y if rng.random() < 0.6 else int(rng.integers(0, 4)) for y in labels]
    refs = [[y] for y in labels]
    scores = rng.random(73).tolist()
    binary = [[int(s + rng.normal(0, 0.3) > 0.5)] for s in scores]
    x = rng.normal(size=45).tolist()
    y = [[v + float(rng.normal(0, 1.0))] for v in x]
    probs = rng.dirichlet(np.ones(3) * 0.7, size=80)
    cls = [int(rng.choice(3, p=p)) for p in probs]
    dyadic = (rng.integers(0, 65, 50) / 64).tolist()  # sums of multiples of 1/64 are exact
    dy_labels = [int(rng.random() < p) for p in dyadic]
    return {
        # additive, integer counts: exact in any order and any batching
        "accuracy": {"metric": "accuracy", "predictions": guesses, "references": refs, "split": 23, "batch": 5},
        # gathered pairs (macro average over labels)
        "f1_macro": {"metric": "f1[average=macro]", "predictions": guesses, "references": refs, "split": 40,
                     "batch": 7},
        # gathered scores, uneven halves and several batches per rank
        "roc_auc": {"metric": "roc_auc", "predictions": scores, "references": binary, "split": 30, "batch": 8},
        "spearman": {"metric": "spearman", "predictions": x, "references": y, "split": 11, "batch": 4},
        # additive floating-point sums: one update per rank
        "ece": {"metric": "ece[n_bins=10]", "predictions": probs.tolist(), "references": cls, "split": 33,
                "batch": None},
        # exact float sums: equal to one update over everything, too
        "ece_dyadic": {"metric": "ece[n_bins=8]", "predictions": dyadic, "references": dy_labels, "split": 21,
                       "batch": None},
        # rank 1 has no data at all
        "roc_auc_rank1_empty": {"metric": "roc_auc", "predictions": scores, "references": binary, "split": 73,
                                "batch": 20},
    }


def part(case: dict, rank: int) -> tuple[list, list]:
    """Rank ``rank``'s part of a case's data (rank 0 the first ``split`` instances)."""
    s = slice(0, case["split"]) if rank == 0 else slice(case["split"], None)
    return case["predictions"][s], case["references"][s]


def batches(case: dict, predictions: list, references: list) -> list[tuple[list, list]]:
    """The update batches of one rank's part (one batch when ``batch`` is None)."""
    size = case["batch"] or max(len(predictions), 1)
    return [(predictions[i:i + size], references[i:i + size]) for i in range(0, len(predictions), size)]


def encode(scores: dict) -> dict:
    """Scores as exact strings (``float.hex``), so that JSON keeps every bit."""
    return {k: (float(v).hex() if isinstance(v, float) else v) for k, v in scores.items()}
