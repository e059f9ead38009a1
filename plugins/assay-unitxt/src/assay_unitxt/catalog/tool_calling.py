"""unitxt's tool-call checks: ``metrics.tool_calling`` (``ToolCallingMetric``) and
``metrics.tool_calling.multi_turn.validity`` (``MultiTurnToolCallingMetric``).

A tool call is ``{"name": str, "arguments": {...}}``; each instance's ``task_data["__tools__"]`` is
the tool inventory, a list of ``{"function": {"name": str, "parameters": <JSON schema>}}``. A call's
arguments are validated against its tool's schema with jsonschema-rs, the validator unitxt uses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from assay.errors import InvalidParameterError, MissingDependencyError
from assay.metrics import InstanceMetric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["MultiTurnToolCalling", "ToolCalling"]

_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def _schema_valid(tools: Any, call: Mapping[str, Any], owner: str) -> float:
    """1.0 when ``call``'s arguments satisfy the parameters schema of the last tool of its name, else 0.0."""
    try:
        import jsonschema_rs  # deferred: optional dependency (the catalog extra)
    except ImportError:
        raise MissingDependencyError(f"{owner} validates tool arguments with jsonschema-rs: "
                                     "pip install jsonschema-rs") from None
    if not isinstance(tools, list) or not all(
            isinstance(t, Mapping) and isinstance(t.get("function"), Mapping) for t in tools):
        raise InvalidParameterError(f"{owner} needs task_data['__tools__'], a list of {{'function': {{'name': ..., "
                                    f"'parameters': ...}}}}; got {tools!r:.80}.")
    parameters = None
    for tool in tools:
        if tool["function"].get("name") == call["name"]:
            parameters = tool["function"].get("parameters")
    if parameters is None:
        return 0.0
    try:
        jsonschema_rs.validate(parameters, call["arguments"])
    except jsonschema_rs.ValidationError:
        return 0.0
    return 1.0


def _tools(task_data: Any, owner: str) -> Any:
    if not isinstance(task_data, Mapping) or "__tools__" not in task_data:
        raise InvalidParameterError(f"{owner} needs task_data with the tool inventory '__tools__' per instance; "
                                    f"got {task_data!r:.80}.")
    return task_data["__tools__"]


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class ToolCalling(CheckedInputs, InstanceMetric):
    """unitxt's ``ToolCallingMetric`` (``metrics.tool_calling``): each predicted call against the references.

    ``exact_match`` (main: the call equals a reference, compared as sorted JSON),
    ``tool_name_accuracy``, ``argument_name_recall`` / ``argument_name_precision`` (the best over the
    references of the shared argument names over the reference's / the prediction's; 1 when the side
    divided by has none, as unitxt), ``argument_value_precision`` (the best share of predicted
    arguments whose value equals the reference's) and ``argument_schema_validation``; each the mean
    over instances.
    """

    input_type = "tool_call"
    examples = [{"predictions": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                                 {"name": "get_weather", "arguments": {"town": "Rome"}}],
                 "references": [[{"name": "get_weather", "arguments": {"city": "Paris"}}],
                                [{"name": "get_weather", "arguments": {"city": "Rome"}}]],
                 "task_data": [{"__tools__": _TOOLS}, {"__tools__": _TOOLS}]}]

    main_score = "exact_match"
    score_names = ["exact_match", "tool_name_accuracy", "argument_name_recall", "argument_name_precision",
                   "argument_value_precision", "argument_schema_validation"]
    ci_scores = score_names
    prediction_type = dict[str, Any]
    requirements = {"jsonschema_rs": "jsonschema-rs"}

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> dict[str, float]:
        tools = _tools(task_data, "metrics.tool_calling")
        args = prediction.get("arguments", {})
        refs_args = [r.get("arguments", {}) for r in references]
        name_recall = name_precision = value_precision = 0.0
        for ref in refs_args:
            shared = len(set(args) & set(ref))
            name_recall = max(name_recall, shared / len(set(ref)) if ref else 1.0)
            name_precision = max(name_precision, shared / len(set(args)) if args else (1.0 if not ref else 0.0))
            matches = sum(1 for k, v in args.items() if k in ref and _dump(v) == _dump(ref[k]))
            value_precision = max(value_precision, matches / len(args) if args else (1.0 if not ref else 0.0))
        return {
            "exact_match": float(_dump(prediction) in [_dump(r) for r in references]),
            "tool_name_accuracy": float(str(prediction["name"]) in [str(r["name"]) for r in references]),
            "argument_name_recall": name_recall,
            "argument_name_precision": name_precision,
            "argument_value_precision": value_precision,
            "argument_schema_validation": _schema_valid(tools, {**prediction, "arguments": args},
                                                        "metrics.tool_calling"),
        }


class MultiTurnToolCalling(CheckedInputs, InstanceMetric):
    """unitxt's ``MultiTurnToolCallingMetric`` (``metrics.tool_calling.multi_turn.validity``): the share of an
    instance's predicted calls (a list) whose arguments satisfy their tool's schema, mean over instances
    (``argument_schema_validation``). An instance with no predicted call is an error (unitxt divides by zero)."""

    input_type = "list[tool_call]"
    examples = [{"predictions": [[{"name": "get_weather", "arguments": {"city": "Paris"}},
                                  {"name": "get_weather", "arguments": {}}]],
                 "references": [[[{"name": "get_weather", "arguments": {"city": "Paris"}}]]],
                 "task_data": [{"__tools__": _TOOLS}], "global_target": {"argument_schema_validation": 0.5}}]

    main_score = "argument_schema_validation"
    ci_scores = ["argument_schema_validation"]
    prediction_type = list[dict[str, Any]]
    requirements = {"jsonschema_rs": "jsonschema-rs"}

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> float:
        owner = "metrics.tool_calling.multi_turn.validity"
        tools = _tools(task_data, owner)
        if not prediction:
            raise InvalidParameterError(f"{owner}: an instance has no predicted tool call (its share of valid calls "
                                        "is undefined).")
        calls = [{**c, "arguments": c.get("arguments", {})} for c in prediction]
        return sum(_schema_valid(tools, c, owner) for c in calls) / len(calls)
