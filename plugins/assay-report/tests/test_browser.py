"""The report as a reader sees it, in headless Chromium: cells, sorting, filtering, charts, hover.

Every page is opened through the ``open_report`` fixture, which fails the test on a console
error, an uncaught exception or a request for anything but a local (file/data) URL.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import assay
from assay.metrics.api import load_results
from assay.metrics.significance import format_p_value
from assay_report.page import write
from assay_report.sources import build_report


def _num(text: str) -> float:
    return float("nan") if text == "NaN" else float(text)


def _write(tmp_path, paths, name="report.html", **kw):
    return write(build_report(paths, **kw), tmp_path / name)


def test_every_cell_equals_the_results_file(tmp_path, evaluation_files, open_report, shot):
    page = _write(tmp_path, [evaluation_files[0]])
    o = open_report(page)
    saved = json.loads(evaluation_files[0].read_text(encoding="utf-8"))
    g = saved["global"]
    scores = o.cells(o.table_id("Scores of"))
    values = o.values(o.table_id("Scores of"))
    shown = {row[0]: row[1] for row in scores}
    assert set(shown) == {"accuracy", "f1"}
    for (name, text), (_, full) in zip(scores, values):
        v, lo, hi = (float(x) for x in full.split())
        assert (v, lo, hi) == (g[name], g[f"{name}_ci_low"], g[f"{name}_ci_high"])  # exact, full precision
        assert text == f"{g[name]:.4f} [{g[name + '_ci_low']:.4f}, {g[name + '_ci_high']:.4f}]"
    # the instances table: one row per instance, prediction, references and instance scores as saved
    inst = o.cells(o.table_id("Instances of"))
    assert len(inst) == len(saved["instances"])
    for row, d in zip(inst, saved["instances"]):
        refs = d["references"]
        assert row[1] == d["prediction"] and row[2] == (refs if isinstance(refs, str) else json.dumps(refs))
        assert _num(row[3]) == round(d["score"]["instance"]["accuracy"], 4)
    shot(o, "evaluation")


def test_two_systems_marks_the_best_and_those_not_significantly_worse(tmp_path, evaluation_files, open_report, shot):
    page = _write(tmp_path, list(evaluation_files), n_resamples=300, seed=5)
    o = open_report(page)
    table = o.table_id("Systems compared")
    marks = o.page.eval_on_selector(f"#{table}", "t => Array.from(t.querySelectorAll('tbody > tr')).map(r => "
                                                 "Array.from(r.cells).map(c => c.className))")
    a, b = (load_results(p) for p in evaluation_files)
    for col, score in ((1, "accuracy"), (2, "f1")):
        va, vb = a.global_scores[score], b.global_scores[score]
        best_row = 0 if va >= vb else 1
        other = 1 - best_row
        comp = assay.compare([a, b][best_row], [a, b][other], "accuracy" if score == "accuracy" else
                             "f1[average=macro]", score=score, n_resamples=300, seed=5)
        assert "best" in marks[best_row][col]
        assert ("tied" in marks[other][col]) == (comp.better != "a")
        assert "best" not in marks[other][col]
    # the paired-comparison table quotes the difference, its interval, the verdict and beside it the p-value of
    # the same test (the inversion of the interval), then the two other tests' p-values
    table = o.table_id("Paired comparisons with the best")
    rows = o.values(table)
    best_acc = 0 if a.global_scores["accuracy"] >= b.global_scores["accuracy"] else 1
    comp = assay.compare([a, b][best_acc], [a, b][1 - best_acc], "accuracy", score="accuracy", n_resamples=300,
                         seed=5)
    texts = o.cells(table)
    (i,) = [i for i, r in enumerate(texts) if r[0] == "accuracy"]
    acc_row = rows[i]
    diff, lo, hi = (float(x) for x in acc_row[3].split())
    assert diff == pytest.approx(comp.difference)
    assert float(acc_row[4]) == pytest.approx(comp.p_value_percentile)
    assert texts[i][5] == comp.verdict and f"p = {format_p_value(comp.p_value, 0.05)[0]} " in comp.verdict
    assert (float(acc_row[6]), float(acc_row[7])) == pytest.approx((comp.p_value_randomization,
                                                                    comp.p_value_bootstrap))
    shot(o, "two-systems")


def test_clicking_a_header_sorts_and_again_reverses(tmp_path, evaluation_files, open_report):
    o = open_report(_write(tmp_path, [evaluation_files[1]]))
    table = o.table_id("Instances of")
    before = o.cells(table)
    o.page.click(f"#{table} thead th:nth-child(2) button")  # prediction, text
    got = [r[1] for r in o.cells(table)]
    assert got == sorted(r[1] for r in before)
    assert o.page.get_attribute(f"#{table} thead th:nth-child(2)", "aria-sort") == "ascending"
    o.page.click(f"#{table} thead th:nth-child(4) button")  # accuracy, numeric
    o.page.click(f"#{table} thead th:nth-child(4) button")  # ... descending
    acc = [_num(r[3]) for r in o.cells(table)]
    assert acc == sorted(acc, reverse=True)
    assert o.page.get_attribute(f"#{table} thead th:nth-child(4)", "aria-sort") == "descending"
    # the keyboard sorts too: the header is a button; Enter on it sorts by '#' ascending again
    o.page.focus(f"#{table} thead th:nth-child(1) button")
    o.page.keyboard.press("Enter")
    assert [int(r[0]) for r in o.cells(table)] == list(range(len(before)))


def test_typing_in_the_filter_hides_the_other_rows(tmp_path, evaluation_files, open_report):
    o = open_report(_write(tmp_path, [evaluation_files[0]]))
    table = o.table_id("Instances of")
    all_rows = o.cells(table)
    section = o.page.locator("section.table-section", has=o.page.locator(f"#{table}"))
    section.locator("input.filter").fill("bird")
    shown = o.cells(table)
    expected = [r for r in all_rows if any("bird" in c.lower() for c in r)]
    assert shown == expected and 0 < len(shown) < len(all_rows)
    assert section.locator(".count").text_content() == f"showing {len(expected)} of {len(all_rows)} rows"
    section.locator("input.filter").fill("")
    assert len(o.cells(table)) == len(all_rows)


# What a chart draws, read from its Vega view (window.assayCharts[id]): the rows of its data set "rows"
# (the visible series' points, in series order) and the line marks in its scenegraph that hold points.
_CHARTS_JS = """ds => ds.map(d => {
  const view = window.assayCharts[d.id];
  const series = [];
  for (const r of view.data('rows')) {
    if (!series.length || series[series.length - 1].name !== r.n) series.push({name: r.n, x: [], y: []});
    series[series.length - 1].x.push(r.x); series[series.length - 1].y.push(r.y);
  }
  let drawn = 0;
  (function walk(mark) {
    if (mark.marktype === 'line' && mark.items.length) drawn++;
    for (const item of mark.items) for (const child of (item.items || [])) walk(child);
  })(view.scenegraph().root);
  return {title: d.parentElement.querySelector('h2').textContent, hidden: view.signal('hidden'),
          series: series.map(s => ({...s, n: s.x.length})), drawn};
})"""

# The page position of a scenegraph item: its bounds plus the offsets of the groups that hold it, plus the
# view's origin and padding, plus the canvas's place on the page.
_ITEM_POSITION_JS = """(item, view, canvas) => {
  let x = (item.bounds.x1 + item.bounds.x2) / 2, y = (item.bounds.y1 + item.bounds.y2) / 2;
  for (let g = item.mark.group; g; g = g.mark.group) { x += g.x || 0; y += g.y || 0; }
  const r = canvas.getBoundingClientRect(), o = view.origin(), p = view.padding();
  return [r.left + p.left + o[0] + x, r.top + p.top + o[1] + y];
}"""


def _charts(o):
    return o.page.eval_on_selector_all(".chart", _CHARTS_JS)


def test_uncertainty_charts_have_one_series_per_estimator_and_the_right_points(tmp_path, manager_dir, open_report,
                                                                              shot):
    o = open_report(_write(tmp_path, [manager_dir]))
    man = assay.UEManager.load(manager_dir)
    q = np.asarray(man.gen_metrics[("sequence", "accuracy")], float)
    charts = {c["title"].split(": ", 1)[1].split(",")[0]: c for c in _charts(o)}
    assert set(charts) == {"risk-coverage", "rejection curves", "reliability"}
    ests = man.estimator_names
    rc = charts["risk-coverage"]
    assert [s["name"] for s in rc["series"]] == [*ests, "oracle", "random"]
    assert rc["drawn"] == len(ests) + 2
    for s, est in zip(rc["series"], ests):
        u = np.asarray(man.estimations[("sequence", est)], float)
        assert s["n"] == len(np.unique(u))  # one point per tie group
        # the last point: full coverage, risk = 1 - mean quality (hand derivation)
        assert s["x"][-1] == 1.0 and s["y"][-1] == pytest.approx(1 - q.mean())
    rej = charts["rejection curves"]
    assert [s["name"] for s in rej["series"]] == [*ests, "oracle", "random"]
    assert rej["drawn"] == len(ests) + 2
    assert all(s["n"] == q.size for s in rej["series"][:-1])
    assert rej["series"][-1]["y"] == [pytest.approx(q.mean())] * 2
    rel = charts["reliability"]
    assert [s["name"] for s in rel["series"]] == [f"1 - {e}" for e in ests] + ["perfect calibration"]
    edges = np.linspace(0, 1, 16)
    for s, est in zip(rel["series"], ests):
        conf = 1 - np.asarray(man.estimations[("sequence", est)], float)
        bins = np.clip(np.digitize(conf, edges, right=True) - 1, 0, 14)  # (lo, hi] bins, 0.0 in the first
        assert s["n"] == len(np.unique(bins))  # one point per non-empty bin
        assert s["x"] == pytest.approx([conf[bins == b].mean() for b in np.unique(bins)])
    shot(o, "uncertainty")


def test_uncertainty_table_cells_equal_the_saved_manager(tmp_path, manager_dir, open_report):
    o = open_report(_write(tmp_path, [manager_dir]))
    man = assay.UEManager.load(manager_dir)
    table = o.table_id("ue-run: UE metrics")
    headers = o.page.eval_on_selector(f"#{table}", "t => Array.from(t.tHead.rows[0].cells).map(c => c.textContent)")
    ues = headers[1:]
    cells = o.cells(table)
    vals = o.values(table)
    for text_row, val_row in zip(cells, vals):
        est = text_row[0]
        for ue, text, full in zip(ues, text_row[1:], val_row[1:]):
            key = ("sequence", est, "accuracy", ue)
            v, lo, hi = (float(x) for x in full.split())
            assert v == man.metrics[key] and (lo, hi) == man.intervals[key]
            assert text.startswith(f"{man.metrics[key]:.4f} [")


def test_hovering_a_point_shows_its_values(tmp_path, manager_dir, open_report):
    o = open_report(_write(tmp_path, [manager_dir]))
    chart = o.page.locator(".chart").first
    chart.scroll_into_view_if_needed()
    # the pixel position of point 2 of series 0, from the chart's own scales
    x, y, want_x, want_y = o.page.evaluate(
        "() => { const d = document.querySelector('.chart'), view = window.assayCharts[d.id];"
        " const p = view.data('rows')[2], r = d.querySelector('canvas').getBoundingClientRect(), o = view.origin(),"
        " pad = view.padding();"
        " return [r.left + pad.left + o[0] + view.scale('x')(p.x), r.top + pad.top + o[1] + view.scale('y')(p.y),"
        " p.x, p.y]; }")
    o.page.mouse.move(x, y)
    label = o.page.wait_for_selector("#vg-tooltip-element.visible", timeout=15000).text_content()
    assert f"{want_x:.4f}" in label and f"{want_y:.4f}" in label and "est0" in label


def test_clicking_a_legend_entry_hides_its_series(tmp_path, manager_dir, open_report):
    o = open_report(_write(tmp_path, [manager_dir]))
    chart = o.page.locator(".chart").first
    chart.scroll_into_view_if_needed()
    assert _charts(o)[0]["drawn"] == 5  # 3 estimators, oracle, random

    def click_legend(name):
        x, y = o.page.evaluate(
            "name => { const d = document.querySelector('.chart'), view = window.assayCharts[d.id];"
            " let found = null;"
            " (function walk(mark) { if (mark.name === 'legend-label')"
            "   for (const item of mark.items) if (item.datum.value === name) found = item;"
            "   for (const item of mark.items) for (const child of (item.items || [])) walk(child); })"
            "(view.scenegraph().root);"
            f" return ({_ITEM_POSITION_JS})(found, view, d.querySelector('canvas')); }}", name)
        o.page.mouse.click(x, y)

    click_legend("est0")
    o.page.wait_for_function("() => { const d = document.querySelector('.chart');"
                             " return window.assayCharts[d.id].signal('hidden').join() === 'est0'; }", timeout=15000)
    first = _charts(o)[0]
    assert first["drawn"] == 4 and [s["name"] for s in first["series"]] == ["est1", "est2", "oracle", "random"]
    click_legend("est0")
    o.page.wait_for_function("() => { const d = document.querySelector('.chart');"
                             " return window.assayCharts[d.id].signal('hidden').length === 0; }", timeout=15000)
    assert _charts(o)[0]["drawn"] == 5


def test_comparison_parse_eval_and_run_pages(tmp_path, comparison_file, parse_eval_files, build, open_report, shot):
    comp = json.loads(comparison_file.read_text(encoding="utf-8"))
    o = open_report(_write(tmp_path, [comparison_file], name="c.html"))
    (row,) = o.values(o.table_id("Paired comparisons"))
    assert [float(x) for x in row[6].split()] == [comp["difference"], comp["ci_low"], comp["ci_high"]]
    assert float(row[7]) == comp["p_value_percentile"] == comp["p_value"]
    assert o.cells(o.table_id("Paired comparisons"))[0][8] == comp["verdict"]
    assert (float(row[9]), float(row[10])) == (comp["p_value_randomization"], comp["p_value_bootstrap"])

    o = open_report(_write(tmp_path, list(parse_eval_files), name="p.html"))
    table = o.table_id("Parsing systems compared")
    cells = o.cells(table)
    assert cells == [["parser-1.json", "0.9000", "0.8500"], ["parser-2.json", "0.9300", "0.8000"]]
    classes = o.page.eval_on_selector(f"#{table}", "t => Array.from(t.querySelectorAll('tbody > tr')).map(r => "
                                                   "Array.from(r.cells).map(c => c.classList.contains('best')))")
    assert classes == [[False, False, True], [False, True, False]]  # UAS: parser-2, LAS: parser-1

    run = build.run(tmp_path / "run", models=3, seeds=2, unc_types=["softmax"],
                    value=lambda m, s, unc, metric: (m + 1) / 10 + s / 100)
    o = open_report(_write(tmp_path, [run], name="r.html"))
    cells = o.cells(o.table_id("Results of"))
    assert [r[3] for r in cells] == ["0.1050 ± 0.0071", "0.2050 ± 0.0071", "0.3050 ± 0.0071"]
    shot(o, "run")


def test_ten_thousand_rows_filter_and_sort(tmp_path, build, open_report):
    run = build.run(tmp_path / "big", models=2500, seeds=1, unc_types=["a", "b", "c", "d"],
                    value=lambda m, s, unc, metric: math.sin(m * 7 + ord(unc)) / 2 + 0.5)
    o = open_report(_write(tmp_path, [run]))
    table = o.table_id("Results of")
    # the body comes in chunks of 200 rows that the browser may skip painting; every row is in the DOM
    assert o.page.eval_on_selector(f"#{table}", "t => [t.tBodies.length, t.querySelectorAll('tbody > tr').length]") \
        == [50, 10_000]
    section = o.page.locator("section.table-section", has=o.page.locator(f"#{table}"))
    section.locator("input.filter").fill("model2499")
    assert [r[0] for r in o.cells(table)] == ["model2499"] * 4
    # the shown rows go to the first chunk; the chunks left with none are hidden
    hidden = o.page.eval_on_selector(f"#{table}", "t => Array.from(t.tBodies).map(b => b.hidden)")
    assert hidden == [False] + [True] * 49
    section.locator("input.filter").fill("")
    assert len(o.cells(table)) == 10_000
    # sorting by a value column orders all 10,000 rows across the chunks, each chunk holding 200
    col = next(j for j, v in enumerate(o.values(table)[0]) if v is not None)  # the first value column
    o.page.click(f"#{table} thead th:nth-child({col + 1}) button")
    got = [float(r[col].split(" ")[0]) for r in o.values(table)]
    assert len(got) == 10_000 and got == sorted(got)
    assert o.page.eval_on_selector(f"#{table}", "t => Array.from(t.tBodies).map(b => b.rows.length)") == [200] * 50
    # the columns stay aligned: the cells of a row of the last chunk, scrolled into view, sit under the headers
    edges = o.page.eval_on_selector(f"#{table}", "t => { const last = t.tBodies[49].rows[199]; last.scrollIntoView();"
                                                 " const box = r => Array.from(r.cells).map(c => {"
                                                 " const b = c.getBoundingClientRect(); return [b.left, b.width]; });"
                                                 " return [box(t.tHead.rows[0]), box(last)]; }")
    assert edges[0] == edges[1]
