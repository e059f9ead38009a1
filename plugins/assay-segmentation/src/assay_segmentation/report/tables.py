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
from assay.render import Cell, Grid, render_grid, tex_escape
from assay_segmentation.report.collect import Column, ResultTable
from assay_segmentation.report.intervals import TableIntervals

__all__ = ["FORMATS", "PALETTES", "colour_scale", "render_table", "to_grid", "to_html", "to_latex", "to_markdown",
           "values_scale"]

FORMATS = ("markdown", "latex", "html")
#: the colour scales of the tables: assay's green-yellow-red, ValUES' yellow-orange-red
PALETTES = ("assay", "values")
_WORST, _MID, _BEST, _EMPTY = (248, 105, 107), (255, 235, 132), (99, 190, 123), "D3D3D3"
#: ColorBrewer's 9-class YlOrRd (Brewer, colorbrewer2.org), the anchors of matplotlib's ``YlOrRd``
_YLORRD = ("FFFFCC", "FFEDA0", "FED976", "FEB24C", "FD8D3C", "FC4E2A", "E31A1C", "BD0026", "800026")
#: matplotlib's colormaps are lookup tables of 256 colours
_LUT_SIZE = 256


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


def _ylorrd_table() -> list[tuple[float, float, float]]:
    """The 256 colours of the YlOrRd colormap: each channel linear between the 9 evenly spaced anchors."""
    import numpy as np

    anchors = np.array([[int(h[k:k + 2], 16) / 255 for k in (0, 2, 4)] for h in _YLORRD])
    at = np.linspace(0.0, 1.0, len(_YLORRD))
    x = np.linspace(0.0, 1.0, _LUT_SIZE)
    channels = [np.clip(np.interp(x, at, anchors[:, c]), 0.0, 1.0) for c in range(3)]
    return [(float(r), float(g), float(b)) for r, g, b in zip(*channels)]


_LUT: list[tuple[float, float, float]] = []


def _luminance(rgb: tuple[float, float, float]) -> float:
    """Relative luminance (WCAG 2.0) of an sRGB colour with channels in [0, 1]."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def values_scale(values: Sequence[float], *, higher_is_better: bool) -> list[tuple[str, str | None]]:
    """ValUES' table colours: ``(background, text colour)`` hex pairs for ``values``; NaN grey without text.

    What ValUES' ``ds_task_table.py`` gets from pandas' ``Styler.background_gradient(cmap="YlOrRd")``:
    the column's values (negated when higher is better) are scaled linearly to [0, 1] between
    their minimum and maximum (all equal: 0), looked up in the 256-colour YlOrRd table
    (index ``min(int(x * 256), 255)``), so the best value is light yellow and the worst dark
    red; the text is ``F1F1F1`` on a background whose relative luminance is below 0.408,
    else black.
    """
    if not _LUT:
        _LUT.extend(_ylorrd_table())
    g = [v if not higher_is_better else -v for v in values]
    finite = [v for v in g if not math.isnan(v)]
    out: list[tuple[str, str | None]] = []
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 0.0)
    for v in g:
        if math.isnan(v):
            out.append((_EMPTY, None))
            continue
        x = 0.0 if hi == lo else (v - lo) / (hi - lo)
        rgb = _LUT[min(int(x * _LUT_SIZE), _LUT_SIZE - 1)]
        hexed = "".join(f"{round(c * 255):02X}" for c in rgb)
        out.append((hexed, "F1F1F1" if _luminance(rgb) < 0.408 else "000000"))
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


def _blocks(table: ResultTable) -> list[list[int]]:
    """Row positions per colour block: one block, or one per value of ``table.blocks_by``."""
    if table.blocks_by is None or table.blocks_by not in table.index_names:
        return [list(range(len(table.rows)))]
    out: dict[str, list[int]] = {}
    for i, row in enumerate(table.rows):
        out.setdefault(table.row_value(row, table.blocks_by), []).append(i)
    return list(out.values())


def _colours(table: ResultTable, col: Column, palette: str, scale: float) -> list[tuple[str, str | None]]:
    """(background, text colour) per row: each block of rows on its own scale."""
    out: list[tuple[str, str | None]] = [(_EMPTY, None)] * len(table.rows)
    means = _column_means(table, col)
    for block in _blocks(table):
        vals = [means[i] * scale for i in block]
        if palette == "values":
            pairs = values_scale(vals, higher_is_better=col.higher_is_better)
        else:
            pairs = [(c, None) for c in colour_scale(vals, higher_is_better=col.higher_is_better)]
        for i, pair in zip(block, pairs):
            out[i] = pair
    return out


def _bold(table: ResultTable, col: Column, intervals: TableIntervals | None) -> set[int]:
    """Row positions shown bold: per block, the rows not significantly worse than the best where a paired
    comparison was made (``intervals``), else the best value."""
    means = _column_means(table, col)
    judged = intervals.judged.get(col, frozenset()) if intervals else frozenset()
    marked = intervals.not_worse.get(col, frozenset()) if intervals else frozenset()
    out = set()
    for block in _blocks(table):
        finite = [means[i] for i in block if not math.isnan(means[i])]
        if not finite:
            continue
        best = max(finite) if col.higher_is_better else min(finite)
        for i in block:
            row = table.rows[i]
            if row in judged:
                if row in marked:
                    out.add(i)
            elif means[i] == best and not any(table.rows[j] in judged for j in block):
                out.add(i)
    return out


def _legend(table: ResultTable, scale: float, palette: str, intervals: TableIntervals | None, *,
            times: str = "×") -> list[str]:
    """What the table shows, in words (Markdown / HTML notes, the LaTeX caption, escaped there)."""
    lines = [f"Mean ± std over seeds, {times}{scale:g}; ↑ higher / ↓ lower is better."]
    where = f" within each {table.blocks_by}" if table.blocks_by else ""
    if palette == "values":
        lines.append(f"Colours as in ValUES: light yellow is the best and dark red the worst of each column{where}; "
                     "grey: no value.")
    else:
        lines.append(f"Colours: green is the best and red the worst of each column{where}; grey: no value.")
    if intervals is not None and intervals.bounds:
        level = f"{intervals.confidence_level:.0%}"
        lines.append(f"[low, high]: {level} bootstrap interval over the test images ({intervals.n_resamples} "
                     "resamples, the per-image values averaged over seeds), for metrics with per-image values. "
                     f"Bold: the best of a column{where} and every row not significantly worse (paired bootstrap, "
                     f"{level}; the best value only where there are no per-image values).")
    else:
        lines.append(f"Bold: the best of each column{where}.")
    return lines + list(table.notes)


def to_grid(table: ResultTable, *, digits: int = 2, scale: float = 100.0, notes: Sequence[str] = (),
            signature: bool = True, palette: str = "assay", intervals: TableIntervals | None = None) -> Grid:
    """The :class:`~assay.render.Grid` of ``table``, drawn by :func:`assay.render.render_grid`.

    One row per result row (index cells that repeat the row above left blank, a rule before
    each new first-level block), one column per metric column under its task's spanning
    title, the column title followed by ``↑`` (higher is better) or ``↓``. Cells read
    ``mean ± std`` (times ``scale``), followed by ``[low, high]`` where ``intervals``
    (:func:`~assay_segmentation.report.intervals.bootstrap_table`) has one. The best of each column is bold
    (with ``intervals``: every row not significantly worse than the best). Every cell is
    coloured by :func:`colour_scale` (``palette="assay"``) or :func:`values_scale`
    (``palette="values"``, ValUES' colours and text colours), grey without a value; with
    ``table.blocks_by`` each block of rows has its own scale and best. ``signature=False``
    leaves the provenance line out (the LaTeX wrapper writes it as a comment itself).
    """
    if palette not in PALETTES:
        raise InvalidParameterError(f"The 'palette' parameter must be one of {', '.join(PALETTES)}. "
                                    f"Got {palette!r} instead.")
    colours = {col: _colours(table, col, palette, scale) for col in table.columns}
    bold = {col: _bold(table, col, intervals) for col in table.columns}
    rows, rules = [], []
    for i, (row, shown) in enumerate(zip(table.rows, _shown_index(table))):
        if i and shown[0]:
            rules.append(i)
        cells = [Cell(s) for s in shown]
        for col in table.columns:
            text = _fmt(table, row, col, digits, scale, " ± ")
            bounds = intervals.interval(row, col) if intervals is not None else None
            if bounds is not None and text != "–" and (row, col) not in table.missing:
                text += f" [{bounds[0] * scale:.{digits}f}, {bounds[1] * scale:.{digits}f}]"
            background, fg = colours[col][i]
            cells.append(Cell(text, bold=i in bold[col], colour=background, text_colour=fg))
        rows.append(cells)
    n_index = len(table.index_names)
    header = list(table.index_names) + [f"{c.label} {'↑' if c.higher_is_better else '↓'}" for c in table.columns]
    groups = ([("", n_index)] if n_index else []) + _task_groups(table)
    return Grid(header=header, rows=rows, align="l" * n_index + "r" * len(table.columns), groups=groups,
                notes=notes, signature=table.signature if signature else "", rules_before=rules)


def to_markdown(table: ResultTable, *, digits: int = 2, scale: float = 100.0, palette: str = "assay",
                intervals: TableIntervals | None = None) -> str:
    """A Markdown (GitHub) table, the best value of each column bold: :func:`to_grid` drawn by :mod:`assay.render`."""
    note = " ".join(_legend(table, scale, palette, intervals, times="x")[:3])
    notes = (note,) + table.notes
    return render_grid(to_grid(table, digits=digits, scale=scale, notes=notes, palette=palette,
                               intervals=intervals), "markdown") + "\n"


def to_latex(table: ResultTable, *, digits: int = 2, scale: float = 100.0, standalone: bool = False,
             caption: str | None = None, palette: str = "assay", intervals: TableIntervals | None = None) -> str:
    """A booktabs LaTeX table with a colour scale per column (``xcolor`` with the ``table`` option).

    The ``tabular`` is :func:`to_grid` drawn by :func:`assay.render.render_grid`; this wraps it
    in a ``table`` float with the caption (what the cells, colours and bold marks mean), and
    the signature as a comment under it. ``standalone=True`` wraps that in a complete
    document that compiles with pdflatex.
    """
    body = render_grid(to_grid(table, digits=digits, scale=scale, signature=False, palette=palette,
                               intervals=intervals), "latex")
    cap = caption or " ".join(tex_escape(line) for line in _legend(table, scale, palette, intervals))
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


def to_html(table: ResultTable, *, digits: int = 2, scale: float = 100.0, standalone: bool = True,
            palette: str = "assay", intervals: TableIntervals | None = None) -> str:
    """An HTML table with the same colour scale as the LaTeX one (inline styles, no scripts): :func:`to_grid`."""
    body = render_grid(to_grid(table, digits=digits, scale=scale, notes=_legend(table, scale, palette, intervals),
                               palette=palette, intervals=intervals), "html")
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
