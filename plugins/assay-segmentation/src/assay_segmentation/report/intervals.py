"""Bootstrap intervals and significance marks for the cells of a downstream-task table.

A cell whose value is a mean over images (Dice, GED, ACE, NCC: metrics with per-image
entries in their result files, kept in :attr:`ResultTable.cases <assay_segmentation.report.ResultTable>`)
gets a percentile interval from the bootstrap over its **images**:

- the cell's value is ``theta = (1/S) sum_s (1/n) sum_i v_si`` over ``S`` seeds and the ``n``
  images every seed was evaluated on, which is the mean over images of the per-image seed
  means ``m_i = (1/S) sum_s v_si``;
- a resample gives image ``i`` (in the order of its id) a Poisson(1) weight ``w_bi`` from assay's one
  resampling engine (:func:`assay.metrics.resample.poisson_weights`, the scheme of :func:`assay.evaluate`
  and the evaluators): ``theta_b = sum_i w_bi m_i / sum_i w_bi``; a resample that drew no image is left out;
- the interval is ``[q(alpha/2), q(1 - alpha/2)]`` of the ``theta_b``
  (:func:`assay.metrics.intervals.percentile_interval`).

So the interval says how much the value could move with another test set of the same size;
the ``± std`` beside it says how much it moves between training seeds. Every row of a column
that was evaluated on the same images is resampled with the **same** counts, so differences
are paired: per column (and per block of :attr:`ResultTable.blocks_by`, e.g. per ValUES
split value), the best row and every row whose paired difference to the best has an interval
that includes 0 are "not significantly worse than the best" (as ``assay ue`` marks
estimators). Set-level metrics (AUROC, AURC, AL improvement) have no per-image values in
their files and get neither.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import attrs
import numpy as np

from assay.metrics.intervals import percentile_interval
from assay.metrics.resample import poisson_weights
from assay.validation import check_int, check_number, check_seed
from assay_segmentation.report.collect import Column, ResultTable

__all__ = ["TableIntervals", "bootstrap_table"]

Row = tuple[str, ...]


@attrs.frozen
class TableIntervals:
    """Intervals per cell and, per column, the rows not significantly worse than the best."""

    n_resamples: int
    confidence_level: float
    seed: int
    #: ``(row, column) -> (low, high)`` in the table's units (not scaled)
    bounds: dict[tuple[Row, Column], tuple[float, float]] = attrs.field(factory=dict)
    #: ``column -> rows`` that are the best or not significantly worse than it (per block)
    not_worse: dict[Column, frozenset[Row]] = attrs.field(factory=dict)
    #: ``column -> rows`` that took part in a paired comparison (the others get no mark)
    judged: dict[Column, frozenset[Row]] = attrs.field(factory=dict)

    def interval(self, row: Row, column: Column) -> tuple[float, float] | None:
        return self.bounds.get((row, column))


def _image_means(cases: tuple[dict[str, float], ...]) -> tuple[tuple[str, ...], np.ndarray] | None:
    """(sorted image ids, per-image mean over seeds), or None when the seeds saw different images."""
    ids = sorted(cases[0])
    if any(sorted(c) != ids for c in cases[1:]):
        return None
    values = np.array([[c[i] for i in ids] for c in cases], dtype=float)
    if not np.all(np.isfinite(values)):
        return None
    return tuple(ids), values.mean(axis=0)


def _blocks(table: ResultTable) -> list[list[Row]]:
    if table.blocks_by is None or table.blocks_by not in table.index_names:
        return [list(table.rows)]
    out: dict[str, list[Row]] = {}
    for row in table.rows:
        out.setdefault(table.row_value(row, table.blocks_by), []).append(row)
    return list(out.values())


def bootstrap_table(table: ResultTable, *, n_resamples: int = 1000, confidence_level: float = 0.95, seed: int = 0,
                    columns: Iterable[Column] | None = None) -> TableIntervals:
    """Intervals and significance marks for every cell of ``table`` that has per-image values.

    Parameters
    ----------
    table : ResultTable
        With ``cases`` (:func:`~assay_segmentation.report.load_results` and
        :func:`~assay_segmentation.report.values_results.load_values_results` fill them).
    n_resamples : int
        Bootstrap resamples ``B`` (>= 1).
    confidence_level : float
        Of the intervals and of the paired test, in (0, 1).
    seed : int
        Seed of the resample counts; rows and columns on the same images share them.

    Examples
    --------
    >>> from assay_segmentation.report import Column, ResultTable
    >>> col = Column("seg", "dice", "id", True)
    >>> t = ResultTable(("pred_model",), (("A",), ("B",)), (col,), {(("A",), col): (0.5,), (("B",), col): (0.7,)},
    ...                 cases={(("A",), col): ({"x": 0.4, "y": 0.6},), (("B",), col): ({"x": 0.6, "y": 0.8},)})
    >>> iv = bootstrap_table(t, n_resamples=200)
    >>> iv.interval(("A",), col)
    (0.4, 0.6)
    >>> sorted(iv.not_worse[col])        # B is better on every image: A is significantly worse
    [('B',)]
    """
    n_resamples = check_int(n_resamples, "n_resamples", low=1, owner="bootstrap_table")
    confidence_level = check_number(confidence_level, "confidence_level", low=0.0, high=1.0, closed="neither",
                                    owner="bootstrap_table")
    seed = int(check_seed(seed, allow_none=False, owner="bootstrap_table") or 0)
    alpha = 1.0 - confidence_level
    bounds: dict[tuple[Row, Column], tuple[float, float]] = {}
    not_worse: dict[Column, set[Row]] = {}
    judged: dict[Column, set[Row]] = {}
    counts_by_ids: dict[tuple[str, ...], np.ndarray] = {}

    def weights_for(ids: tuple[str, ...]) -> np.ndarray:
        """The Poisson weights of these images, ``(B', n)``: resamples that drew no image left out."""
        if ids not in counts_by_ids:  # one draw per image set: rows and columns on these images are paired
            w = poisson_weights(seed, n_resamples, 0, 0, len(ids)).astype(float)
            counts_by_ids[ids] = w[w.sum(axis=1) > 0]
        return counts_by_ids[ids]

    for col in table.columns if columns is None else columns:
        for block in _blocks(table):
            by_ids: dict[tuple[str, ...], list[tuple[Row, np.ndarray]]] = {}
            for row in block:
                cases = table.cases.get((row, col))
                if not cases or (row, col) in table.missing:
                    continue
                found = _image_means(cases)
                if found is not None:
                    by_ids.setdefault(found[0], []).append((row, found[1]))
            thetas: dict[Row, np.ndarray] = {}
            for ids, members in by_ids.items():
                means = np.stack([m for _, m in members], axis=1)  # (n images, rows)
                w = weights_for(ids)
                theta = (w @ means) / w.sum(axis=1)[:, None]  # (B', rows): the weighted mean over images
                for j, (row, _) in enumerate(members):
                    low, high, _why = percentile_interval(theta[:, j], confidence_level)
                    bounds[(row, col)] = (low, high)
                    thetas[row] = theta[:, j]
            # marks only where every row with a value was resampled on the same images (paired with the best)
            valued = [r for r in block if math.isfinite(table.mean(r, col))]
            if len(by_ids) != 1 or len(valued) < 2 or set(valued) != set(thetas):
                continue
            pick = max if col.higher_is_better else min
            best = pick(valued, key=lambda r: table.mean(r, col))
            sign = 1.0 if col.higher_is_better else -1.0
            judged.setdefault(col, set()).update(valued)
            marked = not_worse.setdefault(col, set())
            for row in valued:
                delta = sign * (thetas[best] - thetas[row])  # > 0: the best is better on that resample
                if row == best or float(np.percentile(delta, 100 * alpha / 2)) <= 0.0:
                    marked.add(row)
    return TableIntervals(n_resamples=n_resamples, confidence_level=confidence_level, seed=seed, bounds=bounds,
                          not_worse={c: frozenset(r) for c, r in not_worse.items()},
                          judged={c: frozenset(r) for c, r in judged.items()})
