"""Plugin objects of every kind, good and broken on purpose, for the conformance checks (module level: they pickle)."""

from __future__ import annotations

import json

import numpy as np

from assay import DataFormat, hookimpl
from assay.executors.base import Executor
from assay.uncertainty import Estimator, StatCalculator, UEMetric


# --------------------------------------------------------------------------- UE metrics
class FailureAuc(UEMetric):
    """Share of (failure, success) pairs where the failure is more uncertain (ties count 1/2); higher is better."""

    name = "failure_auc"
    higher_is_better = True

    def _score(self, u, q):
        fail, ok = u[q == 0], u[q == 1]
        if not len(fail) or not len(ok):
            return float("nan")
        diff = fail[:, None] - ok[None, :]
        return float(((diff > 0) + 0.5 * (diff == 0)).mean())


class InvertedAuc(FailureAuc):
    """Broken on purpose: reads uncertainty as confidence, so a perfect ranking scores worst."""

    name = "inverted_auc"

    def _score(self, u, q):
        return super()._score(-u, q)


class FirstTieWins(UEMetric):
    """Broken on purpose: the quality of the first example with the lowest uncertainty (ties by position)."""

    name = "first_tie_wins"

    def _score(self, u, q):
        return float(q[int(np.argmin(u))])


# --------------------------------------------------------------------------- estimators and statistics
class MaxProb(Estimator):
    name, level, dependencies = "max_prob", "sequence", ("probs",)
    examples = [{"stats": {"probs": [np.array([0.9, 0.1]), np.array([0.5, 0.5])]}}]

    def __call__(self, stats):
        return np.array([1 - float(np.max(p)) for p in stats["probs"]])


class NeedsEntropy(Estimator):
    name, level, dependencies = "needs_entropy", "sequence", ("entropy",)

    def __call__(self, stats):
        return np.asarray(stats["entropy"], dtype=float)


class EntropyOfEntropy(StatCalculator):
    """Broken on purpose: produces 'entropy' from 'entropy' (a cycle)."""

    name = "entropy_cycle"
    stats = ("entropy",)
    dependencies = ("entropy",)

    def __call__(self, stats):
        return {"entropy": stats["entropy"]}


class BadLevel(Estimator):
    name, level, dependencies = "bad_level", "sequence", ("probs",)

    def __init__(self):
        super().__init__()
        self.level = "paragraph"  # not a level assay knows


# --------------------------------------------------------------------------- sentence evaluators
class TokenMatch:
    """Tokens equal to the gold token, out of the gold tokens."""

    examples = [{"items": [{"gold": ["a", "b"], "pred": ["a", "c"]}, {"gold": ["x"], "pred": ["x"]}]}]

    def __call__(self, sent, w_vector):
        return sum(g == p for g, p in zip(sent["gold"], sent["pred"])), len(sent["gold"])


class MissCount(TokenMatch):
    """Broken on purpose: returns a negative count."""

    def __call__(self, sent, w_vector):
        correct, total = super().__call__(sent, w_vector)
        return correct - total, total


class OverCount(TokenMatch):
    """Broken on purpose: counts one correct token more than the gold set holds (issue 27, item 9)."""

    def __call__(self, sent, w_vector):
        return len(sent["gold"]) + 1, len(sent["gold"])


# --------------------------------------------------------------------------- executors
class Backwards(Executor):
    """Runs the tasks last to first and keeps task order (correct)."""

    name = "backwards"

    def run(self, fn, tasks, shared, *, progress=None, desc=None):
        tasks = list(tasks)
        out = [None] * len(tasks)
        for i in reversed(range(len(tasks))):
            out[i] = fn(tasks[i], shared)
        return out


class CompletionOrder(Executor):
    """Broken on purpose: returns the results in the order it ran them (last to first)."""

    name = "completion_order"

    def run(self, fn, tasks, shared, *, progress=None, desc=None):
        return [fn(t, shared) for t in reversed(list(tasks))]


# --------------------------------------------------------------------------- data formats
class Pairs(DataFormat):
    """One JSON pair per line; writes back what it reads."""

    name = "pairs"
    examples = [{"text": '[1, "a"]\n[2, "b"]\n'}]

    def parse(self, text, *, source="<string>"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def dumps(self, items):
        return "".join(json.dumps(item) + "\n" for item in items)


class LossyPairs(Pairs):
    """Broken on purpose: writes only the first field."""

    name = "lossy_pairs"

    def dumps(self, items):
        return "".join(json.dumps(item[:1]) + "\n" for item in items)


# --------------------------------------------------------------------------- aggregations
class CheckedMean:
    """The mean of a map; NaN or inf is an error naming the position."""

    def __call__(self, uncertainty_map):
        from assay.validation import check_array

        u = check_array(uncertainty_map, "uncertainty_map", owner="checked_mean", ndim=(2, 3), shape="2-D or 3-D")
        return float(u.mean())


class MapMax:
    """Broken on purpose: a NaN in the map gives NaN without a word."""

    def __call__(self, uncertainty_map):
        u = np.asarray(uncertainty_map, dtype=float)
        return float(u.max())


@hookimpl
def assay_register_ue_metrics(register):
    register("failure_auc", FailureAuc)
    register("inverted_auc", InvertedAuc)
    register("first_tie_wins", FirstTieWins)


@hookimpl
def assay_register_estimators(register):
    register("max_prob", MaxProb)
    register("needs_entropy", NeedsEntropy)
    register("bad_level", BadLevel)


@hookimpl
def assay_register_stat_calculators(register):
    register("entropy_cycle", EntropyOfEntropy)


@hookimpl
def assay_register_sentence_evaluators(register):
    register("token_match", TokenMatch)
    register("miss_count", MissCount)
    register("over_count", OverCount)
    register("no_sample_match", lambda: (lambda sent, w: (0, 0)))


@hookimpl
def assay_register_executors(register):
    register("backwards", Backwards)
    register("completion_order", CompletionOrder)


@hookimpl
def assay_register_data_formats(register):
    register("pairs", Pairs)
    register("lossy_pairs", LossyPairs)


@hookimpl
def assay_register_aggregations(register):
    register("checked_mean", CheckedMean)
    register("map_max", MapMax)
    register("needs_size", lambda size: MapMax())
