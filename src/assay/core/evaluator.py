"""``EvaluatorBase``: sequential and sharded parallel evaluation of additive tallies.

Subclass it, implement ``sentence_evaluator(sent, w_vector) -> (correct_num,
gold_set_size)``, and call :meth:`EvaluatorBase.sequentialEvaluate` or
:meth:`EvaluatorBase.parallelEvaluate` (snake_case spellings too)::

    class HeadAccuracy(EvaluatorBase):
        def sentence_evaluator(self, sent, w_vector):
            predicted = w_vector.parse(sent)
            return sum(p == g for p, g in zip(predicted, sent["heads"])), len(sent["heads"])

    r = HeadAccuracy().parallelEvaluate(DataPool(sentences, num_shards=8), model)

Both run the same per-shard function (:func:`evaluate_shard`) over the pool's shards --
sequentially through the ``serial`` executor, in parallel through ``processes`` (or
any executor, or Spark) -- and add the shard tallies in shard order, so the totals
are identical by construction.
"""

from __future__ import annotations

import itertools
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from assay.core.log import log_labels, log_result
from assay.core.pool import DataPool, PathShard
from assay.core.protocols import SentenceEvaluator, ShardLike
from assay.core.result import EvaluationResult, UndefinedMetricWarning
from assay.errors import EvaluationError, InvalidParameterError, MissingDependencyError
from assay.executors.base import check_timeout
from assay.executors.builtin import SerialExecutor
from assay.executors.dask import is_dask_client
from assay.metrics.resample import Resampling
from assay.metrics.sharded import (
    check_metric_inputs,
    prepare_metrics,
    tally_shard_metrics,
)
from assay.plugins import get_registry, load_executor, load_sentence_evaluator

__all__ = ["SHARDS_PER_WORKER", "EvaluatorBase", "SentenceEvaluator", "evaluate_shard", "evaluate_shard_with_metrics",
           "wrap_item_error"]

#: Default shards per worker of ``parallelEvaluate`` when neither the call nor the pool sets
#: ``num_shards``: a few per worker, so a worker that starts late (forks are serial) or shares
#: its core with another process takes fewer shards instead of holding up the run.
SHARDS_PER_WORKER = 4


# --------------------------------------------------------------------------- per shard
def _bad_tally(value: Any, shard: ShardLike, offset: int, why: str) -> EvaluationError:
    return EvaluationError(
        f"sentence_evaluator returned {value!r} for {shard.describe(offset)} (shard {shard.index}); "
        f"expected two non-negative ints (correct_num, gold_set_size) with correct_num <= gold_set_size: {why}.",
        shard=shard.index, item=shard.pool_index(offset),
    )


def _as_count(x: Any) -> int | None:
    """``x`` as an int when it is an integer that is not a bool (numpy integers allowed), else None."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        try:  # numpy bools and other integer-likes that do not register as Integral
            import numpy as np  # deferred: numpy, only for a count that is not a plain int

            if isinstance(x, np.integer) and not isinstance(x, np.bool_):
                return int(x)
        except ImportError:  # pragma: no cover
            pass
        return None
    return int(x)


def _check_tally(value: Any, shard: ShardLike, offset: int) -> tuple[int, int]:
    """Validate one sentence_evaluator return value (the slow path of :func:`evaluate_shard`).

    The tally is a pair: a tuple or list of two items, or a 1-D numpy array of two. A
    mapping (``{0: 1, 1: 2}`` would unpack to its keys), a set (no order), a string or
    any other iterable is rejected, as is anything whose items are not ints.
    """
    if not isinstance(value, (tuple, list)):
        try:
            import numpy as np  # deferred: numpy, only for a value that is not a tuple or list
        except ImportError:  # pragma: no cover
            np = None  # type: ignore[assignment]
        if np is None or not isinstance(value, np.ndarray) or value.ndim != 1:
            raise _bad_tally(value, shard, offset, f"a {type(value).__name__} is not a pair (use a tuple)")
    if len(value) != 2:
        raise _bad_tally(value, shard, offset, f"not a pair (it has {len(value)} items)")
    correct, gold = value
    c, g = _as_count(correct), _as_count(gold)
    if c is None or g is None:
        wrong = correct if c is None else gold
        raise _bad_tally(value, shard, offset, f"{type(wrong).__name__} {wrong!r} is not an int") from None
    if c < 0 or g < 0:
        raise _bad_tally(value, shard, offset, "a count is negative")
    if c > g:
        raise _bad_tally(value, shard, offset, "correct_num > gold_set_size")
    return c, g


def wrap_item_error(exc: BaseException, what: str, shard: ShardLike, offset: int) -> BaseException:
    """The error to raise when ``what`` (user code) raised ``exc`` on an item: raise it ``from exc``.

    An ``Exception``, ``SystemExit`` or any other ``BaseException`` becomes an
    :class:`EvaluationError` naming the item and the shard (so a ``sys.exit()`` inside a
    sentence evaluator does not end the caller silently). A ``KeyboardInterrupt`` still
    interrupts: it is returned as it is, with a note naming the item (``exc.add_note``);
    re-raise it bare in that case::

        except BaseException as exc:
            err = wrap_item_error(exc, "sentence_evaluator", shard, offset)
            if err is exc:
                raise
            raise err from exc
    """
    where = f"{shard.describe(offset)} (shard {shard.index})"
    if isinstance(exc, KeyboardInterrupt):
        if hasattr(exc, "add_note"):  # Python 3.11+; on 3.10 the interruption goes on without the note
            exc.add_note(f"assay: interrupted while {what} ran on {where}")
        return exc
    kind = type(exc).__name__
    detail = f": {exc}" if str(exc) else ""
    if isinstance(exc, SystemExit):
        detail = f" (exit status {exc.code!r})"
    return EvaluationError(f"{what} raised {kind} on {where}{detail}", shard=shard.index,
                           item=shard.pool_index(offset))


def _tally_items(shard: ShardLike, items: Any, sentence_evaluator: SentenceEvaluator, w_vector: Any,
                 metric_inputs: Callable[[Any, Any], Any] | None = None
                 ) -> tuple[EvaluationResult, list[Any], list[Any], list[Any]]:
    """One pass over ``items``: the tally, and (with ``metric_inputs``) each item's metric inputs."""
    correct_total = gold_total = 0
    preds: list[Any] = []
    refs: list[Any] = []
    tds: list[Any] = []
    offset = -1
    for offset, sent in enumerate(items):
        try:
            value = sentence_evaluator(sent, w_vector)
        except BaseException as exc:
            err = wrap_item_error(exc, "sentence_evaluator", shard, offset)
            if err is exc:
                raise  # KeyboardInterrupt: still interrupts, now with a note naming the item
            raise err from exc
        # Fast path: a tuple of two plain ints in order. Everything else is checked in full.
        if type(value) is tuple and len(value) == 2 and type(value[0]) is int and type(value[1]) is int \
                and 0 <= value[0] <= value[1]:
            correct_total += value[0]
            gold_total += value[1]
        else:
            correct, gold = _check_tally(value, shard, offset)
            correct_total += correct
            gold_total += gold
        if metric_inputs is not None:
            try:
                inputs = metric_inputs(sent, w_vector)
            except BaseException as exc:
                err = wrap_item_error(exc, "metric_inputs", shard, offset)
                if err is exc:
                    raise
                raise err from exc
            pred, ref, td = check_metric_inputs(inputs, shard, offset)
            preds.append(pred)
            refs.append(ref)
            tds.append(td)
    return EvaluationResult(correct_total, gold_total, offset + 1), preds, refs, tds


def evaluate_shard(shard: ShardLike, shared: tuple[SentenceEvaluator, Any]) -> EvaluationResult:
    """Run the sentence evaluator over one shard; the task function every executor runs.

    ``shared`` is ``(sentence_evaluator, w_vector)``. Returns the shard's
    :class:`EvaluationResult` (``feature_count`` is left to the caller). A raising
    sentence evaluator (any exception, ``SystemExit`` included) or an invalid return
    value raises :class:`EvaluationError` naming the shard and the item (its index in the
    pool), with the original exception chained; a ``KeyboardInterrupt`` propagates with
    a note naming the item (see :func:`wrap_item_error`).
    """
    sentence_evaluator, w_vector = shared
    return _tally_items(shard, shard.items(), sentence_evaluator, w_vector)[0]


#: How executors name the parts of ``shared`` in errors (e.g. one that cannot be pickled).
evaluate_shard.shared_names = ("the sentence evaluator", "the model (w_vector)")  # type: ignore[attr-defined]


def evaluate_shard_with_metrics(shard: ShardLike, shared: tuple[SentenceEvaluator, Any, Callable[[Any, Any], Any],
                                                          Sequence[Any], Resampling | None]) -> EvaluationResult:
    """The task function of runs with metrics: ONE state for the tally and every metric.

    ``shared`` is ``(sentence_evaluator, w_vector, metric_inputs, metrics, resampling)``.
    The shard's items are read once (a path shard's files are opened once) and each item
    goes to the sentence evaluator and to ``metric_inputs``; the returned
    :class:`EvaluationResult` carries the metrics' states (and the shard's Poisson
    replicate tallies) in ``metric_tally``.
    """
    sentence_evaluator, w_vector, metric_inputs, metrics, resampling = shared
    items = shard.items()
    result, preds, refs, tds = _tally_items(shard, items, sentence_evaluator, w_vector, metric_inputs)
    file_counts: list[tuple[int, int]] | None = []
    if resampling is not None and resampling.n_resamples and getattr(shard, "start", None) is None:
        file_counts = _file_counts(shard, len(items))
    tally = tally_shard_metrics(metrics, shard, preds, refs, tds, resampling, file_counts)
    return attrs.evolve(result, metric_tally=tally)


evaluate_shard_with_metrics.shared_names = (  # type: ignore[attr-defined]
    "the sentence evaluator", "the model (w_vector)", "the evaluator's metric_inputs", "the metrics",
    "the resampling options")


def _file_counts(shard: ShardLike, n: int) -> list[tuple[int, int]] | None:
    """``(file index in the pool, items)`` per file of a path shard (after ``items()``); None when unknown.

    A shard that knows neither its pool offset (``start``) nor its files' (``first_file``)
    -- a third-party pool's shard -- gets no replicates, and the run no intervals (a warning).
    """
    if not isinstance(shard, PathShard) or shard.first_file is None:
        return None
    first = shard.first_file
    starts = [start for start, _ in shard._bounds] + [n]
    counts = [b - a for a, b in itertools.pairwise(starts)]
    counts += [0] * (len(shard.paths) - len(counts))
    return [(first + i, c) for i, c in enumerate(counts)]


def _feature_count(w_vector: Any) -> int | None:
    try:
        n = len(w_vector)
    except Exception:  # noqa: BLE001 - no length (TypeError) or a broken __len__: no count
        return None
    return n if isinstance(n, int) and n >= 0 else None


# --------------------------------------------------------------------------- the base class
class EvaluatorBase:
    """Base class of evaluators: implement :meth:`sentence_evaluator`, call an ``...Evaluate`` method.

    After a successful run ``correct_num`` and ``gold_set_size`` hold the totals; a run
    that fails leaves them as they were. Each run also returns an immutable
    :class:`~assay.EvaluationResult` and logs the seed toolkit's lines on the
    ``EVALUATOR`` logger, labelled as the evaluator declares (class attributes
    ``log_label`` and ``attachment_label``; by default the seed's "Unlabelled accuracy" /
    "Unlabelled attachment accuracy"; see :mod:`assay.core.log`).

    Examples
    --------
    >>> from assay import EvaluatorBase, DataPool
    >>> class Exact(EvaluatorBase):
    ...     def sentence_evaluator(self, sent, w_vector):
    ...         predicted, gold = sent
    ...         return sum(p == g for p, g in zip(predicted, gold)), len(gold)
    >>> pool = DataPool([([1, 2, 3], [1, 2, 0]), ([4], [4])], num_shards=2)
    >>> r = Exact().sequentialEvaluate(pool, None)
    >>> (r.correct_num, r.gold_set_size, r.accuracy)
    (3, 4, 0.75)
    """

    #: Totals of the last successful run (class-level zeros serve subclasses that skip ``__init__``).
    correct_num: int = 0
    gold_set_size: int = 0

    def __init__(self) -> None:
        self.correct_num = 0
        self.gold_set_size = 0

    def sentence_evaluator(self, sent: Any, w_vector: Any) -> tuple[int, int]:
        """Score one item: return ``(correct_num, gold_set_size)``, two non-negative ints.

        Override this, or pass ``sentence_evaluator=`` (a callable or a registered name)
        to the ``...Evaluate`` methods. For parallel runs it must be picklable with the
        evaluator (a method of a module-level class, or a module-level function).
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not implement sentence_evaluator(self, sent, w_vector); "
            "override it or pass sentence_evaluator=... (a callable or a registered name)."
        )

    # ------------------------------------------------------------ seed-compatible API
    def sequentialEvaluate(self, data_pool: Any, w_vector: Any, sentence_evaluator: Any = None,
                           sparkContext: Any = None, hadoop: Any = None, *,
                           metrics: Any = None, n_resamples: int = 1000, confidence_level: float = 0.95,
                           seed: int = 0) -> EvaluationResult:
        """Evaluate every item of ``data_pool`` in this process, shard by shard.

        Parameters
        ----------
        data_pool : DataPool or sized sequence
            The items. Its ``num_shards`` (default 1) decides the per-shard results.
        w_vector : object
            The model, passed to every ``sentence_evaluator`` call; ``len(w_vector)`` is
            logged as the feature count when it has a length.
        sentence_evaluator : callable or str, optional
            ``(sent, w_vector) -> (correct_num, gold_set_size)`` or a registered name
            (``load_sentence_evaluator``). Default: ``self.sentence_evaluator``.
        sparkContext, hadoop
            Accepted for compatibility with the seed toolkit's signature and ignored: a
            sequential run never uses Spark (nor Dask: a Dask ``Client`` third is ignored too).
        metrics : str, Metric or sequence of them, optional
            Metrics (registered names with overrides, or objects) computed over the items
            too: ``self.metric_inputs(sent, w_vector)`` gives each item's ``(prediction,
            references)``; their global scores land in ``result.metrics`` (see
            :mod:`assay.metrics.sharded`).
        n_resamples : int
            Poisson bootstrap replicates for the metrics' confidence intervals (an int
            ``>= 0``; 0: no intervals). Each score in a metric's ``ci_scores`` gets
            ``result.metrics["<name>_ci_low"]`` / ``["<name>_ci_high"]``, and the first
            metric's main score ``score_ci_low`` / ``score_ci_high`` (the names
            :func:`assay.evaluate` uses). The weights are Poisson(1) per item, drawn from
            the item's position in the pool by a counter-based generator, so the intervals
            are the same, to the last bit, for any shard count and executor (see
            :mod:`assay.metrics.poisson`: this is the Poisson bootstrap, whereas
            :func:`assay.evaluate` uses the multinomial one; both give percentile intervals).
        confidence_level : float
            Coverage of the intervals, strictly between 0 and 1.
        seed : int
            Seed of the weights, an int ``>= 0``.

        Returns
        -------
        EvaluationResult
        """
        if is_dask_client(sentence_evaluator):  # (pool, model, client): ignored, as a SparkContext is
            sentence_evaluator = None
        sentence_evaluator, sparkContext, hadoop = _seed_arguments(sentence_evaluator, sparkContext, hadoop)
        evaluator = self._resolve_sentence_evaluator(sentence_evaluator)
        pool = _as_pool(data_pool)
        resampling = Resampling.checked(n_resamples, confidence_level, seed, owner="sequentialEvaluate")
        with SerialExecutor(progress=False) as executor:
            return self._run(pool, w_vector, evaluator, executor, pool.shards(), metrics=metrics,
                             resampling=resampling)

    def parallelEvaluate(self, data_pool: Any, w_vector: Any, sentence_evaluator: Any = None,
                         sparkContext: Any = None, hadoop: Any = None, *, executor: Any = None,
                         num_shards: int | None = None, workers: int | None = None,
                         metrics: Any = None, timeout: float | None = None, n_resamples: int = 1000,
                         confidence_level: float = 0.95, seed: int = 0) -> EvaluationResult:
        """Evaluate the shards of ``data_pool`` in parallel: local processes, or Spark with a ``sparkContext``.

        Parameters
        ----------
        data_pool, w_vector, sentence_evaluator
            As for :meth:`sequentialEvaluate`.
        sparkContext : pyspark.SparkContext, optional
            Run on Spark (the ``spark`` executor, from the Spark extra): one Spark task per
            shard, the model and the sentence evaluator broadcast once. As in the seed
            toolkit it may also come third, ``parallelEvaluate(pool, model, sc)`` (then a
            fourth positional argument is ``hadoop``).
        hadoop : optional
            Passed to the Spark executor (the seed's flag for reading pools from HDFS).
        executor : str, Executor or distributed.Client, optional
            Where shards run: a registered name with options (``"processes[workers=2]"``,
            ``"threads"``, ``"serial"``, ``"dask"``), an :class:`~assay.Executor`, or a Dask
            ``Client`` (the ``dask`` executor on it; it may also come third,
            ``parallelEvaluate(pool, model, client)``). Default ``"processes"``. Not together
            with ``sparkContext``.
        num_shards : int, optional
            Shards to cut (one task each). Default: the pool's ``num_shards``, else
            :data:`SHARDS_PER_WORKER` per worker.
        workers : int, optional
            Worker count for an executor given by name (default: the CPU count).
        metrics : optional
            As for :meth:`sequentialEvaluate`: each worker updates the metrics with its
            shard's items and the states merge in shard order, so the scores equal a
            sequential run's.
        n_resamples, confidence_level, seed
            As for :meth:`sequentialEvaluate`: the intervals are identical to a sequential
            run's, to the last bit, whatever ``num_shards`` and the executor.
        timeout : float, optional
            The most seconds one shard may run (from when a worker starts it), passed to the
            executor given by name (``threads``, ``processes``, ``spark``, ``dask``); on expiry the
            workers are stopped and :class:`~assay.errors.EvaluationTimeoutError` names the
            shard. Default ``None``: no bound. Not with an executor object (set it there).

        Returns
        -------
        EvaluationResult
            The totals, with the per-shard results in ``shards`` (shard order).
        """
        if is_dask_client(sentence_evaluator):  # parallelEvaluate(pool, model, client): run on Dask
            if executor is not None:
                raise InvalidParameterError("A Dask Client was given third and the 'executor' parameter too; pass one.")
            sentence_evaluator, executor = None, sentence_evaluator
        sentence_evaluator, sparkContext, hadoop = _seed_arguments(sentence_evaluator, sparkContext, hadoop)
        evaluator = self._resolve_sentence_evaluator(sentence_evaluator)
        pool = _as_pool(data_pool)
        resampling = Resampling.checked(n_resamples, confidence_level, seed, owner="parallelEvaluate")
        if num_shards is not None and (isinstance(num_shards, bool) or not isinstance(num_shards, int)
                                       or num_shards < 1):
            raise InvalidParameterError(
                f"The 'num_shards' parameter must be a positive int or None. Got {num_shards!r} instead."
            )
        runner, owned = _resolve_executor(executor, sparkContext, hadoop, workers, timeout)
        try:
            n = num_shards or pool.num_shards or SHARDS_PER_WORKER * max(1, int(getattr(runner, "workers", 1) or 1))
            return self._run(pool, w_vector, evaluator, runner, pool.shards(n), metrics=metrics,
                             resampling=resampling)
        finally:
            if owned:
                runner.close()

    # ------------------------------------------------------------ snake_case spellings
    def sequential_evaluate(self, data_pool: Any, w_vector: Any, sentence_evaluator: Any = None,
                            sparkContext: Any = None, hadoop: Any = None, *,
                            metrics: Any = None, n_resamples: int = 1000, confidence_level: float = 0.95,
                           seed: int = 0) -> EvaluationResult:
        """Same as :meth:`sequentialEvaluate`."""
        return self.sequentialEvaluate(data_pool, w_vector, sentence_evaluator, sparkContext, hadoop,
                                       metrics=metrics, n_resamples=n_resamples, confidence_level=confidence_level,
                                       seed=seed)

    def parallel_evaluate(self, data_pool: Any, w_vector: Any, sentence_evaluator: Any = None,
                          sparkContext: Any = None, hadoop: Any = None, *, executor: Any = None,
                          num_shards: int | None = None, workers: int | None = None,
                          metrics: Any = None, timeout: float | None = None, n_resamples: int = 1000,
                         confidence_level: float = 0.95, seed: int = 0) -> EvaluationResult:
        """Same as :meth:`parallelEvaluate`."""
        return self.parallelEvaluate(data_pool, w_vector, sentence_evaluator, sparkContext, hadoop,
                                     executor=executor, num_shards=num_shards, workers=workers, metrics=metrics,
                                     timeout=timeout, n_resamples=n_resamples, confidence_level=confidence_level,
                                     seed=seed)

    # ------------------------------------------------------------ internals
    def _resolve_sentence_evaluator(self, sentence_evaluator: Any) -> SentenceEvaluator:
        if sentence_evaluator is None:
            if type(self).sentence_evaluator is EvaluatorBase.sentence_evaluator \
                    and "sentence_evaluator" not in vars(self):
                raise InvalidParameterError(
                    f"{type(self).__name__} has no sentence evaluator: override "
                    "sentence_evaluator(self, sent, w_vector) or pass the 'sentence_evaluator' parameter "
                    "(a callable or a registered name)."
                )
            return self.sentence_evaluator
        if isinstance(sentence_evaluator, str):
            loaded: SentenceEvaluator = load_sentence_evaluator(sentence_evaluator)
            return loaded
        if callable(sentence_evaluator):
            given: SentenceEvaluator = sentence_evaluator
            return given
        raise InvalidParameterError(
            "The 'sentence_evaluator' parameter must be a callable (sent, w_vector) -> (correct_num, "
            f"gold_set_size) or a registered name. Got {type(sentence_evaluator).__name__} instead."
        )

    def _run(self, pool: DataPool, w_vector: Any, sentence_evaluator: SentenceEvaluator, executor: Any,
             shards: Sequence[Any], metrics: Any = None, resampling: Resampling | None = None) -> EvaluationResult:
        task: Callable[[Any, Any], EvaluationResult] = evaluate_shard
        shared: tuple[Any, ...] = (sentence_evaluator, w_vector)
        if metrics is not None:  # one state per shard: the tally and every metric's (assay.metrics.sharded)
            ms = prepare_metrics(metrics, self, resampling)  # checks that self.metric_inputs exists
            task, shared = evaluate_shard_with_metrics, (sentence_evaluator, w_vector,
                                                         self.metric_inputs,  # type: ignore[attr-defined]
                                                         ms, resampling)
        parts = executor.run(task, shards, shared, desc=type(self).__name__)
        if len(parts) != len(shards):  # a broken third-party executor must not shrink the total
            raise EvaluationError(
                f"Executor {executor!r} returned {len(parts)} shard results for {len(shards)} shards."
            )
        if metrics is not None:  # each shard result shows its own scores
            parts = [attrs.evolve(p, metrics=p.metric_tally.scores(own=True)) for p in parts]
        result = EvaluationResult.from_shards(parts, feature_count=_feature_count(w_vector))
        # Only a complete run updates the counters.
        self.correct_num = result.correct_num
        self.gold_set_size = result.gold_set_size
        if result.gold_set_size == 0:
            what = "the data pool is empty" if result.sentence_num == 0 else "no item has a gold count"
            warnings.warn(f"{type(self).__name__}: {what}, so accuracy is undefined (NaN).",
                          UndefinedMetricWarning, stacklevel=3)
        label, attachment_label = log_labels(sentence_evaluator, self)  # the explicit sentence evaluator first
        log_result(result, label=label, attachment_label=attachment_label)
        return result


# --------------------------------------------------------------------------- helpers
def _is_spark_context(x: Any) -> bool:
    """Whether ``x`` is a pyspark SparkContext (checked by type, without importing pyspark)."""
    return any(c.__name__ == "SparkContext" and c.__module__.startswith("pyspark") for c in type(x).__mro__)


def _seed_arguments(sentence_evaluator: Any, spark_context: Any, hadoop: Any) -> tuple[Any, Any, Any]:
    """Accept the seed's ``(pool, model, sc[, hadoop])`` call: a SparkContext third is the context."""
    if not _is_spark_context(sentence_evaluator):
        return sentence_evaluator, spark_context, hadoop
    if _is_spark_context(spark_context):
        raise InvalidParameterError("Two SparkContexts were given (third argument and 'sparkContext'); pass one.")
    if spark_context is not None:  # (pool, model, sc, hadoop): the fourth slot holds the hadoop flag
        if hadoop is not None:
            raise InvalidParameterError(
                "With a SparkContext as the third argument, the fourth is 'hadoop'; 'hadoop' was given twice."
            )
        hadoop = spark_context
    return None, sentence_evaluator, hadoop


def _as_pool(data_pool: Any) -> DataPool:
    if isinstance(data_pool, DataPool):
        return data_pool
    try:
        return DataPool(data_pool)
    except InvalidParameterError:
        raise InvalidParameterError(
            "The 'data_pool' parameter must be a DataPool or a sized sequence of items. "
            f"Got {type(data_pool).__name__} instead."
        ) from None


def _resolve_executor(executor: Any, spark_context: Any, hadoop: Any, workers: Any,
                      timeout: Any = None) -> tuple[Any, bool]:
    """``(executor object, whether we created it and must close it)``."""
    options: dict[str, Any] = {} if workers is None else {"workers": workers}
    if check_timeout(timeout) is not None:
        options["timeout"] = timeout
    if spark_context is not None:
        if executor is not None:
            raise InvalidParameterError(
                "Pass either the 'sparkContext' parameter or the 'executor' parameter, not both."
            )
        if "spark" not in get_registry("executor"):
            raise MissingDependencyError(
                "pyspark", extra="spark",
                purpose="parallelEvaluate with a sparkContext (the 'spark' executor is not registered)",
            )
        return load_executor("spark", context=spark_context, hadoop=hadoop, **options), True
    if hadoop:
        raise InvalidParameterError("The 'hadoop' parameter needs a 'sparkContext' (it selects HDFS input on Spark).")
    if executor is None:
        return load_executor("processes", **options), True
    if isinstance(executor, str):
        return load_executor(executor, **options), True
    if is_dask_client(executor):  # a distributed.Client runs the 'dask' executor on it (left open)
        return load_executor("dask", client=executor, **options), True
    if callable(getattr(executor, "run", None)):
        for key, value in (("workers", workers), ("timeout", timeout)):
            if value is not None:
                raise InvalidParameterError(
                    f"The '{key}' parameter applies only to an executor given by name; {executor!r} is already "
                    f"built (set its {key} when creating it)."
                )
        return executor, False
    raise InvalidParameterError(
        "The 'executor' parameter must be a registered executor name (e.g. 'processes[workers=2]') or an "
        f"Executor. Got {type(executor).__name__} instead."
    )
