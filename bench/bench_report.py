"""'assay report' pages of large results: load time in headless Chromium and file size (issue 26).

    python bench/bench_report.py [--examples 1000] [--estimators 50] [--ue-metrics 20] [--rows 10000]
                                 [--repeats 5] [--against REF] [--quick] [--only grid|rows] [--json PATH]

Two pages, each built once and opened ``--repeats`` times in a fresh browser page:

``grid``   a saved UEManager of ``--estimators`` column estimators x ``--ue-metrics`` UE metrics
           (every registered sequence-level UE metric that scores a binary quality, in name order,
           then the same again under a second generation metric until there are that many columns)
           over ``--examples`` stored outputs, saved without intervals: its table with the best of
           each column marked and its risk-coverage, rejection and reliability charts (50 series
           each, 400 points per curve).
``rows``   an ``assay run`` output folder with ``--rows`` result rows (models x 4 uncertainty types,
           two seeds, two metrics): one table of mean +- std.

Load time: from the start of navigation to the moment the page's script has drawn every table
and chart and the browser has laid out and painted the next frame (``performance.now()`` when
it sets ``data-ready``: every chart's Vega view has run and painted its canvas, and a timer set
in ``requestAnimationFrame`` has run), median of the repeats; "script done" is the moment
before that frame (``assayDrawnMs``: the tables in the DOM, the charts painted; the measure of
the first version of this benchmark); the pages of one case are opened in interleaved
rounds (ours, the peer, ...), so a change in the machine's load hits them alike. Beside it, the
main thread's CPU time (Chromium's ``ThreadTime`` metric), which moves less with the load of a
shared machine. The peers, in the same browser: the same charts as plotly.py's own
self-contained page (``plotly.io.to_html(include_plotlyjs=True)``, one figure per chart, until
the frame after its ``load`` event is painted) and the rows as a static HTML table written by
Python (until the frame after ``DOMContentLoaded`` is painted). For the grid, also a page
holding only the charting library (the Vega bundle the page inlines; plotly.min.js).
``--against REF``: the same report written by assay-report's page module and assets at git
commit REF (its ``page.py``, ``report.js`` and ``report.css``), measured in the same rounds:
the before of a change. Targets: each page
loads in under 2 s and weighs under 10 MB.

Chromium: ``$ASSAY_CHROMIUM`` or ``/usr/bin/chromium`` (scripts/ensure-chromium.sh), driven by
Playwright with the flags of the browser tests.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import assay
from assay.plugins import get_registry
from assay.uncertainty import Estimator
from assay_report.page import vega_js, write
from assay_report.sources import build_report

ROOT = Path(__file__).resolve().parents[1]
#: how every page measured here marks itself ready, as the report's own script does: when the frame after
#: its content is built has been laid out and painted (a timer set in requestAnimationFrame runs after it)
AFTER_NEXT_FRAME = ("(window.assayDrawnMs = performance.now(), requestAnimationFrame(() => setTimeout(() => { "
                    "window.assayReadyMs = performance.now(); document.body.setAttribute('data-ready', '1'); }, 0)))")
CHROMIUM = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


class ColumnEstimator(Estimator):
    level, dependencies = "sequence", ("u",)

    def __init__(self, name: str, column: int):
        self.name, self.column = name, column
        super().__init__()

    def __call__(self, stats):
        return np.asarray([u[self.column] for u in stats["u"]], dtype=float)


def usable_ue_metrics(limit: int) -> list[str]:
    """Registered UE metrics that score a sequence-level binary quality (tried on a small manager)."""
    rng = np.random.default_rng(0)
    records = [{"id": str(i), "correct": int(rng.integers(0, 2)), "u": [float(rng.uniform())]} for i in range(30)]
    good = []
    for name in sorted(e.name for e in get_registry("ue_metric")):
        try:
            man = assay.UEManager(records, estimators=[ColumnEstimator("e", 0)], gen_metrics=["accuracy"],
                                  ue_metrics=[name], progress=False)
            man()
        except Exception:  # noqa: BLE001 - a metric that needs other inputs is left out of the grid
            continue
        if len({k[3] for k in man.metrics}) == 1:
            good.append(name)
        if len(good) == limit:
            break
    return good


def grid_manager(folder: Path, n: int, n_est: int, n_cols: int) -> Path:
    metrics = usable_ue_metrics(n_cols)
    gens = ["accuracy"] if len(metrics) >= n_cols else ["accuracy", "quality"]
    rng = np.random.default_rng(1)
    correct = rng.integers(0, 2, n)
    records = [{"id": str(i), "correct": int(correct[i]), "quality": float(correct[i]),
                "u": [float(np.clip((1 - correct[i]) * k / n_est * 0.5 + rng.uniform(0, 0.6), 0, 1))
                      for k in range(n_est)]} for i in range(n)]
    per_gen = -(-n_cols // len(gens))
    man = assay.UEManager(records, estimators=[ColumnEstimator(f"estimator_{k:02d}", k) for k in range(n_est)],
                          gen_metrics=gens, ue_metrics=metrics[:per_gen], n_resamples=0, progress=False)
    man()
    path = folder / "grid"
    man.save(path)
    print(f"grid: {n_est} estimators x {len(gens) * len(metrics[:per_gen])} columns "
          f"({len(metrics[:per_gen])} UE metrics x {len(gens)} generation metrics) over {n} examples", flush=True)
    return path


def run_folder(folder: Path, rows: int) -> Path:
    unc = ["softmax", "ensemble", "tta", "ssn"]
    models = rows // len(unc)
    rng = np.random.default_rng(2)
    versions = []
    for m in range(models):
        for s in range(2):
            out = f"m{m}/s{s}"
            tree = {"mean": {u: {"metrics": {"auroc": float(rng.uniform(0.5, 1)), "aurc": float(rng.uniform(0, 0.3))}}
                             for u in unc}}
            (folder / "run" / out).mkdir(parents=True, exist_ok=True)
            (folder / "run" / out / "ood.json").write_text(json.dumps(tree), encoding="utf-8")
            versions.append({"pred_model": f"model_{m:05d}", "params": {"seed": s}, "unc_types": unc,
                             "aggregations": [], "output_dir": out})
    manifest = {"versions": versions, "tasks": {"ood": {
        "file_name": "ood.json", "datasets": ["test"], "combine_splits": True,
        "metrics": [{"name": "auroc", "higher_is_better": True, "levels": ["unc_type"]},
                    {"name": "aurc", "higher_is_better": False, "levels": ["unc_type"]}]}}}
    (folder / "run" / "assay-results.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder / "run"


def plotly_peer(report, path: Path) -> Path:
    """The report's charts as plotly.py's own self-contained page (one figure per chart)."""
    import plotly.graph_objects as go
    import plotly.io as pio

    parts = []
    for i, sec in enumerate(s for s in report.sections if s.to_json()["type"] == "chart"):
        fig = go.Figure([go.Scatter(x=list(s.x), y=list(s.y), name=s.name, mode="lines") for s in sec.series])
        parts.append(pio.to_html(fig, include_plotlyjs=(i == 0), full_html=False, div_id=f"peer{i}"))
    # plotly.py's page draws each figure from an inline script as it is parsed; ready when the frame after the
    # load event is rendered (its figures' plotly_afterplot events have fired by then), as our page
    script = f"<script>window.addEventListener('load', () => {AFTER_NEXT_FRAME});</script>"
    path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>" + "".join(parts) + script
                    + "</body></html>", encoding="utf-8")
    return path


def table_peer(report, path: Path) -> Path:
    """The report's tables as static HTML written by Python (no script)."""
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"]
    for sec in report.sections:
        d = sec.to_json()
        if d["type"] != "table":
            continue
        out.append("<table><thead><tr>" + "".join(f"<th>{html.escape(c['label'])}</th>" for c in d["columns"])
                   + "</tr></thead><tbody>")
        for row in d["rows"]:
            cells = []
            for v in row:
                if isinstance(v, list):
                    v = f"{v[0]:.4f} ± {v[1]:.4f}" if len(v) == 2 else f"{v[0]:.4f} [{v[1]:.4f}, {v[2]:.4f}]"
                cells.append(f"<td>{html.escape(str(v))}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table>")
    out.append(f"<script>document.addEventListener('DOMContentLoaded', () => {AFTER_NEXT_FRAME});</script>"
               "</body></html>")
    path.write_text("".join(out), encoding="utf-8")
    return path


def library_page(js: str, path: Path) -> Path:
    """A page holding only ``js`` (ready when the script after it runs)."""
    path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body><script>" + js + "</script>"
                    f"<script>{AFTER_NEXT_FRAME}</script></body></html>", encoding="utf-8")
    return path


def page_at(ref: str, report, path: Path, folder: Path) -> Path:
    """``report`` written by assay-report's page module and assets as they were at git commit ``ref``."""
    src = "plugins/assay-report/src/assay_report"
    old = folder / f"page-{ref}"
    (old / "assets").mkdir(parents=True, exist_ok=True)
    for name in ("page.py", "assets/report.js", "assets/report.css"):
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{src}/{name}"], check=True,
                              capture_output=True, text=True).stdout
        (old / name).write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"assay_report_page_{ref}", old / "page.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its ASSETS is the folder beside it
    return module.write(report, path)


def load_rounds(browser, pages: dict[str, Path], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Each page opened ``repeats`` times, in interleaved rounds: wall seconds until ready, main-thread CPU s."""
    out: dict[str, dict[str, list[float]]] = {k: {"wall": [], "drawn": [], "cpu": []} for k in pages}
    for _ in range(repeats):
        for key, path in pages.items():
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            page.goto(path.resolve().as_uri(), timeout=120_000)
            page.wait_for_selector("body[data-ready='1']", state="attached", timeout=120_000)
            out[key]["wall"].append(page.evaluate("() => window.assayReadyMs") / 1000)
            out[key]["drawn"].append(page.evaluate("() => window.assayDrawnMs ?? NaN") / 1000)
            metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            out[key]["cpu"].append(metrics.get("ThreadTime", float("nan")))
            page.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--estimators", type=int, default=50)
    parser.add_argument("--ue-metrics", type=int, default=20)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run, not figures")
    parser.add_argument("--only", choices=("grid", "rows"), help="measure one page only")
    parser.add_argument("--against", metavar="REF", help="also the page as written at git commit REF (the before)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.estimators, args.ue_metrics, args.rows, args.repeats = 200, 10, 5, 1000, 2
    from playwright.sync_api import sync_playwright

    results = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        folder = Path(tmp)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        cases = {}
        if args.only in (None, "grid"):
            cases["grid"] = grid_manager(folder, args.examples, args.estimators, args.ue_metrics)
        if args.only in (None, "rows"):
            cases["rows"] = run_folder(folder, args.rows)
        for name, source in cases.items():
            vega_js()  # built (or read from its cache folder) once, before the clock starts
            start = time.perf_counter()
            report = build_report([source])  # the grid's manager has no intervals: the best marked, no tests
            page = write(report, folder / f"{name}.html")
            built = time.perf_counter() - start
            pages = {"assay report": page}
            if args.against:
                pages[f"at {args.against}"] = page_at(args.against, report, folder / f"{name}-before.html", folder)
            if name == "grid":
                import plotly

                pages["plotly.io.to_html"] = plotly_peer(report, folder / "grid-peer.html")
                plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
                pages["Vega bundle alone"] = library_page(vega_js(), folder / "vega-alone.html")
                pages["plotly.min.js alone"] = library_page(plotly_js.read_text(encoding="utf-8"),
                                                            folder / "plotly-alone.html")
            else:
                pages["static HTML table"] = table_peer(report, folder / "rows-peer.html")
            times = load_rounds(browser, pages, args.repeats)
            results[name] = {"build_s": built, "pages": {
                key: {"bytes": path.stat().st_size, "load_s": statistics.median(times[key]["wall"]),
                      "drawn_s": statistics.median(times[key]["drawn"]),
                      "cpu_s": statistics.median(times[key]["cpu"]), "load_all_s": times[key]["wall"]}
                for key, path in pages.items()}}
        browser.close()
    load = os.getloadavg()
    print(f"\nmedian of {args.repeats} interleaved rounds; load average {load[0]:.1f} / {load[1]:.1f} (1 / 5 min)")
    for name, r in results.items():
        ours = r["pages"]["assay report"]
        print(f"\n{name}: built in {r['build_s']:.2f} s")
        print(f"  {'page':<22} {'size':>9} {'load':>8} {'ratio':>6} {'script done':>12} {'main-thread CPU':>16}")
        for key, m in r["pages"].items():
            print(f"  {key:<22} {m['bytes'] / 1e6:>7.2f}MB {m['load_s']:>7.3f}s {m['load_s'] / ours['load_s']:>5.2f}x "
                  f"{m['drawn_s']:>11.3f}s {m['cpu_s']:>15.3f}s")
    met = {n: r["pages"]["assay report"]["load_s"] < 2 and r["pages"]["assay report"]["bytes"] < 10e6
           for n, r in results.items()}
    print("targets: load < 2 s, size < 10 MB: "
          + ", ".join(f"{n} {'met' if ok else 'MISSED'}" for n, ok in met.items()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
