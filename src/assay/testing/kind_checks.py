"""Conformance checks of the kinds other than metrics (``assay check-plugin``).

estimator, stat_calculator
    ``instantiate``; ``declaration`` (a known ``level``; ``stats`` / ``dependencies`` are
    strings); ``pickling``; ``dependencies`` (every statistic the object reads is made
    by a registered stat calculator, through a chain without cycles, or is a field the
    data must provide, listed in the result); ``run`` on a declared sample; ``order``
    (permuting the examples permutes the outputs); ``chunking`` (two chunks, run apart
    and concatenated, give the outputs of one run).
sentence_evaluator
    ``instantiate`` (a callable); ``pickling``; ``tally``: on the declared items, each
    call returns two non-negative ints ``(correct_num, gold_set_size)`` with
    ``correct_num <= gold_set_size``; the invariances
    of the :class:`~assay.EvaluationResult` that ``EvaluatorBase.sequentialEvaluate``
    adds up: ``order`` (a shuffled pool), ``shard-merge`` (three shards evaluated apart
    and added with ``+``), ``one-at-a-time`` (one result per item, summed) all give the
    result of one pass.
executor
    ``instantiate``; ``run-order`` (``run(fn, tasks, shared)`` returns the results in
    task order); ``no-tasks`` (no tasks, no results); ``errors-propagate`` (an
    exception raised by ``fn`` reaches the caller with its type); ``same-result``
    (``parallelEvaluate`` on a small pool with this executor gives the
    :class:`~assay.EvaluationResult` of ``sequentialEvaluate``, shards included).
data_format
    ``instantiate``; ``pickling``; ``parse`` (text in, a list of items out; the declared
    sample is read: every format needs one); ``round-trip`` (a write-read round trip,
    ``parse(dumps(items)) == items``; does not apply to a read-only format, which does
    not implement ``dumps``).
task
    ``instantiate``; ``interface`` (the methods the runner calls); ``pickling``.
model_backend
    ``declaration``: the factory is callable, and its optional ``accepts(model)`` returns
    a bool for a folder that does not exist (no model is loaded: that needs a model).
aggregation
    ``instantiate``; ``pickling``; ``random-map`` (a float for random 2-D and 3-D maps);
    ``nan-map`` (a map holding NaN is an assay error, or NaN with a warning);
    ``call-order`` (no state between calls: one object used for every check gives, map by
    map, the values of a new object per map); ``layout`` (a Fortran-ordered copy of a map aggregates to the same
    value). Without declared examples, an aggregation that rejects a random map with an
    assay error (it needs an option, such as a threshold) has these checks skipped, with
    the reason.
"""

from __future__ import annotations

import contextlib
import logging
import math
import numbers
import pickle
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from assay.errors import AssayError, EvaluationError
from assay.plugins.registry import Entry
from assay.testing.metric_checks import bad_input_outcome
from assay.testing.recorder import NOT_RUN, NotApplicable, Recorder, Skip, one_line
from assay.testing.samples import declared_examples, random_map

__all__ = ["CHECKS", "check_aggregation", "check_data_format", "check_executor", "check_sentence_evaluator",
           "check_model_backend", "check_statistics_user", "check_task", "count_vowels"]

CHECKS: dict[str, tuple[str, ...]] = {
    "estimator": ("instantiate", "declaration", "pickling", "dependencies", "run", "order", "chunking"),
    "stat_calculator": ("instantiate", "declaration", "pickling", "dependencies", "run", "order", "chunking"),
    "sentence_evaluator": ("instantiate", "pickling", "tally", "order", "shard-merge", "one-at-a-time"),
    "executor": ("instantiate", "run-order", "no-tasks", "errors-propagate", "same-result"),
    "data_format": ("instantiate", "pickling", "parse", "round-trip"),
    "task": ("instantiate", "interface", "pickling"),
    "aggregation": ("instantiate", "pickling", "random-map", "nan-map", "call-order", "layout"),
    "model_backend": ("declaration",),
}

_NO_SAMPLE = "no sample: declare examples=[{{{keys}}}] for it"


def _first_example(entry: Entry) -> Mapping[str, Any]:
    examples = declared_examples(entry)
    return examples[0] if examples else {}


def _round_trip(obj: Any) -> Any:
    try:
        return pickle.loads(pickle.dumps(obj))
    except Exception as exc:
        raise AssertionError(f"cannot be pickled ({type(exc).__name__}: {exc}); parallel executors send it to "
                             "workers, so define the class at module top level") from exc


def _same_type(obj: Any) -> Any:
    copy = _round_trip(obj)
    if type(copy) is not type(obj):
        raise AssertionError(f"unpickled as a {type(copy).__name__}, not a {type(obj).__name__}")
    return copy


# --------------------------------------------------------------------------- estimators, statistics
def _strings(value: Any, what: str) -> None:
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise AssertionError(f"{what} must be a tuple of statistic names (str); got {value!r:.80}")


def _declaration(obj: Any, kind: str) -> None:
    from assay.uncertainty.base import LEVELS

    _strings(getattr(obj, "dependencies", None), "dependencies")
    if kind == "stat_calculator":
        _strings(getattr(obj, "stats", None), "stats")
        if not obj.stats:
            raise AssertionError("stats is empty: a stat calculator produces at least one statistic")
    elif getattr(obj, "level", None) not in LEVELS:
        raise AssertionError(f"level must be one of {', '.join(LEVELS)}; got {getattr(obj, 'level', None)!r}")
    if not callable(obj):
        raise AssertionError(f"a {type(obj).__name__} is not callable as obj(stats)")


def _calculators(system: Any) -> list[Any]:
    """Every registered stat calculator that instantiates without arguments."""
    out = []
    for entry in system.registry("stat_calculator"):
        try:
            out.append(entry.create())
        except Exception:  # noqa: BLE001 - its own check reports it
            continue
    return out


def _dependencies(obj: Any, system: Any) -> str:
    from assay.uncertainty.graph import plan_calculators

    calculators = _calculators(system)
    made = {stat for calc in calculators for stat in calc.stats}
    needed = set(obj.dependencies)
    fields: set[str] = set()
    seen: set[str] = set()
    todo = list(needed)
    while todo:  # the statistics no calculator makes, down the whole chain: the data must hold them
        stat = todo.pop()
        if stat in seen:
            continue
        seen.add(stat)
        if stat in made:
            todo.extend(d for c in calculators if stat in c.stats for d in c.dependencies)
        else:
            fields.add(stat)
    label = getattr(obj, "name", None) or type(obj).__name__
    plan_calculators({d: [label] for d in needed}, fields, calculators)
    return ", ".join(sorted(fields))


def _run_statistics(obj: Any, kind: str, example: Mapping[str, Any]) -> None:
    stats = example.get("stats")
    if stats is None:
        raise Skip(_NO_SAMPLE.format(keys="'stats': {...}"))
    out = obj(stats)
    if kind == "stat_calculator":
        if not isinstance(out, Mapping):
            raise AssertionError(f"returned a {type(out).__name__}, not a dict of statistics")
        missing = [s for s in obj.stats if s not in out]
        if missing:
            raise AssertionError(f"declares stats {missing} but did not return them (returned {sorted(out)})")
        return
    n = len(next(iter(stats.values()))) if stats else 0
    if len(out) != n:
        raise AssertionError(f"returned {len(out)} values for {n} examples")
    if obj.level == "sequence":
        values = np.asarray(out, dtype=float)
        if values.ndim != 1:
            raise AssertionError(f"a sequence-level estimator returns one value per example; got shape {values.shape}")


def _n_examples(stats: Mapping[str, Any]) -> int:
    return len(next(iter(stats.values()))) if stats else 0


def _take(stats: Mapping[str, Any], idx: Any) -> dict[str, Any]:
    return {k: [v[i] for i in idx] for k, v in stats.items()}


def _rows(obj: Any, kind: str, out: Any) -> list[Any]:
    """The per-example outputs: an estimator's values, or a calculator's statistics zipped per example."""
    if kind == "stat_calculator":
        return [tuple(out[s][i] for s in obj.stats) for i in range(len(out[obj.stats[0]]))]
    return list(out)


def _same_value(a: Any, b: Any) -> bool:
    try:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return bool(a == b)
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True))


def _same_rows(got: list[Any], expected: list[Any], how: str) -> None:
    if len(got) != len(expected):
        raise AssertionError(f"{how}: {len(got)} outputs for {len(expected)} examples")
    for i, (a, b) in enumerate(zip(got, expected)):
        if not _same_value(a, b):
            raise AssertionError(f"{how}: example {i} gives {_show(a)} instead of {_show(b)}")


def _show(value: Any) -> str:
    """A value for a message: numpy scalars and arrays as plain Python numbers and lists, cut at 80 characters."""
    plain = value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value
    return f"{plain!r:.80}"


def _statistics_order(obj: Any, kind: str, example: Mapping[str, Any]) -> None:
    stats = example.get("stats")
    if stats is None:
        raise Skip(_NO_SAMPLE.format(keys="'stats': {...}"))
    n = _n_examples(stats)
    perm = np.random.default_rng(0).permutation(n).tolist()
    if n > 1 and perm == list(range(n)):
        perm = perm[::-1]
    whole = _rows(obj, kind, obj(dict(stats)))
    _same_rows(_rows(obj, kind, obj(_take(stats, perm))), [whole[i] for i in perm], "permuting the examples")


def _statistics_chunking(obj: Any, kind: str, example: Mapping[str, Any]) -> None:
    stats = example.get("stats")
    if stats is None:
        raise Skip(_NO_SAMPLE.format(keys="'stats': {...}"))
    n = _n_examples(stats)
    whole = _rows(obj, kind, obj(dict(stats)))
    half = n // 2
    parts = (_rows(obj, kind, obj(_take(stats, range(half)))) + _rows(obj, kind, obj(_take(stats, range(half, n)))))
    _same_rows(parts, whole, "running two chunks apart")


def check_statistics_user(entry: Entry, rec: Recorder, system: Any) -> None:
    """Record the checks of one estimator or stat calculator."""
    example = _first_example(entry)
    obj = rec.instantiate(example.get("overrides"))
    if obj is NOT_RUN:
        return
    if rec.run("declaration", lambda: _declaration(obj, entry.kind)) is NOT_RUN:
        rec.skip_rest("bad declaration")
        return
    rec.run("pickling", lambda: _same_type(obj))
    rec.run("dependencies", lambda: _dependencies(obj, system))
    if rec.run("run", lambda: _run_statistics(obj, entry.kind, example)) is NOT_RUN:
        rec.skip_rest("no run on a sample")
        return
    rec.run("order", lambda: _statistics_order(obj, entry.kind, example))
    rec.run("chunking", lambda: _statistics_chunking(obj, entry.kind, example))


# --------------------------------------------------------------------------- sentence evaluators
def _tally(evaluator: Any, items: list[Any], w_vector: Any) -> list[tuple[int, int]]:
    out = []
    for i, item in enumerate(items):
        got = evaluator(item, w_vector)
        ok = (isinstance(got, tuple) and len(got) == 2
              and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and int(v) >= 0 for v in got))
        if not ok:
            raise AssertionError(f"item {i}: returned {got!r:.80}; expected (correct_num, gold_set_size), "
                                 "two non-negative ints")
        if int(got[0]) > int(got[1]):
            raise AssertionError(f"item {i}: returned {got!r:.80}; correct_num {int(got[0])} is above gold_set_size "
                                 f"{int(got[1])} (a count of correct items out of the gold set cannot exceed it)")
        out.append((int(got[0]), int(got[1])))
    return out


def check_sentence_evaluator(entry: Entry, rec: Recorder) -> None:
    """Record the checks of one sentence evaluator."""
    example = _first_example(entry)

    def is_callable(obj: Any) -> None:
        if not callable(obj):
            raise AssertionError(f"the factory returned a {type(obj).__name__}, not a callable (sent, w_vector)")

    evaluator = rec.instantiate(example.get("overrides"), check=is_callable)
    if evaluator is NOT_RUN:
        return
    items = example.get("items")

    def pickling() -> None:
        copy = _round_trip(evaluator)
        w_vector = example.get("w_vector")
        if items is not None and [copy(i, w_vector) for i in items] != [evaluator(i, w_vector) for i in items]:
            raise AssertionError("the unpickled evaluator gives other tallies than the original")

    rec.run("pickling", pickling)
    if items is None:
        rec.skip_rest(_NO_SAMPLE.format(keys="'items': [...]"))
        return
    w_vector = example.get("w_vector")
    pool: list[Any] = list(items)
    if rec.run("tally", lambda: _tally(evaluator, pool, w_vector)) is NOT_RUN:
        rec.skip_rest("no tally on the sample")
        return

    def one_pass() -> Any:
        return _sequential(evaluator, pool, w_vector, 1)

    def order() -> None:
        perm = np.random.default_rng(0).permutation(len(pool)).tolist()
        _same_tally(_sequential(evaluator, [pool[i] for i in perm], w_vector, 1), one_pass(), "shuffling the pool")

    def shard_merge() -> None:
        bounds = [0, len(pool) // 3, (2 * len(pool)) // 3, len(pool)]
        parts = [_sequential(evaluator, pool[bounds[k]:bounds[k + 1]], w_vector, 1) for k in range(3)]
        _same_tally(parts[0] + parts[1] + parts[2], one_pass(), "three shards evaluated apart and added")
        _same_tally(_sequential(evaluator, pool, w_vector, 3), one_pass(), "a pool of three shards")

    def one_at_a_time() -> None:
        _same_tally(sum((_sequential(evaluator, [item], w_vector, 1) for item in pool[1:]),
                        _sequential(evaluator, pool[:1], w_vector, 1)), one_pass(), "one item at a time, added")

    rec.run("order", order)
    rec.run("shard-merge", shard_merge)
    rec.run("one-at-a-time", one_at_a_time)


@contextlib.contextmanager
def _quiet_log() -> Iterator[None]:
    """The evaluator's INFO lines off while the checks evaluate (they would flood the report)."""
    from assay.core.log import logger

    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _sequential(evaluator: Any, items: list[Any], w_vector: Any, shards: int) -> Any:
    from assay.core.evaluator import EvaluatorBase
    from assay.core.pool import DataPool

    with _quiet_log():
        return EvaluatorBase().sequentialEvaluate(DataPool(items, num_shards=shards), w_vector,
                                                  sentence_evaluator=evaluator)


def _tally_of(result: Any) -> tuple[int, int, int]:
    return int(result.correct_num), int(result.gold_set_size), int(result.sentence_num)


def _same_tally(got: Any, expected: Any, how: str) -> None:
    if _tally_of(got) != _tally_of(expected):
        raise AssertionError(f"{how}: (correct_num, gold_set_size, sentence_num) = {_tally_of(got)}, one pass "
                             f"gives {_tally_of(expected)}")


# --------------------------------------------------------------------------- executors
def square_plus_shared(task: int, shared: int) -> int:
    """A task function for the executor checks (module level, so worker processes can import it)."""
    return task * task + shared


def fail_on_three(task: int, shared: Any) -> int:
    """A task function that raises ``KeyError`` on task 3."""
    if task == 3:
        raise KeyError("task 3 fails on purpose")
    return task


def _run_order(executor: Any) -> None:
    got = executor.run(square_plus_shared, list(range(7)), 10)
    expected = [i * i + 10 for i in range(7)]
    if list(got) != expected:
        raise AssertionError(f"run(fn, tasks 0..6, shared=10) returned {got!r:.120}; expected {expected} (task order)")


def _no_tasks(executor: Any) -> None:
    got = executor.run(square_plus_shared, [], 1)
    if list(got) != []:
        raise AssertionError(f"run with no tasks returned {got!r:.80}; expected []")


def count_vowels(sent: Any, w_vector: Any) -> tuple[int, int]:
    """A sentence evaluator for the executor checks: (vowels, letters) of a word (module level: it pickles)."""
    return sum(ch in "aeiou" for ch in sent), len(sent)


_WORDS = ("evaluation", "tally", "shard", "merge", "assay", "queue", "rhythm", "idea", "pool", "order", "spark",
          "dask", "thread")


def _same_result(executor: Any) -> None:
    from assay.core.evaluator import EvaluatorBase
    from assay.core.pool import DataPool

    ev = EvaluatorBase()
    with _quiet_log():
        expected = ev.sequentialEvaluate(DataPool(list(_WORDS), num_shards=4), None, sentence_evaluator=count_vowels)
        got = ev.parallelEvaluate(DataPool(list(_WORDS)), None, sentence_evaluator=count_vowels, executor=executor,
                                  num_shards=4)
    if got != expected:
        raise AssertionError(f"parallelEvaluate on 13 items in 4 shards gives {got!r:.200}; sequentialEvaluate "
                             f"gives {expected!r:.200}")


def _errors_propagate(executor: Any) -> None:
    try:
        executor.run(fail_on_three, [1, 2, 3, 4], None)
    except KeyError:
        return
    except EvaluationError as exc:
        if "KeyError" in str(exc):  # a distributed engine's documented wrapping, naming the original type
            return
        raise AssertionError(f"fn raised KeyError but run raised an EvaluationError that does not name it: "
                             f"{one_line(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - the finding
        raise AssertionError(f"fn raised KeyError but run raised {type(exc).__name__}: the error must keep its "
                             "type (or be an EvaluationError naming it)") from None
    raise AssertionError("fn raised KeyError on task 3 but run returned normally")


def check_executor(entry: Entry, rec: Recorder) -> None:
    """Record the checks of one executor."""
    example = _first_example(entry)

    def has_run(obj: Any) -> None:
        if not callable(getattr(obj, "run", None)):
            raise AssertionError(f"a {type(obj).__name__} has no run(fn, tasks, shared) method")

    executor = rec.instantiate(example.get("overrides"), check=has_run)
    if executor is NOT_RUN:
        return
    try:
        rec.run("run-order", lambda: _run_order(executor))
        rec.run("no-tasks", lambda: _no_tasks(executor))
        rec.run("errors-propagate", lambda: _errors_propagate(executor))
        rec.run("same-result", lambda: _same_result(executor))
    finally:
        close = getattr(executor, "close", None)
        if callable(close):
            _quiet(close)


def _quiet(fn: Any) -> None:
    """Close an executor; a failure to close is a warning (the checks above already have their results)."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - any failure to close is reported, not raised
        warnings.warn(f"closing the executor failed: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)


# --------------------------------------------------------------------------- data formats
def _parse(fmt: Any, example: Mapping[str, Any]) -> None:
    out = fmt.parse("", source="<empty>")
    if not isinstance(out, list):
        raise AssertionError(f"parse('') returned a {type(out).__name__}; expected a list of items")
    if "text" in example:
        items = fmt.parse(example["text"], source="<example>")
        if not isinstance(items, list) or not items:
            raise AssertionError(f"parse of the declared text returned {items!r:.80}; expected a non-empty list")
    elif "items" not in example:
        raise Skip(_NO_SAMPLE.format(keys="'text': ..."))


def _implements_dumps(fmt: Any) -> bool:
    from assay.core.formats import DataFormat

    dumps = getattr(type(fmt), "dumps", None)
    return callable(dumps) and dumps is not getattr(DataFormat, "dumps", None)


def _round_trip_format(fmt: Any, example: Mapping[str, Any]) -> None:
    if not _implements_dumps(fmt):
        raise NotApplicable("a read-only format: dumps is not implemented (optional); the parse check reads its sample")
    if "items" in example:
        items = list(example["items"])
    elif "text" in example:
        items = fmt.parse(example["text"], source="<example>")
    else:
        raise Skip(_NO_SAMPLE.format(keys="'text': ..."))
    text = fmt.dumps(items)
    again = fmt.parse(text, source="<dumps>")
    if again != items:
        first = next((i for i, (a, b) in enumerate(zip(items, again)) if a != b), min(len(items), len(again)))
        raise AssertionError(f"parse(dumps(items)) differs from items at item {first} ({len(items)} items written, "
                             f"{len(again)} read back)")


def check_data_format(entry: Entry, rec: Recorder) -> None:
    """Record the checks of one data format."""
    example = _first_example(entry)

    def has_parse(obj: Any) -> None:
        if not callable(getattr(obj, "parse", None)):
            raise AssertionError(f"a {type(obj).__name__} has no parse(text, source=...) method")

    fmt = rec.instantiate(example.get("overrides"), check=has_parse)
    if fmt is NOT_RUN:
        return
    rec.run("pickling", lambda: _same_type(fmt))
    if getattr(fmt, "binary", False):
        rec.run("parse", lambda: _loads_garbage(fmt))
        rec.run("round-trip", lambda: _round_trip_array(fmt, example))
        return
    rec.run("parse", lambda: _parse(fmt, example))
    rec.run("round-trip", lambda: _round_trip_format(fmt, example))


def _loads_garbage(fmt: Any) -> None:
    """A binary format says which source it could not read (a DataFormatError naming it)."""
    from assay.core.formats import DataFormatError

    try:
        fmt.loads(b"not an array file", source="<garbage>")
    except DataFormatError as exc:
        if "<garbage>" not in str(exc):
            raise AssertionError(f"loads of garbage bytes raised {exc!s:.80} without naming the source") from None
        return
    raise AssertionError("loads of garbage bytes returned items instead of raising a DataFormatError")


def _round_trip_array(fmt: Any, example: Mapping[str, Any]) -> None:
    if "array" not in example:
        raise Skip(_NO_SAMPLE.format(keys="'array': [[...]]"))
    array = np.asarray(example["array"])
    again = fmt.loads(fmt.dumps_bytes([array]), source="<dumps_bytes>")
    if len(again) != 1 or not np.array_equal(np.asarray(again[0]), array) or np.asarray(again[0]).shape != array.shape:
        raise AssertionError(f"loads(dumps_bytes([array])) gave {again!r:.80}, not the array {array.tolist()!r:.80}")


# --------------------------------------------------------------------------- tasks, aggregations
def _task_interface(task: Any) -> None:
    missing = [m for m in ("image_metrics", "reduce") if not callable(getattr(task, m, None))]
    if missing:
        raise AssertionError(f"a {type(task).__name__} lacks {', '.join(missing)} (see assay.downstream.Task)")
    if not isinstance(getattr(task, "name", None), str) or not task.name:
        raise AssertionError("a task sets name (the stem of its result file)")


def check_task(entry: Entry, rec: Recorder) -> None:
    """Record the checks of one downstream task."""
    example = _first_example(entry)
    task = rec.instantiate(example.get("overrides"))
    if task is NOT_RUN:
        return
    rec.run("interface", lambda: _task_interface(task))
    rec.run("pickling", lambda: _same_type(task))


def _aggregate(agg: Any, umap: Any) -> float:
    value = agg(umap)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise AssertionError(f"returned {value!r:.60}, not a number") from None
    if not math.isfinite(number):
        raise AssertionError(f"returned {number!r} for a finite map")
    return number


def check_aggregation(entry: Entry, rec: Recorder) -> None:
    """Record the checks of one aggregation."""
    example = _first_example(entry)

    def is_callable(obj: Any) -> None:
        if not callable(obj):
            raise AssertionError(f"the factory returned a {type(obj).__name__}, not a callable (uncertainty_map)")

    agg = rec.instantiate(example.get("overrides"), check=is_callable)
    if agg is NOT_RUN:
        return
    if "map" in example:  # the declared map, and a second one (half its values) for the call-order check
        declared_map = np.asarray(example["map"], dtype=float)
        maps = [declared_map, declared_map * 0.5]
    else:
        maps = [random_map((16, 16)), random_map((4, 8, 8), seed=1)]

    if "map" not in example:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                agg(maps[0])
        except AssayError as exc:  # it needs options for a generated map: the plugin declares them
            rec.skip_rest(f"no examples declared, and the aggregation rejected a random map ({one_line(exc)}); "
                          "declare examples=[{'overrides': {...}, 'map': ...}]")
            return

    def pickling() -> None:
        copy = _round_trip(agg)
        a, b = _aggregate(agg, maps[0]), _aggregate(copy, maps[0])
        if a != b:
            raise AssertionError(f"the unpickled aggregation gives {b!r}, the original {a!r}")

    def nan_map() -> None:
        bad = maps[0].copy()
        bad.flat[bad.size // 2] = np.nan
        problem = bad_input_outcome(lambda: agg(bad))
        if problem:
            raise AssertionError(f"a map holding NaN: {problem}")

    def call_order() -> None:
        overrides = dict(example.get("overrides") or {})
        fresh = [_aggregate(entry.create(**overrides), m) for m in maps]  # a new object per map
        used = [_aggregate(agg, m) for m in reversed(maps)][::-1]         # one object, after the other checks
        if fresh != used:
            raise AssertionError(f"one aggregation object, after other calls, gives {used!r} where a new one per "
                                 f"map gives {fresh!r}: an aggregation keeps no state between calls")

    def layout() -> None:
        for m in maps:
            a, b = _aggregate(agg, m), _aggregate(agg, np.asfortranarray(m))
            if not (a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)):
                raise AssertionError(f"a Fortran-ordered copy of a {m.shape} map gives {b!r}, the map {a!r}")

    rec.run("pickling", pickling)
    rec.run("random-map", lambda: [_aggregate(agg, m) for m in maps])
    rec.run("nan-map", nan_map)
    rec.run("call-order", call_order)
    rec.run("layout", layout)


def _backend_declaration(entry: Entry) -> None:
    if not callable(entry.factory):
        raise AssertionError(f"the factory is a {type(entry.factory).__name__}, not a callable (model, **options)")
    accepts = getattr(entry.factory, "accepts", None)
    if accepts is not None:
        answer = accepts("/nonexistent/assay-conformance-model")
        if not isinstance(answer, bool):
            raise AssertionError(f"accepts(model) returned {answer!r:.60}, not a bool")


def check_model_backend(entry: Entry, rec: Recorder) -> None:
    """Record the checks of one model backend (its declaration; running one needs a model)."""
    rec.run("declaration", lambda: _backend_declaration(entry))
