"""Ensemble metrics (torch-uncertainty): Disagreement, Entropy, MutualInformation, VariationRatio.

Input: probabilities of shape ``(B, N, C)`` (batch, ensemble members, classes). With
``validate_args=True`` (default) the shape, the range [0, 1] and the normalisation of
every member's distribution (``|sum_c p - 1| <= 1e-4``) are checked. With numba (the
``fast`` extra) ``Disagreement`` checks, votes and counts in one read of each row
(:func:`assay.compiled.vote_pairs`), so the checks cost little; on the numpy path they read
each chunk once more, and ``validate_args=False`` is the fast path for trusted inputs.
Definitions: CONVENTIONS.md ("Ensembles"); natural log, ``0 log 0 = 0``; argmax ties go
to the first class.

``reduction="mean"`` (default) averages over the batch, ``"sum"`` sums, ``"none"``
returns the per-example values (shape ``(B,)``, concatenated over updates). A bad
reduction raises ``ValueError``. They are :class:`assay.metrics.Metric` subclasses:
``compute()`` returns the value (a ``float``; with ``reduction="none"`` the per-example
array), as torch-uncertainty does; ``compute_scores()`` returns the scores dict
(``{"disagreement": ..., "score": ..., "score_name": ...}``). ``probs`` may be a numpy
array, a nested list, a torch tensor (CPU or CUDA, ``requires_grad`` or not: checked and scored
on its device, only the batch's tally or per-example values reach the host; docs/uncertainty.md,
"Torch tensors") or any object with ``__array__`` / ``__dlpack__`` (:func:`assay.validation.as_array`).

torch-uncertainty's documented example, with only the import changed:

>>> m = Disagreement(reduction="mean")
>>> m = m.update([[[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]]])
>>> print(round(m.compute(), 4))
0.3333
>>> round(m.compute_scores()["disagreement"], 4)
0.3333
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from assay import compiled
from assay.errors import InvalidParameterError
from assay.metrics import Metric, divide
from assay.validation import PROB_ATOL, check_array, check_choice, probability_error, undefined_metric
from assay_uncertainty._xp import device, is_tensor, mean, namespace

__all__ = [
    "Disagreement", "Entropy", "MutualInformation", "VariationRatio",
    "check_ensemble_probs", "disagreement", "entropy", "expected_entropy", "mutual_information",
    "predictive_entropy", "variation_ratio", "votes",
]

REDUCTIONS = ("mean", "sum", "none")


def check_ensemble_probs(probs: Any, *, validate: bool = True, name: str = "probs",
                         owner: str | None = None) -> np.ndarray:
    """Return ``probs`` as a ``(B, N, C)`` float array; check values and normalisation when ``validate``.

    The shape and dtype checks always run (:func:`assay.validation.check_array`); with
    ``validate`` every value must be finite and in [0, 1] and every member's row sum to 1,
    and the error names the first offending ``probs[example, member, class]``.
    """
    if is_tensor(probs):  # stays on its device
        return _check_tensor(probs, validate=validate, name=name, owner=owner)
    p = check_array(probs, name, owner=owner, kinds="biuf", dtype=None, finite=False, what="probabilities")
    if p.dtype.kind != "f":
        p = p.astype(np.float64)
    if p.size == 0 and p.ndim <= 1:  # [] : no examples
        return np.zeros((0, 1, 1))
    if p.ndim != 3:
        raise InvalidParameterError(f"{owner + ': ' if owner else ''}Expected `{name}` of shape (B, N, C) "
                                    f"(examples, members, classes) but got {p.shape}.")
    if p.shape[0] and (p.shape[1] == 0 or p.shape[2] == 0):
        raise InvalidParameterError(f"{owner + ': ' if owner else ''}Expected `{name}` of shape (B, N, C) with at "
                                    f"least one member and one class; got {p.shape}.")
    if validate and p.size:
        _check_values(p, 0, name, owner)
    return p


def _check_tensor(probs: Any, *, validate: bool, name: str, owner: str | None) -> Any:
    """:func:`check_ensemble_probs` for a torch tensor, on its device (float64 unless float32).

    Only on the error path is the first offending example copied to the host, where
    :func:`_check_values` names the bad ``probs[example, member, class]``.
    """
    torch = sys.modules["torch"]
    p = probs.detach()
    if p.dtype not in (torch.float32, torch.float64):
        if p.is_complex() or p.dtype == torch.bool:
            raise InvalidParameterError(f"{owner + ': ' if owner else ''}expected real numbers for `{name}`; got a "
                                        f"tensor of {p.dtype}.")
        p = p.to(torch.float64)
    if p.ndim != 3:
        raise InvalidParameterError(f"{owner + ': ' if owner else ''}Expected `{name}` of shape (B, N, C) "
                                    f"(examples, members, classes) but got {tuple(p.shape)}.")
    if p.shape[0] and (p.shape[1] == 0 or p.shape[2] == 0):
        raise InvalidParameterError(f"{owner + ': ' if owner else ''}Expected `{name}` of shape (B, N, C) with at "
                                    f"least one member and one class; got {tuple(p.shape)}.")
    if validate and p.numel():
        bad = (~((p.sum(dim=2) - 1.0).abs() <= PROB_ATOL) | (p.amin(dim=2) < 0)).any(dim=1)
        if bool(bad.any()):
            i = int(torch.nonzero(bad)[0, 0])
            _check_values(np.asarray(p[i:i + 1].cpu()), i, name, owner)  # the error path only
    return p


def _check_values(p: np.ndarray, offset: int, name: str, owner: str | None = None) -> None:
    """Raise unless every member's row is a distribution (finite, in [0, 1], summing to 1 within 1e-4).

    The screen is one row sum and one minimum (NaN and inf fail the sum test); the error
    names the first ``probs[example, member, class]`` (or row) at fault.
    """
    sums = p.reshape(-1, p.shape[2]) @ np.ones(p.shape[2], dtype=p.dtype)
    # with every value >= 0 and every row summing to 1, none exceeds 1 either; NaN fails both tests
    if not (np.abs(sums - 1.0) <= PROB_ATOL).all() or not p.min() >= 0:
        err = probability_error(p, name, owner=owner, offset=offset, axes=("example", "member", "class"))
        if err is not None:
            raise err


#: elements per chunk in :func:`votes`: the argmax and the value checks read a chunk while it is in cache
_CHUNK_ELEMENTS = 1 << 18


def votes(p: np.ndarray, *, validate: bool = False, name: str = "probs", owner: str | None = None) -> np.ndarray:
    """``argmax`` over classes, ``(B, N)``, with the value checks of ``validate`` fused chunk by chunk."""
    if is_tensor(p):  # checked on the device by check_ensemble_probs
        return namespace(p).argmax(p, axis=-1)
    b, n, c = p.shape
    out = np.empty((b, n), dtype=np.intp)
    if not validate:
        return np.argmax(p, axis=-1, out=out)
    rows = max(1, _CHUNK_ELEMENTS // max(n * c, 1))
    for start in range(0, b, rows):
        chunk = p[start:start + rows]
        np.argmax(chunk, axis=-1, out=out[start:start + rows])
        _check_values(chunk, start, name, owner)
    return out


def _entropy_last(p: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) over the last axis, ``0 log 0 = 0``."""
    xp = namespace(p)
    positive = p > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = xp.where(positive, p * xp.log(xp.where(positive, p, xp.ones_like(p))), xp.zeros_like(p))
    return -xp.sum(terms, axis=-1)


def disagreement(p: np.ndarray, *, member_votes: np.ndarray | None = None) -> np.ndarray:
    """Per example ``1 - sum_c C(n_c, 2) / C(N, 2)``, ``n_c`` = members whose argmax is ``c``."""
    xp = namespace(p)
    b, n, _ = p.shape
    if n < 2:
        undefined_metric("disagreement: needs at least two ensemble members; NaN.", stacklevel=4)
        return xp.full(b, math.nan, dtype=xp.float64, device=device(p))
    votes = xp.argmax(p, axis=-1) if member_votes is None else member_votes
    if n * (n - 1) // 2 <= 64:  # few members: count agreeing pairs column against column
        cols = votes.T if is_tensor(votes) else np.ascontiguousarray(votes.T)
        agree = xp.zeros(b, dtype=xp.int64, device=device(p))
        for i in range(n - 1):
            for j in range(i + 1, n):
                agree += xp.astype(cols[i] == cols[j], xp.int64)
        pairs = xp.astype(agree, xp.float64)
    else:
        preds = xp.sort(votes, axis=1)
        same = preds[:, 1:] == preds[:, :-1]
        # position of each member inside its run of equal votes, summed = sum_c C(n_c, 2)
        idx = xp.broadcast_to(xp.arange(1, n, device=device(p)), same.shape)
        starts = xp.where(same, xp.zeros_like(idx), idx)
        if is_tensor(starts):
            run_start = sys.modules["torch"].cummax(starts, dim=1).values
        else:
            run_start = np.maximum.accumulate(starts, axis=1)
        pairs = xp.astype(xp.sum(idx - run_start, axis=1), xp.float64)
    return 1.0 - pairs / (n * (n - 1) / 2.0)


def predictive_entropy(p: np.ndarray) -> np.ndarray:
    """``H(mean_n p_n)`` per example."""
    return _entropy_last(mean(p, axis=1))


def expected_entropy(p: np.ndarray) -> np.ndarray:
    """``mean_n H(p_n)`` per example."""
    return mean(_entropy_last(p), axis=1)


entropy = expected_entropy


def mutual_information(p: np.ndarray) -> np.ndarray:
    """``H(mean_n p_n) - mean_n H(p_n)`` per example, clamped at 0."""
    mi = predictive_entropy(p) - expected_entropy(p)
    xp = namespace(mi)
    return xp.maximum(mi, xp.zeros_like(mi))


def variation_ratio(p: np.ndarray, *, probabilistic: bool = False) -> np.ndarray:
    """``c* = argmax mean_n p_n``; ``1 - mean_n p_n[c*]`` (probabilistic) or ``1 - #{argmax p_n = c*} / N``."""
    xp = namespace(p)
    avg = mean(p, axis=1)
    star = xp.argmax(avg, axis=-1)
    if probabilistic:
        return 1.0 - xp.take_along_axis(avg, star[:, None], axis=-1)[:, 0]
    agree = xp.argmax(p, axis=-1) == star[:, None]
    return 1.0 - mean(xp.astype(agree, xp.float64), axis=1)


class _EnsembleMetric(Metric):
    """Base of the ensemble metrics: one value per example, reduced over the batch."""

    higher_is_better = False
    needs_references = False  # scores the ensemble's probabilities alone
    _fused_checks = False  # True: _values runs the value checks itself (in cache, chunk by chunk)

    def __init__(self, *, reduction: str | None = "mean", validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        if reduction is None:
            reduction = "none"
        check_choice(reduction, "reduction", REDUCTIONS, owner=self.name)
        self.reduction = reduction
        self.validate_args = bool(validate_args)
        self.main_score = self.name or type(self).__name__
        # mean / sum: additive (value, count) tallies; none: keep every value
        self.additive = reduction != "none"
        self.n_stats = 2 if self.additive else None
        self.vectorized = self.additive

    def _values(self, p: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def map_batch(self, predictions, references=None, task_data=None):
        p = check_ensemble_probs(predictions, validate=self.validate_args and not self._fused_checks, owner=self.name)
        values = self._values(p) if p.shape[0] else np.zeros(0)
        if self.additive:
            return np.stack([values, np.ones_like(values)], axis=1)
        return values

    def update(self, probs: Any, references: Any = None, task_data: Any = None) -> _EnsembleMetric:
        """Add a batch of ensemble probabilities ``(B, N, C)`` (returns ``self``).

        A torch tensor is checked and scored on its device; what reaches the host is the
        batch's tally ``(sum of the values, count)`` (``reduction="mean"`` / ``"sum"``), or the
        ``B`` per-example values (``reduction="none"``), never the probabilities. The sum runs
        in row order (a cumulative sum), as numpy sums the rows of the batch.
        """
        if not is_tensor(probs):
            super().update(probs, references, task_data)
            return self
        p = check_ensemble_probs(probs, validate=self.validate_args, owner=self.name)
        st = self.state
        if p.shape[0]:
            values = self._values(p)
            if self.additive:
                total = float(namespace(values).cumulative_sum(values)[-1])  # one value from the device
                t = np.array([total, float(p.shape[0])])
                st.totals = t if st.totals is None else st.totals + t
            else:
                st.chunks.append(np.array(values.tolist(), dtype=np.float64))  # the B values, to the host
        st.n += p.shape[0]
        return self

    def reduce(self, intermediates):
        t = np.asarray(intermediates, dtype=np.float64)
        if not self.additive:
            return {self.name: float(t.mean()) if t.size else math.nan}
        if self.reduction == "sum":
            return {self.name: t[..., 0]}
        return {self.name: divide(t[..., 0], t[..., 1])}

    def compute(self) -> Any:
        """The value of everything seen, as torch-uncertainty's ``compute``: a ``float`` for
        ``reduction="mean"`` / ``"sum"``; for ``reduction="none"`` the per-example values, a
        float64 array of shape ``(B,)`` in update order. The named scores are
        :meth:`compute_scores` (with ``reduction="none"``: the mean)."""
        if self.reduction == "none":
            inter = self.state.intermediates()
            return np.asarray(inter, dtype=np.float64) if len(inter) else np.zeros(0)
        return super().compute()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(reduction={self.reduction!r})"


class Disagreement(_EnsembleMetric):
    r"""Ensemble disagreement: ``1 - sum_c C(n_c, 2) / C(N, 2)``; higher = more uncertain.

    ``n_c`` is the number of members whose argmax is class ``c`` (ties to the first
    class). ``N = 1`` gives NaN with a warning. Reference: torch-uncertainty ``Disagreement``.
    """

    name = "disagreement"
    _fused_checks = True
    # votes (0,0,0) -> 0; (1,0,1) -> 1 - 1/3; (0,1,1) -> 1 - 1/3; (1,1,1) -> 0: mean 1/3
    examples = [{"predictions": [[[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]],
                                 [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], [[0.2, 0.8], [0.1, 0.9], [0.3, 0.7]]],
                 "global_target": {"disagreement": 1 / 3}}]

    def _values(self, p: np.ndarray) -> np.ndarray:
        n = p.shape[1]
        # the compiled kernel (numba, numpy input): checks, argmax and agreeing pairs in one read of each row
        if n >= 2 and not is_tensor(p):
            pairs = compiled.vote_pairs(p, validate=self.validate_args, atol=PROB_ATOL)
            if pairs is not None:
                return 1.0 - pairs.astype(np.float64) / (n * (n - 1) / 2.0)
        # numpy (the reference; also where the kernel's screen flags a row: this path raises the error)
        return disagreement(p, member_votes=votes(p, validate=self.validate_args, owner=self.name))


class Entropy(_EnsembleMetric):
    r"""Expected entropy of the members, ``mean_n H(p_n)`` (as torch-uncertainty's ``Entropy`` computes it).

    The predictive entropy ``H(mean_n p_n)`` is the estimator ``predictive_entropy``.
    """

    name = "ensemble_entropy"
    # mean_n H(p_n): (ln 2 + 0) / 2, ln 2, 0 -> mean ln 2 / 2
    examples = [{"predictions": [[[0.5, 0.5], [1.0, 0.0]], [[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [0.0, 1.0]]],
                 "global_target": {"ensemble_entropy": math.log(2) / 2}}]

    def _values(self, p: np.ndarray) -> np.ndarray:
        return expected_entropy(p)


class MutualInformation(_EnsembleMetric):
    r"""Mutual information ``H(mean_n p_n) - mean_n H(p_n)`` (natural log), clamped at 0."""

    name = "mutual_information"
    # H(mean) - mean H: ln 2 - 0, ln 2 - ln 2, 0 - 0 -> mean ln 2 / 3
    examples = [{"predictions": [[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]]],
                 "global_target": {"mutual_information": math.log(2) / 3}}]

    def _values(self, p: np.ndarray) -> np.ndarray:
        return mutual_information(p)


class VariationRatio(_EnsembleMetric):
    r"""Variation ratio: ``c* = argmax_c mean_n p_n[c]``; ``1 - #{n : argmax p_n = c*} / N``.

    ``probabilistic=True``: ``1 - mean_n p_n[c*]``.

    **Default and layout differ from torch-uncertainty.** assay's default is
    ``probabilistic=False`` (the members' votes) and the input is ``(B, N, C)``, as for every
    ensemble metric here. torch-uncertainty's ``VariationRatio`` (0.13) defaults to
    ``probabilistic=True``, and its ``update`` reads the input as ``(N, B, C)`` (members first:
    it transposes the first two axes) although its docstring says ``(B, N, C)``. On
    torch-uncertainty's own docstring example (two rows of three members) torch-uncertainty
    prints 0.45 (``probabilistic=False``: 0.3333); assay gives 0.1667 by default and 0.35 with
    ``probabilistic=True``; assay on the transposed input gives torch-uncertainty's numbers:

    >>> probs = [[[0.7, 0.3], [0.6, 0.4], [0.8, 0.2]], [[0.4, 0.6], [0.5, 0.5], [0.3, 0.7]]]
    >>> round(VariationRatio().update(probs).compute(), 4)  # assay's default: votes, (B, N, C)
    0.1667
    >>> round(VariationRatio(probabilistic=True).update(probs).compute(), 4)
    0.35
    >>> members_first = np.transpose(probs, (1, 0, 2))  # as torch-uncertainty reads it
    >>> round(VariationRatio(probabilistic=True).update(members_first).compute(), 4)  # its default
    0.45
    >>> round(VariationRatio().update(members_first).compute(), 4)
    0.3333
    """

    name = "variation_ratio"
    # c* = 0 with 1 of 3 votes -> 2/3; unanimous -> 0; c* = 1 with 2 of 3 votes -> 1/3: mean 1/3
    examples = [{"predictions": [[[0.9, 0.1], [0.4, 0.6], [0.45, 0.55]], [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]],
                                 [[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]]],
                 "global_target": {"variation_ratio": 1 / 3}}]

    def __init__(self, *, reduction: str | None = "mean", probabilistic: bool = False, validate_args: bool = True,
                 score_prefix: str = "") -> None:
        self.probabilistic = bool(probabilistic)
        super().__init__(reduction=reduction, validate_args=validate_args, score_prefix=score_prefix)

    def _values(self, p: np.ndarray) -> np.ndarray:
        return variation_ratio(p, probabilistic=self.probabilistic)
