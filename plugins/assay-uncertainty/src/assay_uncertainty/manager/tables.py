"""The UEManager's tables as :class:`assay.render.Grid` (drawn by :func:`assay.render.render_grid`).

One row per estimator, one column per (UE metric score, generation metric) of one level.
A cell is the score (``0.4120``), with its interval when asked (``0.4120 [0.3800, 0.4410]``);
with ``mark_best`` the best estimator of each column and those not significantly worse
than it are bold (:meth:`~assay.uncertainty.UEManager.compare_to_best`: the paired
bootstrap of the difference to the best, on shared resample indices; worse when the
interval of the difference excludes 0). The notes under the table state the interval,
the test and the level.
"""

from __future__ import annotations

import math
from typing import Any

from assay.render import Cell, Grid
from assay.validation import check_bool, check_int

__all__ = ["manager_grid", "marks_for"]


def _level_text(level: float) -> str:
    return f"{level:.0%}" if round(level * 100, 6).is_integer() else f"{level:.2%}"


def _number(value: float, digits: int) -> str:
    return f"{value:.{digits}f}"


def marks_for(man: Any, *, level: str | None = None, gen_metric: str | None = None
              ) -> dict[tuple[str, str, str], dict[str, bool | None]]:
    """Per column ``(level, gen_metric, ue_metric)``: ``{estimator: not significantly worse than the best}``.

    The best estimator is True; another is False when :meth:`~assay.uncertainty.UEManager.compare_to_best`
    finds the best significantly better (``better == "a"``), None when the comparison is
    undefined (a NaN interval) or its own score is NaN, True otherwise.
    """
    cols = dict.fromkeys((k[0], k[2], k[3]) for k in man.metrics
                         if (level is None or k[0] == level) and (gen_metric is None or k[2] == gen_metric))
    out: dict[tuple[str, str, str], dict[str, bool | None]] = {}
    for lv, g, u in cols:
        best, comps = man.compare_to_best(lv, g, u)
        col: dict[str, bool | None] = {k[1]: None for k in man.metrics if (k[0], k[2], k[3]) == (lv, g, u)}
        if best is not None:
            col[best] = True
            for est, c in comps.items():
                if math.isfinite(c.ci_low) and math.isfinite(c.ci_high):
                    col[est] = c.better != "a"
        out[(lv, g, u)] = col
    return out


def manager_grid(man: Any, *, level: str = "sequence", gen_metric: str | None = None,
                 intervals: bool | None = None, mark_best: bool = False, digits: int = 4,
                 marks: dict[tuple[str, str, str], dict[str, bool | None]] | None = None) -> Grid:
    """The grid of ``man.table(...)`` (see :meth:`assay.uncertainty.UEManager.table`); ``marks`` are
    precomputed :func:`marks_for` (computed here when ``mark_best`` and not given)."""
    owner = "UEManager.table"
    digits = int(check_int(digits, "digits", low=0, high=12, owner=owner))
    mark_best = check_bool(mark_best, "mark_best", owner=owner)
    if intervals is not None:
        intervals = check_bool(intervals, "intervals", owner=owner)
    keys = [k for k in man.metrics if k[0] == level and (gen_metric is None or k[2] == gen_metric)]
    cols = list(dict.fromkeys((k[2], k[3]) for k in keys))
    rows = list(dict.fromkeys(k[1] for k in keys))
    show_ci = any(k in man.intervals for k in keys) if intervals is None else intervals
    bold: set[tuple[str, str, str]] = set()
    undetermined = 0
    n_compare = man.n_resamples or 1000
    if mark_best:
        if marks is None:
            marks = marks_for(man, level=level, gen_metric=gen_metric)
        for g, u in cols:
            for est, mark in marks.get((level, g, u), {}).items():
                if mark:
                    bold.add((est, g, u))
                elif mark is None and math.isfinite(man.metrics.get((level, est, g, u), math.nan)):
                    undetermined += 1
    body = []
    for est in rows:
        cells = [Cell(est)]
        for g, u in cols:
            key = (level, est, g, u)
            value = man.metrics.get(key)
            if value is None:
                cells.append(Cell(""))
                continue
            text = _number(value, digits)
            if show_ci and key in man.intervals:
                lo, hi = man.intervals[key]
                text += f" [{_number(lo, digits)}, {_number(hi, digits)}]"
            cells.append(Cell(text, bold=(est, g, u) in bold))
        body.append(tuple(cells))
    notes: list[str] = []
    if show_ci and man.intervals:
        notes.append(f"[low, high]: {_level_text(man.confidence_level)} percentile bootstrap interval "
                     f"({man.n_resamples} resamples of the examples, seed {man.seed}).")
    if mark_best:
        notes.append(
            f"Bold: per column, the best estimator and those not significantly worse than it (paired bootstrap of "
            f"the difference to the best on shared resample indices, {n_compare} resamples, seed {man.seed}: worse "
            f"when the {_level_text(man.confidence_level)} interval of the difference excludes 0)."
            + (f" {undetermined} comparison(s) undetermined (NaN interval): not bold." if undetermined else ""))
    header = ["estimator"] + [f"{u} ({g})" for g, u in cols]
    return Grid(header=tuple(header), rows=tuple(body), notes=tuple(notes))
