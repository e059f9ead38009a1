"""Module-level evaluators for the EvaluatorBase + metrics tests (picklable by reference)."""

from __future__ import annotations

from assay import EvaluatorBase


class NoInputsEvaluator(EvaluatorBase):
    """Token accuracy tally; no metric_inputs."""

    def sentence_evaluator(self, sent, w_vector):
        predicted, gold = sent
        return sum(p == g for p, g in zip(predicted, gold)), len(gold)


class ExactEvaluator(NoInputsEvaluator):
    """One metric instance per sentence: prediction = tokens right, reference = tokens in the gold."""

    def metric_inputs(self, sent, w_vector):
        predicted, gold = sent
        return float(sum(p == g for p, g in zip(predicted, gold))), [float(len(gold))]


def flaky_inputs(sent, w_vector):
    if sent[0] == [5, 6]:
        raise ValueError("no inputs for this one")
    return 0.0, [0.0]
