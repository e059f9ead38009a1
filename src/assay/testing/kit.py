"""The conformance kit: :func:`test_metric` and the invariances every metric must satisfy.

A metric passes when its scores match the expected values and do not depend on how
the data reaches it:

order
    Shuffling the instances leaves the global scores unchanged and permutes the
    instance scores.
chunking
    ``update`` in chunks of sizes 1, 2, 3, ... then ``compute`` gives the global scores.
shard-then-merge
    Three shards, each in its own copy of the metric, merged in shard order, give the
    global scores.
one at a time
    ``update`` with one instance per call gives the global scores.
pickling
    A metric pickled half-way through its updates resumes and gives the global scores;
    its state (``metric.state``) pickled half-way reduces to the same scores as the
    original state.

Scores compare with ``numpy.isclose(rtol=1e-9, atol=atol)`` in the invariance checks
(floating-point sums in another order may differ in the last bits) and with
``atol`` only against expected values; NaN equals NaN. :func:`test_metric` also takes
unitxt's targets as unitxt writes them: an expected value written with at most
``decimals`` (2) decimals, such as ``0.33`` for 1/3, matches a score that rounds to it,
as unitxt's ``test_metric`` compares rounded scores; and expected ``*_ci_low`` /
``*_ci_high`` values make it compute the intervals.
"""

from __future__ import annotations

import math
import pickle
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics.base import Metric

__all__ = ["INVARIANCES", "check_evaluate_matches", "check_invariance", "check_invariances", "check_scores",
           "test_metric"]


def _metric(metric: Any) -> Metric:
    if isinstance(metric, str):
        from assay.metrics.catalog import resolve_metric

        return resolve_metric(metric)[0]
    if not isinstance(metric, Metric):
        raise TypeError(f"'metric' must be an assay Metric or a registered name; got {type(metric).__name__}.")
    return metric


def _close(a: Any, b: Any, atol: float, rtol: float, decimals: int | None = None) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    if bool(np.isclose(fa, fb, rtol=rtol, atol=atol)):
        return True
    # unitxt's rule: a target written to ``decimals`` places is compared with the rounded score
    return decimals is not None and round(fb, decimals) == fb and round(fa, decimals) == fb


def check_scores(got: Mapping[str, Any], expected: Mapping[str, Any], *, atol: float = 1e-9,
                 rtol: float = 0.0, what: str = "scores", decimals: int | None = None) -> None:
    """Assert that every key of ``expected`` is in ``got`` with a close value.

    With ``decimals``, an expected value written with at most that many decimals also
    matches a score that rounds to it (unitxt's ``round_floats`` comparison).
    """
    problems = []
    for k, v in expected.items():
        if k not in got:
            problems.append(f"{k!r} missing (have {sorted(got)})")
        elif not _close(got[k], v, atol, rtol, decimals):
            problems.append(f"{k!r}: got {got[k]!r}, expected {v!r}")
    if problems:
        raise AssertionError(f"{what} differ: " + "; ".join(problems))


def _sub(x: Any, idx: Sequence[int]) -> Any:
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return x[np.asarray(idx, dtype=np.intp)]
    return [x[i] for i in idx]


def _numeric(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "num_of_instances"}


class _Data:
    """One sample (predictions, references, task data) and the metric's scores on it in one pass."""

    def __init__(self, metric: Metric, predictions: Any, references: Any, task_data: Any, atol: float,
                 seed: int) -> None:
        self.metric, self.predictions, self.references, self.task_data = metric, predictions, references, task_data
        self.n = len(predictions)
        self.atol, self.rtol, self.seed = atol, 1e-9, seed
        self.base = metric.clone().update(predictions, references, task_data).compute_scores()

    def at(self, idx: Sequence[int]) -> tuple[Any, Any, Any]:
        return _sub(self.predictions, idx), _sub(self.references, idx), _sub(self.task_data, idx)

    def same(self, got: Mapping[str, Any], how: str) -> None:
        m = self.metric
        check_scores(got, self.base, atol=self.atol, rtol=self.rtol,
                     what=f"{m.name or type(m).__name__}: {how} changed the scores")


def _order(d: _Data) -> None:
    perm = np.random.default_rng(d.seed).permutation(d.n).tolist()
    d.same(d.metric.clone().update(*d.at(perm)).compute_scores(), "shuffling the instances")
    if d.metric.per_instance and d.n:
        inst = d.metric.instance_scores(d.metric.map_all(d.predictions, d.references, d.task_data))
        inst_p = d.metric.instance_scores(d.metric.map_all(*d.at(perm)))
        for j, i in enumerate(perm):
            check_scores(inst_p[j], inst[i], atol=d.atol, rtol=d.rtol, what=f"instance {i} scores after shuffling")


def _chunking(d: _Data) -> None:
    m = d.metric.clone()
    start, size = 0, 1
    while start < d.n:
        m.update(*d.at(range(start, min(d.n, start + size))))
        start += size
        size += 1
    d.same(m.compute_scores(), "updating in chunks of 1, 2, 3, ...")


def _shard_merge(d: _Data) -> None:
    bounds = [0, d.n // 3, (2 * d.n) // 3, d.n]
    shards = [d.metric.clone().update(*d.at(range(bounds[s], bounds[s + 1]))) for s in range(3)]
    d.same(shards[0].merge(*shards[1:]).compute_scores(), "sharding into 3 and merging")


def _one_at_a_time(d: _Data) -> None:
    m = d.metric.clone()
    for i in range(d.n):
        m.update(*d.at([i]))
    d.same(m.compute_scores(), "updating one instance at a time")


def _reduce_state(metric: Metric, state: Any) -> dict[str, Any]:
    """The raw scores of a state: its totals (additive metrics) or its gathered intermediates, reduced."""
    with warnings.catch_warnings():  # half of a sample may be degenerate (one class): NaN on both sides
        warnings.simplefilter("ignore")
        return dict(metric.reduce(state.totals if metric.additive else state.intermediates()))


def _pickling(d: _Data) -> None:
    half = d.n // 2
    m = d.metric.clone().update(*d.at(range(half)))
    name = d.metric.name or type(d.metric).__name__
    try:
        state = pickle.loads(pickle.dumps(m.state))
        resumed = pickle.loads(pickle.dumps(m))
    except Exception as exc:
        raise AssertionError(f"{name} cannot be pickled ({exc}); sharded evaluation "
                             "sends metrics to worker processes, so define the class at module top level") from exc
    if type(state) is not type(m.state) or state.n != m.state.n:
        raise AssertionError(f"{name}: the unpickled state is a {type(state).__name__} of {state.n} instances, "
                             f"the original a {type(m.state).__name__} of {m.state.n}")
    if half and not (d.metric.additive and m.state.totals is None):
        check_scores(_reduce_state(m, state), _reduce_state(m, m.state), atol=d.atol, rtol=d.rtol,
                     what=f"{name}: the state pickled half-way changed the scores")
    resumed.update(*d.at(range(half, d.n)))
    d.same(resumed.compute_scores(), "pickling half-way")


#: The invariances of a metric, by the name ``assay check-plugin`` reports them under, in the
#: order :func:`check_invariances` runs them.
INVARIANCES: dict[str, Any] = {
    "order": _order,
    "chunking": _chunking,
    "shard-merge": _shard_merge,
    "one-at-a-time": _one_at_a_time,
    "pickling": _pickling,
}


def check_invariance(check: str, metric: Any, predictions: Any, references: Any = None, task_data: Any = None, *,
                     atol: float = 1e-9, seed: int = 0) -> dict[str, Any]:
    """Check one invariance (a key of :data:`INVARIANCES`); return the global scores of one pass.

    Raises ``AssertionError`` naming the invariance and the scores that changed.
    """
    if check not in INVARIANCES:
        raise InvalidParameterError(f"Unknown invariance {check!r}; expected one of {', '.join(INVARIANCES)}.")
    d = _Data(_metric(metric), predictions, references, task_data, atol, seed)
    INVARIANCES[check](d)
    return d.base


def check_invariances(metric: Any, predictions: Any, references: Any = None, task_data: Any = None, *,
                      atol: float = 1e-9, seed: int = 0) -> dict[str, Any]:
    """Check order, chunking, shard-then-merge, one-at-a-time and pickling; return the global scores."""
    d = _Data(_metric(metric), predictions, references, task_data, atol, seed)
    for check in INVARIANCES.values():
        check(d)
    return d.base


def check_evaluate_matches(metric: Any, predictions: Any, references: Any = None, task_data: Any = None, *,
                           atol: float = 1e-9) -> dict[str, Any]:
    """Check that :func:`assay.evaluate` (no intervals) gives the global scores of ``update`` / ``compute``.

    Returns the global scores of ``evaluate``; raises ``AssertionError`` naming the scores that differ.
    """
    from assay.metrics.api import evaluate

    m = _metric(metric)
    res = evaluate(predictions, references, [m.clone()], task_data, n_resamples=0)
    streamed = m.clone().update(predictions, references, task_data).compute_scores()
    check_scores(streamed, _numeric(res.global_scores) | {"score_name": res.global_scores["score_name"]},
                 atol=atol, rtol=1e-9, what="update/compute versus evaluate")
    return dict(res.global_scores)


def _wants_intervals(target: Mapping[str, Any]) -> bool:
    return any(k.endswith(("_ci_low", "_ci_high")) for k in target)


def test_metric(metric: Any, predictions: Any, references: Any, instance_targets: Sequence[Mapping[str, Any]] | None,
                global_target: Mapping[str, Any], task_data: Any = None, atol: float = 1e-9, *,
                decimals: int | None = 2, n_resamples: int = 1000, seed: int = 0) -> Any:
    """Check a metric against expected scores, and the invariances of :mod:`assay.testing`.

    Called as unitxt's ``test_metric(metric=..., predictions=..., references=...,
    instance_targets=..., global_target=..., task_data=...)``, it passes where unitxt's
    passes (scores compared to two decimals, intervals computed), and then checks
    assay's invariances on top.

    Parameters
    ----------
    metric : Metric or str
        The metric (or its registered name with overrides).
    predictions, references, task_data : sequences
        The instances.
    instance_targets : list of dict or None
        Expected instance scores (only the keys given are compared; ``None`` skips).
    global_target : dict
        Expected global scores (only the keys given are compared, e.g. ``{"f1": 0.5}``
        or ``{"score": 0.5, "score_name": "f1"}``). Keys ending in ``_ci_low`` /
        ``_ci_high`` make the check compute the intervals (percentile bootstrap,
        ``n_resamples`` resamples, ``seed``; a metric's own ``n_resamples`` wins, as in
        :func:`assay.evaluate`).
    atol : float
        Absolute tolerance.
    decimals : int or None
        unitxt's precision: an expected value written with at most ``decimals`` decimals
        (``0.33``) also matches a score that rounds to it (``1/3``). ``None``: ``atol`` only.
    n_resamples, seed : int
        The resampling of the intervals, when ``global_target`` asks for them.

    Returns
    -------
    EvaluationResults
        The results of ``assay.evaluate`` (with intervals when asked for), for further checks.

    Examples
    --------
    In a test module (the metric class must live at module top level, so that it
    pickles, as sharded evaluation requires)::

        from assay.testing import test_metric

        def test_match():
            test_metric(Match(), ["a", "b"], [["a"], ["c"]],
                        instance_targets=[{"match": 1.0}, {"match": 0.0}],
                        global_target={"match": 0.5, "score_name": "match"})
    """
    from assay.metrics.api import evaluate

    m = _metric(metric)
    plain = evaluate(predictions, references, [m.clone()], task_data, n_resamples=0)
    res = plain
    if _wants_intervals(global_target):
        res = evaluate(predictions, references, [m.clone()], task_data, n_resamples=n_resamples, seed=seed)
    check_scores(res.global_scores, global_target, atol=atol, what="global scores", decimals=decimals)
    if instance_targets is not None:
        if len(instance_targets) != len(predictions):
            raise AssertionError(
                f"instance_targets has {len(instance_targets)} entries for {len(predictions)} instances")
        for i, target in enumerate(instance_targets):
            check_scores(res[i]["score"]["instance"], target, atol=atol, what=f"instance {i} scores",
                         decimals=decimals)
    streamed = check_invariances(m, predictions, references, task_data, atol=atol)
    check_scores(streamed, _numeric(plain.global_scores) | {"score_name": plain.global_scores["score_name"]},
                 atol=atol, rtol=1e-9, what="update/compute versus evaluate")
    return res


test_metric.__test__ = False  # type: ignore[attr-defined]  # not a test when imported into a test module
