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


class _RecordFields:
    """The step lifting ``task_data``'s fields to the instance's top level (a class: pipelines pickle)."""

    def __init__(self, wanted: list[str]) -> None:
        self.wanted = wanted

    def __call__(self, inst: dict[str, Any]) -> dict[str, Any]:
        td = inst.get("task_data")
        if not isinstance(td, Mapping):
            raise EvaluationError(
                f"this pipeline reads the fields {self.wanted} of each instance's task_data (unitxt's data-frame "
                f"columns); an instance's task_data is {td!r:.60}.")
        return {**{k: v for k, v in td.items() if k not in _INSTANCE}, **inst}

    def __repr__(self) -> str:
        return f"_RecordFields({self.wanted!r})"


def _record_fields(steps: list[Any]) -> _RecordFields | None:
    """The lifting step, when a step reads a field at the instance's top level."""
    tops = set()
    for step in steps:
        sources = [src for src, _ in step.pairs] if isinstance(step, FieldOperator) else step.fields
        tops |= {s.split("/", 1)[0] for s in sources} - set(_INSTANCE)
    return _RecordFields(sorted(tops)) if tops else None


class _Given:
    """First step: keeps the caller's prediction and references, for :class:`_Unread` to compare."""

    def __call__(self, inst: dict[str, Any]) -> dict[str, Any]:
        return {**inst, "__given__": {k: inst.get(k) for k in ("prediction", "references")}}

    def __repr__(self) -> str:
        return "_Given()"


class _Unread:
    """Last step: an argument the steps replaced without reading it is checked, not silently ignored. A
    prediction must equal the value that replaced it (the row's ``answer``: pass the same answers); references
    must be None."""

    def __init__(self, fields: list[str]) -> None:
        self.fields = fields

    def __call__(self, inst: dict[str, Any]) -> dict[str, Any]:
        given = inst.pop("__given__", {})
        old = given.get("prediction")
        if "prediction" in self.fields and inst.get("prediction") != old:
            raise InvalidParameterError(
                "this pipeline scores a field of the instance's task_data as its prediction, and the predictions "
                f"given differ from it: got {old!r:.60}, task_data has {inst.get('prediction')!r:.60} "
                "(pass the same values as predictions).")
        old = given.get("references")
        if "references" in self.fields and old is not None and inst.get("references") != old:
            raise InvalidParameterError(
                "this pipeline takes each instance's references from its task_data or prediction and never reads "
                f"the references given: pass references=None (got {old!r:.60}).")
        return inst

    def __repr__(self) -> str:
        return f"_Unread({self.fields!r})"


def _unread(pre: list[Any]) -> list[str]:
    """``prediction`` / ``references`` when a step overwrites it before any step reads it (or a field under it)."""
    out = []
    for field in ("prediction", "references"):
        for step in pre:
            pairs = (step.pairs if isinstance(step, FieldOperator)
                     else [(f, step.to_field) for f in step.fields] if isinstance(step, ListFieldValues) else [])
            if any(src == field or src.startswith(field + "/") for src, _ in pairs):
                break  # read first
            if any(dst == field for _, dst in pairs):
                out.append(field)
                break
    return out


#: sample inputs of the RAG pipelines (``assay check-plugin``): a RAG system's output and the row's fields
_ROW = {"question": "When did the tower open?", "reference_answers": ["in 1889"], "reference_context_ids": ["c2"],
        "contexts": ["It opened in 1889", "Paris"], "answer": "It opened in 1889", "ground_truths": ["in 1889"],
        "context_ids": ["c1", "c2"], "ground_truths_context_ids": ["c2"]}
_ROW2 = {**_ROW, "question": "Who built it?", "answer": "Eiffel", "reference_answers": ["Gustave Eiffel"],
         "ground_truths": ["Gustave Eiffel"], "context_ids": ["c3"], "reference_context_ids": ["c3"],
         "ground_truths_context_ids": ["c3"]}


def _examples(pre: list[Any]) -> list[dict[str, Any]]:
    reads_output = any(src.startswith("prediction/") for step in pre if isinstance(step, FieldOperator)
                       for src, _ in step.pairs)
    unread = _unread(pre)
    preds: list[Any] = ([{k: r[k] for k in ("answer", "contexts", "context_ids")} for r in (_ROW, _ROW2)]
                        if reads_output else [_ROW["answer"], _ROW2["answer"]])
    if "prediction" in unread:  # the value the steps put there (the pipeline checks the two agree)
        steps = [s for s in pre if not isinstance(s, _Unread)]
        rows: list[dict[str, Any]] = [{"prediction": None, "references": None, "task_data": dict(r), **r}
                                      for r in (_ROW, _ROW2)]
        for step in steps:
            rows = [step(r) for r in rows]
        preds = [r["prediction"] for r in rows]
    refs = None if "references" in unread else [_ROW["ground_truths"], _ROW2["ground_truths"]]
    return [{"predictions": preds, "references": refs, "task_data": [dict(_ROW), dict(_ROW2)]}]


def build_pipeline(*, metric: Any, main_score: str, preprocess_steps: Sequence[dict[str, Any]] = (),
                   postprocess_steps: Sequence[dict[str, Any]] = (), score_prefix: str = "",
                   prediction_type: str | None = None) -> Any:
    """assay's :class:`~assay_unitxt.pipeline.MetricPipeline` of a catalog ``metric_pipeline`` entry's arguments
    (``metric``: the wrapped catalog name, or the wrapped metric already built, as for a model entry)."""
    from assay.metrics import Metric
    from assay.metrics.catalog import resolve_metric
    from assay_unitxt.pipeline import MetricPipeline

    if not isinstance(metric, (str, Metric)):
        raise InvalidParameterError(f"metric_pipeline: 'metric' must be a catalog name; got {metric!r:.80}.")
    inner = resolve_metric(metric)[0]
    prefix = score_prefix or inner.score_prefix or ""
    pre: list[Any] = [OPERATORS[s["__type__"]][1](s) for s in preprocess_steps]
    lift = _record_fields(pre)
    unread = _unread(pre)
    guard_in, guard_out = ([_Given()], [_Unread(unread)]) if unread else ([], [])
    post = [Copy(s.get("field"), s.get("to_field"), field_to_field=s.get("field_to_field"),
                 not_exist_ok=bool(s.get("not_exist_ok", False))) for s in postprocess_steps]
    steps = guard_in + ([lift] if lift else []) + pre + guard_out
    pipeline = MetricPipeline(inner, main_score=main_score, preprocess_steps=steps,
                              postprocess_steps=post,
                              prediction_type=_TYPES[prediction_type] if prediction_type else None,
                              score_prefix=prefix)
    if not any(dst == "prediction" for step in pre if isinstance(step, FieldOperator) for _, dst in step.pairs):
        pipeline.prediction_type = inner.prediction_type  # the caller's predictions reach the metric unchanged
    pipeline.examples = _examples(pre)
    return pipeline
