"""Deliberately broken metrics (module level, so they pickle) that the kit must catch."""

from __future__ import annotations

from assay.metrics import GlobalMetric, InstanceMetric


class FirstPrediction(GlobalMetric):
    """Depends on the order of the instances: the first prediction."""

    main_score = "first"

    def compute_global(self, predictions, references, task_data):
        return float(predictions[0]) if predictions else float("nan")


class ForgetfulMatch(InstanceMetric):
    """Keeps only the last batch given to update: chunked updates go wrong."""

    main_score = "match"

    def compute_instance(self, prediction, references, task_data=None):
        return float(prediction in references)

    def update(self, predictions, references=None, task_data=None):
        self.reset()
        return super().update(predictions, references, task_data)
