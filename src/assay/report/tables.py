"""Tables of downstream-task results (``assay table``): Markdown, LaTeX and HTML.

Each table is built once as a :class:`~assay.render.Grid` (:func:`to_grid`) and drawn by
the one table renderer, :func:`assay.render.render_grid`; this module adds only the LaTeX
``table`` float and the standalone LaTeX and HTML documents around it.

Cells show ``mean ± std`` over seeds (values multiplied by ``scale``, 100 by default as
in ValUES' tables). LaTeX and HTML colour every column from best (green) through yellow
to worst (red), following each metric's ``higher_is_better``; cells without a value are
grey. The best value of each column is bold (in every format). A cell whose result files
are partly missing (``load_results(..., allow_missing=True)``) reads
``n/a (1 of 3 missing)`` and takes no part in the colours or the bold best value. A
cell where some seeds' values are NaN (undefined, written as ``null``) shows the mean
of the others followed by ``(1 of 3 NaN)``, so it never passes for a mean over all seeds.
Under every table is the run's provenance signature (:mod:`assay.provenance`): a
``Signature:`` line in Markdown and HTML, a ``% assay signature:`` comment in LaTeX.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from assay.errors import InvalidParameterError
from assay.render import Cell, Grid, render_grid
from assay.report.collect import Column, ResultTable

__all__ = ["FORMATS", "colour_scale", "render_table", "to_grid", "to_html", "to_latex", "to_markdown"]

FORMATS = ("markdown", "latex", "html")
_WORST, _MID, _BEST, _EMPTY = (248, 105, 107), (255, 235, 132), (99, 190, 123), "D3D3D3"


def _mix(a: tuple[int, ...], b: tuple[int, ...], t: float) -> str:
    return "".join(f"{round(x + (y - x) * t):02X}" for x, y in zip(a, b))


def colour_scale(values: Sequence[float], *, higher_is_better: bool) -> list[str]:
    """Hex colours (``RRGGBB``) for ``values``: best green, middle yellow, worst red; NaN grey.

    The position is linear in the value between the column's worst and best; a column
    whose values are all equal is yellow.
    """
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return [_EMPTY] * len(values)
    lo, hi = min(finite), max(finite)
    out = []
    for v in values:
        if math.isnan(v):
            out.append(_EMPTY)
            continue
        t = 0.5 if hi == lo else (v - lo) / (hi - lo)
        good = t if higher_is_better else 1 - t
        out.append(_mix(_WORST, _MID, good * 2) if good < 0.5 else _mix(_MID, _BEST, good * 2 - 1))
    return out


def _fmt(table: ResultTable, row: tuple[str, ...], col: Column, digits: int, scale: float, pm: str) -> str:
    if (row, col) in table.missing:
        gone, total = table.missing[(row, col)]
        return f"n/a ({gone} of {total} missing)"
    m, s = table.mean(row, col), table.std(row, col)
    if math.isnan(m):
        return "–"
    text = f"{m * scale:.{digits}f}"
    text = text if math.isnan(s) else f"{text}{pm}{s * scale:.{digits}f}"
    values = table.cell(row, col)
    undefined = sum(math.isnan(v) for v in values)
    return f"{text} ({undefined} of {len(values)} NaN)" if undefined else text


def _column_means(table: ResultTable, col: Column) -> list[float]:
    return [table.mean(row, col) for row in table.rows]


def _task_groups(table: ResultTable) -> list[tuple[str, int]]:
    groups: list[tuple[str, int]] = []
    for col in table.columns:
        if groups and groups[-1][0] == col.task:
            groups[-1] = (col.task, groups[-1][1] + 1)
        else:
            groups.append((col.task, 1))
    return groups


def _shown_index(table: ResultTable) -> list[list[str]]:
    """Index cells with repeats of the row above left blank (a grouped look)."""
    shown, previous = [], None
    for row in table.rows:
        cells = list(row)
        if previous is not None:
            for i in range(len(row)):
                if row[: i + 1] == previous[: i + 1]:
                    cells[i] = ""
                else:
                    break
        shown.append(cells)
        previous = row
    return shown


def _best(table: ResultTable) -> dict[Column, float]:
    """The best mean of each column (by its ``higher_is_better``), for columns with a value."""
    best: dict[Column, float] = {}
    for col in table.columns:
        finite = [v for v in _column_means(table, col) if not math.isnan(v)]
        if finite:
            best[col] = max(finite) if col.higher_is_better else min(finite)
    return best


def to_grid(table: ResultTable, *, digits: int = 2, scale: float = 100.0, notes: Sequence[str] = (),
            signature: bool = True) -> Grid:
    """The :class:`~assay.render.Grid` of ``table``, drawn by :func:`assay.render.render_grid`.

    One row per result row (index cells that repeat the row above left blank, a rule before
    each new first-level block), one column per metric column under its task's spanning
    title, the column title followed by ``↑`` (higher is better) or ``↓``. Cells read
    ``mean ± std`` (times ``scale``); the best of each column is bold and every cell is
    coloured by :func:`colour_scale` (grey without a value). ``signature=False`` leaves the
    provenance line out (the LaTeX wrapper writes it as a comment itself).
    """
    best = _best(table)
    colours = {col: colour_scale(_column_means(table, col), higher_is_better=col.higher_is_better)
               for col in table.columns}
    rows, rules = [], []
    for i, (row, shown) in enumerate(zip(table.rows, _shown_index(table))):
        if i and shown[0]:
            rules.append(i)
        cells = [Cell(s) for s in shown]
        for col in table.columns:
            cells.append(Cell(_fmt(table, row, col, digits, scale, " ± "),
                              bold=col in best and table.mean(row, col) == best[col], colour=colours[col][i]))
        rows.append(cells)
    n_index = len(table.index_names)
    header = list(table.index_names) + [f"{c.label} {'↑' if c.higher_is_better else '↓'}" for c in table.columns]
    groups = ([("", n_index)] if n_index else []) + _task_groups(table)
    return Grid(header=header, rows=rows, align="l" * n_index + "r" * len(table.columns), groups=groups,
                notes=notes, signature=table.signature if signature else "", rules_before=rules)


def to_markdown(table: ResultTable, *, digits: int = 2, scale: float = 100.0) -> str:
    """A Markdown (GitHub) table, the best value of each column bold: :func:`to_grid` drawn by :mod:`assay.render`."""
    note = f"Mean ± std over seeds, x{scale:g}; ↑ higher / ↓ lower is better; the best of each column in bold."
    return render_grid(to_grid(table, digits=digits, scale=scale, notes=(note,)), "markdown") + "\n"


def to_latex(table: ResultTable, *, digits: int = 2, scale: float = 100.0, standalone: bool = False,
             caption: str | None = None) -> str:
    """A booktabs LaTeX table with a colour scale per column (``xcolor`` with the ``table`` option).

    The ``tabular`` is :func:`to_grid` drawn by :func:`assay.render.render_grid`; this wraps it
    in a ``table`` float with the caption, and the signature as a comment under it.
    ``standalone=True`` wraps that in a complete document that compiles with pdflatex.
    """
    body = render_grid(to_grid(table, digits=digits, scale=scale, signature=False), "latex")
    cap = caption or f"Mean $\\pm$ std over seeds ($\\times{scale:g}$); green is best, red worst per column."
    tabular = "\\begin{table}[ht]\n\\centering\n\\tiny\n\\resizebox{\\linewidth}{!}{%\n" + body + \
        "}\n\\caption{" + cap + "}\n" + _latex_signature(table) + "\\end{table}\n"
    if not standalone:
        return tabular
    return ("\\documentclass{article}\n\\usepackage[landscape,margin=1cm]{geometry}\n\\usepackage{booktabs}\n"
            "\\usepackage{graphicx}\n\\usepackage[table]{xcolor}\n\\begin{document}\n" + tabular +
            "\\end{document}\n")


def _latex_signature(table: ResultTable) -> str:
    """The provenance line as a LaTeX comment (kept out of the typeset caption; one line, so nothing escapes it)."""
    if not table.signature:
        return ""
    return "% assay signature: " + " ".join(table.signature.splitlines()) + "\n"


def to_html(table: ResultTable, *, digits: int = 2, scale: float = 100.0, standalone: bool = True) -> str:
    """An HTML table with the same colour scale as the LaTeX one (inline styles, no scripts): :func:`to_grid`."""
    note = f"Mean ± std over seeds, ×{scale:g}; green is best, red worst per column; the best in bold."
    body = render_grid(to_grid(table, digits=digits, scale=scale, notes=(note,)), "html")
    if not standalone:
        return body
    return ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>assay results</title></head><body>\n'
            + body + "\n</body></html>\n")


def render_table(table: ResultTable, fmt: str = "markdown", **options: Any) -> str:
    """Render in ``fmt`` (``markdown``, ``latex`` or ``html``)."""
    renderers: dict[str, Callable[..., str]] = {"markdown": to_markdown, "latex": to_latex, "html": to_html}
    if fmt not in renderers:
        raise InvalidParameterError(f"The 'format' parameter must be one of {set(FORMATS)}. Got {fmt!r} instead.")
    return renderers[fmt](table, **options)
