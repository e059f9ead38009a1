"""``assay.evaluate`` and ``assay.compare``.

>>> import assay
>>> from assay.metrics import Metric, divide
>>> class Acc(Metric):
...     main_score = "accuracy"; additive = True; vectorized = True; n_stats = 2
...     def map(self, prediction, references, task_data=None):
...         return [float(prediction in references), 1.0]
...     def reduce(self, totals):
...         return {"accuracy": divide(totals[..., 0], totals[..., 1])}
>>> res = assay.evaluate([3, 799, 50], [[5], [800], [50]], metrics=[Acc()], n_resamples=0)
>>> res[0]["score"]["global"]["score"], res[2]["score"]["instance"]["accuracy"]
(0.3333333333333333, 1.0)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.core.result import UndefinedMetricWarning
from assay.errors import InvalidParameterError
from assay.metrics._params import check_resampling, check_seed, new_seed
from assay.metrics.catalog import COLLISION_RULES, check_collisions, resolve_metrics
from assay.metrics.ci import CI_METHODS, intervals
from assay.metrics.resample import check_cost
from assay.metrics.results import EvaluationResults, load_results, to_jsonable
from assay.metrics.significance import Comparison, compare
from assay.provenance import evaluation_signature
from assay.validation import as_array

__all__ = ["Comparison", "EvaluationResults", "compare", "evaluate", "load_results", "new_seed"]


def evaluate(predictions: Sequence[Any], references: Sequence[Any] | None = None,
             metrics: Any = (), task_data: Sequence[Any] | None = None, *,
             n_resamples: int = 1000, confidence_level: float = 0.95, ci_method: str = "percentile",
             seed: int | None = 0, groups: Sequence[Any] | None = None,
             strata: Sequence[Any] | None = None, score_collisions: str = "error") -> EvaluationResults:
    """Score predictions with metrics, per instance and globally, with confidence intervals.

    Parameters
    ----------
    predictions : sequence
        One prediction per instance.
    references : sequence, optional
        One entry per instance: the list of references of that instance.
    metrics : str, Metric or sequence of them
        Registered names with overrides (``"f1[average=macro, score_prefix=m_]"``) or
        metric objects. The first metric's main score is the global ``score``.
    task_data : sequence of dict, optional
        Extra per-instance data passed to the metrics.
    n_resamples : int
        Bootstrap replicates for the intervals (0: no intervals): the shard-invariant Poisson
        bootstrap of :mod:`assay.metrics.resample`, the same replicates as
        ``EvaluatorBase.sequentialEvaluate`` / ``parallelEvaluate`` draw for the same data and
        seed (so the intervals are identical to the last bit). A count whose replicate arrays
        would not fit in memory, or that would take hours, is an error naming it. A metric that declares
        its own ``n_resamples`` (unitxt's class attribute) keeps it: ``0`` gives that
        metric no intervals, ``k >= 2`` gives it ``k`` resamples; ``n_resamples=0`` here
        turns off every interval.
    confidence_level : float
        Coverage of the intervals.
    ci_method : {"percentile", "bca", "wilson"}
        Interval method; ``"wilson"`` applies to proportions and falls back to the
        percentile bootstrap (with a note) for other scores.
    seed : int or None
        Seed of the resampling, an int ``>= 0`` (``None``: a fresh one, recorded in
        ``results.info``); a float or a negative int is an error.
    groups, strata : sequence, optional
        Cluster and stratum label per instance (cluster / stratified bootstrap). Without
        ``groups``, a unitxt ``group_mean`` metric whose ``agg_func`` resamples the groups as
        units (its third element ``True``) gets a cluster bootstrap on ``task_data["group_id"]``.
    score_collisions : {"error", "first"}
        Two metrics that report the same score name: ``"error"`` (default) raises and
        asks for a ``score_prefix``; ``"first"`` is unitxt's precedence for ported code:
        the metric listed first keeps the name (global and instance scores, intervals
        included) and the later metric's score of that name is dropped.

    Returns
    -------
    EvaluationResults
        ``results[i]["score"]["instance"]`` and ``results[i]["score"]["global"]`` as in
        unitxt: named scores, ``score``, ``score_name``, and for every ``ci_scores`` entry
        ``<name>_ci_low`` / ``<name>_ci_high`` (``score_ci_low`` / ``score_ci_high`` for
        the main score); ``results.info["ci_notes"]`` explains NaN or one-point intervals;
        ``results.info["signature"]`` is the provenance line (:mod:`assay.provenance`):
        metrics with their options and conventions, resampling, versions.
    """
    n_resamples = check_cost(check_resampling(n_resamples, confidence_level), owner="assay.evaluate")
    seed = check_seed(seed, owner="assay.evaluate")
    if not isinstance(ci_method, str) or ci_method not in CI_METHODS:
        raise InvalidParameterError(f"'ci_method' must be one of {', '.join(CI_METHODS)}; got {ci_method!r}.")
    predictions = as_array(predictions, "predictions", owner="assay.evaluate")  # tensors, DLPack -> numpy
    references = as_array(references, "references", owner="assay.evaluate")
    if isinstance(predictions, (str, bytes)) or not hasattr(predictions, "__len__"):
        raise InvalidParameterError(f"'predictions' must be a sequence; got {type(predictions).__name__}.")
    n = len(predictions)
    for what, labels in (("groups", groups), ("strata", strata)):
        if labels is not None and (isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__")
                                   or len(labels) != n):
            got = f"{len(labels)} labels" if hasattr(labels, "__len__") and not isinstance(labels, (str, bytes)) \
                else f"{type(labels).__name__} {labels!r:.40}"
            raise InvalidParameterError(
                f"The {what!r} parameter of assay.evaluate must be a sequence with one label per prediction ({n}); "
                f"got {got}."
            )
    if score_collisions not in COLLISION_RULES:
        raise InvalidParameterError(f"The 'score_collisions' parameter of assay.evaluate must be one of "
                                    f"{', '.join(map(repr, COLLISION_RULES))}; got {score_collisions!r}.")
    ms = resolve_metrics(metrics, collisions=score_collisions)
    seed = new_seed() if seed is None else seed
    inters = [m.map_all(predictions, references, task_data) for m in ms]
    raw = [m.scores_of(inter) for m, inter in zip(ms, inters)]
    check_collisions(ms, {i: list(r) for i, r in enumerate(raw)}, collisions=score_collisions)
    if n == 0:
        warnings.warn("assay.evaluate got no instances: the scores are undefined (NaN where the metric has no "
                      "convention for empty data).", UndefinedMetricWarning, stacklevel=2)
    notes: dict[str, str] = {}
    cis: list[dict[str, tuple[float, float]]] = [{} for _ in ms]
    if n_resamples:
        # metrics that declare their own n_resamples (unitxt) get theirs; 0 or 1: no intervals
        # and unitxt's "fixed" group_mean metrics resample their task_data groups as units (a cluster
        # bootstrap on group_id) unless groups= is given
        by_count: dict[tuple[int, str | None], list[int]] = {}
        for i, m in enumerate(ms):
            own = m.n_resamples
            count = n_resamples if own is None else (int(own) if int(own) >= 2 else 0)
            if count:
                by_count.setdefault((count, None if groups is not None else getattr(m, "resample_groups_by", None)),
                                    []).append(i)
        for (count, field), idx in by_count.items():
            units = groups if field is None else [td[field] for td in task_data or ()]
            part, part_notes = intervals([ms[i] for i in idx], [inters[i] for i in idx], [raw[i] for i in idx],
                                         n=n, n_resamples=count, confidence_level=confidence_level,
                                         method=ci_method, seed=seed, groups=units, strata=strata)
            for i, ci in zip(idx, part):
                cis[i] = ci
            notes.update(part_notes)
        undefined = [f"{name} ({why})" for i, m in enumerate(ms) for s, (lo, _) in cis[i].items()
                     if math.isnan(lo) and (why := notes.get((m.score_prefix or "") + s))
                     for name in [(m.score_prefix or "") + s]]
        if undefined and n:
            warnings.warn("Confidence intervals are undefined (NaN) for: " + "; ".join(undefined)
                          + ". See results.info['ci_notes'].", UndefinedMetricWarning, stacklevel=2)
    g: dict[str, Any] = {}
    first = score_collisions == "first"
    for i, m in enumerate(ms):
        formatted = m.format_scores(raw[i])
        if i == 0:
            g["score"], g["score_name"] = formatted["score"], formatted["score_name"]
            if m.main_score in cis[0]:
                g["score_ci_low"], g["score_ci_high"] = cis[0][m.main_score]
        for k, v in raw[i].items():
            if first and (m.score_prefix or "") + k in g:
                continue  # unitxt's precedence: an earlier metric holds the name (and its interval)
            g[(m.score_prefix or "") + k] = v
            if k in cis[i]:
                g[f"{m.score_prefix or ''}{k}_ci_low"], g[f"{m.score_prefix or ''}{k}_ci_high"] = cis[i][k]
    g["num_of_instances"] = n

    per_inst = []  # per metric: {prefixed name: float array} or a list of dicts (see _instance_scores_of)
    for m, inter in zip(ms, inters):
        cols = _instance_scores_of(m, inter)
        pre = m.score_prefix or ""
        if pre:
            cols = ({pre + k: v for k, v in cols.items()} if isinstance(cols, dict)
                    else [{pre + k: v for k, v in d.items()} for d in cols])
        per_inst.append(cols)
    main_i = next((i for i, m in enumerate(ms) if m.per_instance), None)
    main_key = None if main_i is None else (ms[main_i].score_prefix or "") + ms[main_i].main_score
    info = {
        "metrics": [m.name or type(m).__name__ for m in ms],
        "higher_is_better": {(m.score_prefix or "") + m.main_score: bool(m.higher_is_better) for m in ms},
        "n_resamples": n_resamples, "score_collisions": score_collisions, "confidence_level": confidence_level,
        "ci_method": ci_method, "seed": seed,
        "groups": to_jsonable(list(groups)) if groups is not None else None,
        "strata": to_jsonable(list(strata)) if strata is not None else None,
        "ci_notes": notes,
    }
    # provenance (issue 16): what decides these numbers, one line (see assay.provenance)
    info["signature"] = evaluation_signature(ms, n_resamples=n_resamples, confidence_level=confidence_level,
                                             ci_method=ci_method, seed=seed, groups=groups,
                                             strata=strata).to_string()
    records = {m.name or type(m).__name__: (m, inter) for m, inter in zip(ms, inters)}
    # the results keep their own copy of the inputs (shallow for lists, as a list of dicts would hold the
    # same elements): an edit of the caller's list or array afterwards must not change what they show
    return EvaluationResults.from_columns(n, _snapshot(predictions), _snapshot(references), _snapshot(task_data),
                                          per_inst, main_key=main_key, first=first, global_scores=g, info=info,
                                          records=records)


def _snapshot(values: Any) -> Any:
    if values is None:
        return None
    if isinstance(values, np.ndarray):
        return values.copy()
    return list(values)


def _defining_class(cls: type, attr: str) -> type:
    return next(k for k in cls.__mro__ if attr in vars(k))


def _instance_scores_of(m: Any, inter: Any) -> Any:
    """A metric's instance scores as columns when its class provides them consistently, else as dicts.

    A class that overrides ``instance_scores`` without overriding ``instance_columns`` keeps
    its own instance scores (the inherited columns would bypass its override).
    """
    cls = type(m)
    if issubclass(_defining_class(cls, "instance_columns"), _defining_class(cls, "instance_scores")):
        cols = m.instance_columns(inter)
        if cols is not None:
            return cols
    return m.instance_scores(inter)
