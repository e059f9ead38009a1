"""torchmetrics metrics as assay metrics: ``"torchmetrics:MulticlassAveragePrecision[num_classes=5]"``.

Any :class:`torchmetrics.Metric` class loads by its class name, searched in
``torchmetrics`` and its domain packages (``classification``, ``regression``,
``retrieval``, ``text`` ...; ``"torchmetrics:classification.MulticlassAccuracy"`` names
the package); ``[key=value]`` options go to its constructor, except ``score_prefix``
and ``main_score``, which are assay's.

Two paths, one set of numbers:

streaming and sharded (``update`` / ``merge`` / ``compute``)
    The wrapper keeps a live torchmetrics object. ``update`` feeds it tensors; ``merge``
    joins another shard's state with torchmetrics' own ``merge_state`` (the other
    shard's data after this one's, so concatenated states keep shard order); ``compute``
    is the library's ``compute``. This is what ``EvaluatorBase(metrics=...)`` runs and
    what a training loop uses.
``assay.evaluate`` and ``assay.compare`` (intervals, significance)
    A bootstrap needs per-instance resampling, which a torchmetrics state (running
    sums) cannot give. So there the wrapper gathers the instances (``map`` keeps each
    prediction and target as one row of a structured array) and ``reduce`` runs a fresh
    torchmetrics object over any subset: the point value is the library's value on all
    instances, and each resample re-runs it on the resampled instances.

Inputs: the predictions are converted with ``numpy.asarray`` and ``torch.from_numpy``
(Python floats become float64, ints int64); the target of an instance is its only
reference (``[y]`` -> ``y``), and a longer list (a multi-label row, several reference
texts for ``BLEUScore``) as it is (see :func:`assay_interop._common.target_of`).
Aggregation metrics whose ``update`` takes values only (``CatMetric``, ``MeanMetric``) need no
references. Numeric predictions and targets get assay's input check: a NaN or infinity is an
:class:`~assay.errors.InvalidParameterError` naming the metric and the position (torchmetrics
itself would count ``BinaryAccuracy`` on ``[nan, 1.0, 0.0]`` as 0.667, and ``BinaryAUROC``
with a NaN score as 1.0), except for the metrics with a ``nan_strategy`` option (``MeanMetric``,
``SumMetric`` ...), which handle NaN as that option says. Extra ``update`` arguments (retrieval
``indexes``) are not supported.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.errors import EvaluationError, InvalidParameterError, UndefinedMetricWarning, UnknownNameError
from assay.metrics import Metric
from assay_interop._common import check_numeric_inputs, close_matches, require, spec, target_of

__all__ = ["TorchMetric", "metric_classes", "resolve"]

NAMESPACE = "torchmetrics"
#: domain packages searched, in this order, for a class not found at torchmetrics' top level
PACKAGES = ("classification", "regression", "retrieval", "nominal", "clustering", "aggregation", "text",
            "segmentation", "image", "audio", "detection", "multimodal", "shape", "video")


def _public_classes(module: Any, base: type) -> dict[str, type]:
    out = {}
    for name in getattr(module, "__all__", ()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # top-level names deprecated in favour of packages
            obj = getattr(module, name, None)
        if (isinstance(obj, type) and issubclass(obj, base) and obj is not base
                and not obj.__module__.startswith("torchmetrics.wrappers")):
            out[name] = obj
    return out


def _package(name: str) -> Any:
    """``torchmetrics.<name>``, or None when it cannot be imported (an optional dependency missing)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(f"torchmetrics.{name}")
    except Exception:  # noqa: BLE001 - a domain package whose own optional dependency is missing
        return None


def metric_classes() -> dict[str, type]:
    """Every public torchmetrics Metric class this namespace can load, by class name (imports them all)."""
    tm = require("torchmetrics")
    out: dict[str, type] = {}
    for pkg in PACKAGES:
        module = _package(pkg)
        out.update(_public_classes(module, tm.Metric) if module is not None else {})
    for name, cls in _public_classes(tm, tm.Metric).items():
        out.setdefault(name, cls)
    return out


def _find(name: str) -> type:
    tm = require("torchmetrics")
    package, _, cls_name = name.rpartition(".")
    if package:
        module = _package(package) if package in PACKAGES else None
        found = _public_classes(module, tm.Metric) if module is not None else {}
        if cls_name in found:
            return found[cls_name]
        where = (f"torchmetrics.{package}" if module is not None
                 else f"torchmetrics ({package!r} is not one of its packages: {', '.join(PACKAGES)})")
        raise UnknownNameError(f"No torchmetrics metric named {cls_name!r} in {where}.{close_matches(cls_name, found)}")
    for pkg in PACKAGES:  # the domain packages first: torchmetrics deprecates its top-level names
        module = _package(pkg)
        if module is not None and name in getattr(module, "__all__", ()):
            found = _public_classes(module, tm.Metric)
            if name in found:
                return found[name]
    top = _public_classes(tm, tm.Metric)
    if name in top:
        return top[name]
    raise UnknownNameError(f"No torchmetrics metric class named {name!r} (torchmetrics:{name})."
                           f"{close_matches(name, metric_classes())} Class names are case-sensitive, as in "
                           "'torchmetrics:MulticlassAccuracy[num_classes=3]'.")


def resolve(name: str, **options: Any) -> TorchMetric:
    """The resolver of the ``torchmetrics`` namespace: ``resolve("MulticlassAccuracy", num_classes=3)``."""
    prefix = options.pop("score_prefix", "")
    main_score = options.pop("main_score", None)
    cls = _find(name)
    try:
        metric = cls(**options)
    except Exception as exc:
        raise InvalidParameterError(
            f"{spec(NAMESPACE, name, options)}: torchmetrics rejected the options: {type(exc).__name__}: {exc}"
        ) from exc
    wrapped = TorchMetric(metric, main_score=main_score, score_prefix=prefix)
    wrapped.name = spec(NAMESPACE, name, options)
    return wrapped


def _required_arguments(update: Any) -> int:
    """How many positional arguments ``update`` requires (``self`` excluded)."""
    try:
        params = list(inspect.signature(update).parameters.values())[1:]
    except (TypeError, ValueError):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)


def snake_case(name: str) -> str:
    """``"MulticlassAveragePrecision"`` -> ``"multiclass_average_precision"`` (``"AUROC"`` -> ``"auroc"``)."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


class TorchMetric(Metric):
    """A torchmetrics :class:`~torchmetrics.Metric` as an assay metric.

    Parameters
    ----------
    metric : torchmetrics.Metric
        A configured torchmetrics metric (its state is reset; the wrapper keeps a copy).
    main_score : str, optional
        The main score: by default the class name in snake case
        (``multiclass_average_precision``); for a metric whose ``compute`` returns a dict
        (``ROUGEScore``), the key to report as ``score``.
    score_prefix : str
        As for every metric.

    Notes
    -----
    ``compute`` of the torchmetrics object must give one number, or a dict of numbers
    (each reported under its key); a per-class tensor (``average=None``) or a curve is an
    error that asks for an option reducing it. ``higher_is_better`` is the torchmetrics
    class's own (``True`` when the class leaves it undefined). Instance scores are not
    reported. See the module docstring for the two computation paths (streaming state
    with ``merge_state``, gathered instances for intervals).

    Examples
    --------
    >>> from torchmetrics.classification import MulticlassAccuracy      # doctest: +SKIP
    >>> m = TorchMetric(MulticlassAccuracy(num_classes=3, average="micro"))  # doctest: +SKIP
    >>> m.update([0, 1, 2, 2], [[0], [1], [1], [2]]).compute_scores()["score"]  # doctest: +SKIP
    0.75
    """

    per_instance = False
    requirements = {"torchmetrics": "torchmetrics"}

    def __init__(self, metric: Any, *, main_score: str | None = None, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        tm = require("torchmetrics")
        if not isinstance(metric, tm.Metric):
            raise InvalidParameterError(f"TorchMetric's 'metric' must be a torchmetrics.Metric; got "
                                        f"{type(metric).__name__} {metric!r:.60}.")
        if main_score is not None and (not isinstance(main_score, str) or not main_score):
            raise InvalidParameterError(f"The 'main_score' option of torchmetrics:{type(metric).__name__} must be a "
                                        f"non-empty str; got {main_score!r}.")
        self.class_name = type(metric).__name__
        self.main_score = main_score or snake_case(self.class_name)
        hib = getattr(metric, "higher_is_better", None)
        self.higher_is_better = True if hib is None else bool(hib)
        self._tm = copy.deepcopy(metric)
        self._tm.reset()
        # aggregation metrics (CatMetric, MeanMetric ...) take values only: no references
        self.needs_references = _required_arguments(type(metric).update) >= 2

    # ------------------------------------------------------------------ gathered instances
    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                  task_data: Sequence[Any] | None) -> Any:
        """One row per instance: a structured array ``(preds, target)`` for numeric data, else a list of pairs."""
        n = len(predictions)
        refs = references if references is not None and self.needs_references else [0] * n
        targets = [target_of(r) for r in refs]
        if not any(isinstance(p, str) for p in predictions):
            p_arr: np.ndarray | None
            t_arr: np.ndarray | None
            try:
                p_arr, t_arr = np.asarray(predictions), np.asarray(targets)
            except ValueError:  # ragged
                p_arr = t_arr = None
            if p_arr is not None and t_arr is not None and p_arr.dtype.kind in "biuf" \
                    and t_arr.dtype.kind in "biuf" and len(p_arr) == n and len(t_arr) == n:
                if not hasattr(self._tm, "nan_strategy"):  # aggregation metrics handle NaN by their own option
                    check_numeric_inputs(p_arr, t_arr if self.needs_references else None, self._where())
                rows = np.empty(n, dtype=[("preds", p_arr.dtype, p_arr.shape[1:]),
                                          ("target", t_arr.dtype, t_arr.shape[1:])])
                rows["preds"], rows["target"] = p_arr, t_arr
                return rows
        return list(zip(predictions, targets))

    def _feed(self, metric: Any, rows: Any) -> None:
        """``metric.update(preds, target)`` with the rows' tensors; the library's errors name the metric."""
        import torch

        preds: Any  # tensors for numeric rows, else lists the library converts itself
        target: Any
        if isinstance(rows, np.ndarray):
            preds = torch.from_numpy(np.ascontiguousarray(rows["preds"]))
            target = torch.from_numpy(np.ascontiguousarray(rows["target"]))
        else:
            preds, target = [r[0] for r in rows], [r[1] for r in rows]
        try:
            metric.update(preds, target) if self.needs_references else metric.update(preds)
        except Exception as exc:
            raise InvalidParameterError(f"{self._where()}: torchmetrics rejected the inputs: "
                                        f"{type(exc).__name__}: {exc}") from exc

    def _scores(self, value: Any) -> dict[str, float]:
        if isinstance(value, Mapping):
            out = {str(k): self._number(v, f"{k!r} of ") for k, v in value.items()}
            if self.main_score not in out:
                raise EvaluationError(f"{self._where()} returned the scores {sorted(out)}; choose the main one with "
                                      f"[main_score=...] (e.g. main_score={next(iter(out), 'name')}).")
            return out
        return {self.main_score: self._number(value, "")}

    def _number(self, value: Any, what: str) -> float:
        numel = getattr(value, "numel", None)
        if numel is not None and numel() == 1:
            return float(value.item())
        if isinstance(value, (int, float)):
            return float(value)
        shape = f" of shape {tuple(value.shape)}" if hasattr(value, "shape") else ""
        raise EvaluationError(f"{self._where()} returned {what}a {type(value).__name__}{shape}, not one number; "
                              "choose options that reduce it to one score (average='macro', ...).")

    def reduce(self, intermediates: Any) -> dict[str, float]:
        scratch = self.__dict__.get("_scratch")
        if scratch is None:
            scratch = self.__dict__["_scratch"] = copy.deepcopy(self._tm)
        scratch.reset()
        if len(intermediates) == 0:
            return {self.main_score: math.nan}
        self._feed(scratch, intermediates)
        return self._scores(self._compute(scratch))

    def _compute(self, metric: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # torchmetrics' "no positive samples" & co.
                return metric.compute()
        except Exception as exc:
            raise EvaluationError(f"{self._where()}: torchmetrics' compute failed: {type(exc).__name__}: {exc}"
                                  ) from exc

    # ------------------------------------------------------------------ streaming state
    def update(self, predictions: Any, references: Any = None, task_data: Any = None) -> TorchMetric:
        """Feed a batch to the torchmetrics state (returns ``self``)."""
        st = self.state
        rows = self.map_all(predictions, references, task_data, offset=st.start + st.n)
        if len(rows):
            self._feed(self._tm, rows)
        st.n += len(rows)
        return self

    def merge(self, *others: Metric) -> TorchMetric:
        """Merge other shards' states in order, with torchmetrics' ``merge_state`` (returns ``self``)."""
        st = self.state
        for other in others:
            if not isinstance(other, TorchMetric) or type(other._tm) is not type(self._tm):
                got = other.class_name if isinstance(other, TorchMetric) else type(other).__name__
                raise InvalidParameterError(f"Cannot merge a {got} into {self._where()}: both must be the same metric.")
            if not other.state.n:
                continue
            joined = copy.deepcopy(other._tm)
            try:
                joined.merge_state(self._tm)  # incoming state first: this shard's data, then the other's
            except Exception as exc:
                raise EvaluationError(f"{self._where()}: torchmetrics cannot merge its states: {exc}") from exc
            for attr, value in (("_update_count", self._tm._update_count + other._tm._update_count),
                                ("_computed", None)):
                if hasattr(joined, attr):
                    setattr(joined, attr, value)
            self._tm = joined
            st.n += other.state.n
        return self

    def compute_scores(self) -> dict[str, Any]:
        """The torchmetrics ``compute`` of everything seen, as assay scores (``score``, ``score_name`` ...);
        :meth:`compute` returns the main one as a float."""
        if not self.state.n:
            warnings.warn(f"Metric {self._where()!r} has seen no data; its score is NaN.", UndefinedMetricWarning,
                          stacklevel=2)
            return self.format_scores({self.main_score: math.nan})
        return self.format_scores(self._scores(self._compute(self._tm)))

    def reset(self) -> TorchMetric:
        super().reset()
        self._tm.reset()
        return self

    def clone(self) -> TorchMetric:
        """A copy with the same options and an empty state (torchmetrics state included)."""
        new = copy.copy(self)
        new.__dict__ = {k: v for k, v in self.__dict__.items() if k not in ("_state", "_scratch", "_tm")}
        new.__dict__ = copy.deepcopy(new.__dict__)
        new._tm = copy.deepcopy(self._tm)
        new._tm.reset()
        return new

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_scratch"}

    def _where(self) -> str:
        return self.name or f"{NAMESPACE}:{self.class_name}"
