"""Merge streaming metric states across ``torch.distributed`` processes.

In a data-parallel training loop every process updates its own copy of a metric with its
part of the data. :func:`sync` gathers the metric **states** of every process of the group
(``torch.distributed.all_gather_object``: the state is pickled, sent over the process
group's own connections, no file and no lock) and merges them in rank order, rank 0 first,
with :meth:`assay.metrics.Metric.merge`. Every rank then holds the same merged state, so
``compute`` gives the same numbers everywhere: the numbers of one process that saw rank 0's
data, then rank 1's, and so on (see :func:`sync` for what "the same" means bit for bit).

Hugging Face ``accelerate`` and Lightning run on ``torch.distributed`` process groups, so
:func:`sync` works there unchanged. torch is imported only when :func:`sync` runs:
importing :mod:`assay` or this module never imports torch.
"""

from __future__ import annotations

import copy
import datetime
import inspect
from collections.abc import Sequence
from typing import Any

from assay.errors import EvaluationTimeoutError, InvalidParameterError, MissingDependencyError, WorkerDiedError
from assay.metrics.base import Metric, metric_name

__all__ = ["sync"]

#: option values compared across ranks (a metric whose options differ between ranks is an error)
_SIMPLE = (str, int, float, bool, type(None))


def sync(metric: Metric | Sequence[Metric], *, group: Any = None, inplace: bool = True,
         timeout: float | None = None) -> Metric | list[Metric]:
    """Gather the states of ``metric`` from every process of ``group`` and merge them in rank order.

    A collective call: every process of the group must call it, with the same metric (the
    same class and options) in the same position, like any ``torch.distributed`` collective.
    Only the metric's state crosses the wire (``MetricState``: the summed statistics of an
    additive metric, the gathered intermediates of the others), with the class name and the
    simple-valued options, which are checked to agree on every rank.

    Parameters
    ----------
    metric : Metric or sequence of Metric
        A streaming metric (after ``update`` calls), or several, synced in one collective.
    group : torch.distributed.ProcessGroup, optional
        The process group (default: the default group of ``init_process_group``). Ranks are
        the ranks within this group.
    inplace : bool
        ``True`` (default): each metric's own state becomes the merged state, and the metric
        is returned. ``False``: the local state is left as it was and a merged copy is
        returned (``sync(m, inplace=False).compute()`` scores everything seen so far while
        each process keeps accumulating only its own data).
    timeout : float, optional
        The most seconds this rank waits for every other rank of the group to call ``sync``
        (default: the process group's own timeout, ``init_process_group(timeout=...)``, 30
        minutes unless set). A rank that has not called it by then (it died, is stuck, or took
        another path) is named in an :class:`~assay.errors.EvaluationTimeoutError`.

    Returns
    -------
    Metric or list of Metric
        The merged metric(s), in the shape given; the same on every rank.

    Raises
    ------
    MissingDependencyError
        torch is not installed (``pip install torch``).
    InvalidParameterError
        ``metric`` is not an assay metric; no process group is initialised; this process is
        not a member of ``group``; or the metrics differ between ranks (number, class or
        options), which the message names (on every rank).
    EvaluationTimeoutError
        A rank of the group did not call ``sync`` within ``timeout`` (the message names it).
    WorkerDiedError
        Every rank called ``sync`` but a rank left during the exchange (it died): the message
        names the rank(s) that did not answer afterwards. torch's own error is in the message
        tail. After either error the process group cannot be trusted for further ``sync`` calls.

    Notes
    -----
    Every rank merges the same gathered bytes in the same order, so every rank gets the
    same state bit for bit. Gathered (non-additive) metrics concatenate their intermediates
    in rank order: the result is, bit for bit, one process's over the concatenation of the
    ranks' data (rank 0's first), however each rank batched its updates. Additive metrics
    add their totals in rank order: integer statistics (counts) are exact in any order;
    floating-point sums equal, bit for bit, one process that made the same ``update`` calls
    rank after rank when each rank made one ``update`` (otherwise they may differ in the
    last bits, as any change of summation order does). A world size of 1 changes nothing
    (no communication). After an in-place sync every rank holds everyone's data: call
    ``reset`` before accumulating the next epoch, or use ``inplace=False``.

    With the NCCL backend, ``all_gather_object`` stages the pickled state on the current
    CUDA device: call ``torch.cuda.set_device(local_rank)`` first (``accelerate`` and
    Lightning do).

    Examples
    --------
    >>> import torch.distributed as dist  # doctest: +SKIP
    >>> dist.init_process_group("gloo")  # doctest: +SKIP
    >>> m = assay.load_metric("accuracy")  # doctest: +SKIP
    >>> for preds, refs in my_shard_of_the_data:  # doctest: +SKIP
    ...     m.update(preds, refs)
    >>> assay.distributed.sync(m).compute_scores()  # doctest: +SKIP
    {'accuracy': ..., 'score': ..., 'score_name': 'accuracy'}
    """
    single = isinstance(metric, Metric)
    metrics: list[Metric] = [metric] if isinstance(metric, Metric) else _check_metrics(metric)
    inplace = _check_bool(inplace, "inplace")
    timeout = _check_timeout(timeout)
    dist = _torch_distributed()
    if not dist.is_available() or not dist.is_initialized():
        raise InvalidParameterError(
            "assay.distributed.sync: no torch.distributed process group is initialised; call "
            "torch.distributed.init_process_group(...) on every process first (accelerate and Lightning "
            "do it when they launch several processes)."
        )
    world = dist.get_world_size(group)
    if world < 1:  # torch's answer on a process outside the group
        raise InvalidParameterError(
            f"The 'group' parameter of assay.distributed.sync is a process group this process (global rank "
            f"{dist.get_rank()}) is not a member of; only its members may call sync with it."
        )
    if world == 1:
        merged = metrics if inplace else [_copy(m) for m in metrics]
    else:
        payload = [(_identity(m), m.state.__getstate__()) for m in metrics]
        gathered: list[Any] = [None] * world
        meeting = _Meeting.arrive(dist, group, world, timeout)
        try:
            dist.all_gather_object(gathered, payload, group=group)
        except RuntimeError as exc:  # torch's DistError / gloo's raw error: a rank went away during the exchange
            raise meeting.left_during_exchange(exc) from None
        _check_agree(metrics, gathered)
        merged = [_merge(m, i, gathered) for i, m in enumerate(metrics)]
        if inplace:
            for m, total in zip(metrics, merged):
                m.state.__setstate__(total.state.__getstate__())
            merged = metrics
    return merged[0] if single else list(merged)


def _torch_distributed() -> Any:
    try:
        import torch.distributed as dist
    except ImportError:
        raise MissingDependencyError("torch", purpose="assay.distributed.sync") from None
    return dist


def _check_timeout(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise InvalidParameterError(
            f"The 'timeout' parameter of assay.distributed.sync must be a finite number of seconds > 0 or None (the "
            f"process group's timeout); got {timeout!r:.80}."
        )
    return float(timeout)


#: how long the ranks still alive after a failed exchange wait for each other on the store (seconds)
_ROLL_CALL = 2.0


class _Meeting:
    """Every rank of the group checks in on the process group's store before the exchange.

    A rank that never comes (died before ``sync``, stuck, or on another code path) is then named
    by the ranks waiting for it, instead of torch's raw error after the collective's timeout;
    after an exchange that failed, the ranks still alive check in once more, and the ones that
    do not are named as the ones that left.
    """

    #: per process group (its global ranks): how many ``sync`` calls this process made on it
    calls: dict[tuple[int, ...], int] = {}

    def __init__(self, store: Any, prefix: str, rank: int, world: int) -> None:
        self.store, self.prefix, self.rank, self.world = store, prefix, rank, world
        self.store_lost = False

    @classmethod
    def arrive(cls, dist: Any, group: Any, world: int, timeout: float | None) -> _Meeting:
        store = _store(dist)
        ranks = tuple(dist.get_process_group_ranks(group if group is not None else dist.group.WORLD))
        call = cls.calls.get(ranks, 0)
        cls.calls[ranks] = call + 1
        meeting = cls(store, f"assay.distributed.sync/{','.join(map(str, ranks))}/{call}/", dist.get_rank(group),
                      world)
        if store is None:  # no store to meet on: the collective's own timeout applies
            return meeting
        wait = timeout if timeout is not None else _store_timeout(store)
        meeting.store.set(meeting.prefix + str(meeting.rank), "here")
        absent = meeting.absent("", wait)
        if absent and meeting.store_lost:
            raise WorkerDiedError(
                f"assay.distributed.sync: rank 0 of the group is gone (rank {meeting.rank} waited for every rank to "
                "call sync, and the process group's store, which rank 0 holds, stopped answering): it died."
            )
        if absent:
            they, are = ("it", "is") if len(absent) == 1 else ("they", "are")
            raise EvaluationTimeoutError(
                f"assay.distributed.sync: {_ranks(absent)} of the group did not call sync within {wait:g} s (rank "
                f"{meeting.rank} waited): {they} died, {are} stuck, or took another code path; every rank must call "
                "sync."
            )
        return meeting

    def absent(self, stage: str, wait: float) -> list[int]:
        """The ranks that have not checked in at ``stage`` after ``wait`` seconds (all, if the store is gone)."""
        keys = [f"{self.prefix}{stage}{r}" for r in range(self.world)]
        try:
            self.store.wait(keys, datetime.timedelta(seconds=wait))
            return []
        except Exception:  # noqa: BLE001 - torch's store timeout (DistStoreError) or a lost store
            pass
        try:
            return [r for r, key in enumerate(keys) if not self.store.check([key])]
        except Exception:  # noqa: BLE001 - the store itself is gone: it lived in rank 0's process
            self.store_lost = True
            return [0]

    def left_during_exchange(self, exc: BaseException) -> BaseException:
        raw = " ".join(str(exc).split())[:300]
        gone: list[int] = [0]
        if self.store is not None:
            try:
                self.store.set(f"{self.prefix}after/{self.rank}", "here")
                gone = self.absent("after/", _ROLL_CALL)
            except Exception:  # noqa: BLE001 - the store is gone with rank 0
                gone = [0]
        who = (f"{_ranks(gone)} left during it (it did not answer afterwards: it died)" if gone else
               "no rank is missing afterwards")
        return WorkerDiedError(
            f"assay.distributed.sync: the exchange of metric states failed on rank {self.rank} after every rank called "
            f"sync; {who}. torch said: {raw}"
        )


def _store(dist: Any) -> Any:
    """The default process group's key-value store (None where torch does not expose it)."""
    try:
        return dist.distributed_c10d._get_default_store()
    except Exception:  # noqa: BLE001 - a torch without the (private) accessor: no meeting, torch's timeout applies
        return None


def _store_timeout(store: Any) -> float:
    try:
        return float(store.timeout.total_seconds())
    except Exception:  # noqa: BLE001 - a store without a timeout property: torch's default of 30 minutes
        return 1800.0


def _ranks(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {', '.join(map(str, ranks))}"


def _check_metrics(metrics: Any) -> list[Metric]:
    if isinstance(metrics, (str, bytes)) or not isinstance(metrics, Sequence):
        raise InvalidParameterError(
            "The 'metric' parameter of assay.distributed.sync must be an assay Metric or a sequence of them; "
            f"got {type(metrics).__name__}: {metrics!r:.80}."
        )
    out = list(metrics)
    for i, m in enumerate(out):
        if not isinstance(m, Metric):
            raise InvalidParameterError(
                f"The 'metric' parameter of assay.distributed.sync must hold assay Metrics; item {i} is a "
                f"{type(m).__name__}: {m!r:.80}."
            )
    return out


def _check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidParameterError(
            f"The {name!r} parameter of assay.distributed.sync must be True or False; got {value!r:.80}."
        )
    return value


def _identity(metric: Metric) -> tuple[str, dict[str, str]]:
    """The class and the simple-valued public options of ``metric`` (compared across ranks)."""
    cls = type(metric)
    options = {k: repr(v) for k, v in sorted(vars(metric).items()) if not k.startswith("_") and _simple(v)}
    return f"{cls.__module__}.{cls.__qualname__}", options


def _simple(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(isinstance(v, _SIMPLE) for v in value)
    return isinstance(value, _SIMPLE)


def _check_agree(metrics: list[Metric], gathered: list[Any]) -> None:
    """Every rank synced the same metrics (class and simple options) as rank 0; else an error naming the difference."""
    for rank, payload in enumerate(gathered):
        if len(payload) != len(gathered[0]):
            raise InvalidParameterError(
                f"assay.distributed.sync: rank {rank} synced {len(payload)} metric(s) and rank 0 synced "
                f"{len(gathered[0])}; every rank must sync the same metrics."
            )
    for rank, payload in enumerate(gathered):
        for index, metric in enumerate(metrics):
            where = f" (item {index} of the metrics synced)" if len(metrics) > 1 else ""
            ref_name, ref_options = gathered[0][index][0]
            name, options = payload[index][0]
            if name != ref_name:
                raise InvalidParameterError(
                    f"assay.distributed.sync: rank {rank} synced a metric of class {name} and rank 0 one of class "
                    f"{ref_name}{where}; every rank must sync the same metric."
                )
            differ = [key for key in sorted(set(ref_options) | set(options))
                      if ref_options.get(key, "<unset>") != options.get(key, "<unset>")]
            if differ:
                raise InvalidParameterError(
                    f"assay.distributed.sync: metric {metric_name(metric)!r}{where} was built with different options "
                    f"on rank {rank} and rank 0: {_differences(metric, differ, options, ref_options, rank)}; every "
                    "rank must sync the same metric with the same options."
                )


def _differences(metric: Metric, keys: list[str], options: dict[str, str], ref_options: dict[str, str],
                 rank: int) -> str:
    """``average='macro' on rank 1 and average='micro' on rank 0``, for the options the user sets.

    The options the metric's constructor takes (``average``) come first and alone when one of
    them differs: attributes derived from them (``additive``, ``n_stats``) differ only because
    they do, and naming those would hide what the user really set differently.
    """
    try:
        parameters = set(inspect.signature(type(metric)).parameters)
    except (TypeError, ValueError):  # a class whose signature cannot be read: every option counts
        parameters = set()
    given = [key for key in keys if key in parameters] or keys
    return "; ".join(f"{key}={options.get(key, '<unset>')} on rank {rank} and {key}={ref_options.get(key, '<unset>')} "
                     "on rank 0" for key in given)


def _merge(metric: Metric, index: int, gathered: list[Any]) -> Metric:
    """The ``index``-th metric with every rank's state merged in rank order, rank 0 first."""
    total = metric.clone()
    scratch = metric.clone()
    for payload in gathered:
        scratch.state.__setstate__(payload[index][1])
        total.merge(scratch)
    total.state.start = gathered[0][index][1].get("start", 0)
    return total


def _copy(metric: Metric) -> Metric:
    """A metric with the same options and a copy of ``metric``'s state."""
    out = metric.clone()
    out.state.__setstate__(copy.deepcopy(metric.state.__getstate__()))
    return out
