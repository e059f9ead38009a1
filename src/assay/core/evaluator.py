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

import numbers
import warnings
from typing import Any, Callable, Sequence

from assay.core.log import log_result
from assay.core.pool import DataPool
from assay.core.result import EvaluationResult, UndefinedMetricWarning
from assay.errors import EvaluationError, InvalidParameterError, MissingDependencyError
from assay.executors.dask import is_dask_client

__all__ = ["SHARDS_PER_WORKER", "EvaluatorBase", "SentenceEvaluator", "evaluate_shard", "wrap_item_error"]

#: ``(sent, w_vector) -> (correct_num, gold_set_size)``
SentenceEvaluator = Callable[[Any, Any], Any]

#: Default shards per worker of ``parallelEvaluate`` when neither the call nor the pool sets
#: ``num_shards``: a few per worker, so a worker that starts late (forks are serial) or shares
#: its core with another process takes fewer shards instead of holding up the run.
SHARDS_PER_WORKER = 4


# --------------------------------------------------------------------------- per shard
def _bad_tally(value: Any, shard: Any, offset: int, why: str) -> EvaluationError:
    return EvaluationError(
        f"sentence_evaluator returned {value!r} for {shard.describe(offset)} (shard {shard.index}); "
        f"expected two non-negative ints (correct_num, gold_set_size) with correct_num <= gold_set_size: {why}.",
        shard=shard.index, item=shard.pool_index(offset),
    )


def _as_count(x: Any) -> int | None:
    """``x`` as an int when it is an integer that is not a bool (numpy integers allowed), else None."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        try:  # numpy bools and other integer-likes that do not register as Integral
            import numpy as np

            if isinstance(x, np.integer) and not isinstance(x, np.bool_):
                return int(x)
        except ImportError:  # pragma: no cover
            pass
        return None
    return int(x)


def _check_tally(value: Any, shard: Any, offset: int) -> tuple[int, int]:
    """Validate one sentence_evaluator return value (the slow path of :func:`evaluate_shard`).

    The tally is a pair: a tuple or list of two items, or a 1-D numpy array of two. A
    mapping (``{0: 1, 1: 2}`` would unpack to its keys), a set (no order), a string or
    any other iterable is rejected, as is anything whose items are not ints.
    """
    if not isinstance(value, (tuple, list)):
        try:
            import numpy as np
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


def wrap_item_error(exc: BaseException, what: str, shard: Any, offset: int) -> BaseException:
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
        exc.add_note(f"assay: interrupted while {what} ran on {where}")
        return exc
    kind = type(exc).__name__
    detail = f": {exc}" if str(exc) else ""
    if isinstance(exc, SystemExit):
        detail = f" (exit status {exc.code!r})"
    return EvaluationError(f"{what} raised {kind} on {where}{detail}", shard=shard.index,
                           item=shard.pool_index(offset))


def evaluate_shard(shard: Any, shared: tuple[SentenceEvaluator, Any]) -> EvaluationResult:
    """Run the sentence evaluator over one shard; the task function every executor runs.

    ``shared`` is ``(sentence_evaluator, w_vector)``. Returns the shard's
    :class:`EvaluationResult` (``feature_count`` is left to the caller). A raising
    sentence evaluator (any exception, ``SystemExit`` included) or an invalid return
    value raises :class:`EvaluationError` naming the shard and the item (its index in the
    pool), with the original exception chained; a ``KeyboardInterrupt`` propagates with
    a note naming the item (see :func:`wrap_item_error`).
    """
    sentence_evaluator, w_vector = shared
    correct_total = gold_total = 0
    offset = -1
    for offset, sent in enumerate(shard.items()):
        try:
            value = sentence_evaluator(sent, w_vector)
        except BaseException as exc:  # noqa: BLE001 - SystemExit & co. must name the item too
            err = wrap_item_error(exc, "sentence_evaluator", shard, offset)
            if err is exc:
                raise  # KeyboardInterrupt: still interrupts, now with a note naming the item
            raise err from exc
        # Fast path: a tuple of two plain ints in order. Everything else is checked in full.
        if type(value) is tuple and len(value) == 2:
            correct, gold = value
            if type(correct) is int and type(gold) is int and 0 <= correct <= gold:
                correct_total += correct
                gold_total += gold
                continue
        correct, gold = _check_tally(value, shard, offset)
        correct_total += correct
        gold_total += gold
    return EvaluationResult(correct_total, gold_total, offset + 1)


#: How executors name the parts of ``shared`` in errors (e.g. one that cannot be pickled).
evaluate_shard.shared_names = ("the sentence evaluator", "the model (w_vector)")  # type: ignore[attr-defined]


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
    ``EVALUATOR`` logger.

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
                           metrics: Any = None) -> EvaluationResult:
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

        Returns
        -------
        EvaluationResult
        """
        if is_dask_client(sentence_evaluator):  # (pool, model, client): ignored, as a SparkContext is
            sentence_evaluator = None
        sentence_evaluator, sparkContext, hadoop = _seed_arguments(sentence_evaluator, sparkContext, hadoop)
        evaluator = self._resolve_sentence_evaluator(sentence_evaluator)
        pool = _as_pool(data_pool)
        from assay.executors.builtin import SerialExecutor  # no plugin discovery needed to run in-process

        with SerialExecutor(progress=False) as executor:
            return self._run(pool, w_vector, evaluator, executor, pool.shards(), metrics=metrics)

    def parallelEvaluate(self, data_pool: Any, w_vector: Any, sentence_evaluator: Any = None,
                         sparkContext: Any = None, hadoop: Any = None, *, executor: Any = None,
                         num_shards: int | None = None, workers: int | None = None,
                         metrics: Any = None, timeout: float | None = None) -> EvaluationResult:
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
        if num_shards is not None and (isinstance(num_shards, bool) or not isinstance(num_shards, int)
                                       or num_shards < 1):
            raise InvalidParameterError(
                f"The 'num_shards' parameter must be a positive int or None. Got {num_shards!r} instead."
            )
        runner, owned = _resolve_executor(executor, sparkContext, hadoop, workers, timeout)
        try:
            n = num_shards or pool.num_shards or SHARDS_PER_WORKER * max(1, int(getattr(runner, "workers", 1) or 1))
            return self._run(pool, w_vector, evaluator, runner, pool.shards(n), metrics=metrics)
        finally:
            if owned:
                runner.close()

    # ------------------------------------------------------------ snake_case spellings
    def sequential_evaluate(self, data_pool: Any, w_vector: Any, sentence_evaluator: Any = None,
                            sparkContext: Any = None, hadoop: Any = None, *,
                            metrics: Any = None) -> EvaluationResult:
        """Same as :meth:`sequentialEvaluate`."""
        return self.sequentialEvaluate(data_pool, w_vector, sentence_evaluator, sparkContext, hadoop,
                                       metrics=metrics)

    def parallel_evaluate(self, data_pool: Any, w_vector: Any, sentence_evaluator: Any = None,
                          sparkContext: Any = None, hadoop: Any = None, *, executor: Any = None,
                          num_shards: int | None = None, workers: int | None = None,
                          metrics: Any = None, timeout: float | None = None) -> EvaluationResult:
        """Same as :meth:`parallelEvaluate`."""
        return self.parallelEvaluate(data_pool, w_vector, sentence_evaluator, sparkContext, hadoop,
                                     executor=executor, num_shards=num_shards, workers=workers, metrics=metrics,
                                     timeout=timeout)

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
            from assay.plugins import load_sentence_evaluator

            return load_sentence_evaluator(sentence_evaluator)
        if callable(sentence_evaluator):
            return sentence_evaluator
        raise InvalidParameterError(
            "The 'sentence_evaluator' parameter must be a callable (sent, w_vector) -> (correct_num, "
            f"gold_set_size) or a registered name. Got {type(sentence_evaluator).__name__} instead."
        )

    def _run(self, pool: DataPool, w_vector: Any, sentence_evaluator: SentenceEvaluator, executor: Any,
             shards: Sequence[Any], metrics: Any = None) -> EvaluationResult:
        task, shared = evaluate_shard, (sentence_evaluator, w_vector)
        if metrics is not None:  # metric states per shard, merged in shard order (assay.metrics.sharded)
            from assay.metrics.sharded import evaluate_shard_metrics, prepare_metrics

            ms = prepare_metrics(metrics, self)  # checks that self.metric_inputs exists
            task, shared = evaluate_shard_metrics, (sentence_evaluator, w_vector, self.metric_inputs, ms)
        parts = executor.run(task, shards, shared, desc=type(self).__name__)
        if len(parts) != len(shards):  # a broken third-party executor must not shrink the total
            raise EvaluationError(
                f"Executor {executor!r} returned {len(parts)} shard results for {len(shards)} shards."
            )
        scores = None
        if metrics is not None:
            from assay.metrics.sharded import merge_shard_metrics

            parts, scores = merge_shard_metrics(parts)
        result = EvaluationResult.from_shards(parts, feature_count=_feature_count(w_vector), metrics=scores)
        # Only a complete run updates the counters.
        self.correct_num = result.correct_num
        self.gold_set_size = result.gold_set_size
        if result.gold_set_size == 0:
            what = "the data pool is empty" if result.sentence_num == 0 else "no item has a gold count"
            warnings.warn(f"{type(self).__name__}: {what}, so accuracy is undefined (NaN).",
                          UndefinedMetricWarning, stacklevel=3)
        log_result(result)
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
    from assay.executors.base import check_timeout
    from assay.plugins import get_registry, load_executor

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
