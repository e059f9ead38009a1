"""One self-contained HTML page: the report's data, its script and style, and Vega-Lite, inlined.

The page fetches nothing. The charting library (inlined only in a page that has a chart) is
Vega, Vega-Lite and vega-embed in one minified script, the bundle that the Vega team's
``vl-convert-python`` package builds from the copies it ships
(:func:`vl_convert.javascript_bundle`, offline); building it takes seconds, so it is kept in a
cache folder, one file per vl-convert version (:func:`vega_js`). A Content-Security-Policy
(``default-src 'none'``) stops the browser from loading anything else. The data is stored
once, as compact JSON; the page's script (``assets/report.js``) draws the tables and charts
from it. Written atomically (:func:`assay.jsonio.write_text_atomic`): a failed build leaves no
page, or the previous one whole.
"""

from __future__ import annotations

import functools
import hashlib
import html
import importlib.metadata
import json
import os
import warnings
from pathlib import Path

from assay.errors import MissingDependencyError
from assay.jsonio import to_jsonable, write_text_atomic
from assay_report.model import Chart, Report

__all__ = ["ASSETS", "BUNDLE_SNIPPET", "CACHE_ENV", "bundle_cache_dir", "render", "vega_js", "write"]

ASSETS = Path(__file__).parent / "assets"
#: environment variable naming the folder that keeps the built Vega bundle
CACHE_ENV = "ASSAY_REPORT_CACHE"
#: what the bundle exposes to the page's script (the entry point vl-convert bundles with its dependencies)
BUNDLE_SNIPPET = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"
# 'unsafe-eval': Vega compiles its expressions (filters, signals, encodings) with Function(); the
# CSP-safe interpreter (vega-interpreter) is not in the bundle. Nothing is loaded from anywhere.
CSP = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; "
       "font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'")


def bundle_cache_dir() -> Path:
    """Where the built bundle is kept: ``$ASSAY_REPORT_CACHE``, else ``$XDG_CACHE_HOME/assay-report``,
    else ``~/.cache/assay-report``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "assay-report"


@functools.cache
def vega_js() -> str:
    """Vega, Vega-Lite and vega-embed as one script (they set ``window.vega``, ``vegaLite``, ``vegaEmbed``).

    Built by :func:`vl_convert.javascript_bundle` (of :data:`BUNDLE_SNIPPET`) from the copies shipped
    in ``vl-convert-python`` (nothing is downloaded) the first time, then read from
    :func:`bundle_cache_dir` (``vega-bundle-<vl-convert version>-<snippet hash>.js``, written
    atomically). A cache folder that cannot be written is warned about, and the bundle is built
    again by the next process.
    """
    try:
        import vl_convert  # deferred: a 30 MB native module, needed only by a page with a chart
    except ImportError:
        raise MissingDependencyError("vl-convert-python",
                                     purpose="the charts of 'assay report' (Vega-Lite is inlined)") from None
    version = importlib.metadata.version("vl-convert-python")
    digest = hashlib.sha256(BUNDLE_SNIPPET.encode("utf-8")).hexdigest()[:12]
    path = bundle_cache_dir() / f"vega-bundle-{version}-{digest}.js"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    text = vl_convert.javascript_bundle(BUNDLE_SNIPPET)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    except OSError as err:
        warnings.warn(f"assay report: could not keep the Vega bundle in {path} ({err}); it is built again "
                      f"next time (set {CACHE_ENV} to a writable folder)", RuntimeWarning, stacklevel=2)
    return text


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
    # the Vega bundle (about 0.9 MB) only when there is a chart: a page of tables loads without parsing it
    has_chart = any(isinstance(sec, Chart) for sec in report.sections)
    vega = f"<script>{_script(vega_js())}</script>\n" if has_chart else ""
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
{vega}<script>{_script(app)}</script>
</body>
</html>
"""


def write(report: Report, path: str | os.PathLike[str]) -> Path:
    """Render and write the page atomically; returns its path."""
    text = render(report)  # built whole before anything is opened
    return write_text_atomic(path, text)
