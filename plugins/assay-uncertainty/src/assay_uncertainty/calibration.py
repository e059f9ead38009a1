"""Calibration metrics: ECE, MCE, RMSCE (equal-width bins), adaptive ECE (equal mass), Brier score, NLL.

Inputs: ``probs`` of shape ``(N, C)`` (multiclass: top-label, ``conf = max_c p_c``,
``acc = [argmax_c p_c == label]``, argmax ties go to the first class) or ``(N,)`` (binary:
the probability of the positive class against the 0 / 1 label), and integer ``labels``.
Definitions: CONVENTIONS.md ("Calibration"); Guo et al. 2017 (ECE, MCE); Nixon et al.
2019 (adaptive / equal-mass ECE); Brier 1950.

Bins: bin ``m`` (``1 .. M``) of ``M = n_bins`` equal-width bins holds the confidences in
``((m - 1) / M, m / M]`` (Guo et al. 2017, sec. 2, and torchmetrics; 0.0 goes to the first bin),
each confidence compared with the edges ``m / M`` themselves (rounded once, in the input's
float dtype: float32 probabilities stay float32 and meet float32 edges, others are read as
float64), so a vote share of 2/3 with 3 bins is in the second bin, and 0.3 with 10 bins in
the third: :func:`assay.functional.equal_width_bins`, the binning every calibration score and
reliability diagram in assay uses (the fast paths, :func:`binned_tallies`,
:func:`multiclass_tallies` and the compiled kernel, apply the same rule in place on their
buffers: the truncated product ``n_bins * conf``, then one comparison with an edge; tests check
they agree with the function). Until 2026-11 the bin was ``floor(n_bins * conf)``, which put a
confidence on an edge, or just below one where the product rounds up, into the bin above.
Equal-mass bins and the adaptive ECE are :func:`assay.functional.equal_mass_bins` and
:func:`assay.functional.adaptive_ece`.

The metrics are :class:`assay.metrics.Metric` subclasses (``update(probs, labels)``,
``compute()``, ``reset()``, ``merge()``, and ``assay.evaluate``): ECE / MCE / RMSCE keep
additive per-bin tallies (the count and the sum of ``acc - conf``), Brier and NLL a sum and
a count; adaptive ECE keeps ``(conf, acc)`` rows.
The same names are UE metrics (:class:`CalibrationUEMetric`), called as
``ue_metric(1 - p_correct, quality)`` with binary quality.

Torch tensors given to ECE / MCE / RMSCE's ``update`` are binned on their device
(:func:`assay_uncertainty._tensor_calibration.device_tallies`, the same tallies to the last bit on
a CPU); the ``(2, n_bins)`` tally is what reaches the host.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from assay import compiled
from assay.errors import InvalidParameterError
from assay.functional import ECE_NORMS, adaptive_ece, bin_edges, equal_width_bins
from assay.metrics import Metric, divide
from assay.validation import (
    PROB_ATOL,
    check_array,
    check_choice,
    check_int,
    check_labels,
    check_probabilities,
    probability_error,
    undefined_metric,
)
from assay_uncertainty._tensor_calibration import device_tallies
from assay_uncertainty._xp import TensorUEMetric, is_tensor, namespace

__all__ = [
    "ECE", "MCE", "RMSCE", "AdaptiveECE", "BrierScore", "NLL", "CalibrationUEMetric",
    "binned_tallies", "top_label",
]


def _check_bins(n_bins: Any, owner: str | None = None) -> int:
    return check_int(n_bins, "n_bins", low=1, owner=owner)


#: the dtypes probabilities keep (any other is converted to float64)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _as_inputs(probs: Any, labels: Any, *, validate: bool, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``probs`` as float ``(N, C)`` / ``(N,)`` (float32 kept, any other dtype as float64) and ``labels``
    as int64 class indices, checked.

    The label checks (integers in ``[0, C - 1]``, no NaN / None) always run; the value
    checks of 1-D probabilities only with ``validate`` (2-D rows: :func:`check_rows`).
    """
    p = check_array(probs, "probs", owner=name, ndim=(1, 2), shape="(N, C) or (N,)", finite=False,
                    dtype=None, what="probabilities")
    if p.dtype not in _FLOATS:  # float32 stays float32: its bins compare with float32 edges (module docstring)
        p = p.astype(np.float64)
    try:
        shape = None if labels is None else np.shape(labels)
    except ValueError:  # a ragged nested sequence
        shape = "ragged"
    if shape is None or shape == "ragged" or len(shape) != 1 or shape[0] != p.shape[0]:
        got = "None" if shape is None else (shape if shape == "ragged" else f"shape {shape}")
        raise InvalidParameterError(
            f"{name}: expected `labels` of shape ({p.shape[0]},) to match `probs` {p.shape}; got {got}."
        )
    n_classes = 2 if p.ndim == 1 else p.shape[1]
    y = check_labels(labels, "labels", owner=name, integer=True, n_classes=n_classes)
    if validate and p.size and p.ndim == 1:
        check_probabilities(p, "probs", owner=name, rows_sum_to_one=False)
    return p, y


def check_rows(chunk: np.ndarray, offset: int, name: str) -> None:
    """Raise unless every row of ``chunk`` is a distribution: finite, in [0, 1], sum 1 (+-1e-4).

    The screen is one row sum and one minimum (a NaN or inf fails the sum test); the error
    (:func:`assay.validation.probability_error`) names the first offending ``probs[i, c]``.
    """
    sums = chunk @ np.ones(chunk.shape[1], dtype=chunk.dtype)
    # with every value >= 0 and every row summing to 1, none exceeds 1 either; NaN fails both
    if not (np.abs(sums - 1.0) <= PROB_ATOL).all() or not chunk.min() >= 0:
        err = probability_error(chunk, "probs", owner=name, offset=offset)
        if err is not None:
            raise err


#: rows per chunk in :func:`top_label`: a chunk stays in cache between the argmax and the gather
_CHUNK_ELEMENTS = 1 << 17


def top_label(p: np.ndarray, y: np.ndarray, *, validate: bool = False,
              name: str = "probs") -> tuple[np.ndarray, np.ndarray]:
    """Confidence and correctness per example: top-label for ``(N, C)``, the probability and label for ``(N,)``.

    ``(N, C)`` is processed in chunks of rows so that the gather of the top probability
    (and, with ``validate``, the row checks) read the chunk from cache right after the
    argmax: one pass over memory instead of two or three. With numba (the ``fast`` extra)
    the compiled kernel :func:`assay.compiled.top_label` does it all in one read of each row;
    a row its screen flags sends the whole input through this numpy path, which raises the error.
    """
    if p.ndim == 1:
        return p, y
    fast = compiled.top_label(p, validate=validate, atol=PROB_ATOL)
    if fast is not None:
        return fast[1], fast[0] == y
    n, c = p.shape
    p = np.ascontiguousarray(p)
    pred = np.empty(n, dtype=np.intp)
    conf = np.empty(n, dtype=p.dtype)
    rows = max(1, _CHUNK_ELEMENTS // max(c, 1))
    offsets = np.arange(0, rows * c, c)
    for start in range(0, n, rows):
        chunk = p[start:start + rows]
        m = chunk.shape[0]
        out = pred[start:start + m]
        np.argmax(chunk, axis=1, out=out)
        np.take(chunk.reshape(-1), offsets[:m] + out, out=conf[start:start + m])
        if validate:
            check_rows(chunk, start, name)
    return conf, pred == y


#: chunks per block in :func:`multiclass_tallies`: the elementwise binning runs on a block, the
#: sums on each chunk of it (as the chunk size sets them); the argmax, the gather of the top
#: probability and the row checks run step by step (half a chunk: the step stays in L2 from the
#: argmax to the gather) in one tight loop over the block
_BLOCK_CHUNKS = 8


def multiclass_tallies(p: np.ndarray, y: np.ndarray, n_bins: int, *, validate: bool = False,
                       name: str = "probs") -> np.ndarray:
    """:func:`binned_tallies` of the top label of ``(N, C)`` probabilities, in one read of each row.

    With numba (the ``fast`` extra) the compiled kernel :func:`assay.compiled.top_label_tallies`
    checks each row, takes its argmax and adds it to its bin in one read of the row, with the
    numpy path's arithmetic and order of summation (the same tallies to the last bit). Without
    numba, or when the kernel's screen flags a row, the numpy path (:func:`multiclass_tallies_numpy`)
    runs on the whole input: it raises the error naming the first bad ``probs[i, c]`` (or row), or
    accepts a row that only came near the tolerance.
    """
    rows = max(1, _CHUNK_ELEMENTS // max(p.shape[1], 1))
    fast = compiled.top_label_tallies(p, y, n_bins, edges=bin_edges(n_bins, p.dtype), rows=rows, validate=validate,
                                      atol=PROB_ATOL)
    if fast is not None:
        return _fold_top_bin(fast, n_bins)
    return multiclass_tallies_numpy(p, y, n_bins, validate=validate, name=name)


def multiclass_tallies_numpy(p: np.ndarray, y: np.ndarray, n_bins: int, *, validate: bool = False,
                             name: str = "probs") -> np.ndarray:
    """:func:`multiclass_tallies` in numpy, fused block by block (the reference and the fallback).

    Each block of rows is read once from memory: argmax, the gather of the top probability
    and the row checks (``validate``) run step by step on it while the step is in cache,
    then the binning (one bincount each per chunk of ``_CHUNK_ELEMENTS``). Every temporary
    is a buffer allocated once.
    """
    n, c = p.shape
    p = np.ascontiguousarray(p)
    rows = max(1, _CHUNK_ELEMENTS // max(c, 1))
    step = max(1, rows // 2)
    block = rows * _BLOCK_CHUNKS
    offsets = np.arange(0, step * c, c)
    index = np.empty(step, dtype=np.intp)
    pred = np.empty(block, dtype=np.intp)
    conf = np.empty(block, dtype=p.dtype)
    b = np.empty(block, dtype=np.intp)
    gap = np.empty(block, dtype=np.float64)
    flag = np.empty(block, dtype=bool)
    if validate:
        ones = np.ones(c, dtype=p.dtype)
        sums = np.empty(block, dtype=p.dtype)
    out = np.zeros((2, n_bins + 1))
    edges = bin_edges(n_bins, p.dtype)
    for first in range(0, n, block):
        blk = p[first:first + block]
        mb = blk.shape[0]
        negative = False
        for s0 in range(0, mb, step):
            sub = blk[s0:s0 + step]
            k = sub.shape[0]
            np.argmax(sub, axis=1, out=pred[s0:s0 + k])
            np.add(offsets[:k], pred[s0:s0 + k], out=index[:k])
            np.take(sub.reshape(-1), index[:k], out=conf[s0:s0 + k], mode="clip")  # valid by construction
            if validate:  # a screen, without temporaries, that flags every block with a failing chunk
                # (fmin skips NaN: a NaN hides a chunk's negative value from check_rows, not from the screen)
                np.matmul(sub, ones, out=sums[s0:s0 + k])
                negative = negative or np.fmin.reduce(sub.reshape(-1)) < 0
        error, end = None, mb
        if validate:
            sm = sums[:mb]
            np.subtract(sm, 1.0, out=sm)
            np.abs(sm, out=sm)
            # the margin under 1e-4 covers any rounding difference of the row sums
            # (NaN and inf fail the sum test: NaN <= x is false)
            if negative or not np.less_equal(sm, 0.999999e-4, out=flag[:mb]).all():
                # check_rows chunk by chunk: the first failing chunk raises, once the chunks
                # before it are binned (so the same error comes first as chunk by chunk)
                for s0 in range(0, mb, rows):
                    try:
                        check_rows(blk[s0:s0 + rows], first + s0, name)
                    except InvalidParameterError as exc:
                        error, end = exc, s0
                        break
        bb, w, f, cf = b[:end], gap[:end], flag[:end], conf[:end]
        np.copyto(bb, np.multiply(cf, n_bins, out=w), casting="unsafe")  # truncation toward zero, as astype
        _to_edge_bins(bb, cf, edges, f)
        np.equal(pred[:end], y[first:first + end], out=f)
        np.subtract(f, cf, out=w)
        for s0 in range(0, end, rows):  # the sums chunk by chunk
            out[0] += np.bincount(bb[s0:s0 + rows], minlength=n_bins + 1)
            out[1] += np.bincount(bb[s0:s0 + rows], weights=w[s0:s0 + rows], minlength=n_bins + 1)
        if error is not None:
            raise error
    return _fold_top_bin(out, n_bins)


def _to_edge_bins(b: np.ndarray, conf: np.ndarray, edges: np.ndarray, flag: np.ndarray) -> None:
    """In place: the truncated products ``b = trunc(n_bins * conf)`` made the bins ``((m - 1) / M, m / M]``.

    A confidence on an edge, or just below one where the product rounded up onto it, is moved
    to the bin below (``conf <= edges[b]``; :func:`assay.functional.equal_width_bins` gives the
    reason one comparison suffices); 0.0 stays in bin 0. ``flag`` is a bool buffer of ``b``'s size.
    Values outside [0, 1] (unchecked input) are clipped to an index ``edges`` has.
    """
    np.clip(b, 0, edges.size - 1, out=b)
    np.less_equal(conf, np.take(edges, b), out=flag)
    np.subtract(b, flag, out=b, casting="unsafe")
    np.maximum(b, 0, out=b)


def _fold_top_bin(t: np.ndarray, n_bins: int) -> np.ndarray:
    """Fold column ``n_bins`` into the last bin (the kernel's spare column; empty with edge bins)."""
    t[:, n_bins - 1] += t[:, n_bins]
    return t[:, :n_bins]


def binned_tallies(conf: np.ndarray, acc: np.ndarray, n_bins: int) -> np.ndarray:
    """``(2, n_bins)``: per equal-width bin, the count and the sum of ``acc - conf``.

    ``ECE = sum_b |sum_{i in b} (acc_i - conf_i)| / N``, and ``|acc_b - conf_b|`` is that
    bin's sum over its count, so these two tallies give ECE, MCE and RMSCE, and they add
    over shards. The bins are :func:`assay.functional.equal_width_bins`'s, computed in place
    (the product truncated, then one comparison with an edge).
    """
    conf = np.asarray(conf)
    b = np.multiply(conf, n_bins).astype(np.intp)
    _to_edge_bins(b, conf, bin_edges(n_bins, conf.dtype), np.empty(b.shape, dtype=bool))
    w = np.subtract(acc, conf, dtype=np.float64)
    out = np.empty((2, n_bins + 1))
    out[0] = np.bincount(b, minlength=n_bins + 1)
    out[1] = np.bincount(b, weights=w, minlength=n_bins + 1)
    return _fold_top_bin(out, n_bins)


def _binned_scores(t: np.ndarray) -> dict[str, float]:
    n_b, w_s = t
    n = n_b.sum()
    if n == 0:
        return {"ece": math.nan, "mce": math.nan, "rmsce": math.nan}
    nz = n_b > 0
    gap = np.abs(w_s[nz]) / n_b[nz]
    w = n_b[nz] / n
    return {"ece": float(np.sum(w * gap)), "mce": float(gap.max()), "rmsce": float(math.sqrt(np.sum(w * gap * gap)))}


class _Binned(Metric):
    additive = True
    per_instance = True
    higher_is_better = False
    score: str = "ece"

    def __init__(self, *, n_bins: int = 15, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.n_bins = _check_bins(n_bins, self.name)
        self.validate_args = bool(validate_args)
        self.n_stats = 2 * self.n_bins
        self.main_score = self.score

    def map_batch(self, predictions, references, task_data=None):
        p, y = _as_inputs(predictions, references, validate=self.validate_args, name=self.name)
        conf, acc = top_label(p, y, validate=self.validate_args, name=self.name)
        rows = np.zeros((conf.size, 2 * self.n_bins))
        b = equal_width_bins(conf, self.n_bins)
        idx = np.arange(conf.size)
        rows[idx, b] = 1.0
        rows[idx, self.n_bins + b] = acc - conf
        return rows

    def update(self, probs, labels=None, task_data=None):  # fast path: bincount, no per-instance rows
        st = self.state
        if is_tensor(probs):  # on the tensor's device; the (2, n_bins) tally is the one copy to the host
            t = device_tallies(probs, labels, self.n_bins, validate=self.validate_args, name=self.name).reshape(-1)
            if probs.shape[0]:
                st.totals = t if st.totals is None else st.totals + t
            st.n += probs.shape[0]
            return self
        p, y = _as_inputs(probs, labels, validate=self.validate_args, name=self.name)
        if p.shape[0]:
            if p.ndim == 2:
                t = multiclass_tallies(p, y, self.n_bins, validate=self.validate_args, name=self.name)
            else:
                t = binned_tallies(p, y, self.n_bins)
            t = t.reshape(-1)
            st.totals = t if st.totals is None else st.totals + t
        st.n += p.shape[0]
        return self

    def reduce(self, totals):
        scores = _binned_scores(np.asarray(totals, dtype=np.float64).reshape(2, self.n_bins))
        return {self.score: scores[self.score]}


class ECE(_Binned):
    r"""Expected calibration error (equal-width bins); lower is better.

    ``ECE = sum_b (n_b / N) |acc_b - conf_b|`` over non-empty bins (CONVENTIONS.md).
    Reference: Guo et al., "On Calibration of Modern Neural Networks", 2017.

    >>> m = ECE(n_bins=2)
    >>> m.update([0.9, 0.8, 0.3], [1, 0, 0]).compute_scores()["ece"]  # doctest: +ELLIPSIS
    0.33333...
    """

    name = "ece"
    score = "ece"
    # 2 bins: .9, .8 -> bin 1 (conf .85, acc 1/2); .3 -> bin 0 (conf .3, acc 0): 2/3 * .35 + 1/3 * .3
    examples = [{"predictions": [0.9, 0.8, 0.3], "references": [1, 0, 0], "overrides": {"n_bins": 2},
                 "global_target": {"ece": 2 / 3 * 0.35 + 1 / 3 * 0.3}}]


class MCE(_Binned):
    r"""Maximum calibration error: ``max_b |acc_b - conf_b|`` over non-empty equal-width bins; lower is better."""

    name = "mce"
    score = "mce"
    examples = [{"predictions": [0.9, 0.8, 0.3], "references": [1, 0, 0], "overrides": {"n_bins": 2},
                 "global_target": {"mce": 0.35}}]


class RMSCE(_Binned):
    r"""Root-mean-square calibration error: ``sqrt(sum_b (n_b / N)(acc_b - conf_b)^2)``; lower is better."""

    name = "rmsce"
    score = "rmsce"
    examples = [{"predictions": [0.9, 0.8, 0.3], "references": [1, 0, 0], "overrides": {"n_bins": 2},
                 "global_target": {"rmsce": math.sqrt(2 / 3 * 0.35**2 + 1 / 3 * 0.3**2)}}]


def adaptive_ece_of(conf: np.ndarray, acc: np.ndarray, n_bins: int, norm: str = "l1") -> float:
    """Equal-mass ECE of per-example confidences and correctness (see :class:`AdaptiveECE`).

    The formula is the core's :func:`assay.functional.adaptive_ece` (shared with
    ``assay_segmentation``); this adds the error message that names the metric.
    """
    n = conf.size
    if n < n_bins:
        raise InvalidParameterError(
            f"adaptive_ece: needs at least n_bins={n_bins} examples (rows of `probs`) for equal-mass bins; got {n}."
        )
    return adaptive_ece(conf, acc, n_bins, norm)


class AdaptiveECE(Metric):
    r"""Adaptive (equal-mass) ECE; lower is better.

    Sort confidences, split them into ``n_bins`` contiguous chunks whose sizes differ by at
    most one (the first ``N mod n_bins`` chunks one larger), then, by ``norm`` (torchmetrics'
    and torch-uncertainty's names): ``"l1"`` (default) ``sum_b (n_b / N) |acc_b - conf_b|``,
    ``"l2"`` ``sqrt(sum_b (n_b / N) (acc_b - conf_b)^2)``,
    ``"max"`` ``max_b |acc_b - conf_b|`` (torch-uncertainty's
    ``AdaptiveCalibrationError(norm=...)``, without ``debias``). Binary input is top-label:
    ``conf = max(p, 1 - p)``, predicted class 1 when ``p > 0.5`` (a tie goes to class 0, the first index). Ties in
    confidence are ordered incorrect-first. Fewer examples than bins is an error.
    Reference: Nixon et al., "Measuring Calibration in Deep Learning", 2019.
    """

    name = "adaptive_ece"
    main_score = "adaptive_ece"
    # top-label conf .9 .8 .6 .7 .6 / acc 1 1 0 1 0 -> chunks (.6 .6 .7 | .8 .9): (|1 - 1.9| + |2 - 1.7|) / 5
    examples = [{"predictions": [0.9, 0.2, 0.6, 0.7, 0.4], "references": [1, 0, 0, 1, 1], "overrides": {"n_bins": 2},
                 "global_target": {"adaptive_ece": 0.24}}]
    higher_is_better = False
    per_instance = False

    def __init__(self, *, n_bins: int = 15, norm: str = "l1", validate_args: bool = True,
                 score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.n_bins = _check_bins(n_bins, self.name)
        self.norm = check_choice(norm, "norm", ECE_NORMS, owner=self.name)
        self.validate_args = bool(validate_args)

    def map_batch(self, predictions, references, task_data=None):
        p, y = _as_inputs(predictions, references, validate=self.validate_args, name=self.name)
        if p.ndim == 1:
            pred = (p > 0.5).astype(np.int64)
            conf = np.where(pred == 1, p, 1.0 - p)
            acc = (pred == y).astype(np.float64)
        else:
            conf, acc = top_label(p, y, validate=self.validate_args, name=self.name)
        return np.stack([conf, acc.astype(np.float64)], axis=1)

    def reduce(self, intermediates):
        rows = np.asarray(intermediates, dtype=np.float64).reshape(-1, 2)
        return {"adaptive_ece": adaptive_ece_of(rows[:, 0], rows[:, 1], self.n_bins, self.norm)}


class _MeanPerExample(Metric):
    """A mean of one loss per example, kept as the additive tally ``(sum of losses, count)``."""

    higher_is_better = False
    additive = True
    n_stats = 2
    vectorized = True

    def __init__(self, *, validate_args: bool = True, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.validate_args = bool(validate_args)

    def losses(self, p: np.ndarray, y: np.ndarray) -> np.ndarray:
        """One loss per example from checked probabilities ``p`` and integer labels ``y``."""
        raise NotImplementedError

    def map_batch(self, predictions, references, task_data=None):
        p, y = _as_inputs(predictions, references, validate=self.validate_args, name=self.name)
        if p.ndim == 2 and self.validate_args and p.size:
            check_rows(p, 0, self.name)
        per = self.losses(p, y)
        return np.stack([per, np.ones_like(per)], axis=1)

    def reduce(self, totals):
        t = np.asarray(totals, dtype=np.float64)
        return {self.main_score: divide(t[..., 0], t[..., 1])}


class BrierScore(_MeanPerExample):
    r"""Brier score; lower is better.

    Multiclass ``(N, C)``: ``mean_i sum_c (p_ic - y_ic)^2`` with one-hot ``y``. Binary
    ``(N,)``: ``mean_i (p_i - y_i)^2`` (the usual binary Brier score; the two-column form
    would be twice this). Reference: Brier, 1950.
    """

    name = "brier"
    main_score = "brier"
    # per example .09+.04+.01, .01+.04+.01, .09+.09+.36 -> mean .74 / 3
    examples = [{"predictions": [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], "references": [0, 1, 2],
                 "global_target": {"brier": 0.74 / 3}}]

    def losses(self, p, y):
        if p.ndim == 1:
            return (p - y) ** 2
        sq = np.einsum("ij,ij->i", p, p)
        py = p[np.arange(p.shape[0]), y]
        return sq - 2.0 * py + 1.0


class NLL(_MeanPerExample):
    r"""Negative log-likelihood ``mean_i -log p_i[y_i]`` (natural log); lower is better.

    Binary ``(N,)``: ``-log p`` for label 1 and ``-log(1 - p)`` for label 0. A zero
    probability on the true class gives ``inf`` (no clipping).
    """

    name = "nll"
    main_score = "nll"
    examples = [{"predictions": [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], "references": [0, 1, 2],
                 "global_target": {"nll": -(math.log(0.7) + math.log(0.8) + math.log(0.4)) / 3}}]

    def losses(self, p, y):
        py = np.where(y == 1, p, 1.0 - p) if p.ndim == 1 else p[np.arange(p.shape[0]), y]
        with np.errstate(divide="ignore"):
            return -np.log(py)


class CalibrationUEMetric(TensorUEMetric):
    r"""A calibration metric as a UE metric: ``metric(uncertainty, quality)`` with ``p_correct = 1 - uncertainty``.

    Quality must be binary (1 = correct) and uncertainty in [0, 1]; the wrapped metric
    then scores the binary probabilities ``1 - u`` against the labels ``q``. Lower is
    better. Use it for estimators whose output is one minus a probability of being
    correct.
    """

    requires_binary = True
    requires_unit_interval = True
    higher_is_better = False

    def __init__(self, metric: Metric) -> None:
        self.metric = metric
        self.name = metric.name or type(metric).__name__

    def _score(self, u: np.ndarray, q: np.ndarray) -> float:
        xp = namespace(u, q)  # tensors stay on their device (the binned metrics' update takes them)
        lo, hi = float(xp.min(u)), float(xp.max(u))
        if lo < 0 or hi > 1:
            raise InvalidParameterError(
                f"{self.name}: as a UE metric it needs uncertainty = 1 - P(correct) in [0, 1]; "
                f"got values from {lo} to {hi}."
            )
        m = self.metric.clone().reset() if hasattr(self.metric, "reset") else self.metric
        n = u.shape[0]
        if isinstance(m, AdaptiveECE) and n < m.n_bins:
            return undefined_metric(f"{self.name}: fewer examples ({n}) than bins ({m.n_bins}); NaN.")
        m.update(1.0 - u, xp.astype(q, xp.int64))
        return float(m.compute())


def _calibration_ue_factory(cls):
    if cls is AdaptiveECE:
        def adaptive(*, n_bins: int = 15, norm: str = "l1") -> CalibrationUEMetric:
            return CalibrationUEMetric(cls(n_bins=n_bins, norm=norm))

        adaptive.__doc__ = f"{cls.__name__} as a UE metric, called as ``ue_metric(1 - p_correct, quality)``."
        return adaptive

    def factory(*, n_bins: int = 15) -> CalibrationUEMetric:
        return CalibrationUEMetric(cls(n_bins=n_bins))

    factory.__doc__ = f"{cls.__name__} as a UE metric, called as ``ue_metric(1 - p_correct, quality)``."
    return factory


def _plain_ue_factory(cls):
    def factory() -> CalibrationUEMetric:
        return CalibrationUEMetric(cls())

    factory.__doc__ = f"{cls.__name__} as a UE metric, called as ``ue_metric(1 - p_correct, quality)``."
    return factory
