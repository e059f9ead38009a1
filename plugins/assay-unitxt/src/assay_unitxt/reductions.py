"""unitxt's ``reduction_map`` on assay's instance and bulk metrics: ``mean``, ``max``, ``median``,
``weighted_win_rate`` and ``group_mean``.

:func:`check_reduction_map` checks a class's ``reduction_map`` (run by the class-attribute
handler, :mod:`assay_unitxt.attributes`) and :class:`ReductionMap` is the
:class:`~assay.metrics.kinds.InstanceReduction` the handler sets on the class:

- only ``mean``: the rows stay additive statistics (sums and counts), the scores it lists
  are the instance score names;
- ``max``, ``median``, ``weighted_win_rate`` (see :func:`reduce_rows`): the rows are
  gathered and reduced as a collection; NaN instance scores are left out, as unitxt does;
- ``group_mean`` (see :func:`group_reduce`): each row carries its ``task_data["group_id"]``
  (and ``subgroup_column`` value); the aggregation runs per group, then the NaN-mean over
  groups. unitxt's ``fixed_`` aggregations resample the groups as units in the intervals.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.metrics.base import metric_name

__all__ = ["REDUCTIONS", "ReductionMap", "check_group_mean", "check_reduction_map", "group_key_of", "group_reduce",
           "group_score_name", "reduce_rows"]

#: every ``reduction_map`` reduction assay-unitxt honours, and whether it is additive (a sum of statistics)
REDUCTIONS: dict[str, bool] = {"mean": True, "max": False, "median": False, "weighted_win_rate": False,
                               "group_mean": False}


def _is_str_seq(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)


def _fail(cls: type, why: str) -> InvalidParameterError:
    return InvalidParameterError(f"Metric class {cls.__qualname__} (module {cls.__module__}) declares "
                                 f"'reduction_map': {why}")


def check_reduction_map(cls: type, value: Any, *, supported: bool) -> None:
    """Raise :class:`InvalidParameterError` naming ``cls`` unless ``value`` is a ``reduction_map`` assay honours.

    ``supported``: whether ``cls`` is an instance or bulk metric (no other class honours one).
    """
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise _fail(cls, f"it must be a dict such as {{'mean': ['accuracy']}}; got {type(value).__name__} "
                         f"{value!r:.80}.")
    honoured = tuple(REDUCTIONS) if supported else ()
    bad = [k for k in value if k not in honoured]
    if bad:
        says = (f"assay honours {', '.join(repr(r) for r in honoured)}" if honoured
                else f"{cls.__qualname__} is not an InstanceMetric or BulkInstanceMetric, so no reduction_map "
                     "is honoured (write the global score in reduce())")
        raise _fail(cls, f"the reduction(s) {', '.join(repr(k) for k in bad)} are not supported by assay; {says}.")
    main = vars(cls).get("main_score", getattr(cls, "main_score", None))
    seen: dict[str, str] = {}
    for k, names in value.items():
        if k == "group_mean":
            check_group_mean(names, lambda why: _fail(cls, why))
            if len(value) > 1:
                raise _fail(cls, "'group_mean' cannot be combined with other reductions in one class (its global "
                                 "scores are group aggregates); declare a second metric class for the other "
                                 "reduction.")
            names = list(names.get("score_fields") or [main])
        if not _is_str_seq(names) or not names:
            raise _fail(cls, f"reduction {k!r} must list score names (e.g. ['accuracy']); got {names!r:.80}.")
        for name in names:
            if name in seen and seen[name] != k:
                raise _fail(cls, f"score {name!r} is listed under both {seen[name]!r} and {k!r}; one global score "
                                 "cannot have two reductions.")
            seen[name] = k
    if isinstance(main, str) and main not in seen:
        raise _fail(cls, f"main_score {main!r} is not among the reduced scores {list(seen)}.")


class ReductionMap:
    """The :class:`~assay.metrics.kinds.InstanceReduction` of a checked ``reduction_map``."""

    def __init__(self, reduction_map: Mapping[str, Any]) -> None:
        self.reduction_map = dict(reduction_map)
        self.group_spec: Mapping[str, Any] | None = self.reduction_map.get("group_mean")
        self.additive = all(REDUCTIONS[how] for how in self.reduction_map)

    def score_names(self, metric: Any) -> tuple[str, ...] | None:
        if self.group_spec is not None:
            return tuple(self.group_spec.get("score_fields") or (metric.main_score,))
        return tuple(dict.fromkeys(name for names in self.reduction_map.values() for name in names)) or None

    def reduction_of(self, name: str) -> str:
        if self.group_spec is not None:
            return "group_mean"
        return next((how for how, names in self.reduction_map.items() if name in names), "mean")

    def resample_groups_by(self) -> str | None:
        spec = self.group_spec
        return "group_id" if spec is not None and spec["agg_func"][2] else None

    def attach(self, rows: np.ndarray, task_data: Sequence[Any] | None, metric: Any) -> Any:
        """With ``group_mean``: each row with its ``(group, subgroup)`` from ``task_data``; else the rows."""
        if self.group_spec is None:
            return rows
        tds = task_data if task_data is not None else [None] * len(rows)
        owner = metric_name(metric)
        column = getattr(metric, "subgroup_column", None)
        return [(row, *group_key_of(td, column, i, owner)) for i, (row, td) in enumerate(zip(rows, tds))]

    def rows(self, intermediates: Any) -> Any:
        if self.group_spec is None:
            return intermediates
        return np.asarray([item[0] for item in intermediates], dtype=float)

    def reduce(self, intermediates: Any, metric: Any) -> dict[str, Any]:
        names = metric.names
        spec = self.group_spec
        if spec is not None:  # (row, group, subgroup) items: unitxt's group_mean
            # each group score under its own name (the main score) and under unitxt's name,
            # [fixed_]group_<agg>_<score> (a score_prefix goes in front, as for every assay score)
            values = group_reduce(intermediates, names, spec, getattr(metric, "subgroup_column", None))
            return {**values, **{group_score_name(spec, name): v for name, v in values.items()}}
        # gathered rows: reduce the collection (max, median, win rate)
        return reduce_rows(np.asarray(intermediates, dtype=float), names, {n: self.reduction_of(n) for n in names})

    def __repr__(self) -> str:
        return f"ReductionMap({self.reduction_map!r})"


def _weighted_win_rate(values: np.ndarray) -> float:
    # unitxt: a positive score s wins s battles of s, a negative one loses |s|, a zero is a tie
    # (2 battles, 1 win)
    pos = values > 0
    neg = values < 0
    zero = ~(pos | neg)
    wins = values[pos].sum() + zero.sum()
    battles = values[pos].sum() + np.abs(values[neg]).sum() + 2 * zero.sum()
    return float(wins / battles) if battles else math.nan


def reduce_rows(rows: np.ndarray, names: Sequence[str], reduction_of: Mapping[str, str]) -> dict[str, float]:
    """Global scores of instance-score rows ``(n, 2k)``: values then "is defined" flags, per name.

    NaN instance scores are left out (unitxt's ``nan_mean`` / ``nan_max``); a score with
    no defined instance is NaN.
    """
    k = len(names)
    rows = np.asarray(rows, dtype=float).reshape(-1, 2 * k)
    out: dict[str, float] = {}
    for j, name in enumerate(names):
        v = rows[rows[:, k + j] > 0, j]
        how = reduction_of[name]
        if not len(v):
            out[name] = math.nan
        elif how == "mean":
            out[name] = float(v.mean())
        elif how == "max":
            out[name] = float(v.max())
        elif how == "median":
            out[name] = float(np.median(v))
        else:
            out[name] = _weighted_win_rate(v)
    return out


# --------------------------------------------------------------------------- group_mean
GROUP_MEAN_KEYS = ("agg_func", "score_fields")


def check_group_mean(spec: Any, fail: Callable[[str], Exception]) -> None:
    """unitxt's ``reduction_map["group_mean"]``: ``{"agg_func": [name, callable, bool], "score_fields": [...]}``."""
    if not isinstance(spec, Mapping):
        raise fail("'group_mean' must map to a dict such as {'agg_func': ['mean', nan_mean, False]}; got "
                   f"{type(spec).__name__} {spec!r:.60}.")
    unknown = [k for k in spec if k not in GROUP_MEAN_KEYS]
    if unknown:
        raise fail(f"'group_mean' has the unknown key(s) {unknown}; it takes {list(GROUP_MEAN_KEYS)}.")
    agg = spec.get("agg_func")
    if not (isinstance(agg, (list, tuple)) and len(agg) == 3 and isinstance(agg[0], str) and callable(agg[1])
            and isinstance(agg[2], bool)):
        raise fail("'group_mean' needs 'agg_func': [name (str), aggregation function (callable), resample the "
                   f"groups as units (bool)]; got {agg!r:.80}.")
    fields = spec.get("score_fields")
    if fields is not None and not (isinstance(fields, (list, tuple)) and fields
                                   and all(isinstance(f, str) for f in fields)):
        raise fail(f"'group_mean' 'score_fields' must be a non-empty list of score names; got {fields!r:.60}.")


def group_score_name(spec: Mapping[str, Any], field: str, prefix: str = "") -> str:
    """unitxt's name of a group-reduced score: ``[fixed_]group_<agg name>_<prefix><field>``."""
    name, _, fixed = spec["agg_func"]
    return f"{'fixed_' if fixed else ''}group_{name}_{prefix}{field}"


def group_key_of(task_data: Any, subgroup_column: str | None, index: int, owner: str) -> tuple[str, str]:
    """``(str(group_id), str(subgroup))`` of one instance's ``task_data`` (unitxt reads ``group_id``)."""
    if not isinstance(task_data, Mapping) or "group_id" not in task_data:
        raise InvalidParameterError(
            f"Metric {owner!r} reduces with 'group_mean': every instance needs task_data with a 'group_id'; "
            f"instance {index} has task_data {task_data!r:.80}.")
    sub = "default"
    if subgroup_column is not None:
        if subgroup_column not in task_data:
            raise InvalidParameterError(
                f"Metric {owner!r} has subgroup_column {subgroup_column!r}: every instance needs that key in its "
                f"task_data; instance {index} has {sorted(task_data)}.")
        sub = str(task_data[subgroup_column])
    return str(task_data["group_id"]), sub


def group_reduce(items: Any, names: Sequence[str], spec: Mapping[str, Any],
                 subgroup_column: str | None) -> dict[str, float]:
    """unitxt's ``group_mean``: per group the aggregation of its instance scores, then the NaN-mean over groups.

    ``items`` are ``(row, group, subgroup)``: ``row`` the instance's scores then "is defined"
    flags (an undefined score is passed on as NaN, as unitxt passes NaN scores to the
    aggregation). The aggregation gets the group's list of scores, or with ``subgroup_column``
    a ``defaultdict(list)`` from sub-group to scores. Groups are visited in sorted order.
    """
    k = len(names)
    fn = spec["agg_func"][1]
    groups: dict[str, dict[str, Any]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for row, group, sub in items:
        row = np.asarray(row, dtype=float)
        for j, name in enumerate(names):
            groups[group][name][sub].append(float(row[j]) if row[k + j] > 0 else math.nan)
    out: dict[str, float] = {}
    for name in names:
        values = []
        for group in sorted(groups):
            by_sub = groups[group][name]
            arg = defaultdict(list, {s: list(v) for s, v in by_sub.items()}) if subgroup_column is not None \
                else list(by_sub["default"])
            values.append(float(fn(arg)))
        v = np.asarray(values, dtype=float)
        v = v[~np.isnan(v)]
        out[name] = float(v.mean()) if v.size else math.nan
    return out
