"""One self-contained HTML page: the report's data, its script and style, and plotly.js, inlined.

The page fetches nothing: plotly.js (inlined only in a page that has a chart) comes from the
``plotly`` Python package's own copy (``plotly/package_data/plotly.min.js``, read from disk,
never downloaded), and a
Content-Security-Policy (``default-src 'none'``) stops the browser from loading anything
else. The data is stored once, as compact JSON; the page's script (``assets/report.js``)
draws the tables and charts from it. Written atomically (:func:`assay.jsonio.write_text_atomic`):
a failed build leaves no page, or the previous one whole.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
from pathlib import Path

from assay.errors import MissingDependencyError
from assay.jsonio import to_jsonable, write_text_atomic
from assay_report.model import Chart, Report

__all__ = ["ASSETS", "plotly_js", "render", "write"]

ASSETS = Path(__file__).parent / "assets"
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
       "font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'")


def plotly_js() -> str:
    """The text of plotly.min.js shipped in the ``plotly`` package (found without importing it)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("plotly", purpose="the charts of 'assay report' (plotly.js is inlined)")
    path = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise MissingDependencyError("plotly", purpose=f"the charts of 'assay report' ({path} is missing)")
    return path.read_text(encoding="utf-8")


def _script(text: str) -> str:
    """``text`` safe inside a ``<script>`` element: a ``</script`` in it (in a string) cannot end it."""
    return text.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


def render(report: Report) -> str:
    """The page's HTML text."""
    data = json.dumps(to_jsonable(report.to_json()), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    data = data.replace("</", "<\\/")  # a JSON escape: the data cannot end its <script> element
    css = (ASSETS / "report.css").read_text(encoding="utf-8")
    app = (ASSETS / "report.js").read_text(encoding="utf-8")
    title = html.escape(report.title)
    # plotly.js (about 4.8 MB) only when there is a chart: a page of tables loads without parsing it
    has_chart = any(isinstance(sec, Chart) for sec in report.sections)
    plotly = f"<script>{_script(plotly_js())}</script>\n" if has_chart else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="assay-report (assay {html.escape(report.versions.get('assay', ''))})">
<title>{title}</title>
<style>
{css}
</style>
</head>
<body>
<header><h1>{title}</h1><div id="sources"></div></header>
<noscript><p class="noscript">This report draws its tables and charts with JavaScript; allow scripts for this
file to see them.</p></noscript>
<main id="report"></main>
<script type="application/json" id="assay-report-data">{data}</script>
{plotly}<script>{_script(app)}</script>
</body>
</html>
"""


def write(report: Report, path: str | os.PathLike[str]) -> Path:
    """Render and write the page atomically; returns its path."""
    text = render(report)  # built whole before anything is opened
    return write_text_atomic(path, text)
