"""Conformance checks of metrics and UE metrics (``assay check-plugin``).

Metrics: the kit's invariances (:data:`assay.testing.kit.INVARIANCES`), ``evaluate``
against ``update`` / ``compute``, the declared examples' expected scores, and bad
inputs.

UE metrics (the callable API ``ue_metric(u, q) -> float``):

score
    a number on the sample (the declared example, else distinct random uncertainties
    and binary quality);
pickling
    the unpickled metric scores the same;
order
    shuffling the examples leaves the score unchanged;
ties
    permuting examples *within* groups of equal uncertainty leaves the score unchanged
    (on a sample made of three tie groups). By convention every UE metric is tie-aware
    (the UE metric protocol: "ties grouped"); one that is not declares
    ``tie_aware=False`` and the check does not apply;
orientation
    the relation the metric declares as ``orientation`` (:data:`ORIENTATIONS`:
    ``complement``, ``negate``, ``reflect``) holds, and always: a perfect ranking scores
    at least as well as a shuffled one and a shuffled one at least as well as the
    reversed one, strictly somewhere (``higher_is_better`` tells which way);
nan-input
    an uncertainty holding NaN is an assay error or NaN with a warning;
streaming
    where the metric has ``update`` (``hasattr``, a capability check): the metric
    invariances of :mod:`assay.testing.kit`, ``evaluate`` equal to ``update`` /
    ``compute``, and ``compute`` equal to the call.

A bad input passes when it raises an :class:`~assay.errors.AssayError`, or gives NaN
(for no instances: any value) with an :class:`~assay.errors.UndefinedMetricWarning`;
a raw numpy or Python error, or a number without a warning, fails.
"""

from __future__ import annotations

import functools
import math
import pickle
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from assay.errors import AssayError, UndefinedMetricWarning
from assay.metrics.base import Metric
from assay.plugins.registry import Entry
from assay.testing.kit import INVARIANCES, check_evaluate_matches, check_invariance, check_scores
from assay.testing.recorder import NOT_RUN, NotApplicable, Recorder, Skip
from assay.testing.samples import declared_examples, generate_metric_sample, ue_sample

__all__ = ["METRIC_CHECKS", "ORIENTATIONS", "UE_METRIC_CHECKS", "bad_input_outcome", "check_metric", "check_ue_metric",
           "declared"]

METRIC_CHECKS = ("instantiate", "examples", *INVARIANCES, "evaluate", "bad-inputs")
UE_METRIC_CHECKS = ("instantiate", "score", "pickling", "order", "ties", "orientation", "nan-input", "streaming")


def bad_input_outcome(run: Callable[[], Any], *, any_value: bool = False) -> str | None:
    """None when ``run()`` raises an AssayError or gives NaN with an UndefinedMetricWarning, else what went wrong.

    ``any_value``: any number is fine with the warning (no instances: a documented
    ``zero_division`` value).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = run()
        except AssayError:
            return None
        except Exception as exc:  # noqa: BLE001 - the point of the check
            return f"raw {type(exc).__name__} instead of an assay error ({' '.join(str(exc).split())[:120]})"
    warned = any(issubclass(w.category, UndefinedMetricWarning) for w in caught)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return f"returned {value!r:.60} instead of raising an assay error"
    if warned and (any_value or math.isnan(number)):
        return None
    if math.isnan(number):
        return "returned NaN without an UndefinedMetricWarning"
    return f"returned {number!r} instead of raising an assay error"


# --------------------------------------------------------------------------------------- metrics
def _is_metric(obj: Any) -> None:
    if not isinstance(obj, Metric):
        raise AssertionError(f"the factory returned a {type(obj).__name__}, not an assay Metric (assay.metrics.Metric)")


def _first_leaf(x: Any) -> list[int]:
    path = []
    while isinstance(x, (list, tuple)) and x:
        path.append(0)
        x = x[0]
    return path


def _with_nan(predictions: Any) -> Any:
    if isinstance(predictions, np.ndarray) and predictions.dtype.kind == "f" and predictions.size:
        out = predictions.copy()
        out.flat[0] = np.nan
        return out
    out = predictions.tolist() if isinstance(predictions, np.ndarray) else _deep_list(predictions)
    path = _first_leaf(out)
    if not path:
        return [math.nan]
    target = out
    for i in path[:-1]:
        target = target[i]
    target[path[-1]] = math.nan
    return out


def _deep_list(x: Any) -> Any:
    return [_deep_list(v) for v in x] if isinstance(x, (list, tuple)) else x


def _bad_inputs(example: Mapping[str, Any]) -> list[tuple[str, Any, Any, Any]]:
    """(label, predictions, references, task_data) of inputs every metric must reject."""
    p, r, td = example["predictions"], example.get("references"), example.get("task_data")
    n = len(p)
    cases = [("a NaN prediction", _with_nan(p), r, td)]
    wrong = (p.tolist() if isinstance(p, np.ndarray) else list(p))
    if wrong:
        # a mapping where predictions are not mappings; where they are (key-value extraction), a number
        wrong[0] = 7 if isinstance(wrong[0], Mapping) else {"not": "a prediction"}
        cases.append(("a prediction of the wrong type", wrong, r, td))
    if r is not None and n >= 2:
        cases.append(("references of another length", p, list(r)[:-1], td))
    return cases


def _fail(message: str) -> None:
    raise AssertionError(message)


def _type_name(metric: Any) -> str:
    tp = getattr(metric, "prediction_type", None)
    return getattr(tp, "__name__", None) or repr(tp)


def _generated(metric: Metric) -> tuple[dict[str, Any] | None, str]:
    """A generated example for ``metric`` and "", or None and why there is none."""
    sample = generate_metric_sample(metric)
    if sample is None:
        return None, (f"no sample inputs: declare examples=[{{'predictions': ..., 'references': ...}}] (assay "
                      f"cannot generate predictions of prediction_type {_type_name(metric)})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            metric.clone().update(sample["predictions"], sample["references"]).compute_scores()
    except Exception as exc:  # noqa: BLE001 - generated inputs the metric does not take: say so
        return None, (f"no examples declared, and the metric rejected the generated sample of prediction_type "
                      f"{_type_name(metric)} ({type(exc).__name__}: {' '.join(str(exc).split())[:120]}); "
                      "declare examples=[...]")
    return sample, ""


def check_metric(entry: Entry, rec: Recorder) -> None:
    """Record the checks of one metric."""
    try:
        examples = declared_examples(entry)
    except AssertionError as exc:
        message = str(exc)
        if rec.instantiate({}, check=_is_metric) is not NOT_RUN:
            rec.run("examples", lambda: _fail(message))
            rec.skip_rest("no usable examples")
        return
    if examples:
        metrics = rec.run("instantiate", lambda: [_make(entry, ex) for ex in examples])
        if metrics is NOT_RUN:
            rec.skip_rest("not instantiated")
            return
        rec.run("examples", lambda: _expected_scores(examples, metrics))
    else:
        metric = rec.instantiate({}, check=_is_metric)
        if metric is NOT_RUN:
            return
        sample, why = _generated(metric)
        if sample is None:
            rec.skip_rest(why)
            return
        examples, metrics = [sample], [metric]
        rec.skip("examples", f"no examples declared; the checks ran on {len(sample['predictions'])} generated "
                             f"instances of prediction_type {_type_name(metric)}", applies=False)

    def invariance(check: str) -> Callable[[Metric, Mapping[str, Any]], Any]:
        return lambda m, ex: check_invariance(check, m, *_data(ex), atol=ex.get("atol", 1e-9))

    for check in INVARIANCES:
        rec.run(check, _each(examples, metrics, invariance(check)))
    rec.run("evaluate", _each(examples, metrics, lambda m, ex: check_evaluate_matches(
        m, *_data(ex), atol=ex.get("atol", 1e-9))))
    rec.run("bad-inputs", lambda: _check_bad_inputs(examples[0], metrics[0]))


def _make(entry: Entry, example: Mapping[str, Any]) -> Metric:
    metric = entry.create(**dict(example.get("overrides", {})))
    _is_metric(metric)
    return metric


def _data(example: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return example["predictions"], example.get("references"), example.get("task_data")


def _each(examples: list[Mapping[str, Any]], metrics: list[Metric],
          fn: Callable[[Metric, Mapping[str, Any]], Any]) -> Callable[[], None]:
    def run() -> None:
        for i, (ex, m) in enumerate(zip(examples, metrics)):
            try:
                fn(m, ex)
            except AssertionError as exc:
                raise AssertionError(f"example {i}: {exc}" if len(examples) > 1 else str(exc)) from None
    return run


def _expected_scores(examples: list[Mapping[str, Any]], metrics: list[Metric]) -> None:
    targets = [i for i, ex in enumerate(examples) if "global_target" in ex]
    if not targets:
        raise NotApplicable("the declared examples give no global_target to compare with (the invariances ran)")
    for i in targets:
        ex = examples[i]
        got = metrics[i].clone().update(*_data(ex)).compute_scores()
        check_scores(got, ex["global_target"], atol=ex.get("atol", 1e-9), what=f"example {i}: global scores")


def _evaluate_score(metric: Metric, predictions: Any, references: Any, task_data: Any) -> float:
    from assay.metrics.api import evaluate

    res = evaluate(predictions, references, [metric.clone()], task_data, n_resamples=0)
    return res.global_scores["score"]


def _check_bad_inputs(example: Mapping[str, Any], metric: Metric) -> None:
    """Bad inputs through :func:`assay.evaluate`, as the reliability policy (docs/reliability.md) states it."""
    problems = []
    for label, p, r, td in _bad_inputs(example):
        problem = bad_input_outcome(functools.partial(_evaluate_score, metric, p, r, td))
        if problem:
            problems.append(f"{label}: {problem}")
    empty_refs: list[Any] | None = [] if example.get("references") is not None else None
    problem = bad_input_outcome(lambda: _evaluate_score(metric, [], empty_refs, None), any_value=True)
    if problem:
        problems.append(f"no instances: {problem}")
    if problems:
        raise AssertionError("; ".join(problems))


# --------------------------------------------------------------------------------------- UE metrics
#: What negating (or reflecting) the uncertainty does to a UE metric, by the ``orientation`` it declares
#: (registration metadata or class attribute); ``"monotone"`` when it declares none.
ORIENTATIONS: dict[str, str] = {
    "monotone": "a perfect ranking (failures most uncertain) scores at least as well as a shuffled one, and a "
                "shuffled one at least as well as the reversed ranking, strictly somewhere",
    "complement": "f(-u, q) = 1 - f(u, q) (e.g. ROC-AUC: negating u swaps the two classes' ranks)",
    "negate": "f(-u, q) = -f(u, q) (rank correlations: Spearman, Kendall tau-b with midranks)",
    "reflect": "f(1 - u, 1 - q) = f(u, q) (calibration of the confidence 1 - u against a binary outcome with "
               "equal-width bins: relabelling the outcome is a symmetry)",
}


def declared(entry: Entry, obj: Any, key: str, default: Any) -> Any:
    """A declaration of ``entry``: its registration metadata first, then the object's attribute."""
    if key in entry.metadata:
        return entry.metadata[key]
    return getattr(obj, key, default)


def _ue_callable(obj: Any) -> None:
    if not callable(obj):
        raise AssertionError(f"the factory returned a {type(obj).__name__}, which is not callable as "
                             "ue_metric(uncertainty, quality)")


def _score(metric: Any, u: Any, q: Any) -> float:
    value = metric(u, q)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise AssertionError(f"returned {value!r:.60}, not a number") from None


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or bool(np.isclose(a, b, rtol=1e-9, atol=1e-12))


def _tie_sample() -> tuple[np.ndarray, np.ndarray]:
    """Three uncertainty values, four examples each, both outcomes in each tie group."""
    return np.repeat([0.2, 0.5, 0.8], 4), np.tile([0.0, 1.0, 1.0, 0.0], 3)


def _permute_within_ties(u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation of the positions that moves examples only among those with the same uncertainty."""
    perm = np.arange(u.size)
    for value in np.unique(u):
        idx = np.flatnonzero(u == value)
        perm[idx] = rng.permutation(idx)
    return perm


def _monotone(metric: Any) -> None:
    binary = ue_sample()["quality"]
    fails, succ = binary == 0, binary == 1
    perfect_u, reversed_u = np.empty(binary.size), np.empty(binary.size)
    perfect_u[fails] = np.linspace(0.55, 0.95, fails.sum())  # failures most uncertain, no ties
    perfect_u[succ] = np.linspace(0.05, 0.45, succ.sum())
    reversed_u[succ] = np.linspace(0.55, 0.95, succ.sum())   # correct ones most uncertain
    reversed_u[fails] = np.linspace(0.05, 0.45, fails.sum())
    shuffled_u = np.random.default_rng(1).permutation(perfect_u)
    values = [_score(metric, u, binary) for u in (perfect_u, shuffled_u, reversed_u)]
    sign = 1.0 if metric.higher_is_better else -1.0
    labels = ("perfect", "shuffled", "reversed")
    strict = False
    for i in range(3):
        for j in range(i + 1, 3):
            a, b = values[i], values[j]
            if math.isnan(a) or math.isnan(b):
                continue
            if sign * (a - b) < -1e-12:
                raise AssertionError(
                    f"a {labels[i]} ranking scores {a!r} and a {labels[j]} one {b!r}, but higher_is_better="
                    f"{metric.higher_is_better!r}: uncertainty must be higher for failures (conversions happen "
                    "inside the metric)")
            strict = strict or sign * (a - b) > 1e-12
    if not strict:
        raise Skip(f"perfect, shuffled and reversed rankings score {values}: the orientation is not observable on "
                   "the sample; declare examples=[{'overrides': {...}}] that make it observable, or an "
                   "orientation relation")


def _relation(metric: Any, relation: str, u: np.ndarray, q: np.ndarray, base: float) -> None:
    if relation == "complement":
        got, want, how = _score(metric, -u, q), 1.0 - base, "f(-u, q) = 1 - f(u, q)"
    elif relation == "negate":
        got, want, how = _score(metric, -u, q), -base, "f(-u, q) = -f(u, q)"
    elif relation == "reflect":
        got, want, how = _score(metric, 1.0 - u, 1.0 - q), base, "f(1 - u, 1 - q) = f(u, q)"
    else:
        raise AssertionError(f"unknown orientation {relation!r}; expected one of {', '.join(ORIENTATIONS)}")
    if not _same(got, want):
        raise AssertionError(f"orientation {relation!r} promises {how}: f(u, q) = {base!r}, the other side "
                             f"{got!r}, expected {want!r}")


def _streaming(metric: Any, u: np.ndarray, q: np.ndarray, base: float) -> None:
    """The metric invariances and evaluate() of a UE metric that streams (has ``update``)."""
    if not hasattr(metric, "update"):
        raise NotApplicable("the metric has no update(): it is a plain callable, not streamed")
    scores = check_invariance("order", metric, u, q)
    for check in INVARIANCES:
        if check != "order":
            check_invariance(check, metric, u, q)
    check_evaluate_matches(metric, u, q)
    main = getattr(metric, "main_score", None) or getattr(metric, "name", None)
    if main in scores and not _same(float(scores[main]), base):
        raise AssertionError(f"update/compute gives {main}={scores[main]!r}, the call ue_metric(u, q) {base!r}")


def check_ue_metric(entry: Entry, rec: Recorder) -> None:
    """Record the checks of one UE metric."""
    examples = declared_examples(entry)
    example = examples[0] if examples else {}
    metric = rec.instantiate(example.get("overrides"), check=_ue_callable)
    if metric is NOT_RUN:
        return
    sample = example if "uncertainty" in example else ue_sample()
    u, q = np.asarray(sample["uncertainty"], dtype=float), np.asarray(sample["quality"], dtype=float)
    if "uncertainty" not in example:  # distinct uncertainties: the order check is not a tie check
        u = np.random.default_rng(2).permutation(np.linspace(0.02, 0.98, u.size))
    base = rec.run("score", lambda: _score(metric, u, q))
    if base is NOT_RUN:
        rec.skip_rest("no score on the sample")
        return

    def pickling() -> None:
        got = _score(pickle.loads(pickle.dumps(metric)), u, q)
        if not _same(got, base):
            raise AssertionError(f"the unpickled metric scores {got!r}, the original {base!r}")

    def order() -> None:
        for seed in range(5):
            perm = np.random.default_rng(seed).permutation(u.size)
            got = _score(metric, u[perm], q[perm])
            if not _same(got, base):
                raise AssertionError(f"shuffling the examples changed the score from {base!r} to {got!r}")

    def ties() -> None:
        if not declared(entry, metric, "tie_aware", True):
            raise NotApplicable("declares tie_aware=False: its value may depend on the order within ties")
        tu, tq = _tie_sample()
        score = _score(metric, tu, tq)
        for seed in range(5):
            perm = _permute_within_ties(tu, np.random.default_rng(seed))
            got = _score(metric, tu[perm], tq[perm])
            if not _same(got, score):
                raise AssertionError(f"permuting examples within ties of the uncertainty changed the score from "
                                     f"{score!r} to {got!r}: sort with kind='stable' and an explicit tie policy "
                                     "(or declare tie_aware=False)")

    def orientation() -> None:
        if not hasattr(metric, "higher_is_better"):
            raise AssertionError("the metric declares no higher_is_better")
        relation = declared(entry, metric, "orientation", "monotone")
        if relation != "monotone":
            _relation(metric, relation, u, q, base)
        _monotone(metric)

    def nan_input() -> None:
        bad = u.copy()
        bad[min(3, len(bad) - 1)] = np.nan
        problem = bad_input_outcome(lambda: metric(bad, q))
        if problem:
            raise AssertionError(f"uncertainty with a NaN: {problem}")

    rec.run("pickling", pickling)
    rec.run("order", order)
    rec.run("ties", ties)
    rec.run("orientation", orientation)
    rec.run("nan-input", nan_input)
    rec.run("streaming", lambda: _streaming(metric, u, q, base))
