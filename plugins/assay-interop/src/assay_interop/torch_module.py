"""Any assay metric as a :class:`torchmetrics.Metric`: :class:`AssayTorchMetric`.

torch users keep metrics in a ``LightningModule``, call them on tensors every step, put
them in a :class:`torchmetrics.MetricCollection` and log them with ``self.log``. An
:class:`AssayTorchMetric` is such a metric, whatever assay metric it holds::

    m = AssayTorchMetric("f1[average=macro]")
    batch_value = m(preds, target)        # forward: the value on this batch (a tensor)
    m.compute()                           # everything seen since reset, on the inputs' device

Its state is the assay metric's tally, kept as torchmetrics states so that torchmetrics'
own distributed sync (``dist_sync_on_step``, ``sync_on_compute``, ``process_group``) gathers
it:

- an **additive** metric (accuracy, F1 ...) keeps one row of summed statistics per
  ``update`` (a list state of float64 tensors, ``dist_reduce_fx="cat"``) and the instance
  count (a tensor state, ``"sum"``); ``compute`` adds the rows in order, as
  :meth:`assay.metrics.Metric.update` does, so a synced value is, bit for bit, that of one
  process that made the same updates rank after rank;
- a **gathered** metric (ROC-AUC, the UE metrics such as AURC, ensemble metrics with
  ``reduction="none"`` ...)
  keeps its intermediates, the rows :meth:`~assay.metrics.Metric.map_all` returns, as their raw
  bytes (a list state of 1-d ``uint8`` tensors, one per ``update``, ``"cat"``), so any numeric or
  structured row layout crosses the wire unchanged; after a sync the rows are rank 0's, then
  rank 1's ..., as for :func:`assay_interop.distributed.sync`.

Intermediates that are not numeric arrays (lists of Python objects: text metrics) have no
tensor form: such a metric is an :class:`~assay.errors.InvalidParameterError` at its first
``update`` (use the assay metric itself and :func:`assay_interop.distributed.sync`).

:attr:`AssayTorchMetric.metric` is the assay metric holding everything seen (its ``state`` is
assay's :class:`~assay.metrics.base.MetricState`: the same totals or intermediates as an assay
metric given the same updates), so ``compute_scores`` and ``merge`` with other assay metrics apply.

torch and torchmetrics are imported by this module (the class derives from
``torchmetrics.Metric``); :mod:`assay_interop` imports it on first use of the name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torchmetrics

from assay.errors import InvalidParameterError
from assay.metrics import Metric
from assay.metrics.base import MetricState, metric_name
from assay.plugins import load_metric

__all__ = ["AssayTorchMetric"]


def _device_of(*values: Any) -> torch.device | None:
    for v in values:
        if isinstance(v, torch.Tensor):
            return v.device
    return None


class AssayTorchMetric(torchmetrics.Metric):
    """An assay metric, by registered name or as an instance, as a :class:`torchmetrics.Metric`.

    Parameters
    ----------
    metric : str or assay.metrics.Metric
        A registered name with options (``"f1[average=macro]"``, ``"ece[n_bins=15]"``), loaded
        with :func:`assay.load_metric`, or a metric instance (``assay.load_ue_metric("aurc")``, a
        metric of your own), whose options are kept and whose state is not (it starts empty).
    **kwargs
        torchmetrics' own options: ``dist_sync_on_step``, ``sync_on_compute``,
        ``process_group``, ``dist_sync_fn``, ``distributed_available_fn``, ``compute_on_cpu``,
        ``compute_with_cache``; any other keyword is torchmetrics' ``ValueError``.

    Notes
    -----
    ``update(preds, target=None)`` takes what the assay metric's ``update`` takes
    (predictions and references, or the predictions alone for metrics that need none, such as
    the ensemble metrics); tensors of any device are read as assay reads them (a CUDA tensor is
    copied to the host, see docs/metrics.md "Tensors and other arrays"). ``compute()`` and
    ``forward()`` return the assay metric's :meth:`~assay.metrics.Metric.compute` as a float64
    tensor on the device of the last tensor given to ``update`` (the metric's own device when
    no tensor was given): a 0-d tensor for a one-number metric, a 1-d one for an ensemble
    metric with ``reduction="none"``. ``higher_is_better`` is the assay metric's. No data gives
    NaN with the assay metric's warning.
    """

    is_differentiable = False
    full_state_update = False
    # the torchmetrics states (add_state); a list state becomes one tensor after a sync
    n: torch.Tensor
    stat_rows: list[torch.Tensor] | torch.Tensor
    row_bytes: list[torch.Tensor] | torch.Tensor

    def __init__(self, metric: str | Metric, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(metric, str):
            inner = load_metric(metric)
        elif isinstance(metric, Metric):
            inner = metric.clone()
        else:
            raise InvalidParameterError(
                "The 'metric' parameter of AssayTorchMetric must be a registered metric name (str) or an assay "
                f"Metric; got {type(metric).__name__}: {metric!r:.80}."
            )
        self._assay = inner
        self._name = metric if isinstance(metric, str) else metric_name(inner)
        # torchmetrics declares higher_is_better per class and refuses to set it; this class's is per metric
        object.__setattr__(self, "higher_is_better", bool(inner.higher_is_better))
        self._row_dtype: np.dtype | None = None  # gathered metrics: the numpy layout of one row of intermediates
        self._row_shape: tuple[int, ...] = ()
        self._input_device: torch.device | None = None
        self.add_state("n", default=torch.tensor(0, dtype=torch.int64), dist_reduce_fx="sum")
        if inner.additive:
            self.add_state("stat_rows", default=[], dist_reduce_fx="cat")
        else:
            self.add_state("row_bytes", default=[], dist_reduce_fx="cat")

    @property
    def name(self) -> str:
        """The name given (``"f1[average=macro]"``), or the instance's registered (else class) name."""
        return self._name

    # ------------------------------------------------------------------ torchmetrics protocol
    def update(self, preds: Any, target: Any = None) -> None:
        """Add a batch: the assay metric's ``map_all`` of ``(preds, target)``, kept as tensor states."""
        device = _device_of(preds, target)
        if device is not None:
            self._input_device = device
        inner = self._assay
        refs = target if inner.needs_references else None
        if not inner.needs_references and target is not None:
            raise InvalidParameterError(
                f"Metric {self.name!r} scores the predictions alone: call update(preds) without a target."
            )
        rows = inner.map_all(preds, refs, None, offset=int(self.n))
        count = len(rows)
        if not count:
            return
        if inner.additive:
            totals = np.asarray(rows, dtype=np.float64).sum(axis=0)
            assert isinstance(self.stat_rows, list)  # a tensor only between a sync and its unsync
            self.stat_rows.append(torch.from_numpy(np.ascontiguousarray(totals)).reshape(1, -1).to(self.device))
        else:
            assert isinstance(self.row_bytes, list)
            self.row_bytes.append(self._to_bytes(rows).to(self.device))
        self.n += count

    def compute(self) -> torch.Tensor:
        """The assay metric's value of everything seen (synced across processes when torchmetrics syncs)."""
        value = self.metric.compute()
        return torch.as_tensor(np.array(value, dtype=np.float64), dtype=torch.float64,  # a copy: writable
                               device=self._input_device or self.device)

    # ------------------------------------------------------------------ the assay side
    @property
    def metric(self) -> Metric:
        """A copy of the assay metric whose state holds everything seen (after a sync: every rank's data)."""
        out = self._assay.clone()
        st: MetricState = out.state
        n = int(self.n)
        if self._assay.additive:
            rows = self.stat_rows if isinstance(self.stat_rows, list) else [self.stat_rows]
            rows = [r.reshape(-1, r.shape[-1]) for r in rows if r.numel()]
            totals = None
            for block in rows:  # one row per update, added in update order (as Metric.update adds them)
                for row in block.detach().cpu().numpy():
                    totals = row.copy() if totals is None else totals + row
            st.totals = totals
            st.n = n
        else:
            inter = self._from_bytes()
            if inter is not None:
                out.absorb(inter)
        return out

    @property
    def state(self) -> MetricState:
        """The assay state (``MetricState``) of everything seen: ``self.metric.state``."""
        return self.metric.state

    def _to_bytes(self, rows: Any) -> torch.Tensor:
        if not isinstance(rows, np.ndarray) or rows.dtype.kind not in "biufcV" or rows.dtype.hasobject:
            raise InvalidParameterError(
                f"Metric {self.name!r} maps its instances to {type(rows).__name__} intermediates, which have no "
                "tensor form for torchmetrics' states (AssayTorchMetric takes metrics whose intermediates are numeric "
                "arrays); use the assay metric itself, with assay_interop.distributed.sync across processes."
            )
        arr = np.ascontiguousarray(rows)
        if self._row_dtype is None:
            self._row_dtype, self._row_shape = arr.dtype, arr.shape[1:]
        elif arr.dtype != self._row_dtype or arr.shape[1:] != self._row_shape:
            raise InvalidParameterError(
                f"Metric {self.name!r}: this batch maps to rows of {arr.dtype} {arr.shape[1:]}, the earlier ones to "
                f"{self._row_dtype} {self._row_shape}; give every batch the same layout (dtype and trailing shape)."
            )
        return torch.from_numpy(arr.reshape(-1).view(np.uint8).copy())  # 1-d: rows concatenate as bytes

    def _from_bytes(self) -> np.ndarray | None:
        chunks = self.row_bytes if isinstance(self.row_bytes, list) else [self.row_bytes]
        chunks = [c for c in chunks if c.numel()]
        if not chunks:
            return None
        if self._row_dtype is None:  # synced rows from other ranks, none from this one: no layout known here
            raise InvalidParameterError(
                f"Metric {self.name!r} received other processes' rows but saw no data on this one, so it cannot "
                "read their layout; give every rank at least one instance."
            )
        raw = torch.cat([c.reshape(-1) for c in chunks]).detach().cpu().numpy()
        return np.frombuffer(np.ascontiguousarray(raw).tobytes(), dtype=self._row_dtype).reshape(
            (-1, *self._row_shape))

    def _sync_dist(self, *args: Any, **kwargs: Any) -> None:
        # torchmetrics' gather needs every rank to send a tensor with as many dimensions as the others', and
        # its concatenation the same trailing shape and dtype: an empty list state is sent as an empty tensor
        # of the state's own form (0 x n_stats float64 rows; 0 bytes).
        if self._assay.additive:
            if not self.stat_rows:  # a width known only from data (n_stats None): 0 columns
                width = self._assay.n_stats or 0
                self.stat_rows = [torch.zeros((0, width), dtype=torch.float64, device=self.device)]
        elif not self.row_bytes:
            self.row_bytes = [torch.zeros(0, dtype=torch.uint8, device=self.device)]
        super()._sync_dist(*args, **kwargs)
