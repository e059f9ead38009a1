"""Reports of downstream-task results: tables (Markdown, LaTeX, HTML) and bar plots.

Moved to the ``assay-segmentation`` plugin (:mod:`assay_segmentation.report`); the names
still import from here, loaded on first use, and without the plugin they are a
:class:`~assay.errors.MissingDependencyError` naming ``pip install assay-segmentation``.

>>> from assay.report import load_results, render_table      # doctest: +SKIP
>>> table = load_results("results/")                          # doctest: +SKIP
>>> print(render_table(table, "latex"))                       # doctest: +SKIP
"""

from __future__ import annotations

from assay._relocated import alias_module

__all__ = ["FORMATS", "Column", "ResultTable", "bar_data", "bar_plot", "check_plot_options", "colour_scale",
           "load_results", "render_table", "to_grid", "to_html", "to_latex", "to_markdown"]

__getattr__, __dir__ = alias_module(__name__, "assay_segmentation.report", "assay-segmentation", names=__all__)
