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


class MedianScore(Metric):
    """Median of the scores: gathered (not additive), cheap to re-reduce on every replicate."""

    name = "median_score"
    main_score = "median"
    per_instance = False
    needs_references = False

    def map(self, prediction, references=None, task_data=None):
        return float(prediction)

    def reduce(self, rows):
        rows = np.asarray(rows, dtype=float)
        return {"median": float(np.median(rows)) if len(rows) else math.nan}


class LabelEvaluator(EvaluatorBase):
    """Items ``(predicted label, gold label)``: tally (equal, 1); metric instance (predicted, [gold])."""

    def sentence_evaluator(self, sent, w_vector):
        return int(sent[0] == sent[1]), 1

    def metric_inputs(self, sent, w_vector):
        return sent[0], [sent[1]]


def make_label_items(n, labels=4, seed=0):
    """``n`` items ``(predicted, gold)`` over ``labels`` classes, about 60% correct."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, labels, n)
    pred = np.where(rng.random(n) < 0.6, gold, rng.integers(0, labels, n))
    return [(int(p), int(g)) for p, g in zip(pred, gold)]


def reference_totals(seed, n_resamples, rows, stream=0, block=4096, few=256):
    """The documented Poisson bootstrap totals of additive ``rows``, written out independently of assay.

    Per block of ``block`` positions: with at most ``few`` distinct rows, ``N_v ~ Poisson(count_v)`` per
    distinct row (ordered by the reversed row tuple, i.e. last column first), drawn from
    ``Philox(SeedSequence([seed, stream, block, 1]))``; otherwise per-position weights ``Poisson(1)`` from
    ``Philox(SeedSequence([seed, stream, block]))`` uniforms (row-major ``(R, block)``) inverted through the
    Poisson(1) CDF (scipy's).
    """
    from scipy.stats import poisson

    cdf = poisson(1.0).cdf(np.arange(30))
    rows = np.asarray(rows, dtype=float)
    rows = rows.reshape(len(rows), -1) if rows.ndim != 2 else rows
    out = np.zeros((n_resamples, rows.shape[1]))
    for b in range(-(-len(rows) // block)):
        part = rows[b * block:(b + 1) * block]
        distinct = sorted({tuple(r) for r in part.tolist()}, key=lambda t: t[::-1])
        if len(distinct) <= few:
            counts = [sum(tuple(r) == d for r in part.tolist()) for d in distinct]
            draws = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, stream, b, 1]))).poisson(
                np.array(counts, dtype=float), size=(n_resamples, len(counts)))
            out += draws @ np.array(distinct).reshape(len(distinct), -1)
        else:
            u = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, stream, b]))).random(
                (n_resamples, block))
            out += np.searchsorted(cdf, u, side="right")[:, :len(part)] @ part
    return out
