"""The :class:`Metric` base: ``map`` per instance, ``reduce`` to named scores, streaming state.

See :mod:`assay.metrics` for the guide to writing a metric. This module holds the
base class, the streaming state (``update`` / ``compute`` / ``compute_scores`` / ``reset`` /
``merge``), the ``prediction_type`` check and the lazy ``requirements`` check.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import numbers
import operator
import types
import typing
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from assay.core.tally import Tally, additive, gathered, kept
from assay.deferred import np
from assay.errors import EvaluationError, InvalidParameterError, MissingDependencyError, UndefinedMetricWarning
from assay.functional import divide  # re-exported: the one safe division (assay.functional)
from assay.metrics._attributes import _resolve_type, check_class_attributes
from assay.metrics._fields import field_signature, set_fields
from assay.metrics._params import check_str
from assay.validation import as_array

__all__ = ["Metric", "MetricState", "check_prediction_type", "divide", "metric_name"]


# --------------------------------------------------------------------------- type checks
def _matches(value: Any, tp: Any) -> bool:
    tp = _resolve_type(tp)
    if tp is None or tp is Any or tp is object:
        return True
    origin = typing.get_origin(tp)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return any(_matches(value, t) for t in typing.get_args(tp))
    if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence):
        container = list if origin in (Sequence, typing.Sequence) else origin
        if origin in (Sequence, typing.Sequence):
            ok = isinstance(value, (list, tuple, np.ndarray)) and not isinstance(value, str)
        else:
            ok = isinstance(value, container) or (container is list and isinstance(value, np.ndarray))
        if not ok:
            return False
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return not args or all(_matches(v, args[0]) for v in value)
    if origin is dict:
        if not isinstance(value, dict):
            return False
        kv = typing.get_args(tp)
        return not kv or all(_matches(k, kv[0]) and _matches(v, kv[1]) for k, v in value.items())
    if tp is float:
        return isinstance(value, numbers.Real)
    if tp is int:
        return isinstance(value, numbers.Integral)
    if isinstance(tp, type):
        return isinstance(value, tp)
    return True  # an annotation we cannot check (a TypeVar, a Protocol ...)


_DTYPE_KINDS = {float: "fiub", int: "iub", bool: "b", str: "U"}


def check_prediction_type(metric: Any, predictions: Any, *, offset: int = 0) -> None:
    """Raise :class:`~assay.errors.InvalidParameterError` naming the first instance whose
    prediction does not match ``metric.prediction_type``."""
    tp = getattr(metric, "prediction_type", None)
    tp = _resolve_type(tp)
    if tp is None or tp is Any or tp is object:
        return
    if isinstance(predictions, np.ndarray):  # check the dtype once, not every element
        kinds = _DTYPE_KINDS.get(tp)
        if kinds is not None and predictions.ndim == 1:
            if predictions.dtype.kind in kinds:
                return
        elif tp is np.ndarray and predictions.ndim > 1:
            return
    plain_type = typing.get_origin(tp) is None
    if plain_type and isinstance(predictions, np.ndarray) and predictions.dtype.kind != "O" and len(predictions):
        # every element of a typed array has one type: one test decides (a value of an (n, k) array is a row)
        if _matches(predictions[0], tp):
            return
    elif plain_type and isinstance(predictions, (list, tuple)):
        # a plain type: the answer depends on the value's type only, so test one value per type
        # (one C-speed pass over the types) and look for the position only when a type fails
        first: dict[type, Any] = {}
        for t in set(map(type, predictions)):
            first[t] = next(v for v in predictions if type(v) is t)
        if all(_matches(v, tp) for v in first.values()):
            return
    for i, value in enumerate(predictions):
        if not _matches(value, tp):
            name = getattr(tp, "__name__", None) or str(tp)
            err = InvalidParameterError(
                f"Metric {metric_name(metric)!r} expects predictions of type {name}; instance {offset + i} "
                f"has a prediction of type {type(value).__name__}: {value!r:.80}."
            )
            err.item = offset + i  # the position in the whole data (sharded runs read it)
            raise err


def metric_name(metric: Any) -> str:
    """The name a metric is known by in messages: its registered (catalog) name, else its class name."""
    return getattr(metric, "name", None) or type(metric).__name__


# --------------------------------------------------------------------------- state
@attrs.define(eq=True)
class MetricState(Tally):
    """What a metric has seen: a :class:`~assay.core.tally.Tally` with additive totals or gathered intermediates.

    ``totals`` (additive metrics; additive field, ``None`` until the first update) is the
    sum of the statistics rows, ``n`` (additive) the number of instances. ``chunks``
    (gathered field; other metrics) holds the intermediates of each ``update`` in order;
    :meth:`intermediates` joins them. ``start`` (kept from the left operand) is the
    position of the state's first instance in the whole data (0, except for the state of
    one shard of a sharded run): error messages name instance ``start + i``, the position
    in the pool. States merge with ``+`` / :meth:`~assay.core.tally.Tally.merge` in shard
    order, compare equal by value and pickle.
    """

    totals: np.ndarray | None = additive(None)
    n: int = additive(0)
    chunks: list[Any] = gathered([])
    start: int = kept(0)

    def intermediates(self) -> Any:
        return concat_intermediates(self.chunks)


def concat_intermediates(chunks: list[Any]) -> Any:
    """Join intermediates collections in order (arrays by ``np.concatenate``, lists by ``+``)."""
    if not chunks:
        return []
    if all(isinstance(c, np.ndarray) for c in chunks):
        return np.concatenate(chunks, axis=0) if len(chunks) > 1 else chunks[0]
    out: list[Any] = []
    for c in chunks:
        out.extend(list(c))
    return out


def take(intermediates: Any, index: np.ndarray | Sequence[int]) -> Any:
    """The intermediates at ``index`` (an array for arrays, a list otherwise)."""
    if isinstance(intermediates, np.ndarray):
        return intermediates[np.asarray(index, dtype=np.intp)]
    return [intermediates[i] for i in np.asarray(index, dtype=np.intp).tolist()]


def _as_list(values: Any, n: int | None, what: str, metric: Any) -> Any:
    if values is None:
        return [None] * (n or 0)
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
        raise InvalidParameterError(
            f"{what} of metric {metric_name(metric)!r} must be a sequence with one entry per instance; "
            f"got {type(values).__name__}."
        )
    if n is not None and len(values) != n:
        raise InvalidParameterError(
            f"{what} of metric {metric_name(metric)!r} must have one entry per prediction: got {n} "
            f"predictions and {len(values)} {what}."
        )
    return values


# --------------------------------------------------------------------------- the base
class Metric:
    """Base of every assay metric: ``map`` each instance to an intermediate, ``reduce`` a
    collection of intermediates to named scores.

    Subclasses set the class attributes below and implement :meth:`map` (or
    :meth:`map_batch`) and :meth:`reduce`. With ``additive = True`` the intermediate of
    an instance is a fixed-length vector of sufficient statistics (counts, sums) and
    ``reduce`` receives their **sum** over the collection (a 1-D array of length
    ``n_stats``); shards then merge by addition and bootstrap resamples cost one matrix
    product, without calling ``map`` again. Otherwise ``reduce`` receives the
    collection itself: a list of the ``map`` outputs, or an array when ``map_batch``
    returns one.

    Parameters
    ----------
    score_prefix : str
        Prepended to every score name this metric reports (``"m_"`` turns ``f1`` into
        ``m_f1``); use it when two metrics would report the same name.

    Attributes
    ----------
    main_score : str
        The name of the score reported as ``score`` (``reduce`` must return it).
    higher_is_better : bool
        Orientation of ``main_score`` (used by comparisons and reports).
    prediction_type : type, typing generic, str or None
        What each prediction must be (``int``, ``float``, ``str``, ``list[str]``,
        ``np.ndarray`` ...); checked before ``map``, with an error naming the instance.
        ``None`` accepts anything.
    ci_scores : sequence of str or None
        Scores that get confidence intervals (default: ``[main_score]``).
    requirements : mapping of str to str
        Importable module -> pip distribution, checked on first use:
        ``{"sacrebleu": "sacrebleu"}`` raises :class:`~assay.errors.MissingDependencyError`
        with ``pip install sacrebleu`` when the module is missing.
    additive : bool
        Intermediates are sufficient statistics that sum (see above).
    n_stats : int or None
        Length of the statistics vector of an additive metric (lets ``compute`` run on
        no data and gives NaN scores rather than an error).
    vectorized : bool
        For additive metrics: ``reduce`` also accepts totals of shape ``(B, n_stats)``
        and returns arrays of shape ``(B,)`` (speeds up confidence intervals).
    per_instance : bool
        Report instance scores (``reduce`` on each instance alone). Set ``False`` for
        metrics undefined on one instance (ROC AUC, correlations).
    examples : list of dict or None
        Sample inputs for the common conformance suite (``tests/metrics/test_common.py``):
        each a dict with ``predictions``, ``references`` and optionally ``task_data``,
        ``overrides`` (constructor keywords) and ``global_target`` (expected scores).
    needs_references : bool
        The metric scores predictions against references (default ``True``): without
        references (``None``) :meth:`update` and :func:`assay.evaluate` raise
        :class:`~assay.errors.InvalidParameterError` instead of scoring against nothing.
        Set ``False`` for metrics of the predictions alone (ensemble disagreement).

    single_reference_per_prediction : bool
        Every instance must have exactly one reference (unitxt's check; an error names
        the first instance that has another number).
    n_resamples : int or None
        ``None`` (default): the intervals use ``assay.evaluate``'s ``n_resamples``. ``0``
        (or ``None`` written in a class body, unitxt's spelling, or ``1``): no intervals for
        this metric. An int ``>= 2``: this metric's intervals use that many resamples.

    Notes
    -----
    A subclass may declare only the class attributes above, attributes its own methods
    read, and options it declares with an annotation (``relative_tolerance: float =
    0``): annotated options are keywords of the constructor
    (``SumAccuracy(relative_tolerance=0.1)``) and of catalog names
    (``sum_accuracy[relative_tolerance=0.1]``) when the class keeps the base
    ``__init__``. Anything else (a typo such as ``main_scroe``) is an
    :class:`~assay.errors.InvalidParameterError` when the class is created. unitxt's
    attributes (``reduction_map``, ``_requirements_list``, a ``compute(self, references,
    prediction, task_data)`` ...) are honoured by the assay-unitxt plugin through a
    class-attribute handler; without it they are a :class:`~assay.errors.MissingDependencyError`
    naming ``pip install assay-unitxt``. See ``docs/metrics.md`` ("Class attributes") and
    ``docs/unitxt.md`` for the rule.
    """

    name: str | None = None
    main_score: str = "score"
    higher_is_better: bool = True
    prediction_type: Any = None
    ci_scores: Sequence[str] | None = None
    requirements: Mapping[str, str] = {}
    additive: bool = False
    n_stats: int | None = None
    vectorized: bool = False
    per_instance: bool = True
    examples: list[dict[str, Any]] | None = None
    needs_references: bool = True
    single_reference_per_prediction: bool = False
    n_resamples: int | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_class_attributes(cls, Metric)
        if "n_resamples" in vars(cls) and vars(cls)["n_resamples"] is None:
            cls.n_resamples = 0  # unitxt: n_resamples = None written in a class disables the intervals
        # dataclass-like fields are keywords of the base constructor (and of catalog names)
        cls.__signature__ = field_signature(cls) if cls.__init__ is Metric.__init__ else None  # type: ignore[attr-defined]

    def __init__(self, *, score_prefix: str = "", **fields: Any) -> None:
        self.score_prefix = check_str(
            score_prefix, name="score_prefix", owner=f"metric {metric_name(self)!r}",
            hint=" In a catalog name, quote a prefix that looks like a number: name[score_prefix='123']."
            if isinstance(score_prefix, (int, float)) else "",
        )
        if fields:
            set_fields(self, fields, _matches)

    # ---------------------------------------------------------------- to implement
    def map(self, prediction: Any, references: Any, task_data: Any = None) -> Any:
        """The intermediate of one instance (for additive metrics: a statistics vector)."""
        raise NotImplementedError(f"{type(self).__name__} must implement map() or map_batch()")

    def reduce(self, intermediates: Any) -> dict[str, float]:
        """Named scores of a collection of intermediates (additive: of their summed statistics)."""
        raise NotImplementedError(f"{type(self).__name__} must implement reduce()")

    def map_batch(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                  task_data: Sequence[Any] | None) -> Any:
        """Intermediates of a batch: an ``(n, n_stats)`` array for additive metrics, else a
        list (or an array) with one entry per instance. Override for speed."""
        n = len(predictions)
        refs = references if references is not None else [None] * n
        tds = task_data if task_data is not None else [None] * n
        out = [self.map(p, r, t) for p, r, t in zip(predictions, refs, tds)]
        if self.additive:
            return _stack_stats(out, self)
        return out

    # ---------------------------------------------------------------- derived
    @property
    def score_names_for_ci(self) -> tuple[str, ...]:
        return tuple(self.ci_scores) if self.ci_scores is not None else (self.main_score,)

    def check_requirements(self) -> None:
        """Raise :class:`MissingDependencyError` if a required module is not installed."""
        for module, dist in dict(self.requirements).items():
            if importlib.util.find_spec(module) is None:
                raise MissingDependencyError(dist or module, purpose=f"metric {metric_name(self)!r}")

    def map_all(self, predictions: Any, references: Any = None, task_data: Any = None, *,
                offset: int = 0) -> Any:
        """Check inputs (requirements, lengths, ``prediction_type``) and map a batch."""
        if not getattr(self, "_requirements_ok", False):
            self.check_requirements()
            self._requirements_ok = True
        # torch tensors, __array__ and DLPack objects -> numpy, once for every metric (never imports torch)
        predictions = as_array(predictions, "predictions", owner=metric_name(self))
        references = as_array(references, "references", owner=metric_name(self))
        task_data = as_array(task_data, "task_data", owner=metric_name(self))
        n = len(predictions)
        if references is None and self.needs_references:
            raise InvalidParameterError(
                f"Metric {metric_name(self)!r} needs references (one entry per prediction); got references=None "
                f"for {n} predictions."
            )
        references = _as_list(references, n, "references", self) if references is not None else None
        if references is not None and self.needs_references and isinstance(references, (list, tuple)):
            missing = next(itertools.compress(itertools.count(), map(operator.is_, references,
                                                                      itertools.repeat(None))), None)
            if missing is not None:
                raise InvalidParameterError(
                    f"Metric {metric_name(self)!r} needs references; instance {offset + missing} has references None."
                )
        if references is not None and self.single_reference_per_prediction:
            _check_single_reference(self, references, offset)
        task_data = _as_list(task_data, n, "task_data", self) if task_data is not None else None
        check_prediction_type(self, predictions, offset=offset)
        out = self.map_batch(predictions, references, task_data)
        if self.additive:
            out = _stack_stats(out, self)
        if len(out) != n:
            raise EvaluationError(
                f"map_batch of metric {metric_name(self)!r} returned {len(out)} intermediates for {n} instances."
            )
        return out

    def reduce_totals_many(self, totals: np.ndarray) -> dict[str, np.ndarray]:
        """``reduce`` on each row of ``totals`` (shape ``(B, n_stats)``): arrays of shape ``(B,)``."""
        if self.vectorized:
            out = self.reduce(totals)
            return {k: np.broadcast_to(np.asarray(v, dtype=float), (totals.shape[0],)) for k, v in out.items()}
        rows = [self.reduce(t) for t in totals]
        keys = list(rows[0]) if rows else []
        return {k: np.array([float(r[k]) for r in rows]) for k in keys}

    def scores_of(self, intermediates: Any) -> dict[str, float]:
        """Scores of a whole collection of intermediates (sums first when additive)."""
        if self.additive:
            arr = np.asarray(intermediates, dtype=float)
            return _floats(self.reduce(arr.sum(axis=0) if arr.ndim == 2 else arr))
        return _floats(self.reduce(intermediates))

    def instance_scores(self, intermediates: Any) -> list[dict[str, float]]:
        """One dict of scores per instance (``reduce`` on each instance alone)."""
        if not self.per_instance:
            return [{} for _ in range(len(intermediates))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if self.additive:
                arr = np.asarray(intermediates, dtype=float)
                if len(arr) == 0:
                    return []
                many = self.reduce_totals_many(arr)
                keys = list(many)
                cols = [many[k].tolist() for k in keys]
                return [dict(zip(keys, vals)) for vals in zip(*cols)]
            return [_floats(self.reduce(take(intermediates, [i]))) for i in range(len(intermediates))]

    def additive_for_intervals(self, intermediates: Any) -> tuple[Metric, np.ndarray] | None:
        """An additive twin of this metric and its statistics rows for the same instances, or None.

        A metric that gathers its intermediates only because a setting was unknown before
        the data was seen (the label set of a macro F1) can return a copy with that setting
        bound from the data and the rows that copy maps the same instances to: the intervals
        then resample summed statistics (fast, exact) instead of re-running :meth:`reduce`
        on every resample. The twin must give the same scores as this metric on any subset
        of the instances. Default: None (the intervals use the intermediates as they are).
        """
        return None

    def instance_columns(self, intermediates: Any) -> dict[str, np.ndarray] | None:
        """The instance scores as one float array per score name, or None when only :meth:`instance_scores` has them.

        What :func:`assay.evaluate` keeps (a dict per instance is built only when the caller
        reads that instance). Additive metrics get them from one vectorized ``reduce`` of
        every instance's statistics; other metrics return None (``instance_scores`` is used).
        A subclass that overrides :meth:`instance_scores` and not this method keeps its own
        instance scores (:func:`assay.evaluate` checks which class defines each).
        """
        if not self.per_instance:
            return {}
        if not self.additive:
            return None
        arr = np.asarray(intermediates, dtype=float)
        if len(arr) == 0:
            return {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            many = self.reduce_totals_many(arr)
        return {k: np.asarray(v, dtype=float) for k, v in many.items()}

    def proportions(self, intermediates: Any) -> dict[str, tuple[float, float]]:
        """Scores that are proportions ``successes / trials`` (for Wilson intervals).

        Override when a score is a proportion of independent trials (accuracy). The
        default declares none.
        """
        return {}

    # ---------------------------------------------------------------- streaming
    @property
    def state(self) -> MetricState:
        st = self.__dict__.get("_state")
        if st is None:
            st = MetricState()
            self.__dict__["_state"] = st
        return st

    def reset(self) -> Metric:
        """Forget everything seen by :meth:`update`."""
        self.__dict__["_state"] = MetricState()
        return self

    def update(self, predictions: Any, references: Any = None, task_data: Any = None) -> Metric:
        """Add a batch of instances to the state (returns ``self``)."""
        st = self.state
        return self.absorb(self.map_all(predictions, references, task_data, offset=st.start + st.n))

    def absorb(self, intermediates: Any) -> Metric:
        """Add already mapped intermediates (``map_all``'s output) to the state (returns ``self``)."""
        st = self.state
        inter = intermediates
        if self.additive:
            if len(inter):
                s = inter.sum(axis=0)
                st.totals = s if st.totals is None else _add_totals(st.totals, s, self)
        elif len(inter):
            st.chunks.append(inter)
        st.n += len(inter)
        return self

    def merge(self, *others: Metric) -> Metric:
        """Merge other metrics' states into this one, in the order given (returns ``self``).

        The states are :class:`MetricState` tallies: totals add, gathered chunks
        concatenate in the order given (shard order).
        """
        st = self.state
        for other in others:
            if type(other) is not type(self):
                raise InvalidParameterError(
                    f"Cannot merge a {type(other).__name__} into a {type(self).__name__}: both must be the same metric."
                )
            ost = other.state
            if self.additive and st.totals is not None and ost.totals is not None:
                _add_totals(st.totals, ost.totals, self)  # the shape check, with the metric's name
            st = st + ost
        self.__dict__["_state"] = st
        return self

    def compute(self) -> Any:
        """The value of everything seen: the main score, a ``float`` (torchmetrics' rule).

        ``m.update(...).compute()`` returns what torchmetrics and torch-uncertainty return
        (``float(result)`` and ``print(result)`` work); the named scores are
        :meth:`compute_scores`. A subclass whose main value is not one number documents
        what it returns (the ensemble metrics with ``reduction="none"``: the per-example
        array). No data gives NaN with a warning where the metric allows.
        """
        return self.compute_scores()["score"]

    def compute_scores(self) -> dict[str, Any]:
        """Global scores of everything seen: the named scores (prefixed), ``score`` and
        ``score_name`` -- what :func:`assay.evaluate` reports as global scores. No data
        gives NaN scores with a warning where the metric allows."""
        st = self.state
        if self.additive:
            totals = st.totals
            if totals is None:
                if self.n_stats is None:
                    raise EvaluationError(f"Metric {metric_name(self)!r} has seen no data (call update first).")
                warnings.warn(f"Metric {metric_name(self)!r} has seen no data; scores are NaN.",
                              UndefinedMetricWarning, stacklevel=2)
                totals = np.zeros(self.n_stats)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                raw = _floats(self.reduce(totals))
        else:
            raw = _floats(self.reduce(st.intermediates()))
        return self.format_scores(raw)

    def format_scores(self, raw: Mapping[str, float]) -> dict[str, Any]:
        """Apply ``score_prefix`` and add ``score`` / ``score_name`` (unitxt's contract)."""
        if self.main_score not in raw:
            raise EvaluationError(
                f"Metric {metric_name(self)!r} declares main_score {self.main_score!r} but reduce() returned "
                f"{sorted(raw)}."
            )
        prefix = self.score_prefix or ""
        out: dict[str, Any] = {prefix + k: v for k, v in raw.items()}
        out["score"] = raw[self.main_score]
        out["score_name"] = prefix + self.main_score
        return out

    # ---------------------------------------------------------------- misc
    def clone(self) -> Metric:
        """A copy with the same options and an empty state."""
        new = copy.copy(self)
        new.__dict__.pop("_state", None)
        new.__dict__ = copy.deepcopy(new.__dict__)
        return new

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {metric_name(self)!r}>"


def _check_single_reference(metric: Metric, references: Any, offset: int) -> None:
    for i, refs in enumerate(references):
        count = len(refs) if hasattr(refs, "__len__") and not isinstance(refs, (str, bytes)) else None
        if count != 1:
            got = f"{count} references" if count is not None else f"a {type(refs).__name__}, not a list"
            err = InvalidParameterError(
                f"Metric {metric_name(metric)!r} takes exactly one reference per prediction "
                f"(single_reference_per_prediction = True); instance {offset + i} has {got}: {refs!r:.80}."
            )
            err.item = offset + i
            raise err


def _floats(scores: Mapping[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in scores.items():
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            raise EvaluationError(f"Score {k!r} is not a number: {v!r:.80}") from None
    return out


def _stack_stats(rows: Any, metric: Metric) -> np.ndarray:
    arr = np.asarray(rows, dtype=float)
    if arr.ndim == 1 and len(arr) == 0:
        return arr.reshape(0, metric.n_stats or 0)
    if arr.ndim == 1:  # one statistic per instance
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise EvaluationError(
            f"Additive metric {metric_name(metric)!r} must map each instance to a 1-D statistics vector; "
            f"got an array of shape {arr.shape[1:]} per instance."
        )
    if metric.n_stats is not None and arr.shape[1] != metric.n_stats:
        raise EvaluationError(
            f"Additive metric {metric_name(metric)!r} declares n_stats={metric.n_stats} but map gave "
            f"{arr.shape[1]} statistics per instance."
        )
    return arr


def _add_totals(a: np.ndarray, b: np.ndarray, metric: Metric) -> np.ndarray:
    if a.shape != b.shape:
        raise EvaluationError(
            f"Additive metric {metric_name(metric)!r} produced statistics of different lengths "
            f"({a.shape[0]} and {b.shape[0]})."
        )
    total: np.ndarray = a + b
    return total
