"""The ECE / MCE / RMSCE tallies of torch tensors, computed on the tensors' device.

:func:`device_tallies` is ``calibration.multiclass_tallies`` (``(N, C)``, top label) and
``calibration.binned_tallies`` (``(N,)``, binary) for tensors: the same bins (the product
``n_bins * conf`` in ``conf``'s dtype, truncated, then one comparison with the edges
``bin_edges(n_bins, dtype)``), the same ``acc - conf`` (in ``conf``'s dtype for the top label,
as numpy's buffer arithmetic does, in float64 for the binary form) and, on a CPU, the same order
of summation: each chunk of ``_CHUNK_ELEMENTS // C`` rows summed from zero in row order (one
weighted ``bincount`` over ``chunk * (n_bins + 1) + bin``), then the chunks added in order (a
cumulative sum over the chunk axis). So on CPU tensors the tallies are the numpy path's to the
last bit; on a GPU the weighted ``bincount`` adds with atomics (last-bit differences in the sums,
the counts exact). The ``(2, n_bins)`` tally is the one copy to the host: the metric's state
stays numpy, so merging, intervals and ``compare`` work as before.

Checks run on the device (label range; with ``validate``, the rows' sums and minimum); only on
the error path are the inputs copied to the host, where the numpy checks raise the error that
names the first bad ``probs[i, c]`` or label.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError
from assay.functional import bin_edges
from assay.validation import PROB_ATOL, check_labels, check_probabilities, probability_error

__all__ = ["device_tallies"]

#: rows per chunk: ``calibration._CHUNK_ELEMENTS // C`` (the chunks numpy's tallies are summed in)
_CHUNK_ELEMENTS = 1 << 17


def _host(t: Any) -> np.ndarray:
    """The error path only: a tensor copied to the host to name a bad value."""
    return np.asarray(t.detach().cpu())


def _checked(probs: Any, labels: Any, *, validate: bool, name: str) -> tuple[Any, Any]:
    torch = sys.modules["torch"]
    p = probs.detach()
    if p.ndim not in (1, 2):
        raise InvalidParameterError(f"{name}: Expected `probs` of shape (N, C) or (N,) but got {tuple(p.shape)}.")
    if p.dtype not in (torch.float32, torch.float64):  # float32 stays float32 (its bins meet float32 edges)
        p = p.to(torch.float64)
    n_classes = 2 if p.ndim == 1 else p.shape[1]
    if labels is not None and not isinstance(labels, torch.Tensor):  # host labels: checked there, then sent over
        shape = np.shape(labels)
        if shape == (p.shape[0],):
            labels = torch.as_tensor(check_labels(labels, "labels", owner=name, integer=True, n_classes=n_classes),
                                     device=p.device)
    if not isinstance(labels, torch.Tensor) or tuple(labels.shape) != (p.shape[0],):
        got = "None" if labels is None else f"shape {tuple(np.shape(labels))}"
        raise InvalidParameterError(
            f"{name}: expected `labels` of shape ({p.shape[0]},) to match `probs` {tuple(p.shape)}; got {got}.")
    y = labels.detach().to(p.device)
    if y.is_floating_point() or y.dtype == torch.bool:
        ok = bool(((y == torch.round(y)) & (y >= 0) & (y < n_classes)).all()) if y.is_floating_point() else True
    else:
        ok = bool(((y >= 0) & (y < n_classes)).all()) if y.numel() else True
    if not ok:  # the numpy check names the first bad label
        check_labels(_host(y), "labels", owner=name, integer=True, n_classes=n_classes)
    y = y.to(torch.int64)
    if validate and p.numel():
        if p.ndim == 1:
            if not bool(((p >= 0) & (p <= 1)).all()):  # NaN fails too
                check_probabilities(_host(p), "probs", owner=name, rows_sum_to_one=False)
        else:
            bad = ~((p.sum(dim=1) - 1.0).abs() <= PROB_ATOL) | (p.amin(dim=1) < 0)
            if bool(bad.any()):
                i = int(torch.nonzero(bad)[0, 0])
                err = probability_error(_host(p[i:i + 1]), "probs", owner=name, offset=i)
                if err is not None:
                    raise err
    return p, y


def device_tallies(probs: Any, labels: Any, n_bins: int, *, validate: bool, name: str) -> np.ndarray:
    """``(2, n_bins)`` tallies (count, sum of ``acc - conf`` per bin) of tensors, computed on their device."""
    torch = sys.modules["torch"]
    p, y = _checked(probs, labels, validate=validate, name=name)
    n = p.shape[0]
    if p.ndim == 2:
        pred = torch.argmax(p, dim=1)  # ties: the first maximal index, as np.argmax
        conf = torch.gather(p, 1, pred[:, None])[:, 0]
        w = ((pred == y).to(p.dtype) - conf).to(torch.float64)  # in conf's dtype, as numpy's buffers
        rows = max(1, _CHUNK_ELEMENTS // max(p.shape[1], 1))
    else:
        conf = p
        w = y.to(torch.float64) - conf.to(torch.float64)
        rows = max(n, 1)  # one bincount over everything
    b = torch.clamp((conf * n_bins).to(torch.int64), 0, n_bins)  # the truncated product
    edges = torch.as_tensor(bin_edges(n_bins, np.float32 if p.dtype == torch.float32 else np.float64),
                            device=p.device)
    b = torch.clamp(b - (conf <= edges[b]).to(torch.int64), min=0)  # on an edge (or rounded onto it): the bin below
    width = n_bins + 1
    chunks = max(1, -(-n // rows))
    index = (torch.arange(n, device=p.device) // rows) * width + b
    counts = torch.bincount(index, minlength=chunks * width).reshape(chunks, width).sum(dim=0)
    sums = torch.bincount(index, weights=w, minlength=chunks * width).reshape(chunks, width)
    sums = torch.cumsum(sums, dim=0)[-1]  # the chunks added in order, as numpy's out += bincount(chunk)
    t = np.array(torch.stack((counts.to(torch.float64), sums)).tolist())  # the one host copy: 2 x (n_bins + 1)
    t[:, n_bins - 1] += t[:, n_bins]
    return t[:, :n_bins]
