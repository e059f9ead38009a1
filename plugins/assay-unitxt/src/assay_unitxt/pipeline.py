"""``MetricPipeline``: pre-processing steps, a wrapped metric (an object or a catalog name), score post-processing.

unitxt's spelling runs as written::

    MetricPipeline(
        main_score="score",
        preprocess_steps=[Copy(field="task_data/context", to_field="references"),
                          ListFieldValues(fields=["references"], to_field="references")],
        metric="metrics.token_overlap",
        postprocess_steps=[Rename(field_to_field=[("score/global/f1", "score/global/f1_overlap_with_context")])],
    )

and assay's shorter one too: ``MetricPipeline(metric, preprocess=[callable, ...], rename={...})``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics.base import Metric, check_prediction_type
from assay.metrics.catalog import resolve_metric
from assay.validation import check_str
from assay_unitxt.operators import FieldOperator

__all__ = ["MetricPipeline"]

_SCOPES = ("score/global", "score/instance")


class MetricPipeline(Metric):
    """Pre-processing steps, a wrapped metric, and score post-processing (renames, copies).

    Parameters
    ----------
    metric : Metric or str
        The wrapped metric, or its catalog name (``"metrics.token_overlap"``,
        ``"f1[average=macro]"``: anything :func:`assay.load_metric` resolves, local catalog
        entries included).
    main_score : str, optional
        The pipeline's main score. ``"score"`` (unitxt's usual choice) or ``None`` means the
        wrapped metric's main score, followed through the renames.
    preprocess_steps : sequence
        unitxt operators (:class:`~assay_unitxt.operators.Copy`,
        :class:`~assay_unitxt.operators.ListFieldValues`, ...) or callables; each takes and
        returns an instance dict ``{"prediction", "references", "task_data"}``, in order,
        before the wrapped metric's ``prediction_type`` check.
    postprocess_steps : sequence of Copy / Rename
        Applied to the scores, addressed as ``score/global/<name>`` (global scores and their
        intervals) and ``score/instance/<name>`` (instance scores). A source that does not
        exist is an error naming its path (unless the operator has ``not_exist_ok=True``).
        ``postpreprocess_steps`` (the spelling of older unitxt examples) is accepted too.
    preprocess : sequence of callables
        assay's spelling of ``preprocess_steps`` (both may be given; these run after).
    rename : mapping of str to str, optional
        assay's spelling of a global and instance rename, applied after the postprocess steps.
    prediction_type : type, optional
        Checked on the predictions after pre-processing (the wrapped metric checks its own).
    score_prefix : str
        As for every metric.

    Examples
    --------
    >>> from assay.metrics import InstanceMetric
    >>> class Match(InstanceMetric):
    ...     main_score = "match"
    ...     def compute_instance(self, prediction, references, task_data=None):
    ...         return float(prediction in references)
    >>> lower = lambda inst: {**inst, "prediction": inst["prediction"].lower()}
    >>> p = MetricPipeline(Match(), preprocess=[lower], rename={"match": "match_lower"})
    >>> p.update(["A", "b"], [["a"], ["c"]]).compute_scores()["match_lower"]
    0.5
    """

    def __init__(self, metric: Metric | str | None = None, *, main_score: str | None = None,
                 preprocess_steps: Sequence[Any] = (), postprocess_steps: Sequence[Any] = (),
                 postpreprocess_steps: Sequence[Any] | None = None,
                 preprocess: Sequence[Callable[[dict], dict]] = (), rename: Mapping[str, str] | None = None,
                 prediction_type: Any = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self._metric_spec = metric
        if isinstance(metric, str):
            metric = resolve_metric(metric)[0]
        if not isinstance(metric, Metric):
            raise InvalidParameterError(
                f"MetricPipeline's 'metric' must be a Metric or a catalog name; got {type(metric).__name__}.")
        if main_score is not None:
            check_str(main_score, "main_score", owner="MetricPipeline", allow_empty=False)
        if rename is not None and (not isinstance(rename, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in rename.items())):
            raise InvalidParameterError(
                "The 'rename' parameter of MetricPipeline must be a dict of score name to score name; "
                f"got {rename!r:.80}."
            )
        pre = list(preprocess_steps) + list(preprocess)
        for step in pre:
            if not callable(step):
                raise InvalidParameterError(f"MetricPipeline's 'preprocess' steps must be callable; got {step!r}.")
        if postpreprocess_steps is not None:
            if postprocess_steps:
                raise InvalidParameterError(
                    "MetricPipeline: give 'postprocess_steps' or its older spelling 'postpreprocess_steps', not both.")
            postprocess_steps = postpreprocess_steps
        post = list(postprocess_steps)
        for step in post:
            if not isinstance(step, FieldOperator):
                raise InvalidParameterError(
                    f"MetricPipeline's 'postprocess_steps' must be Copy / Rename operators; got {step!r:.80}.")
            for src, dst in step.pairs:
                for path in (src, dst):
                    if not any((path + "/").startswith(s + "/") and path != s for s in _SCOPES):
                        raise InvalidParameterError(
                            f"MetricPipeline: the postprocess path {path!r} must start with 'score/global/' or "
                            "'score/instance/'.")
                if src.split("/")[1] != dst.split("/")[1]:
                    raise InvalidParameterError(
                        f"MetricPipeline: {type(step).__name__} from {src!r} to {dst!r} moves a score between "
                        "global and instance scores.")
        self.metric = metric
        self.preprocess_steps = list(preprocess_steps)
        self.postprocess_steps = post
        self.preprocess = pre
        self.rename = dict(rename or {})
        self._main_score_arg = main_score
        # checked after pre-processing (map_all checks `prediction_type` before it, so that stays None)
        self.pipeline_prediction_type = prediction_type
        if main_score is None or main_score == "score":
            self.main_score = self._global_names([metric.main_score], follow=True)[0]
        else:
            self.main_score = main_score
        self.higher_is_better = metric.higher_is_better
        self.additive = metric.additive
        self.vectorized = metric.vectorized
        self.per_instance = metric.per_instance
        self.n_stats = metric.n_stats
        self.requirements = metric.requirements
        self.ci_scores = self._global_names(list(metric.score_names_for_ci), follow=True)
        # with preprocess steps the references may come from task_data: the wrapped metric checks them
        self.needs_references = metric.needs_references and not self.preprocess

    def catalog_args(self) -> dict[str, Any]:
        """The constructor arguments (for :func:`assay.add_to_catalog`)."""
        out: dict[str, Any] = {"metric": self._metric_spec}
        if self._main_score_arg is not None:
            out["main_score"] = self._main_score_arg
        if self.preprocess_steps:
            out["preprocess_steps"] = self.preprocess_steps
        extra = self.preprocess[len(self.preprocess_steps):]
        if extra:
            out["preprocess"] = extra
        if self.postprocess_steps:
            out["postprocess_steps"] = self.postprocess_steps
        if self.rename:
            out["rename"] = self.rename
        if self.pipeline_prediction_type is not None:
            out["prediction_type"] = self.pipeline_prediction_type
        if self.score_prefix:
            out["score_prefix"] = self.score_prefix
        return out

    def _global_names(self, names: list[str], *, follow: bool) -> list[str]:
        """Where ``names`` end up after the global renames (copies keep the source)."""
        out = []
        for name in names:
            for step in self.postprocess_steps:
                for src, dst in step.pairs:
                    if not step.keep_source and src == f"score/global/{name}":
                        name = dst[len("score/global/"):]
            out.append(self.rename.get(name, name) if follow else name)
        return out

    def _post(self, scores: Mapping[str, Any], scope: str, *, strict: bool = True) -> dict[str, Any]:
        kind = scope.rsplit("/", 1)[1]
        doc: dict[str, Any] = {"score": {kind: dict(scores)}}
        for step in self.postprocess_steps:
            doc = step.apply(doc, scope=scope, strict=strict)
        return {self.rename.get(k, k): v for k, v in doc["score"][kind].items()}

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                  task_data: Sequence[Any] | None) -> Any:
        if self.preprocess:
            n = len(predictions)
            refs = references if references is not None else [None] * n
            tds = task_data if task_data is not None else [None] * n
            insts = [{"prediction": p, "references": r, "task_data": t} for p, r, t in zip(predictions, refs, tds)]
            for step in self.preprocess:
                insts = [step(inst) for inst in insts]
            predictions = [i["prediction"] for i in insts]
            # references given, or set by a step (a RAG pipeline copies them from task_data)
            have = references is not None or any(i.get("references") is not None for i in insts) or not insts
            references = [i.get("references") for i in insts] if have else None
            task_data = [i["task_data"] for i in insts] if task_data is not None else None
        if self.pipeline_prediction_type is not None:
            check_prediction_type(SimpleNamespace(prediction_type=self.pipeline_prediction_type, name=self.name
                                                  or "MetricPipeline"), predictions)
        return self.metric.map_all(predictions, references, task_data)

    def map(self, prediction: Any, references: Any, task_data: Any = None) -> Any:
        return self.map_batch([prediction], [references], [task_data])[0]

    def reduce(self, intermediates: Any) -> dict[str, Any]:
        return self._post(self.metric.reduce(intermediates), "score/global")

    def reduce_totals_many(self, totals: np.ndarray) -> dict[str, np.ndarray]:
        return self._post(self.metric.reduce_totals_many(totals), "score/global")

    def instance_scores(self, intermediates: Any) -> list[dict[str, float]]:
        return [self._post(d, "score/instance") for d in self.metric.instance_scores(intermediates)]

    def proportions(self, intermediates: Any) -> dict[str, tuple[float, float]]:
        return self._post(self.metric.proportions(intermediates), "score/global", strict=False)
