"""unitxt's spellings on assay's metric bases (private): ported metric classes run as written.

- ``compute(self, references, prediction, task_data)`` on an ``InstanceMetric`` (and
  ``compute(self, references, predictions, task_data)`` on a ``GlobalMetric`` /
  ``BulkInstanceMetric``) is unitxt's per-instance / per-collection method. assay's
  ``compute()`` is the streaming one (``update`` then ``compute``), so a ``compute``
  that takes arguments is moved, when the class is created, to ``compute_instance`` /
  ``compute_global`` / ``compute_bulk`` (called with unitxt's argument order and names)
  and the streaming ``compute`` stays reachable.
- Dataclass-like fields (``relative_tolerance: float = 0``) are keyword options of the
  constructor and of catalog names (``name[relative_tolerance=0.1]``).
- ``_requirements_list`` (a list of pip requirements, or a dict of module to install
  instructions) is checked on first use with the install hint.
- ``reduction_map`` reductions: ``mean``, ``max``, ``median`` and ``weighted_win_rate``
  (see :func:`reduce_rows`), and ``group_mean`` (see :func:`group_reduce`).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import math
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError, MissingDependencyError

__all__ = ["REDUCTIONS", "adapt_compute", "check_group_mean", "check_requirements_list", "field_signature",
           "group_key_of", "group_reduce", "group_score_name", "own_fields", "reduce_rows", "set_fields"]

#: every ``reduction_map`` reduction assay honours, and whether it is additive (a sum of statistics)
REDUCTIONS: dict[str, bool] = {"mean": True, "max": False, "median": False, "weighted_win_rate": False,
                               "group_mean": False}

_MISSING = object()


# --------------------------------------------------------------------------- compute(...)
def _takes_arguments(fn: Any) -> bool:
    fn = getattr(fn, "__func__", fn)
    if not callable(fn):
        return False
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return len(params) > 1  # ``self`` and more: unitxt's compute, not the streaming one


def adapt_compute(cls: type, kind: str) -> None:
    """Move a unitxt-style ``compute(...)`` of ``cls`` to the method of ``kind``.

    ``kind`` is ``"instance"``, ``"bulk"`` or ``"global"``. Nothing happens when the
    class body defines no ``compute`` or the streaming ``compute(self)``.
    """
    fn = vars(cls).get("compute")
    if fn is None or not _takes_arguments(fn):
        return
    if kind == "instance":
        def compute_instance(self: Any, prediction: Any, references: Any, task_data: Any = None) -> Any:
            return fn(self, references=references, prediction=prediction,
                      task_data={} if task_data is None else task_data)

        cls.compute_instance = compute_instance  # type: ignore[attr-defined]
    elif kind == "bulk":
        def compute_bulk(self: Any, predictions: Any, references: Any, task_data: Any) -> Any:
            tds = [{} if t is None else t for t in (task_data or [None] * len(predictions))]
            return fn(self, references=list(references), predictions=list(predictions), task_data=tds)

        cls.compute_bulk = compute_bulk  # type: ignore[attr-defined]
    else:
        def compute_global(self: Any, predictions: Any, references: Any, task_data: Any) -> Any:
            tds = [{} if t is None else t for t in (task_data or [None] * len(predictions))]
            return fn(self, list(references), list(predictions), tds)  # unitxt's positional order

        cls.compute_global = compute_global  # type: ignore[attr-defined]
    cls._unitxt_compute = fn  # type: ignore[attr-defined]
    delattr(cls, "compute")  # the streaming compute of the base stays in charge


# --------------------------------------------------------------------------- fields
def own_fields(cls: type) -> dict[str, Any]:
    """Annotated public fields of the non-assay classes of ``cls`` -> their annotation (base first)."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or klass.__module__.startswith("assay.metrics."):
            continue
        ann = vars(klass).get("__annotations__", {}) or {}
        for name, tp in ann.items():
            if name.startswith("_") or "ClassVar" in str(tp):
                continue
            out[name] = tp
    return out


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - an annotation we cannot resolve is not checked
        return {}


def field_signature(cls: type) -> inspect.Signature:
    """The constructor signature of a class that uses the base ``__init__``: ``score_prefix`` and the fields."""
    params = [inspect.Parameter("score_prefix", inspect.Parameter.KEYWORD_ONLY, default="", annotation=str)]
    for name in own_fields(cls):
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=getattr(cls, name, None)))
    return inspect.Signature(params)


def set_fields(metric: Any, values: Mapping[str, Any], matches: Callable[[Any, Any], bool]) -> None:
    """Set the dataclass-like fields given to the constructor, checking names and annotated types."""
    cls = type(metric)
    fields = own_fields(cls)
    hints = _hints(cls) if values else {}
    for name, value in values.items():
        if name not in fields:
            accepted = ", ".join(["score_prefix", *fields])
            raise InvalidParameterError(
                f"{cls.__name__}() got an unexpected keyword {name!r}; it accepts {accepted} (declare an option "
                f"as an annotated class attribute, e.g. {name}: float = 0, to make it a keyword)."
            )
        tp = hints.get(name)
        try:
            ok = tp is None or matches(value, tp)
        except Exception:  # noqa: BLE001 - an annotation we cannot check accepts the value
            ok = True
        if not ok:
            raise InvalidParameterError(
                f"The {name!r} parameter of {cls.__name__} must be {getattr(tp, '__name__', tp)}; got "
                f"{type(value).__name__} {value!r:.80}."
            )
        setattr(metric, name, value)


# --------------------------------------------------------------------------- _requirements_list
def _installed_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _parse_requirement(spec: str) -> Any:
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return None
    return Requirement(spec)


def _reworded(err: MissingDependencyError, message: str) -> MissingDependencyError:
    err.args = (message,)
    err.msg = message  # ImportError's str() reads msg
    return err


def check_requirements_list(metric: Any, owner: str) -> None:
    """unitxt's ``_requirements_list``: raise :class:`MissingDependencyError` with the install hint.

    A list holds pip requirements (``"nltk>=3.6.6"``): the distribution must be installed
    in a matching version. A dict maps an importable module to the instructions shown
    when it is missing (unitxt's form).
    """
    reqs = getattr(metric, "_requirements_list", None)
    if not reqs:
        return
    if isinstance(reqs, Mapping):
        for module, instructions in reqs.items():
            if importlib.util.find_spec(module) is None:
                err = MissingDependencyError(module, purpose=owner)
                raise _reworded(err, f"{module} is required for {owner} but is not installed. {instructions}")
        return
    for spec in reqs:
        req = _parse_requirement(spec)
        if req is None:  # packaging is not a dependency of assay: without it, check presence only
            name = re.split(r"[\s\[<>=!~;]", spec.strip(), maxsplit=1)[0]
            if _installed_version(name) is None:
                raise MissingDependencyError(str(spec), purpose=owner)
            continue
        version = _installed_version(req.name)
        if version is None:
            raise MissingDependencyError(str(spec), purpose=owner)
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            err = MissingDependencyError(f"'{spec}'", purpose=owner)
            raise _reworded(err, f"{req.name} {version} is installed but {owner} requires {spec}; install it "
                                 f"with: pip install '{spec}'")


# --------------------------------------------------------------------------- reductions
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
    from collections import defaultdict

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
