"""unitxt's class attributes on assay's metric bases: the class-attribute handlers of assay-unitxt.

Each function below is declared in this plugin's ``pyproject.toml`` under the entry-point
group ``assay.metric_attributes`` with the attribute's name, so assay's class-attribute rule
(:mod:`assay.metrics._attributes`) finds it without importing the plugin and runs
``handler(cls, value)`` when a metric class body declares the attribute:

- ``compute(self, references, prediction, task_data)`` on an ``InstanceMetric`` (and
  ``compute(self, references, predictions, task_data)`` on a ``GlobalMetric`` /
  ``BulkInstanceMetric``) is unitxt's per-instance / per-collection method. assay's
  ``compute()`` is the streaming one (``update`` then ``compute``), so a ``compute``
  that takes arguments is moved, when the class is created, to ``compute_instance`` /
  ``compute_global`` / ``compute_bulk`` (called with unitxt's argument order and names)
  and the streaming ``compute`` stays reachable.
- ``reduction_map`` (:mod:`assay_unitxt.reductions`): ``mean``, ``max``, ``median``,
  ``weighted_win_rate`` and ``group_mean``, with ``subgroup_column``.
- ``process_single_instances`` on a ``GlobalMetric``: ``per_instance`` follows it.
- ``_requirements_list`` (a list of pip requirements, or a dict of module to install
  instructions) is checked on first use with the install hint.
- unitxt attributes assay does not implement (:data:`UNSUPPORTED`) are an error that says
  what to do instead.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
from collections.abc import Mapping
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from assay.errors import InvalidParameterError, MissingDependencyError
from assay.metrics import BulkInstanceMetric, GlobalMetric, InstanceMetric, Metric
from assay.metrics.base import metric_name
from assay_unitxt.reductions import ReductionMap, check_reduction_map

__all__ = ["UNSUPPORTED", "adapt_compute", "check_requirements_list", "compute", "process_single_instances",
           "reduction_map", "requirements_list", "subgroup_column", "unsupported"]

#: unitxt (and other) metric attributes assay does not implement -> what to do instead
UNSUPPORTED: dict[str, str] = {
    "requirements_list": "declare _requirements_list = ['pip-requirement'] (unitxt's spelling) or requirements = "
                         "{'module': 'pip-distribution'} (checked with an install hint)",
    "implemented_reductions": "assay's InstanceMetric and BulkInstanceMetric honour the reductions "
                              "'mean', 'max', 'median', 'weighted_win_rate' and 'group_mean' in reduction_map",
    "confidence_level": "pass confidence_level= to assay.evaluate()",
    "reference_field": "map the field in a MetricPipeline preprocess step",
    "prediction_field": "map the field in a MetricPipeline preprocess step",
    "task_data_field": "map the field in a MetricPipeline preprocess step",
    "aggregator": "write the global score in reduce() (or use InstanceMetric's mean)",
    "aggregating_function_name": "write the global score in reduce() (or use InstanceMetric's mean)",
    "score_prefix": "score_prefix is set per instance: pass score_prefix= to the constructor or the catalog "
                    "name (name[score_prefix=m_])",
}


def _fail(cls: type, attr: str, why: str) -> InvalidParameterError:
    return InvalidParameterError(f"Metric class {cls.__qualname__} (module {cls.__module__}) declares {attr!r}: {why}")


def _mean_of_instances(cls: type) -> bool:
    return issubclass(cls, (InstanceMetric, BulkInstanceMetric))


# --------------------------------------------------------------------------- the handlers
def reduction_map(cls: type, attr: str, value: Any) -> None:
    """``reduction_map``: checked, then the class reduces its instance scores as it says."""
    supported = _mean_of_instances(cls)
    check_reduction_map(cls, value, supported=supported)
    if not supported:
        return  # only None gets here
    reduction = ReductionMap(value) if value else None
    cls.instance_reduction = reduction  # type: ignore[attr-defined]
    cls.additive = cls.vectorized = reduction is None or reduction.additive  # type: ignore[attr-defined]


def subgroup_column(cls: type, attr: str, value: Any) -> None:
    """``subgroup_column``: the task_data field that splits a ``group_mean`` group into sub-groups."""
    if not _mean_of_instances(cls):
        raise _fail(cls, "subgroup_column", "only an InstanceMetric or BulkInstanceMetric with a 'group_mean' "
                                            "reduction_map honours it.")
    if value is not None and not (isinstance(value, str) and value):
        raise _fail(cls, "subgroup_column", f"it must be a task_data field name (a str) or None; got "
                                            f"{type(value).__name__} {value!r:.80}.")


def process_single_instances(cls: type, attr: str, value: Any) -> None:
    """``process_single_instances`` on a GlobalMetric: ``per_instance`` follows it (unless the class sets that)."""
    if not issubclass(cls, GlobalMetric):
        raise _fail(cls, "process_single_instances", "only a GlobalMetric honours it (an InstanceMetric or "
                                                     "BulkInstanceMetric always has instance scores); set "
                                                     "per_instance = False to skip instance scores of a Metric.")
    if not isinstance(value, bool):
        raise _fail(cls, "process_single_instances", f"it must be a bool; got {type(value).__name__} {value!r:.80}.")
    if "per_instance" not in vars(cls):
        cls.per_instance = value


def _is_requirements_list(v: Any) -> bool:
    if isinstance(v, Mapping):
        return all(isinstance(k, str) and isinstance(d, str) for k, d in v.items())
    return isinstance(v, (list, tuple)) and all(isinstance(x, str) and x.strip() for x in v)


def requirements_list(cls: type, attr: str, value: Any) -> None:
    """``_requirements_list``: checked now, and on the metric's first use (with the install hint)."""
    if not _is_requirements_list(value):
        raise _fail(cls, "_requirements_list", "it must be a list of pip requirements (['nltk>=3.6.6']) or a dict "
                                               f"of module name to install instructions; got {type(value).__name__} "
                                               f"{value!r:.80}.")
    for spec in value if not isinstance(value, Mapping) else ():
        try:
            Requirement(spec)
        except InvalidRequirement as exc:
            raise _fail(cls, "_requirements_list", f"{spec!r} is not a pip requirement ({exc}).") from None
    inherited = cls.check_requirements  # type: ignore[attr-defined]
    if getattr(inherited, "_checks_requirements_list", False):
        return  # a base's wrapper reads self._requirements_list already

    def check_requirements(self: Metric) -> None:
        inherited(self)
        check_requirements_list(self, f"metric {metric_name(self)!r}")

    check_requirements.__doc__ = inherited.__doc__
    check_requirements._checks_requirements_list = True  # type: ignore[attr-defined]
    cls.check_requirements = check_requirements  # type: ignore[attr-defined]


def compute(cls: type, attr: str, fn: Any) -> None:
    """unitxt's ``compute(self, references, prediction(s), task_data)``: moved to the method of the class's kind."""
    kind = ("instance" if issubclass(cls, InstanceMetric) else "bulk" if issubclass(cls, BulkInstanceMetric)
            else "global" if issubclass(cls, GlobalMetric) else None)
    if kind is None:
        raise _fail(cls, "compute", "a compute() that takes arguments is unitxt's per-instance method, honoured on "
                                    "an InstanceMetric, BulkInstanceMetric or GlobalMetric; a Metric's compute() "
                                    "is the streaming one and takes none (implement map and reduce).")
    adapt_compute(cls, kind)


def unsupported(cls: type, attr: str, value: Any) -> None:
    """A unitxt attribute assay does not implement (:data:`UNSUPPORTED`): an error saying what to do instead."""
    hint = UNSUPPORTED.get(attr, "assay-unitxt knows it as a unitxt attribute that assay does not implement")
    raise _fail(cls, attr, f"this attribute is not supported by assay (it would be ignored); {hint}.")


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


# --------------------------------------------------------------------------- _requirements_list
def _installed_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


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
        try:
            req = Requirement(spec)
        except InvalidRequirement as exc:
            raise InvalidParameterError(f"{owner}: the _requirements_list entry {spec!r} is not a pip requirement "
                                        f"({exc}).") from None
        version = _installed_version(req.name)
        if version is None:
            raise MissingDependencyError(str(spec), purpose=owner)
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            err = MissingDependencyError(f"'{spec}'", purpose=owner)
            raise _reworded(err, f"{req.name} {version} is installed but {owner} requires {spec}; install it "
                                 f"with: pip install '{spec}'")
