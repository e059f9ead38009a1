"""``assay table`` and the metric summary draw through the one renderer (assay.render), keeping their content."""

from __future__ import annotations

import math

import pytest

from assay.metrics.results import format_table
from assay.render import Cell, Grid, render_grid, tex_escape
from assay_segmentation.report import load_results, render_table, to_grid


@pytest.fixture
def table(tmp_path):
    from assay_segmentation.downstream import write_json_atomic

    versions = []
    for pm, seed, value in (("A", 1, 0.5), ("A", 2, 0.7), ("B", 1, 0.9), ("B", 2, math.nan)):
        rel = f"{pm}/seed{seed}"
        versions.append({"pred_model": pm, "params": {"pred_model": pm, "seed": seed}, "version_name": f"seed{seed}",
                         "unc_types": ["u"], "aggregations": {"m": "image_mean"}, "output_dir": rel})
        write_json_atomic(tmp_path / rel / "id" / "seg.json", {"mean": {"metrics": {"dice": value}}})
    tasks = {"seg_perf": {"function": "segmentation_performance", "file_name": "seg.json", "datasets": ["id"],
                          "combine_splits": False,
                          "metrics": [{"name": "dice", "higher_is_better": True, "levels": []}]}}
    write_json_atomic(tmp_path / "assay-results.json", {"versions": versions, "tasks": tasks,
                                                         "signature": "metrics:dice|assay:1"})
    return load_results(tmp_path)


def test_every_format_is_the_grid_drawn_by_assay_render(table):
    grid = to_grid(table)
    assert grid.header == ("pred_model", "unc_type", "aggregation", "dice id ↑")
    assert grid.groups == (("", 3), ("seg_perf", 1))
    # A: (50, 70) -> 60.00 ± 14.14; B: one seed NaN -> 90.00 and the NaN count; B is best (bold, green)
    a, b = grid.rows
    assert a[3] == Cell("60.00 ± 14.14", bold=False, colour="F8696B")
    assert b[3] == Cell("90.00 (1 of 2 NaN)", bold=True, colour="63BE7B")
    md = render_table(table, "markdown")
    assert md.startswith(render_grid(to_grid(table, signature=False), "markdown").split("\n\n")[0])
    assert "| B | u | m | **90.00 (1 of 2 NaN)** |" in md
    tex = render_table(table, "latex")
    assert render_grid(to_grid(table, signature=False), "latex") in tex
    html = render_table(table, "html", standalone=False)
    assert html.startswith(render_grid(to_grid(table), "html").split("</table>")[0])


def test_the_content_survives_in_every_format(table):
    md, tex, html = (render_table(table, f) for f in ("markdown", "latex", "html"))
    for out in (md, tex, html):
        assert "ignature" in out and "metrics:dice" in out
    assert "Mean ± std over seeds, x100" in md
    assert r"\cellcolor[HTML]{63BE7B}\textbf{90.00 (1 of 2 NaN)}" in tex
    assert r"60.00 $\pm$ 14.14" in tex and r"dice id $\uparrow$" in tex
    assert r"\cmidrule(lr){4-4}" in tex and r"\multicolumn{1}{c}{seg\_perf}" in tex
    assert "background:#63BE7B" in html and "<b>90.00 (1 of 2 NaN)</b>" in html
    assert '<th rowspan="2">aggregation</th><th colspan="1">seg_perf</th>' in html


def test_render_extensions_rowspan_cmidrule_and_symbols():
    g = Grid(header=("model", "prr", "aurc"), rows=(("a", "1", "2"),), groups=(("", 1), ("seq", 2)))
    html = render_grid(g, "html")
    assert '<tr><th rowspan="2">model</th><th colspan="2">seq</th></tr>' in html
    assert "<tr><th>prr</th><th>aurc</th></tr>" in html
    tex = render_grid(g, "latex").splitlines()
    assert tex[2] == r" & \multicolumn{2}{c}{seq} \\" and tex[3] == r"\cmidrule(lr){2-3}"
    assert tex_escape("1 ± 2 × 3 ↑ ↓ –") == r"1 $\pm$ 2 $\times$ 3 $\uparrow$ $\downarrow$ --"


def test_metric_summary_table_is_drawn_by_the_text_renderer():
    g = {"score": 0.5, "score_name": "acc", "acc": 0.5, "acc_ci_low": 0.25, "acc_ci_high": 0.75,
         "f1": math.nan, "num_of_instances": 4}
    assert format_table(g).splitlines() == [
        "score  value   confidence interval",
        "-----  ------  -------------------",
        "acc    0.5000  [0.2500, 0.7500]",
        "f1     nan",
        "",
        "(4 instances; main score: acc)",
    ]
