"""One way to write a metric's maths for numpy arrays and torch tensors: the array namespace.

The sort-based metrics (ROC-AUC, average precision, FPR at recall, AURC / E-AURC / AUGRC,
PRR, ...), ECE and the ensemble metrics take torch tensors as they are and compute on the
tensors' device, with no copy of the scores to the host and no conversion to numpy. Their maths
is written once against the Python array API: ``xp = namespace(u, q)`` is torch's namespace for
tensors (``array_api_compat.torch``, the array API's compatibility layer for torch, imported only
once a tensor is seen, so torch is never imported here) and numpy itself for anything else
(numpy 2.1 implements the array API functions used; older numpy gets ``array_api_compat.numpy``).
What the standard lacks is here, each with the numpy arithmetic it stands for: :func:`interp`
(``np.interp``), :func:`diff0` (``np.diff(x, prepend=0)``), :func:`flatnonzero`, :func:`mean`
(the sum over the count, as ``np.mean``), and the torch side of the tie-group sort
(:func:`group_ends_sorted`; numpy keeps its own faster kernels in ``_curves``). ECE's device
tallies are ``_tensor_calibration``.

Equal values. The torch path widens the inputs to float64 on the device, as the numpy path
widens them on the host, sorts stably (ties in index order, as numpy's kernels order them) and
sums in the same order where the order is a cumulative sum or a bincount. So on CPU tensors the
tie-group counts and sums, ROC-AUC, FPR at recall, the ECE tallies and the ensemble votes are
bit-for-bit the numpy path's; a score that ends in a float reduction (``np.sum`` is pairwise,
torch's sum is a different tree) agrees to a few ulps (the tests assert the bound). On a GPU
``cumsum`` is a parallel scan and a weighted ``bincount`` adds with atomics, so continuous
sums differ from the numpy path in the last bits there; binary values are exact counts
everywhere. See ``docs/uncertainty.md``, "Torch tensors".

Validation of tensors (:func:`check_ue_tensors`) runs on the device; only on the error path is
the offending value copied to the host, to name it.
"""

from __future__ import annotations

import importlib
import math
import sys
from typing import Any

import array_api_compat
import numpy as np

from assay.errors import InvalidParameterError
from assay.uncertainty.base import UEMetric
from assay.validation import undefined_metric

__all__ = [
    "TensorUEMetric", "check_ue_tensors", "device", "diff0", "f64", "flatnonzero", "group_ends_sorted",
    "interp", "is_tensor", "mean", "namespace", "scalar",
]

device = array_api_compat.device


def is_tensor(x: Any) -> bool:
    """True for a torch tensor (without importing torch: a tensor exists only if torch was imported)."""
    return bool(array_api_compat.is_torch_array(x))


#: numpy's namespace: numpy itself from 2.1 on (it implements the array API functions used here:
#: ``concat``, ``cumulative_sum``, ``astype``, ``clip(min=, max=)``, ``device=``), else array-api-compat's
_NUMPY: Any = (np if np.lib.NumpyVersion(np.__version__) >= "2.1.0"
               else importlib.import_module("array_api_compat.numpy"))


def namespace(*arrays: Any) -> Any:
    """The array namespace of ``arrays``: torch's (array-api-compat) if one is a tensor, else numpy's.

    Not ``array_api_compat.array_namespace``: that inspects every argument (tens of
    microseconds), which the bootstrap pays on every resample of a small input; a type test
    suffices for the two namespaces these metrics run on.
    """
    for a in arrays:
        if is_tensor(a):
            # deferred: array_api_compat.torch imports torch, which a tensor proves is imported already
            return importlib.import_module("array_api_compat.torch")
    return _NUMPY


def f64(x: Any) -> Any:
    """``x`` as float64 (a no-op when it is), in its own namespace and on its device."""
    xp = namespace(x)
    return x if x.dtype == xp.float64 else xp.astype(x, xp.float64)


def scalar(x: Any) -> float:
    """A 0-d array or a number as a Python float (for a tensor: one value from the device)."""
    return float(x)


def mean(x: Any, axis: int | None = None) -> Any:
    """``np.mean``: the sum divided by the count (torch's ``mean`` multiplies by the reciprocal instead)."""
    xp = namespace(x)
    count = x.shape[axis] if axis is not None else math.prod(x.shape)
    return xp.sum(x, axis=axis) / count


def flatnonzero(mask: Any) -> Any:
    """Indices where a 1-D boolean ``mask`` is true (``np.flatnonzero``)."""
    return namespace(mask).nonzero(mask)[0]


def diff0(x: Any) -> Any:
    """``np.diff(x, prepend=0)``: ``x[i] - x[i - 1]`` with ``x[-1] = 0`` (the same subtractions)."""
    xp = namespace(x)
    out = xp.concat((x[:1], x[1:] - x[:-1]))
    return out


def interp(x: Any, xk: Any, fk: Any) -> Any:
    """``np.interp(x, xk, fk)`` for increasing ``xk`` and ``x`` inside ``[xk[0], xk[-1]]``, with its arithmetic.

    numpy's interpolation is ``slope * (x - xk[j]) + fk[j]`` with
    ``slope = (fk[j + 1] - fk[j]) / (xk[j + 1] - xk[j])`` and ``j`` the last knot at or
    below ``x``; a point on a knot (and the last knot) takes its value exactly.
    """
    if not is_tensor(x):
        return np.interp(x, xk, fk)
    xp = namespace(x)
    last = xk.shape[0] - 1
    j = xp.clip(xp.searchsorted(xk, x, side="right") - 1, min=0, max=max(last - 1, 0))
    x0, x1 = xp.take(xk, j), xp.take(xk, xp.clip(j + 1, max=last))
    y0, y1 = xp.take(fk, j), xp.take(fk, xp.clip(j + 1, max=last))
    slope = (y1 - y0) / (x1 - x0)
    out = slope * (x - x0) + y0
    out = xp.where(x == x0, y0, out)
    return xp.where(x >= xk[last], fk[last], out)


def group_ends_sorted(u: Any, values: Any) -> tuple[Any, Any]:
    """Tie-group ends of a tensor ``u`` (``_curves.group_ends``): one stable sort, a gather, a cumulative sum.

    ``u`` is sorted in its own float dtype (float32 orders as its float64 widening does);
    the sum of ``values`` runs in float64 in the sorted order, ties in index order: the order
    numpy's keyed kernel sums in. Returns ``K`` (int64) and ``S`` (float64) on ``u``'s device.
    """
    torch = sys.modules["torch"]
    n = u.shape[0]
    us, order = torch.sort(u, stable=True)
    cum = torch.cumsum(f64(values)[order], 0)
    ends = torch.nonzero(us[1:] != us[:-1]).reshape(-1)
    K = torch.empty(ends.shape[0] + 1, dtype=torch.int64, device=u.device)
    K[:-1] = ends + 1
    K[-1] = n
    return K, cum[K - 1]


def check_ue_tensors(uncertainty: Any, quality: Any, *, name: str, binary: bool = False) -> tuple[Any, Any]:
    """:func:`assay.uncertainty.base.check_ue_inputs` for tensors, on their device: float64 1-D tensors.

    The same checks and messages: both 1-D tensors of one length on one device, numeric,
    finite, and with ``binary`` quality 0 / 1. Only on the error path is a value copied to the
    host (the first bad one, to name it).
    """
    torch = sys.modules["torch"]
    pair = {"uncertainty": uncertainty, "quality": quality}
    for label, t in pair.items():
        if not is_tensor(t):
            raise InvalidParameterError(
                f"{name}: `{label}` is a {type(t).__name__} while the other input is a torch tensor; pass both as "
                "tensors on one device (or both as arrays).")
        if t.ndim != 1:
            raise InvalidParameterError(
                f"{name}: Expected `{label}` of shape (N,) (one value per example) but got {tuple(t.shape)}.")
        if t.dtype == torch.bool or t.is_complex() or not (t.is_floating_point() or t.dtype in _INTEGERS(torch)):
            raise InvalidParameterError(f"{name}: expected real numbers for `{label}`; got a tensor of {t.dtype}.")
    if uncertainty.device != quality.device:
        raise InvalidParameterError(
            f"{name}: `uncertainty` is on {uncertainty.device} and `quality` on {quality.device}; expected one device.")
    if uncertainty.shape[0] != quality.shape[0]:
        raise InvalidParameterError(
            f"{name}: `uncertainty` and `quality` must have the same length; got {uncertainty.shape[0]} and "
            f"{quality.shape[0]}.")
    u = uncertainty.detach()
    q = quality.detach()
    if u.dtype not in (torch.float32, torch.float64):  # the sort runs on u's own dtype (float32 orders as float64)
        u = u.to(torch.float64)
    q = q.to(torch.float64)
    for label, t in (("uncertainty", u), ("quality", q)):
        bad = ~torch.isfinite(t)
        if bool(bad.any()):
            i = int(torch.nonzero(bad)[0, 0])
            raise InvalidParameterError(
                f"{name}: `{label}[{i}]` is {float(t[i])!r}; expected finite values. Drop those examples first "
                "(UEManager does, see its nan_policy).")
    if binary:
        bad = (q != 0) & (q != 1)
        if bool(bad.any()):
            i = int(torch.nonzero(bad)[0, 0])
            raise InvalidParameterError(
                f"{name}: `quality[{i}]` is {float(q[i])!r}; expected binary quality (1 = correct, 0 = failure).")
    return u, q


def _INTEGERS(torch: Any) -> tuple[Any, ...]:
    return (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)


class TensorUEMetric(UEMetric):
    """A UE metric whose :meth:`_scores` is written against the array namespace, so it runs on tensors too.

    Called with torch tensors (``metric(u, q)``, :meth:`all_scores`), it checks them on their
    device (:func:`check_ue_tensors`) and computes there; each score comes back as a Python
    float (one value from the device per score). Anything else takes the numpy path of
    :class:`~assay.uncertainty.base.UEMetric`. ``update`` keeps numpy rows, as every gathered
    metric does (merging, resampling and intervals work on them): a tensor given to ``update``
    is copied to the host there, once.
    """

    def all_scores(self, uncertainty: Any, quality: Any) -> dict[str, float]:
        if is_tensor(uncertainty) or is_tensor(quality):
            u, q = check_ue_tensors(uncertainty, quality, name=self.main_score, binary=self.requires_binary)
            if u.shape[0] == 0:
                undefined_metric(f"{self.main_score}: empty input; the score is NaN.")
                return {score: math.nan for score in self.score_names}
            return {k: float(v) for k, v in self._scores(u, q).items()}
        return super().all_scores(uncertainty, quality)
