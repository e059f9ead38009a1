"""Demo section ``uncertainty``: score uncertainty estimators on generated model outputs.

The data imitates a question-answering model: each example has token log-probabilities
(whose confidence is related to correctness), top-candidate log-probabilities, sampled
answers with their token log-probabilities, a similarity matrix of the samples, claim
spans with claim labels, ensemble probabilities, and a correctness label. Nothing runs a
model; everything comes from a seeded generator, so the demo is deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["generate_records", "run"]

_WORDS = ["paris", "london", "rome", "berlin", "madrid", "vienna", "oslo", "lisbon"]


def generate_records(n: int = 400, *, seed: int = 0, n_samples: int = 5, n_members: int = 5,
                     n_classes: int = 4) -> list[dict[str, Any]]:
    """``n`` stored-output records following the schema of :mod:`assay.uncertainty.inputs`."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n):
        difficulty = rng.random()
        correct = int(rng.random() > difficulty)
        t = int(rng.integers(2, 8))
        sharp = 3.0 * (1.0 - difficulty) + 0.3
        top = []
        log_probs = []
        for _ in range(t):
            logits = rng.normal(0.0, 1.0, 5)
            logits[0] += sharp * 2
            lp = logits - np.log(np.exp(logits).sum())
            top.append(sorted(lp.tolist(), reverse=True))
            log_probs.append(float(lp.max()))
        answer = _WORDS[i % len(_WORDS)]
        k_distinct = 1 + int(rng.binomial(n_samples - 1, difficulty))
        options = [answer] + [w for w in _WORDS if w != answer][: k_distinct - 1]
        samples = [options[int(rng.integers(0, k_distinct))] for _ in range(n_samples)]
        sample_lp = [[float(min(-1e-3, rng.normal(-0.4 - 2 * difficulty, 0.2))) for _ in range(int(rng.integers(1, 4)))]
                     for _ in samples]
        sim = [[1.0 if a == b else 0.1 for b in samples] for a in samples]
        spans, claim_correct = [], []
        start = 0
        while start < t:
            end = min(t, start + int(rng.integers(1, 3)))
            spans.append([start, end])
            p_span = float(np.exp(sum(log_probs[start:end])))
            claim_correct.append(int(rng.random() < p_span))
            start = end
        label = int(rng.integers(0, n_classes))
        members = []
        for _ in range(n_members):
            logits = rng.normal(0.0, 1.0 + 2 * difficulty, n_classes)
            logits[label if correct else (label + 1) % n_classes] += 3.0 * (1.0 - difficulty)
            p = np.exp(logits - logits.max())
            members.append((p / p.sum()).tolist())
        records.append({
            "id": f"q{i}", "answer": answer if correct else "unknown", "reference": answer, "correct": correct,
            "quality": float(np.clip(correct * 0.7 + (1 - difficulty) * 0.3 + rng.normal(0, 0.05), 0, 1)),
            "log_probs": log_probs, "top_logprobs": top, "sample_texts": samples, "sample_log_probs": sample_lp,
            "similarity_matrix": sim, "claim_spans": spans, "claim_correct": claim_correct,
            "ensemble_probs": members, "label": label,
        })
    return records


def run(out_dir: Path) -> None:
    from assay_uncertainty.manager import UEManager

    out_dir.mkdir(parents=True, exist_ok=True)
    records = generate_records(400, seed=7)
    data_path = out_dir / "outputs.jsonl"
    data_path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    print(f"Generated {len(records)} stored model outputs in {data_path}")
    man = UEManager(
        data_path,
        estimators=["msp", "perplexity", "mean_token_entropy", "max_token_entropy", "mc_sequence_entropy",
                    "lexical_similarity", "num_distinct_answers", "eigval_laplacian", "predictive_entropy",
                    "mutual_information", "disagreement", "claim_probability"],
        gen_metrics=["accuracy", "claim_accuracy"],
        ue_metrics=["prr", "prr[max_rejection=0.5]", "roc_auc", "aurc", "e_aurc", "rcc_auc"],
    )
    man()
    print("\nSequence level, quality = accuracy (higher PRR / ROC-AUC and lower AURC are better):\n")
    print(man.table(level="sequence", gen_metric="accuracy"))
    print("\nClaim level, quality = claim_accuracy:\n")
    print(man.table(level="claim"))
    import numpy as np

    from assay import load_metric

    probs = np.array([r["ensemble_probs"] for r in records])  # (B, N members, C)
    labels = np.array([r["label"] for r in records])
    ece = load_metric("ece[n_bins=10]").update(probs.mean(axis=1), labels).compute_scores()["ece"]
    dis = load_metric("disagreement").update(probs).compute_scores()["disagreement"]
    mi = load_metric("mutual_information").update(probs).compute_scores()["mutual_information"]
    print(f"\nEnsemble of {probs.shape[1]}: ECE of the mean prediction {ece:.4f} (10 bins), "
          f"mean disagreement {dis:.4f}, mean mutual information {mi:.4f}")
    saved = man.save(out_dir / "run")
    print(f"\nSaved the manager (JSON + .npz, no pickle) in {saved}")
    from assay_uncertainty.manager import UEManager as _M

    again = _M.load(saved).rescore(["augrc", "spearman"])
    best = max((k for k in again if k[3] == "spearman"), key=lambda k: again[k])
    print(f"Rescored the saved estimations: best Spearman {again[best]:.3f} for {best[1]} ({best[2]})")
