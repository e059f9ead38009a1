"""The ``spark`` executor: shards as Spark partitions, the model as a broadcast variable.

>>> from assay import load_executor                                      # doctest: +SKIP
>>> executor = load_executor("spark", master="local[2]")                  # doctest: +SKIP
>>> executor.run(pow, [1, 2, 3], 2)                                       # doctest: +SKIP
[1, 4, 9]

How a run works (``run(fn, tasks, shared)``, the protocol of :mod:`assay.executors.base`):

1. ``shared`` (for an evaluation: the sentence evaluator and the model) is pickled once
   on the driver with cloudpickle (so classes defined in ``__main__`` travel too) and sent
   as **one broadcast variable**; each Python worker unpickles it once and keeps it for
   every shard it runs.
2. Each task (shard) becomes **one Spark partition**; the partition runs
   ``fn(shard, shared)`` on the executor and sends back only its result (a tally).
3. The driver puts the results back in shard order; the caller adds them in that order,
   so a Spark run equals the sequential one bit for bit.

``hadoop=True`` (a path pool from :meth:`assay.DataPool.from_paths`): the driver resolves
the paths, folders and globs (HDFS, S3, local, anything Hadoop reads) with Hadoop's
``FileSystem`` -- names only -- and groups the files, in order, into exactly as many
shards as were asked for (file counts differing by at most one; a file is never split,
so an item never straddles two shards; with fewer files than shards the last shards are
empty). Each shard's files are read on the executors with ``binaryFiles`` (one
partition per shard), decoded as strict UTF-8 and parsed there by the pool's data format; the driver never sees a
sentence.

Failures: an exception in a shard fails its Spark task, which Spark retries as configured
(``spark.task.maxFailures``; ``local[N, F]`` for local masters). When the job finally
fails, the original exception is raised on the driver: an
:class:`~assay.errors.EvaluationError` naming the shard and the item, as the evaluator
raised it (other assay errors, such as a data format's line-numbered error, unchanged);
any other exception is wrapped in an ``EvaluationError`` naming the shard. Its
``__cause__`` is the worker's traceback. A Python worker that dies gives a
:class:`~assay.errors.WorkerDiedError` naming the shard. No partial result is returned.

pyspark is an optional dependency (``pip install 'assay[spark]'``, and a Java 17+ runtime
for pyspark 4); it is imported only when this executor is created.

Spark's own chatter: a context this executor creates logs errors only (a log4j2
configuration shipped with assay, ``log4j2-quiet.properties``, and ``setLogLevel("ERROR")``),
draws no stage progress bar (``spark.ui.showConsoleProgress=false``; assay draws its own),
and, when this executor starts the JVM, the JVM's console output (``Using Spark's default
log4j profile``, JVM warnings) goes to a log file that is shown only if the JVM fails to
start. ``ASSAY_SPARK_LOG=1`` in the environment keeps Spark's defaults; Spark settings in
``conf`` (``spark.driver.extraJavaOptions``, ``spark.ui.showConsoleProgress``) win.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import os
import pickle
import re
import sys
import tempfile
import threading
import uuid
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from assay.core.pool import PathShard, split_evenly
from assay.errors import AssayError, EvaluationError, EvaluationTimeoutError, InvalidParameterError, WorkerDiedError
from assay.executors._java import ensure_java_home
from assay.executors._spark_tasks import decode_failures, run_file_partition, run_task_partition
from assay.executors.base import Executor, RemoteTraceback, TaskFunction, _NoBar, check_timeout, task_label
from assay.plugins.deps import require
from assay.plugins.hookspecs import Register, hookimpl

__all__ = ["SparkExecutor", "import_pyspark"]

_TASK_NUMBER = re.compile(r"Task (\d+) in stage [\d.]+ failed")
_GLOB_CHARS = re.compile(r"([*?\[\]{}\\])")


def import_pyspark() -> Any:
    """Import pyspark, or raise :class:`~assay.errors.MissingDependencyError` with the install hint."""
    return require("pyspark", extra="spark", purpose="the 'spark' executor")


#: the log4j2 configuration of the contexts assay creates: errors only (see the module docstring)
QUIET_LOG4J2 = Path(__file__).with_name("log4j2-quiet.properties")


def spark_log_requested() -> bool:
    """Whether Spark's own console output was asked for: ``ASSAY_SPARK_LOG`` set to anything but ``0``."""
    return os.environ.get("ASSAY_SPARK_LOG", "").strip() not in ("", "0")


def _quiet_gateway(pyspark: Any, conf: Any) -> Any:
    """Start the JVM with its console output in a log file (None: a JVM is running or is reached by port).

    A JVM that fails to start raises :class:`~assay.errors.AssayError` with the log's last lines.
    """
    if pyspark.SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return None
    from pyspark.java_gateway import launch_gateway  # deferred: pyspark, the optional extra 'spark'

    log = tempfile.NamedTemporaryFile(prefix="assay-spark-jvm-", suffix=".log", delete=False)  # noqa: SIM115
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    except Exception as exc:
        log.flush()
        tail = Path(log.name).read_text(errors="replace").strip().splitlines()[-15:]
        raise AssayError(f"The Spark JVM did not start ({type(exc).__name__}: {exc}). Its last output "
                         f"(all of it in {log.name}; ASSAY_SPARK_LOG=1 shows it on the console):\n"
                         + "\n".join(tail)) from exc
    finally:
        log.close()
    with contextlib.suppress(OSError):  # the JVM keeps writing to the unlinked file; nothing is left behind
        os.unlink(log.name)
    return gateway


class SparkExecutor(Executor):
    """Run shards as Spark partitions (one partition per shard), the shared objects broadcast once.

    Parameters
    ----------
    context : pyspark.SparkContext, optional
        The context to run on. It is used as given and never stopped by assay.
    master : str, optional
        A master URL (``"local[2]"``, ``"spark://host:7077"``, ``"yarn"``,
        ``"k8s://https://..."``) used when no ``context`` is given: the running
        SparkContext is reused if its master is the same, else one is created (Spark allows
        one per process). Default: the running context, else ``local[workers]``
        (``local[*]`` without ``workers``).
    hadoop : bool, optional
        Read path pools on the executors with Spark (``binaryFiles``, strict UTF-8); see the module
        docstring. Default False (``None`` means False): tasks are pickled on the driver and shipped to the
        executors (a path shard then reads its files with plain Python where it runs).
    progress : bool, optional
        ``True`` / ``False`` forces a progress bar (tasks completed, polled from Spark's
        status tracker) on or off; ``None`` shows it on a terminal for more than a few shards.
    workers : int, optional
        The default shard count of ``parallelEvaluate`` (one partition each), and the core
        count of the default ``local[workers]`` master. Default: the context's
        ``defaultParallelism`` (its total core count).
    app_name : str
        The application name of a context this executor creates.
    conf : dict, optional
        Extra Spark settings for a context this executor creates (``{"spark.executor.memory": "4g"}``).
    stop_on_close : bool, optional
        Stop the context on :meth:`close`. Default: only a context this executor created.
    timeout : float, optional
        The most seconds one shard may run, as for the local executors. Spark schedules
        the tasks itself, so the bound is applied to the whole job: ``timeout`` times the
        number of waves of tasks (``ceil(shards / defaultParallelism)``). When it passes,
        the run's Spark job group is cancelled and
        :class:`~assay.errors.EvaluationTimeoutError` names the shards that had not
        finished. Default: no bound.

    Notes
    -----
    Worker interpreter: in local mode (a ``local[...]`` master) with no ``PYSPARK_PYTHON``
    set, Spark would start ``python3`` from ``PATH``, which is usually not the
    interpreter (or virtual environment) that has assay. So the executor runs its jobs'
    Python workers with the driver's own interpreter (``sys.executable``) -- also on a
    context the user created -- unless ``PYSPARK_PYTHON`` says otherwise. On a cluster,
    assay and every plugin the evaluation uses must be installed in the executors' Python
    (see ``docs/cluster.md``); a worker that cannot import them gives an error that says
    what to set.

    Java: before creating a context, the executor checks the Java runtime pyspark is about
    to launch and, when ``JAVA_HOME`` is stale or Java is too old, uses an installed Java
    17+ instead (:mod:`assay.executors._java`), or says clearly that none is installed.
    """

    name = "spark"

    def __init__(self, *, context: Any = None, master: str | None = None, hadoop: bool | None = False,
                 progress: bool | None = None, workers: int | None = None, app_name: str = "assay",
                 conf: dict[str, Any] | None = None, stop_on_close: bool | None = None,
                 timeout: float | None = None) -> None:
        super().__init__(workers=workers, progress=progress)
        if context is not None and not (hasattr(context, "parallelize") and hasattr(context, "broadcast")):
            raise InvalidParameterError(
                f"The 'context' parameter of the spark executor must be a pyspark.SparkContext. "
                f"Got {type(context).__name__} instead."
            )
        if master is not None and (not isinstance(master, str) or not master.strip()):
            raise InvalidParameterError(
                f"The 'master' parameter of the spark executor must be a master URL such as 'local[2]'. "
                f"Got {master!r} instead."
            )
        if context is not None and master is not None and getattr(context, "master", master) != master:
            raise InvalidParameterError(
                f"The spark executor got both a context (master {context.master!r}) and master={master!r}; "
                "pass only one."
            )
        if hadoop is None:  # the seed's default: not given
            hadoop = False
        if not isinstance(hadoop, bool):
            raise InvalidParameterError(f"The 'hadoop' parameter must be True, False or None. Got {hadoop!r} instead.")
        if conf is not None and not isinstance(conf, dict):
            raise InvalidParameterError(f"The 'conf' parameter must be a dict of Spark settings. Got {conf!r} instead.")
        self.timeout = check_timeout(timeout, "spark")
        if context is None:
            import_pyspark()  # fail now, with the install hint, rather than at the first run
        self._requested_workers = workers
        self.master = master
        self.hadoop = hadoop
        self.app_name = app_name
        self.conf = dict(conf or {})
        self._context = context
        self._owned = False
        self._stop_on_close = stop_on_close

    # ------------------------------------------------------------------ the context
    @property
    def context(self) -> Any:
        """The SparkContext (created or reused on first use)."""
        if self._context is None:
            self._context, self._owned = self._get_or_create()
        return self._context

    @property
    def workers(self) -> int:
        """The default shard count: ``workers`` if given, else the context's ``defaultParallelism``."""
        if self._requested_workers is not None:
            return self._requested_workers
        return max(1, int(getattr(self.context, "defaultParallelism", 1) or 1))

    @workers.setter
    def workers(self, value: int) -> None:  # set by Executor.__init__; the context decides instead
        pass

    def _get_or_create(self) -> tuple[Any, bool]:
        pyspark = import_pyspark()
        active = pyspark.SparkContext._active_spark_context
        if active is not None:
            if self.master is not None and active.master != self.master:
                raise InvalidParameterError(
                    f"The 'master' parameter is {self.master!r} but a SparkContext with master "
                    f"{active.master!r} is already running in this process (Spark allows one); "
                    "pass context=... or stop that context first."
                )
            return active, False
        master = self.master or f"local[{self._requested_workers or '*'}]"
        if pyspark.SparkContext._gateway is None:  # the JVM is not running yet: check what will launch it
            ensure_java_home()
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        conf = pyspark.SparkConf().setMaster(master).setAppName(self.app_name)
        conf.set("spark.ui.showConsoleProgress", "false")  # assay draws its own bar
        quiet = not spark_log_requested()
        if quiet:
            conf.set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={QUIET_LOG4J2.as_uri()}")
        for key, value in self.conf.items():
            conf.set(str(key), str(value))
        with warnings.catch_warnings():
            # pyspark imports pyspark.testing while converting the conf, which warns (FutureWarning) that its
            # pandas API does not support pandas >= 3; assay never uses that API, and the line leaked into
            # `assay demo` (issue 27)
            warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                                    category=FutureWarning)
            if not quiet:
                return pyspark.SparkContext(conf=conf), True
            context = pyspark.SparkContext(conf=conf, gateway=_quiet_gateway(pyspark, conf))
        context.setLogLevel("ERROR")
        return context, True

    def close(self) -> None:
        """Stop the context if this executor created it (or ``stop_on_close=True``)."""
        stop = self._owned if self._stop_on_close is None else self._stop_on_close
        if stop and self._context is not None:
            self._context.stop()
            self._context = None
            self._owned = False

    # ------------------------------------------------------------------ running
    def run(self, fn: TaskFunction, tasks: Sequence[Any], shared: Any, *,
            progress: bool | None = None, desc: str | None = None) -> list[Any]:
        """Run ``fn(task, shared)`` for every task, one Spark partition each; results in task order."""
        tasks = list(tasks)
        if not tasks:
            return []
        if self.hadoop:
            bad = [t for t in tasks if not isinstance(t, PathShard)]
            if bad:
                raise InvalidParameterError(
                    "The spark executor with hadoop=True needs a path pool (DataPool.from_paths(...)), whose "
                    f"shards are groups of files. Got a task of type {type(bad[0]).__name__} instead."
                )
        from pyspark import cloudpickle  # deferred: pyspark, the optional extra 'spark'

        sc = self.context
        labels = [task_label(task, i) for i, task in enumerate(tasks)]
        try:
            payload = cloudpickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise InvalidParameterError(
                "The shared objects (sentence evaluator and model) must be picklable to be broadcast to "
                f"the Spark executors; pickling failed with {type(exc).__name__}: {exc}"
            ) from exc
        token = uuid.uuid4().hex
        broadcast = sc.broadcast(payload)
        done = sc.accumulator([], _Positions())  # positions of finished shards, for timeout errors
        try:
            with _worker_python(sc):
                if self.hadoop:
                    rdd = self._file_rdd(sc, tasks, labels, fn, token, broadcast, done)
                else:
                    rdd = self._task_rdd(sc, tasks, labels, fn, token, broadcast, done)
                pairs = self._collect(sc, rdd, len(tasks), labels, token, progress, desc, done)
        finally:
            with contextlib.suppress(Exception):  # e.g. the context died with the job: keep the job's error
                broadcast.destroy()
        results: list[Any] = [None] * len(tasks)
        seen = set()
        for position, result in pairs:
            results[position] = result
            seen.add(position)
        missing = [labels[i] for i in range(len(tasks)) if i not in seen]
        if missing:
            raise WorkerDiedError(f"Spark returned no result for shard(s) {missing}; nothing was counted.",
                                  shard=missing[0])
        return results

    def _task_rdd(self, sc: Any, tasks: list[Any], labels: list[int], fn: TaskFunction,
                  token: str, broadcast: Any, done: Any) -> Any:
        records = [(i, labels[i], task) for i, task in enumerate(tasks)]
        rdd = sc.parallelize(records, len(records))  # one record, so one shard, per partition
        return rdd.mapPartitionsWithIndex(functools.partial(run_task_partition, fn=fn, token=token,
                                                            broadcast=broadcast, done=done))

    def _file_rdd(self, sc: Any, tasks: list[PathShard], labels: list[int], fn: TaskFunction,
                  token: str, broadcast: Any, done: Any) -> Any:
        shards = regroup_files(sc, tasks)
        parts = []
        for shard in shards:
            if shard.paths:
                joined = ",".join(_GLOB_CHARS.sub(r"\\\1", p) for p in shard.paths)  # literal names
                # bytes, decoded strictly on the executor (wholeTextFiles would replace bad UTF-8 silently)
                parts.append(sc.binaryFiles(joined, minPartitions=1).coalesce(1))
            else:
                parts.append(sc.parallelize([], 1))
        union = sc.union(parts)
        if union.getNumPartitions() != len(shards):  # pragma: no cover - a Spark change would break this
            raise AssayError(f"Spark built {union.getNumPartitions()} partitions for {len(shards)} shards.")
        specs = [(i, labels[i], shard) for i, shard in enumerate(shards)]
        return union.mapPartitionsWithIndex(functools.partial(run_file_partition, fn=fn, token=token,
                                                              broadcast=broadcast, shards=specs, done=done))

    def _collect(self, sc: Any, rdd: Any, n_tasks: int, labels: list[int], token: str,
                 progress: bool | None, desc: str | None, done: Any) -> list[tuple[int, Any]]:
        group = f"assay-{token}"
        keys = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
        previous = {key: sc.getLocalProperty(key) for key in keys}  # restored afterwards
        sc.setJobGroup(group, desc or "assay evaluation", interruptOnCancel=True)
        bar = self._bar(n_tasks, progress, desc)
        stop = threading.Event()
        shown = [0]  # tasks the bar shows as done
        watcher = None
        if not isinstance(bar, _NoBar):
            watcher = threading.Thread(target=_follow, args=(sc, group, bar, stop, shown), daemon=True)
            watcher.start()
        expired = threading.Event()
        timer = None
        bound = None
        if self.timeout is not None:
            waves = -(-n_tasks // max(1, int(getattr(sc, "defaultParallelism", 1) or 1)))
            bound = self.timeout * waves

            def expire() -> None:
                expired.set()
                sc.cancelJobGroup(group)

            timer = threading.Timer(bound, expire)
            timer.daemon = True
            timer.start()
        try:
            pairs: list[tuple[int, Any]] = rdd.collect()
            stop.set()
            if watcher is not None:
                watcher.join(timeout=2)
            bar.update(n_tasks - shown[0])  # the last tasks may finish between two polls
            shown[0] = n_tasks
            return pairs
        except Exception as exc:
            if expired.is_set():
                finished = set(done.value)
                running = [labels[i] for i in range(n_tasks) if i not in finished]
                raise EvaluationTimeoutError(
                    f"The spark run timed out after {bound:g} s (timeout={self.timeout:g} s per shard, "
                    f"{n_tasks} shard(s) on {sc.defaultParallelism} core(s)); shard(s) {running} had not finished "
                    "and their Spark job was cancelled. Nothing was counted.",
                    shard=running[0] if running else None,
                ) from exc
            translated = _translate(exc, labels, getattr(sc, "pythonExec", None))
            if translated is None:
                raise
            raise translated from translated.__cause__
        finally:
            if timer is not None:
                timer.cancel()
            stop.set()
            if watcher is not None:
                watcher.join(timeout=2)
            bar.close()
            for key, value in previous.items():
                sc.setLocalProperty(key, value)

    def __repr__(self) -> str:
        master = self._context.master if self._context is not None else self.master
        return f"SparkExecutor(master={master!r}, hadoop={self.hadoop}, progress={self.progress})"


class _Positions:
    """A Spark ``AccumulatorParam`` that gathers lists (of finished shard positions)."""

    def zero(self, value: list[int]) -> list[int]:
        return []

    def addInPlace(self, value1: list[int], value2: list[int]) -> list[int]:
        value1.extend(value2)
        return value1


@contextlib.contextmanager
def _worker_python(sc: Any) -> Iterator[None]:
    """Run this job's Python workers with the driver's interpreter on a local master, unless the user chose one.

    pyspark fixes ``sc.pythonExec`` when the context is created (``PYSPARK_PYTHON``, else
    ``python3`` from ``PATH``) and reads it when a job's Python function is built. In local
    mode the workers are child processes of this machine, so the driver's own interpreter
    (a virtual environment's, say, used without activating it) is the one that has assay.
    """
    master = str(getattr(sc, "master", "") or "")
    default = getattr(sc, "pythonExec", None) == "python3" and not os.environ.get("PYSPARK_PYTHON")
    if not (master.startswith("local") and default):
        yield
        return
    sc.pythonExec = sys.executable
    try:
        yield
    finally:
        sc.pythonExec = "python3"


# ---------------------------------------------------------------------- helpers
def _follow(sc: Any, group: str, bar: Any, stop: threading.Event, shown: list[int]) -> None:
    """Advance ``bar`` with the completed tasks of the job group (polled every 0.2 s); ``shown[0]`` counts them."""
    tracker = sc.statusTracker()
    while not stop.wait(0.2):
        try:
            completed = 0
            for job_id in tracker.getJobIdsForGroup(group):
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job else ():
                    stage = tracker.getStageInfo(stage_id)
                    completed += stage.numCompletedTasks if stage else 0
        except Exception:  # noqa: BLE001 - the bar is cosmetic; never fail a run for it
            return
        if completed > shown[0]:
            bar.update(completed - shown[0])
            shown[0] = completed


_NO_MODULE = re.compile(r"No module named '([\w.]+)'")


def _translate(exc: BaseException, labels: list[int], python: str | None = None) -> BaseException | None:
    """The assay error for a failed Spark job, or None when ``exc`` is not a Spark job failure."""
    text = str(exc)
    missing = _NO_MODULE.search(text)
    if missing and not decode_failures(text):
        match = _TASK_NUMBER.search(text)
        label = labels[int(match.group(1))] if match and int(match.group(1)) < len(labels) else None
        died = WorkerDiedError(
            f"The Spark executors' Python ({python or 'python3'}) cannot import {missing.group(1)!r}, so no shard "
            "ran. Install assay and the plugins the evaluation uses in the executors' Python, or point Spark at "
            "an interpreter that has them: set PYSPARK_PYTHON (or the spark.pyspark.python setting) before the "
            "SparkContext is created.", shard=label)
        died.__cause__ = RemoteTraceback(text[-4000:])
        return died
    failures = decode_failures(text)
    if failures:
        failure = failures[-1]  # the last attempt
        cause = RemoteTraceback(failure.get("traceback") or "")
        original = _unpickle(failure.get("pickle"))
        if isinstance(original, AssayError):
            original.__cause__ = cause
            return original
        label, item = failure.get("shard"), failure.get("item")
        where = f"shard {label}" + (f", item {item}" if item is not None else "")
        error = EvaluationError(f"The Spark task of {where} failed after Spark's retries: "
                                f"{failure.get('type')}: {failure.get('message')}", shard=label, item=item)
        error.__cause__ = original if isinstance(original, BaseException) else cause
        if isinstance(original, BaseException):
            original.__cause__ = cause
        return error
    if "org.apache.spark" not in text and type(exc).__name__ not in ("Py4JJavaError", "PythonException"):
        return None
    match = _TASK_NUMBER.search(text)
    label = labels[int(match.group(1))] if match and int(match.group(1)) < len(labels) else None
    first = next((line.strip() for line in text.splitlines() if "failure" in line.lower() or "Error" in line), "")
    where = f"shard {label}" if label is not None else "a shard"
    error = WorkerDiedError(f"The Spark task of {where} failed outside the evaluation (a Python worker crashed, an "
                            f"executor was lost, or Spark could not read the input); nothing was counted. "
                            f"Spark said: {first[:500]}", shard=label)
    error.__cause__ = RemoteTraceback(text[-4000:])
    return error


def _unpickle(data: str | None) -> Any:
    if not data:
        return None
    try:
        return pickle.loads(base64.b64decode(data))
    except Exception:  # noqa: BLE001 - an exception class missing on the driver: use the text
        return None


def _hadoop_files(sc: Any, path: str) -> list[str]:
    """The files ``path`` names (a file, a folder or a glob), resolved by Hadoop's FileSystem, sorted."""
    jvm = sc._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    fs = hpath.getFileSystem(sc._jsc.hadoopConfiguration())
    # A path that exists as written is taken literally ("part[1].conllu"), anything else as a glob.
    statuses = [fs.getFileStatus(hpath)] if fs.exists(hpath) else fs.globStatus(hpath)
    if not statuses:
        raise FileNotFoundError(f"No file matches {path!r} (resolved with Hadoop's FileSystem for hadoop=True).")
    files: list[str] = []
    for status in sorted(statuses, key=lambda s: s.getPath().toString()):
        if status.isDirectory():
            children = [c for c in fs.listStatus(status.getPath())
                        if c.isFile() and not c.getPath().getName().startswith((".", "_"))]
            files.extend(sorted(c.getPath().toString() for c in children))
        else:
            files.append(status.getPath().toString())
    return files


def regroup_files(sc: Any, shards: Sequence[PathShard]) -> list[PathShard]:
    """Resolve the shards' paths with Hadoop and regroup the files into the same number of shards.

    Files keep their order; shard ``i`` gets the ``i``-th contiguous group, file counts
    differing by at most one (:func:`~assay.core.pool.split_evenly`).
    """
    files: list[str] = []
    for shard in shards:
        for path in shard.paths:
            files.extend(_hadoop_files(sc, path))
    commas = [f for f in files if "," in f]
    if commas:  # Spark's file readers split their path argument on commas, with no escape
        raise InvalidParameterError(
            f"hadoop=True cannot read files whose names contain a comma (Spark splits paths on commas). "
            f"Got {commas[0]!r}; rename it or evaluate without hadoop=True."
        )
    first = shards[0]
    return [PathShard(shard.index, tuple(files[start:stop]), first.format, first.data_format, start)
            for shard, (start, stop) in zip(shards, split_evenly(len(files), len(shards)))]


@hookimpl
def assay_register_executors(register: Register) -> None:
    register("spark", SparkExecutor,
             description="Run shards as Apache Spark partitions, the model broadcast once (needs assay[spark])")
