"""unitxt's ``metric_pipeline`` catalog entries, built from their JSON (the RAG family, ``metrics.sacrebleu`` ...).

A pipeline entry names a wrapped metric (a catalog name such as
``"metrics.token_overlap[score_prefix=answer_correctness_]"``), field operators that move values
into ``prediction`` and ``references`` before it, score copies after it, a ``main_score`` and a
``score_prefix``. :func:`build_pipeline` turns any such entry into an
:class:`assay_unitxt.pipeline.MetricPipeline` with the operators of :mod:`assay_unitxt.operators`;
:func:`unsupported` says why an entry cannot be built (an operator assay does not implement, a
wrapped metric it does not load), which the entries listing reports.

unitxt's conventions kept:

- the pipeline's ``score_prefix`` replaces the wrapped metric's; the prefix of a wrapped name
  (``[score_prefix=...]``) applies otherwise. Every score is reported under the prefix, the main
  score is ``prefix + main_score``;
- a step that reads a field at the top of the instance (``answer``, ``contexts`` of the
  ``metrics.rag.external_rag.*`` entries, columns of the data frame unitxt evaluates) reads it
  from the instance's ``task_data``: ``task_data=[{"answer": ..., "contexts": [...]}, ...]``;
- ``not_exist_do_nothing`` skips a copy whose source is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.errors import EvaluationError, InvalidParameterError
from assay_unitxt.operators import Copy, FieldOperator, ListFieldValues, MultiTypeSerializer, Wrap

__all__ = ["build_pipeline", "unsupported"]

_INSTANCE = ("prediction", "references", "task_data")
_ENTRY_KEYS = {"main_score", "metric", "preprocess_steps", "postprocess_steps", "score_prefix", "prediction_type",
               "__type__", "__deprecated__"}
_FIELD_KEYS = {"__type__", "field", "to_field", "field_to_field", "not_exist_do_nothing"}


def _copy(step: dict[str, Any]) -> FieldOperator:
    return Copy(step.get("field"), step.get("to_field"), field_to_field=step.get("field_to_field"),
                not_exist_ok=bool(step.get("not_exist_do_nothing", False)))


def _wrap(step: dict[str, Any]) -> FieldOperator:
    return Wrap(step.get("field"), step.get("to_field"), inside=step["inside"],
                field_to_field=step.get("field_to_field"), not_exist_ok=bool(step.get("not_exist_do_nothing", False)))


def _serializer(step: dict[str, Any]) -> FieldOperator:
    return MultiTypeSerializer(step.get("field"), step.get("to_field"), field_to_field=step.get("field_to_field"),
                               process_every_value=bool(step.get("process_every_value", False)),
                               not_exist_ok=bool(step.get("not_exist_do_nothing", False)))


def _list_values(step: dict[str, Any]) -> ListFieldValues:
    return ListFieldValues(fields=step["fields"], to_field=step["to_field"])


#: catalog operator type -> (the arguments it may have, the builder of assay's operator from them)
OPERATORS: dict[str, tuple[set[str], Callable[[dict[str, Any]], Any]]] = {
    "copy": (_FIELD_KEYS, _copy),
    "wrap": (_FIELD_KEYS | {"inside"}, _wrap),
    "multi_type_serializer": (_FIELD_KEYS | {"process_every_value"}, _serializer),
    "list_field_values": ({"__type__", "fields", "to_field"}, _list_values),
}
#: score copies after the metric: unitxt's ``not_exist_ok`` (the catalog's copies name scores that exist)
_POST_KEYS = {"__type__", "field", "to_field", "field_to_field", "not_exist_ok"}
_TYPES = {"str": str}


def _wrapped_name(metric: Any) -> str | None:
    return metric.split("[", 1)[0] if isinstance(metric, str) else None


def unsupported(entry: Mapping[str, Any], loadable: Callable[[str], bool]) -> str | None:
    """Why assay cannot build the pipeline ``entry`` (``loadable(name)``: whether a wrapped name loads), or None."""
    extra = set(entry) - _ENTRY_KEYS
    if extra:
        return f"pipeline arguments {sorted(extra)} are not supported"
    name = _wrapped_name(entry.get("metric"))
    if name is None:
        kind = entry.get("metric", {}).get("__type__") if isinstance(entry.get("metric"), Mapping) else None
        return f"wraps an inline `{kind}` metric, which assay does not build"
    if not loadable(name):
        return f"wraps `{name}`, which assay does not load"
    for step in entry.get("preprocess_steps", []):
        kind = step.get("__type__")
        if kind not in OPERATORS:
            return f"its `{kind}` step is not implemented in assay_unitxt.operators"
        if set(step) - OPERATORS[kind][0]:
            return f"its `{kind}` step has arguments {sorted(set(step) - OPERATORS[kind][0])} assay does not support"
    for step in entry.get("postprocess_steps", []):
        if step.get("__type__") != "copy" or set(step) - _POST_KEYS:
            return f"its post-processing step {step.get('__type__')!r} is not supported"
    if entry.get("prediction_type", "str") not in _TYPES:
        return f"prediction_type {entry['prediction_type']!r} is not supported"
    return None


def _record_fields(steps: list[Any]) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """The step lifting ``task_data``'s fields to the instance's top level, when a step reads a top-level field."""
    tops = set()
    for step in steps:
        sources = [src for src, _ in step.pairs] if isinstance(step, FieldOperator) else step.fields
        tops |= {s.split("/", 1)[0] for s in sources} - set(_INSTANCE)
    if not tops:
        return None
    wanted = sorted(tops)

    def lift(inst: dict[str, Any]) -> dict[str, Any]:
        td = inst.get("task_data")
        if not isinstance(td, Mapping):
            raise EvaluationError(
                f"this pipeline reads the fields {wanted} of each instance's task_data (unitxt's data-frame "
                f"columns); an instance's task_data is {td!r:.60}.")
        return {**{k: v for k, v in td.items() if k not in _INSTANCE}, **inst}
    return lift


def build_pipeline(*, metric: str, main_score: str, preprocess_steps: Sequence[dict[str, Any]] = (),
                   postprocess_steps: Sequence[dict[str, Any]] = (), score_prefix: str = "",
                   prediction_type: str | None = None) -> Any:
    """assay's :class:`~assay_unitxt.pipeline.MetricPipeline` of a catalog ``metric_pipeline`` entry's arguments."""
    from assay.metrics.catalog import resolve_metric
    from assay_unitxt.pipeline import MetricPipeline

    if not isinstance(metric, str):
        raise InvalidParameterError(f"metric_pipeline: 'metric' must be a catalog name; got {metric!r:.80}.")
    inner = resolve_metric(metric)[0]
    prefix = score_prefix or inner.score_prefix or ""
    pre: list[Any] = [OPERATORS[s["__type__"]][1](s) for s in preprocess_steps]
    lift = _record_fields(pre)
    post = [Copy(s.get("field"), s.get("to_field"), field_to_field=s.get("field_to_field"),
                 not_exist_ok=bool(s.get("not_exist_ok", False))) for s in postprocess_steps]
    pipeline = MetricPipeline(inner, main_score=main_score, preprocess_steps=([lift] if lift else []) + pre,
                              postprocess_steps=post,
                              prediction_type=_TYPES[prediction_type] if prediction_type else None,
                              score_prefix=prefix)
    return pipeline
