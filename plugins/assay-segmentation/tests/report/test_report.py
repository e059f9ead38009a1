"""Tables and bar plots from a hand-written results folder: means / stds, colours, orientation, options."""

from __future__ import annotations

import math
import sys

import pytest
from latex_check import compile_latex

from assay.errors import InvalidParameterError, MissingDependencyError
from assay_segmentation.downstream import write_json_atomic
from assay_segmentation.report import bar_data, bar_plot, colour_scale, load_results, render_table

# dice (per model, split id) and auroc (per model x unc x agg, combined splits), two models x two seeds
DICE = {("A", 1): 0.5, ("A", 2): 0.7, ("B", 1): 0.9, ("B", 2): 0.9}
AUROC = {("A", 1, "u", "m"): 0.6, ("A", 2, "u", "m"): 0.8, ("B", 1, "u", "m"): 0.9, ("B", 2, "u", "m"): 0.7,
         ("B", 1, "v", "m"): 0.4, ("B", 2, "v", "m"): 0.4}
AURC = {("A", 1, "u", "m"): 0.3, ("A", 2, "u", "m"): 0.3, ("B", 1, "u", "m"): 0.1, ("B", 2, "u", "m"): 0.1,
        ("B", 1, "v", "m"): 0.2, ("B", 2, "v", "m"): 0.2}


@pytest.fixture
def results(tmp_path):
    versions = []
    for pm, uncs in (("A", ["u"]), ("B", ["u", "v"])):
        for seed in (1, 2):
            rel = f"{pm}/seed{seed}"
            versions.append({"pred_model": pm, "params": {"pred_model": pm, "seed": seed},
                             "version_name": f"seed{seed}", "unc_types": uncs, "aggregations": {"m": "image_mean"},
                             "output_dir": rel})
            write_json_atomic(tmp_path / rel / "id" / "seg.json",
                              {"img": {"metrics": {"dice": 0.0}}, "mean": {"metrics": {"dice": DICE[(pm, seed)]}}})
            write_json_atomic(tmp_path / rel / "ood.json", {"mean": {u: {"m": {"metrics": {
                "auroc": AUROC[(pm, seed, u, "m")]}}} for u in uncs}})
            write_json_atomic(tmp_path / rel / "id" / "fd.json", {"mean": {u: {"m": {"metrics": {
                "aurc": AURC[(pm, seed, u, "m")]}}} for u in uncs}})
    tasks = {
        "segmentation_performance": {"function": "segmentation_performance", "file_name": "seg.json",
                                     "datasets": ["id"], "combine_splits": False,
                                     "metrics": [{"name": "dice", "higher_is_better": True, "levels": []}]},
        "ood_detection": {"function": "ood_detection", "file_name": "ood.json", "datasets": ["id", "ood"],
                          "combine_splits": True,
                          "metrics": [{"name": "auroc", "higher_is_better": True,
                                       "levels": ["unc_type", "aggregation"]}]},
        "failure_detection": {"function": "failure_detection", "file_name": "fd.json", "datasets": ["id"],
                              "combine_splits": False,
                              "metrics": [{"name": "aurc", "higher_is_better": False,
                                           "levels": ["unc_type", "aggregation"]}]},
    }
    write_json_atomic(tmp_path / "assay-results.json", {"versions": versions, "tasks": tasks})
    return tmp_path


def col(table, metric):
    return next(c for c in table.columns if c.metric == metric)


def test_load_results_mean_std_over_seeds(results):
    t = load_results(results)
    assert t.rows == (("A", "u", "m"), ("B", "u", "m"), ("B", "v", "m"))
    dice, auroc = col(t, "dice"), col(t, "auroc")
    assert dice.label == "dice id" and auroc.label == "auroc"  # combined splits have no split label
    assert t.mean(("A", "u", "m"), dice) == pytest.approx(0.6)
    assert t.std(("A", "u", "m"), dice) == pytest.approx(math.sqrt(0.02))  # ddof 1: (.01 + .01) / 1
    assert t.mean(("B", "v", "m"), dice) == pytest.approx(0.9)  # model-level metric fills every row
    assert t.mean(("B", "u", "m"), auroc) == pytest.approx(0.8)
    assert t.std(("B", "v", "m"), auroc) == pytest.approx(0.0)


def test_colour_scale_follows_orientation():
    assert colour_scale([0.1, 0.2, 0.3], higher_is_better=True) == ["F8696B", "FFEB84", "63BE7B"]
    assert colour_scale([0.1, 0.2, 0.3], higher_is_better=False) == ["63BE7B", "FFEB84", "F8696B"]
    assert colour_scale([0.5, math.nan], higher_is_better=True) == ["FFEB84", "D3D3D3"]


def test_markdown_bolds_best_per_column(results):
    md = render_table(load_results(results), "markdown")
    lines = md.splitlines()
    assert lines[0].startswith("| pred_model | unc_type | aggregation |")
    # A: dice 60.00 ± 14.14, auroc 70.00 ± 14.14, aurc 30.00 ± 0.00 (worst)
    assert lines[2] == "| A | u | m | 60.00 ± 14.14 | 70.00 ± 14.14 | 30.00 ± 0.00 |"
    # B/u: best dice (90), best auroc (80), best aurc (10, lower is better)
    assert lines[3] == "| B | u | m | **90.00 ± 0.00** | **80.00 ± 14.14** | **10.00 ± 0.00** |"
    assert lines[4] == "|  | v | m | **90.00 ± 0.00** | 40.00 ± 0.00 | 20.00 ± 0.00 |"


def test_latex_colours_and_escaping(results, tmp_path):
    tex = render_table(load_results(results), "latex", standalone=True)
    compile_latex(tex, tmp_path / "tex")
    assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    assert r"\usepackage[table]{xcolor}" in tex and r"\multicolumn{1}{c}{segmentation\_performance}" in tex
    row_b_u = next(line for line in tex.splitlines() if line.startswith("B & u"))
    # B/u is best in all three columns -> green everywhere (aurc is lower-is-better)
    assert row_b_u.count(r"\cellcolor[HTML]{63BE7B}") == 3
    row_a = next(line for line in tex.splitlines() if line.startswith("A & u"))
    assert row_a.count(r"\cellcolor[HTML]{F8696B}") == 2  # worst dice and worst aurc
    assert r"aurc id $\downarrow$" in tex and r"60.00 $\pm$ 14.14" in tex


def test_html_table(results):
    page = render_table(load_results(results), "html")
    assert page.startswith("<!DOCTYPE html>") and 'colspan="1">ood_detection' in page
    assert "background:#63BE7B" in page and "90.00 ± 0.00" in page


def test_unknown_format(results):
    with pytest.raises(InvalidParameterError, match="format"):
        render_table(load_results(results), "pdf")


def test_bar_data_centres_and_orients(results):
    t = load_results(results)
    data = bar_data(t, "pred_model")
    # dice row means .6, .9, .9 -> centre .8; A: -.2; B: +.1 (two rows, std 0)
    assert data[col(t, "dice")]["A"] == pytest.approx((-0.2, 0.0))
    assert data[col(t, "dice")]["B"] == pytest.approx((0.1, 0.0))
    # aurc row means .3, .1, .2 -> centre .2, negated: A -(.1) = -.1; B: +.1 and 0 -> mean .05, std sqrt(.005)
    assert data[col(t, "aurc")]["A"] == pytest.approx((-0.1, 0.0))
    assert data[col(t, "aurc")]["B"] == pytest.approx((0.05, math.sqrt(0.005)))


def test_bar_data_filter_and_ordering(results):
    t = load_results(results)
    data = bar_data(t, "unc_type", filter={"unc_type": {"pred_model": ["A"]}}, ordering={"unc_type": ["v", "u"]})
    auroc = data[col(t, "auroc")]
    assert list(auroc) == ["v", "u"]
    # without A: auroc means .8 (u), .4 (v): centre .6
    assert auroc["u"] == pytest.approx((0.2, 0.0)) and auroc["v"] == pytest.approx((-0.2, 0.0))
    flat = bar_data(t, "pred_model", filter={"unc_type": ["v"]})
    assert flat[col(t, "auroc")]["B"] == pytest.approx((0.05, 0.0))  # rows A .7, B/u .8: centre .75
    with pytest.raises(InvalidParameterError, match="along"):
        bar_data(t, "shift")


def test_bar_plot_writes_png(results, tmp_path):
    path = bar_plot(load_results(results), "pred_model", tmp_path / "p" / "bars.png",
                    coloring={"pred_model": {"A": "tab:cyan"}}, df_naming={"A": "Model A"})
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    assert matplotlib.image.imread(path).shape[2] in (3, 4)


def test_bar_plot_without_matplotlib(results, tmp_path, monkeypatch):
    # matplotlib is assay-segmentation's own dependency (not the core's 'plot' extra): the hint installs it
    from assay_segmentation.report.values_plots import _pyplot

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match="install it with: pip install matplotlib$") as caught:
        bar_plot(load_results(results), "pred_model", tmp_path / "x.png")
    assert "assay[" not in str(caught.value)
    with pytest.raises(MissingDependencyError, match="bar plots .* pip install matplotlib$"):
        _pyplot()  # the ValUES plot configs' figures


def test_missing_manifest(tmp_path):
    with pytest.raises(FileNotFoundError, match="assay-results.json"):
        load_results(tmp_path)


def test_readable_names_and_df_naming_first():
    from assay_segmentation.report.plots import readable

    assert readable("pred_model") == "Prediction model"
    assert readable("dice id") == "Dice ID" and readable("aurc ood") == "AURC OoD"
    assert readable("some_new_metric") == "Some new metric"  # never snake_case on a figure
    assert readable("pred_model", {"pred_model": "Network"}) == "Network"


def test_a_metric_equal_along_the_grouping_gets_no_panel(results):
    from assay_segmentation.report.plots import split_flat

    t = load_results(results)
    data = bar_data(t, "pred_model")
    # a column whose group means are all equal (one shifted copy of another's bars minus their mean)
    flat_col = col(t, "dice")
    data[flat_col] = {k: (0.0, sd) for k, (_, sd) in data[flat_col].items()}
    shown, flat = split_flat(data)
    assert flat == [flat_col] and flat_col not in shown and col(t, "aurc") in shown
    single = {col(t, "aurc"): {"A": (0.3, 0.0)}}  # one group: nothing to compare
    assert split_flat(single) == ({}, [col(t, "aurc")])


def test_nothing_varying_is_an_error_naming_the_metrics(results, tmp_path):
    t = load_results(results)
    with pytest.raises(InvalidParameterError, match="no metric varies along it"):
        bar_plot(t, "pred_model", tmp_path / "x.png", filter={"pred_model": ["B"]})
