"""Module-level evaluator and metrics for the interval tests (picklable by reference; Spark ships this file)."""

from __future__ import annotations

import math

import numpy as np

from assay import EvaluatorBase
from assay.metrics import Metric, divide


class ScoreEvaluator(EvaluatorBase):
    """Items ``(score, label)``: tally (score > 0.5 == label, 1); metric instance (score, [label])."""

    def sentence_evaluator(self, sent, w_vector):
        score, label = sent
        return int((score > 0.5) == bool(label)), 1

    def metric_inputs(self, sent, w_vector):
        score, label = sent
        return float(score), [float(label)]


class FloatMAE(Metric):
    """Mean |score - label|: additive with float statistics (sum |e|, count), vectorized."""

    name = "float_mae"
    main_score = "mae"
    higher_is_better = False
    additive = True
    vectorized = True
    n_stats = 2

    def map(self, prediction, references, task_data=None):
        return [abs(prediction - references[0]), 1.0]

    def reduce(self, totals):
        return {"mae": divide(totals[..., 0], totals[..., 1])}


class PairAUC(Metric):
    """ROC AUC of the scores against the labels (ties 1/2): gathered (not additive)."""

    name = "pair_auc"
    main_score = "auc"
    per_instance = False

    def map(self, prediction, references, task_data=None):
        return (prediction, references[0])

    def reduce(self, rows):
        rows = np.asarray(rows, dtype=float).reshape(-1, 2)
        pos, neg = rows[rows[:, 1] == 1, 0], rows[rows[:, 1] == 0, 0]
        if len(pos) == 0 or len(neg) == 0:
            return {"auc": math.nan}
        wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
        return {"auc": wins / (len(pos) * len(neg))}


def make_items(n, seed=0):
    """``n`` items ``(score, label)``: labels Bernoulli(0.4), scores noisy around the label."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.4).astype(int)
    scores = np.clip(0.35 + 0.3 * labels + rng.normal(0, 0.2, n), 0, 1)
    return [(float(s), int(y)) for s, y in zip(scores, labels)]
