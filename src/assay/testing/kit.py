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
    A metric pickled half-way through its updates resumes and gives the global scores.

Scores compare with ``numpy.isclose(rtol=1e-9, atol=atol)`` in the invariance checks
(floating-point sums in another order may differ in the last bits) and with
``atol`` only against expected values; NaN equals NaN.
"""

from __future__ import annotations

import math
import pickle
from typing import Any, Mapping, Sequence

import numpy as np

from assay.metrics.base import Metric

__all__ = ["check_invariances", "check_scores", "test_metric"]


def _metric(metric: Any) -> Metric:
    if isinstance(metric, str):
        from assay.metrics.catalog import resolve_metric

        return resolve_metric(metric)[0]
    if not isinstance(metric, Metric):
        raise TypeError(f"'metric' must be an assay Metric or a registered name; got {type(metric).__name__}.")
    return metric


def _close(a: Any, b: Any, atol: float, rtol: float) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return bool(np.isclose(fa, fb, rtol=rtol, atol=atol))


def check_scores(got: Mapping[str, Any], expected: Mapping[str, Any], *, atol: float = 1e-9,
                 rtol: float = 0.0, what: str = "scores") -> None:
    """Assert that every key of ``expected`` is in ``got`` with a close value."""
    problems = []
    for k, v in expected.items():
        if k not in got:
            problems.append(f"{k!r} missing (have {sorted(got)})")
        elif not _close(got[k], v, atol, rtol):
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


def check_invariances(metric: Any, predictions: Any, references: Any = None, task_data: Any = None, *,
                      atol: float = 1e-9, seed: int = 0) -> dict[str, Any]:
    """Check order, chunking, shard-then-merge, one-at-a-time and pickling; return the global scores."""
    m0 = _metric(metric)
    n = len(predictions)
    base = m0.clone().update(predictions, references, task_data).compute()
    rtol = 1e-9

    def same(got: Mapping[str, Any], how: str) -> None:
        check_scores(got, base, atol=atol, rtol=rtol, what=f"{m0.name or type(m0).__name__}: {how} changed the scores")

    perm = np.random.default_rng(seed).permutation(n).tolist()
    same(m0.clone().update(_sub(predictions, perm), _sub(references, perm), _sub(task_data, perm)).compute(),
         "shuffling the instances")
    if m0.per_instance and n:
        inst = m0.instance_scores(m0.map_all(predictions, references, task_data))
        inst_p = m0.instance_scores(m0.map_all(_sub(predictions, perm), _sub(references, perm), _sub(task_data, perm)))
        for j, i in enumerate(perm):
            check_scores(inst_p[j], inst[i], atol=atol, rtol=rtol,
                         what=f"instance {i} scores after shuffling")

    m = m0.clone()
    start, size = 0, 1
    while start < n:
        idx = list(range(start, min(n, start + size)))
        m.update(_sub(predictions, idx), _sub(references, idx), _sub(task_data, idx))
        start += size
        size += 1
    same(m.compute(), "updating in chunks of 1, 2, 3, ...")

    bounds = [0, n // 3, (2 * n) // 3, n]
    shards = []
    for s in range(3):
        idx = list(range(bounds[s], bounds[s + 1]))
        shards.append(m0.clone().update(_sub(predictions, idx), _sub(references, idx), _sub(task_data, idx)))
    same(shards[0].merge(*shards[1:]).compute(), "sharding into 3 and merging")

    m = m0.clone()
    for i in range(n):
        m.update(_sub(predictions, [i]), _sub(references, [i]), _sub(task_data, [i]))
    same(m.compute(), "updating one instance at a time")

    half = n // 2
    m = m0.clone().update(_sub(predictions, range(half)), _sub(references, range(half)), _sub(task_data, range(half)))
    try:
        m = pickle.loads(pickle.dumps(m))
    except Exception as exc:  # noqa: BLE001 - report any pickling failure as a conformance failure
        raise AssertionError(f"{m0.name or type(m0).__name__} cannot be pickled ({exc}); sharded evaluation "
                             "sends metrics to worker processes, so define the class at module top level") from exc
    rest = list(range(half, n))
    m.update(_sub(predictions, rest), _sub(references, rest), _sub(task_data, rest))
    same(m.compute(), "pickling half-way")
    return base


def test_metric(metric: Any, predictions: Any, references: Any, instance_targets: Sequence[Mapping[str, Any]] | None,
                global_target: Mapping[str, Any], task_data: Any = None, atol: float = 1e-9) -> Any:
    """Check a metric against expected scores, and the invariances of :mod:`assay.testing`.

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
        or ``{"score": 0.5, "score_name": "f1"}``).
    atol : float
        Absolute tolerance.

    Returns
    -------
    EvaluationResults
        The results of ``assay.evaluate`` (no intervals), for further checks.

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
    res = evaluate(predictions, references, [m.clone()], task_data, n_resamples=0)
    check_scores(res.global_scores, global_target, atol=atol, what="global scores")
    if instance_targets is not None:
        if len(instance_targets) != len(predictions):
            raise AssertionError(f"instance_targets has {len(instance_targets)} entries for {len(predictions)} instances")
        for i, target in enumerate(instance_targets):
            check_scores(res[i]["score"]["instance"], target, atol=atol, what=f"instance {i} scores")
    streamed = check_invariances(m, predictions, references, task_data, atol=atol)
    check_scores(streamed, _numeric(res.global_scores) | {"score_name": res.global_scores["score_name"]},
                 atol=atol, rtol=1e-9, what="update/compute versus evaluate")
    return res


test_metric.__test__ = False  # type: ignore[attr-defined]  # not a test when imported into a test module
