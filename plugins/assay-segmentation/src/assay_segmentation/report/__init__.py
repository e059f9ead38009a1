"""Reports of downstream-task results: tables (Markdown, LaTeX, HTML) and bar plots.

>>> from assay_segmentation.report import load_results, render_table      # doctest: +SKIP
>>> table = load_results("results/")                          # doctest: +SKIP
>>> print(render_table(table, "latex"))                       # doctest: +SKIP

Bar plots need matplotlib (a dependency of assay-segmentation); it is imported only when a
plot is drawn.
"""

from __future__ import annotations

from assay_segmentation.report.collect import Column, ResultTable, load_results
from assay_segmentation.report.plots import bar_data, bar_plot, check_plot_options
from assay_segmentation.report.tables import (
           FORMATS,
           colour_scale,
           render_table,
           to_grid,
           to_html,
           to_latex,
           to_markdown,
)

__all__ = ["FORMATS", "Column", "ResultTable", "bar_data", "bar_plot", "check_plot_options", "colour_scale",
           "load_results", "render_table", "to_grid", "to_html", "to_latex", "to_markdown"]
