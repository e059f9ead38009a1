"""Plugin objects for the common suite's own tests, most breaking one invariance on purpose.

Module level, so they pickle.
"""

from __future__ import annotations

import json

import numpy as np
from assay_conformance_samples import FailureAuc, FirstTieWins

from assay import DataFormat, hookimpl
from assay.metrics import GlobalMetric
from assay.uncertainty import Estimator


# --------------------------------------------------------------------------- estimators
class BatchNormalized(Estimator):
    """Broken on purpose: divides by the batch's largest value, so two chunks differ from one run."""

    name, level, dependencies = "batch_normalized", "sequence", ("scores",)
    examples = [{"stats": {"scores": [0.5, 2.0, 1.0, 4.0]}}]

    def __call__(self, stats):
        e = np.asarray(stats["scores"], dtype=float)
        return e / e.max()


class Entropy(Estimator):
    name, level, dependencies = "plain_entropy", "sequence", ("scores",)
    examples = [{"stats": {"scores": [0.5, 2.0, 1.0, 4.0]}}]

    def __call__(self, stats):
        return np.asarray(stats["scores"], dtype=float)


# --------------------------------------------------------------------------- sentence evaluators
class CallCounter:
    """Broken on purpose: every other call counts the item as correct, whatever it holds."""

    examples = [{"items": ["a", "b", "c", "d", "e"]}]

    def __init__(self):
        self.calls = 0

    def __call__(self, sent, w_vector):
        self.calls += 1
        return self.calls % 2, 1


# --------------------------------------------------------------------------- data formats
class ReadOnlyPairs(DataFormat):
    """Reads JSON pairs and cannot write: the round trip does not apply."""

    name = "read_only_pairs"
    examples = [{"text": '[1, "a"]\n'}]

    def parse(self, text, *, source="<string>"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]


class UnsampledPairs(ReadOnlyPairs):
    """Declares no sample: the suite cannot read one."""

    name = "unsampled_pairs"
    examples = None


# --------------------------------------------------------------------------- aggregations
class RunningMax:
    """Broken on purpose: remembers the largest value seen in any call."""

    def __init__(self):
        self.seen = -np.inf

    def __call__(self, uncertainty_map):
        self.seen = max(self.seen, float(np.max(uncertainty_map)))
        return self.seen


@hookimpl
def assay_register_ue_metrics(register):
    register("complement_auc", FailureAuc, orientation="complement")
    register("wrong_complement", FailureAuc, orientation="negate")  # an AUC complements: 1 - f
    register("declared_tie_order", FirstTieWins, tie_aware=False)


@hookimpl
def assay_register_estimators(register):
    register("batch_normalized", BatchNormalized)
    register("plain_entropy", Entropy)


@hookimpl
def assay_register_sentence_evaluators(register):
    register("call_counter", CallCounter)


@hookimpl
def assay_register_data_formats(register):
    register("read_only_pairs", ReadOnlyPairs)
    register("unsampled_pairs", UnsampledPairs)


@hookimpl
def assay_register_aggregations(register):
    register("running_max", RunningMax)


class GoodOnly:
    """A plugin object that registers only a conforming estimator."""

    @hookimpl
    def assay_register_estimators(self, register):
        register("plain_entropy", Entropy)


class MeanPrediction(GlobalMetric):
    """The mean of float predictions (no references): a good metric with no expected scores declared."""

    main_score = "mean"
    prediction_type = float
    needs_references = False

    def compute_global(self, predictions, references, task_data):
        from assay.errors import InvalidParameterError
        from assay.validation import undefined_metric

        values = np.asarray(predictions, dtype=float)
        if not values.size:
            return undefined_metric("mean: no predictions; NaN.")
        if not np.isfinite(values).all():
            first = int(np.flatnonzero(~np.isfinite(values))[0])
            raise InvalidParameterError(f"mean: prediction {first} is not finite")
        return float(values.mean())
