"""unitxt's ``Task``: a task's fields, prediction type and metrics, declared as in unitxt's tutorial.

::

    from assay_unitxt import Task          # was: from unitxt.blocks import Task

    task = Task(input_fields={"question": str}, reference_fields={"answer": str},
                prediction_type=str, metrics=["metrics.rouge", "metrics.accuracy"])
    results = task.evaluate(predictions, data)   # data: one dict per instance, holding the fields

Checked when the task is made, as unitxt checks it: ``input_fields`` and ``reference_fields``
are given (a list of names means every type is ``Any``), the older ``inputs`` / ``outputs``
spellings are accepted with a ``DeprecationWarning``, every metric name loads, and the task's
``prediction_type`` agrees with each metric's (equal, ``Any`` on either side, or one member of the
metric's ``Union``). ``defaults`` fill fields an instance lacks. unitxt renders references
through a template; here the references of an instance are the value of its single reference
field (``reference_field=`` chooses one of several): a field typed ``List[...]`` is the list of
references, any other field is one reference.
"""

from __future__ import annotations

import types
import typing
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import assay
from assay.errors import InvalidParameterError

__all__ = ["Task"]


def _fields(value: Any, name: str) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return dict.fromkeys(value, Any)
    raise InvalidParameterError(f"Task: {name!r} must be a dict of field name to type (or a list of names); "
                                f"got {value!r}.")


def _compatible(task_type: Any, metric_type: Any) -> bool:
    """unitxt's ``Task.check_metrics_type`` rule."""
    if task_type in (None, Any) or metric_type in (None, Any) or task_type == metric_type:
        return True
    union = typing.get_origin(metric_type) in (typing.Union, types.UnionType)
    return union and task_type in typing.get_args(metric_type)


class Task:
    """unitxt's ``Task`` (see the module docstring)."""

    def __init__(self, *, metrics: Sequence[str] | str, input_fields: Any = None, reference_fields: Any = None,
                 prediction_type: Any = None, defaults: Mapping[str, Any] | None = None,
                 inputs: Any = None, outputs: Any = None) -> None:
        if input_fields is not None and inputs is not None:
            raise InvalidParameterError("Task: give 'input_fields' or its older spelling 'inputs', not both.")
        if reference_fields is not None and outputs is not None:
            raise InvalidParameterError("Task: give 'reference_fields' or its older spelling 'outputs', not both.")
        if inputs is not None or outputs is not None:
            warnings.warn("Task: 'inputs' and 'outputs' are deprecated; use 'input_fields' and 'reference_fields'.",
                          DeprecationWarning, stacklevel=2)
        input_fields = input_fields if input_fields is not None else inputs
        reference_fields = reference_fields if reference_fields is not None else outputs
        if input_fields is None:
            raise InvalidParameterError("Task: 'input_fields' is not set.")
        if reference_fields is None:
            raise InvalidParameterError("Task: 'reference_fields' is not set.")
        self.input_fields = _fields(input_fields, "input_fields")
        self.reference_fields = _fields(reference_fields, "reference_fields")
        self.metrics = [metrics] if isinstance(metrics, str) else list(metrics)
        self.prediction_type = Any if prediction_type is None else prediction_type
        self.defaults = dict(defaults or {})
        for key in self.defaults:
            if key not in self.input_fields and key not in self.reference_fields:
                raise InvalidParameterError(
                    f"Task: the default {key!r} is not one of the input or reference fields "
                    f"({sorted(self.input_fields) + sorted(self.reference_fields)}).")
        for name in self.metrics:
            metric = assay.load_metric(name)
            metric_type = getattr(metric, "prediction_type", None)
            if not _compatible(self.prediction_type, metric_type):
                raise InvalidParameterError(
                    f"The task's prediction type ({self.prediction_type}) and {name!r} metric's prediction type "
                    f"({metric_type}) are different.")

    def process(self, instance: Mapping[str, Any]) -> dict[str, Any]:
        """unitxt's ``Task.process``: the instance's fields grouped by role, and the metrics."""
        instance = {**self.defaults, **instance}
        missing = [k for k in [*self.input_fields, *self.reference_fields] if k not in instance]
        if missing:
            raise InvalidParameterError(f"Task: the instance lacks the fields {missing}; it has {sorted(instance)}.")
        return {"input_fields": {k: instance[k] for k in self.input_fields},
                "reference_fields": {k: instance[k] for k in self.reference_fields},
                "metrics": list(self.metrics)}

    def references(self, instance: Mapping[str, Any], reference_field: str | None = None) -> list[Any]:
        """The references of one instance (see the module docstring)."""
        if reference_field is None:
            if len(self.reference_fields) != 1:
                raise InvalidParameterError(
                    f"Task: choose the field that holds the references with reference_field= (one of "
                    f"{sorted(self.reference_fields)}).")
            reference_field = next(iter(self.reference_fields))
        if reference_field not in self.reference_fields:
            raise InvalidParameterError(f"Task: {reference_field!r} is not a reference field "
                                        f"({sorted(self.reference_fields)}).")
        value = self.process(instance)["reference_fields"][reference_field]
        tp = self.reference_fields[reference_field]
        return list(value) if typing.get_origin(tp) is list or tp is list else [value]

    def evaluate(self, predictions: Sequence[Any], data: Sequence[Mapping[str, Any]], *,
                 reference_field: str | None = None, **kwargs: Any) -> Any:
        """``assay.evaluate`` of ``predictions`` against ``data`` with the task's metrics.

        Each instance's ``task_data`` is its input and reference fields (``kwargs`` go to
        :func:`assay.evaluate`: ``n_resamples``, ``seed`` ...)."""
        processed = [self.process(d) for d in data]
        refs = [self.references(d, reference_field) for d in data]
        task_data = [{**p["input_fields"], **p["reference_fields"]} for p in processed]
        return assay.evaluate(list(predictions), refs, task_data=task_data, metrics=list(self.metrics), **kwargs)
