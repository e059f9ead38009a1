"""ValUES' table configs on a ValUES-shaped result tree: values as ValUES computes them, colours as pandas'
Styler gives them, LaTeX that compiles (pdflatex), intervals and marks, and errors that name the key path.

Expected values come from an independent pandas computation written here the way ValUES'
``ds_task_table.py`` does it (group the seeds, ``np.mean`` / ``np.std(ddof=1)`` of each file's
``"mean"`` entry, x100), reading the JSON files with :mod:`json`. (Run by hand on the same
trees, ValUES' own ``DsTaskTable.create()`` gave the same 728 + 728 cells for the LIDC and GTA
configs.)
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from assay_values_tree import CONFIGS, values_checkout, values_table, write_tree
from latex_check import compile_latex

from assay.cli import main
from assay.errors import ConfigError, MissingResultError, ResultFileError
from assay_segmentation.report import Column, ResultTable, render_table
from assay_segmentation.report.intervals import bootstrap_table
from assay_segmentation.report.tables import values_scale
from assay_segmentation.report.values_config import load_table_config
from assay_segmentation.report.values_results import load_values_results

TABLE = CONFIGS / "table_config_lidc.yaml"


@pytest.fixture(scope="module")
def lidc(tmp_path_factory):
    base = tmp_path_factory.mktemp("lidc")
    write_tree(base, "lidc", n_images=5, seed=3)
    return base


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A ValUES checkout's config layout: evaluation/configs (the published files) beside the
    uncertainty_modeling/configs files that datasets/gta.yaml names (stubs)."""
    return values_checkout(tmp_path_factory.mktemp("values"))


def _close(a, b):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 * max(1.0, abs(b))


def test_lidc_table_equals_values_computation(lidc):
    table = load_values_results(load_table_config(TABLE, [f"base_path={lidc}"]))
    assert table.index_names == ("shift", "pred_model", "unc_measure", "unc_type", "aggregation")
    assert table.blocks_by == "shift"
    assert [c.label for c in table.columns] == ["dice id", "dice ood", "auroc", "aurc id", "aurc ood", "eaurc id",
                                                "eaurc ood", "al_improvement ood", "ace id", "ace ood", "ncc id",
                                                "ncc ood", "ged id", "ged ood"]
    # 2 shifts x (Softmax 1x2 + 4 models x 3x2) rows
    assert len(table.rows) == 2 * (2 + 4 * 6)
    expected = values_table(lidc, "lidc", "shift")
    seen = 0
    for row in table.rows:
        key = (row[0], row[1], row[3], row[4])
        for col in table.columns:
            want = expected.get((key, (col.task, col.label)))
            if want is None:  # ValUES' AL improvement has no aleatoric entry: an empty (grey) cell
                assert col.metric == "al_improvement" and row[3] == "aleatoric_uncertainty"
                assert math.isnan(table.mean(row, col)) and table.cell(row, col) == ()
                continue
            assert _close(table.mean(row, col) * 100, want[0]) and _close(table.std(row, col) * 100, want[1])
            seen += 1
    assert seen == len(table.rows) * len(table.columns) - 2 * 4 * 2  # aleatoric x 2 aggregations x 4 models x 2
    # the ValUES measure names: Softmax MSR; SSN aleatoric MI, epistemic EE; others the other way round
    measures = {(r[1], r[3]): r[2] for r in table.rows}
    assert measures[("Softmax", "predictive_uncertainty")] == "MSR"
    assert measures[("SSN", "aleatoric_uncertainty")] == "MI" and measures[("SSN", "epistemic_uncertainty")] == "EE"
    assert measures[("TTA", "aleatoric_uncertainty")] == "EE" and measures[("TTA", "epistemic_uncertainty")] == "MI"
    assert any("al_improvement" in n and "aleatoric_uncertainty" in n for n in table.notes)


def test_gta_table_through_a_values_checkout_equals_values_computation(tmp_path, checkout):
    write_tree(tmp_path, "gta", n_images=4, seed=5, three_d=False)
    table = load_values_results(load_table_config(checkout / "table_config_gta.yaml", [f"base_path={tmp_path}"]))
    assert table.index_names == ("pred_model", "unc_measure", "unc_type", "aggregation")
    assert "Dropout" in {r[0] for r in table.rows} and "Dropout-Final" not in {r[0] for r in table.rows}
    expected = values_table(tmp_path, "gta")
    for row in table.rows:
        for col in table.columns:
            want = expected.get(((row[0], row[2], row[3]), (col.task, col.label)))
            if want is not None:
                assert _close(table.mean(row, col) * 100, want[0]) and _close(table.std(row, col) * 100, want[1])


def test_published_gta_config_names_what_is_missing_outside_the_config_folder():
    with pytest.raises(ConfigError, match=r"uncertainty_modeling.*hydra\.searchpath"):
        load_table_config(CONFIGS / "table_config_gta.yaml", ["base_path=/nowhere"])


@pytest.mark.parametrize("higher", [True, False])
def test_values_colours_equal_pandas_background_gradient(higher):
    rng = np.random.default_rng(7)
    values = list(rng.uniform(0, 100, 40)) + [math.nan, 55.0, 55.0]
    gmap = [-v if higher else v for v in values]  # ValUES: higher is better -> the gradient of the negated values
    styler = pd.DataFrame({"c": values}).style.background_gradient(cmap="YlOrRd", gmap=gmap, subset=["c"], axis=0)
    styler._compute()
    ours = values_scale(values, higher_is_better=higher)
    for i, (bg, fg) in enumerate(ours):
        css = dict(styler.ctx[(i, 0)])
        if math.isnan(values[i]):
            assert (bg, fg) == ("D3D3D3", None)  # ValUES replaces pandas' black NaN cell by grey
            continue
        assert bg == css["background-color"].lstrip("#").upper()
        assert fg == css["color"].lstrip("#").upper()
    assert values_scale([3.0, 3.0], higher_is_better=True) == [("FFFFCC", "000000")] * 2


def _tabular_rows(tex):
    body = tex.split("\\midrule\n", 1)[1].split("\\bottomrule")[0]
    return [r for r in body.split(" \\\\\n") if r.strip() and r.strip() != "\\midrule"]


def test_latex_compiles_and_colours_each_split_block(lidc, tmp_path):
    table = load_values_results(load_table_config(TABLE, [f"base_path={lidc}"]))
    tex = render_table(table, "latex", palette="values", intervals=bootstrap_table(table, n_resamples=200),
                       standalone=True)
    compile_latex(tex, tmp_path)  # pdflatex: one page, no error, nothing undefined or missing
    assert tex.count("{") == tex.count("}")
    for env in ("document", "table", "tabular"):
        assert tex.count(f"\\begin{{{env}}}") == tex.count(f"\\end{{{env}}}") == 1
    ncols = len(re.search(r"\\begin\{tabular\}\{([lr]+)\}", tex).group(1))
    assert ncols == 5 + 14
    rows = [r.replace("\\midrule\n", "") for r in _tabular_rows(tex)]
    assert len(rows) == len(table.rows)
    for r in rows:
        assert r.count(" & ") == ncols - 1 and not re.search(r"(?<!\\)[_%#]", r)
    assert "\\usepackage[table]{xcolor}" in tex and "\\usepackage{booktabs}" in tex
    # each shift is coloured on its own: the best cell of a column is light yellow in both blocks
    col = next(c for c in table.columns if c.label == "auroc")
    for shift in ("texture", "malignancy"):
        block = [r for r in table.rows if r[0] == shift]
        best = max(block, key=lambda r: table.mean(r, col))
        i = table.rows.index(best)
        cell = rows[i].split(" & ")[5 + table.columns.index(col)]
        assert cell.startswith("\\cellcolor[HTML]{FFFFCC}\\color[HTML]{000000}")
    # the empty AL cells are grey without text
    assert "\\cellcolor[HTML]{D3D3D3}--" in tex


def test_intervals_for_per_image_metrics_only_and_they_contain_the_value(lidc):
    table = load_values_results(load_table_config(TABLE, [f"base_path={lidc}"]))
    iv = bootstrap_table(table, n_resamples=300, seed=1)
    with_iv = {c.metric for (_, c) in iv.bounds}
    assert with_iv == {"dice", "ace", "ncc", "ged"}  # files with per-image entries; not auroc, aurc, AL
    for (row, col), (low, high) in iv.bounds.items():
        assert low <= table.mean(row, col) <= high
    md = render_table(table, "markdown", palette="values", intervals=iv)
    assert "bootstrap interval over the test images" in md


def test_bootstrap_interval_and_marks_by_hand():
    """Two images with Poisson(1) weights: a resample (that drew an image) holds only x with probability
    e^-1 (1 - e^-1) / (1 - e^-2) = 0.27, only y likewise, so the 95 % percentile interval is [0.4, 0.6], the
    values of the two images; a row better on every image is significantly better; a row better on one image and
    worse on the other is not."""
    col = Column("seg", "dice", "id", True)
    rows = [("A",), ("B",), ("C",)]
    cases = {("A",): ({"x": 0.4, "y": 0.6}, {"x": 0.4, "y": 0.6}),  # two seeds, the same images
             ("B",): ({"x": 0.6, "y": 0.8}, {"x": 0.6, "y": 0.8}),
             ("C",): ({"x": 0.9, "y": 0.5}, {"x": 0.9, "y": 0.5})}
    table = ResultTable(("pred_model",), tuple(rows), (col,),
                        {(r, col): (sum(c[0].values()) / 2,) * 2 for r, c in cases.items()},
                        cases={(r, col): c for r, c in cases.items()})
    iv = bootstrap_table(table, n_resamples=2000, seed=0)
    assert iv.interval(("A",), col) == pytest.approx((0.4, 0.6))
    assert iv.interval(("B",), col) == pytest.approx((0.6, 0.8))
    assert iv.not_worse[col] == {("B",), ("C",)}  # B best (0.7); C (0.7 too, noisy) not worse; A worse everywhere
    grid_md = render_table(table, "markdown", intervals=iv)
    assert "| A | 50.00 ± 0.00 [40.00, 60.00] |" in grid_md and "| B | **70.00 ± 0.00 [60.00, 80.00]** |" in grid_md


def test_seeds_on_different_images_get_no_interval():
    col = Column("seg", "dice", "id", True)
    table = ResultTable(("pred_model",), (("A",),), (col,), {(("A",), col): (0.5, 0.5)},
                        cases={(("A",), col): ({"x": 0.4, "y": 0.6}, {"x": 0.4, "z": 0.6})})
    assert bootstrap_table(table, n_resamples=10).bounds == {}


def test_missing_file_is_an_error_naming_it_unless_allowed(tmp_path):
    write_tree(tmp_path, "lidc", n_images=3)
    gone = next(tmp_path.rglob("SSN/test_results/texture_fold0_rank5_seed124/ood/calibration.json"))
    gone.unlink()
    cfg = load_table_config(TABLE, [f"base_path={tmp_path}"])
    with pytest.raises(MissingResultError, match=re.escape(str(gone))):
        load_values_results(cfg)
    table = load_values_results(cfg, allow_missing=True)
    assert "n/a (1 of 3 missing)" in render_table(table, "markdown")


def test_an_entry_missing_in_some_seeds_only_is_an_error(tmp_path):
    write_tree(tmp_path, "lidc", n_images=3)
    path = next(tmp_path.rglob("Dropout/test_results/malignancy_fold0_seed125/id/failure_detection.json"))
    tree = json.loads(path.read_text())
    del tree["mean"]["epistemic_uncertainty"]
    path.write_text(json.dumps(tree))
    with pytest.raises(ResultFileError, match=r"failure_detection\.json: mean\.epistemic_uncertainty: expected an "
                                              r"entry"):
        load_values_results(load_table_config(TABLE, [f"base_path={tmp_path}"]))


def test_values_nan_literals_are_read(tmp_path):
    """ValUES writes NaN with Python's json (a bare NaN literal): the cell becomes NaN, not an error."""
    write_tree(tmp_path, "lidc", n_images=3)
    path = next(tmp_path.rglob("TTA/test_results/texture_fold0_seed123/id/ambiguity_modeling.json"))
    tree = json.loads(path.read_text())
    tree["mean"]["predictive_uncertainty"]["metrics"]["ncc"] = float("nan")
    path.write_text(json.dumps(tree))
    table = load_values_results(load_table_config(TABLE, [f"base_path={tmp_path}"]))
    col = next(c for c in table.columns if c.label == "ncc id")
    row = next(r for r in table.rows if r[:2] == ("texture", "TTA") and r[3] == "predictive_uncertainty")
    assert math.isnan(table.cell(row, col)[0])
    assert "(1 of 3 NaN)" in render_table(table, "markdown")


def test_cli_table_on_the_values_config(lidc, tmp_path, capsys):
    out = tmp_path / "t.tex"
    assert main(["table", str(TABLE), f"base_path={lidc}", "-f", "latex", "--standalone", "--n-resamples", "100",
                 "-o", str(out)]) == 0
    tex = out.read_text()
    assert "\\cellcolor[HTML]{FFFFCC}" in tex and "Colours as in ValUES" in tex
    capsys.readouterr()
    assert main(["table", str(TABLE), f"base_path={lidc}", "--tasks", "calibration", "--json",
                 "--n-resamples", "50"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["metric"] for c in data["columns"]] == ["ace", "ace"] and data["intervals"]["n_resamples"] == 50
    assert all("interval" in cell for cell in data["cells"])
    assert main(["table", str(TABLE), f"base_path={lidc}", "--tasks", "calibraton"]) == 2
    assert "Did you mean 'calibration'?" in capsys.readouterr().err
    assert main(["table", str(TABLE), f"base_pth={lidc}"]) == 2
    assert "base_pth" in capsys.readouterr().err


def test_overrides_need_a_values_config(lidc, capsys):
    assert main(["table", str(lidc), "base_path=/x"]) == 2
    assert "overrides apply to a ValUES table config" in capsys.readouterr().err


def _assay_results(root, per_image_mean_ok=True):
    """An 'assay run' output by hand: models A and B, seeds 1 and 2, per-image Dice on images i0, i1."""
    from assay_segmentation.downstream import write_json_atomic

    dice = {("A", 1): (0.4, 0.6), ("A", 2): (0.5, 0.7), ("B", 1): (0.8, 0.9), ("B", 2): (0.7, 0.9)}
    versions = []
    for (pm, seed), (x, y) in dice.items():
        rel = f"{pm}/seed{seed}"
        versions.append({"pred_model": pm, "params": {"pred_model": pm, "seed": seed}, "version_name": f"seed{seed}",
                         "unc_types": ["u"], "aggregations": {"m": "image_mean"}, "output_dir": rel})
        mean = (x + y) / 2 if per_image_mean_ok else 0.99
        write_json_atomic(root / rel / "id" / "seg.json", {"i0": {"metrics": {"dice": x}},
                                                          "i1": {"metrics": {"dice": y}},
                                                          "mean": {"metrics": {"dice": mean}}, "signature": "s"})
    tasks = {"seg": {"function": "segmentation_performance", "file_name": "seg.json", "datasets": ["id"],
                     "combine_splits": False,
                     "metrics": [{"name": "dice", "higher_is_better": True, "levels": [], "per_image": True}]}}
    write_json_atomic(root / "assay-results.json", {"versions": versions, "tasks": tasks})
    return root


def test_assay_results_get_intervals_from_their_per_image_entries(tmp_path, capsys):
    from assay_segmentation.report import load_results

    table = load_results(_assay_results(tmp_path / "ok"))
    col = table.columns[0]
    # per-image seed means: A (0.45, 0.65), B (0.75, 0.9); two images -> interval = [min, max] of the image means
    iv = bootstrap_table(table, n_resamples=2000)
    assert iv.interval(("A", "u", "m"), col) == pytest.approx((0.45, 0.65))
    assert iv.interval(("B", "u", "m"), col) == pytest.approx((0.75, 0.9))
    assert iv.not_worse[col] == {("B", "u", "m")}
    assert main(["table", str(tmp_path / "ok")]) == 0
    out = capsys.readouterr().out
    assert "| B | u | m | **82.50 ± 3.54 [75.00, 90.00]** |" in out
    assert main(["table", str(tmp_path / "ok"), "--n-resamples", "0"]) == 0
    assert "[" not in capsys.readouterr().out.split("\n\n")[0]
    # a file whose mean is not the mean of its images: no interval rather than the interval of another number
    assert load_results(_assay_results(tmp_path / "off", per_image_mean_ok=False)).cases == {}


def test_table_intervals_come_from_assay_s_one_resampling_engine():
    """issue 23: the tables resample through the engine of assay.evaluate: the interval of a column of per-image
    values equals assay.evaluate's interval of the mean of the same values (mae against 0, values >= 0), seed
    and resample count alike."""
    import warnings

    import assay

    rng = np.random.default_rng(5)
    values = rng.uniform(0.2, 0.9, 600)
    ids = [f"img{i:03d}" for i in range(600)]  # in order of id, as the table resamples them
    col = Column("seg", "dice", "id", True)
    case = {i: float(v) for i, v in zip(ids, values)}
    table = ResultTable(("pred_model",), (("A",),), (col,), {(("A",), col): (float(values.mean()),)},
                        cases={(("A",), col): (case,)})
    iv = bootstrap_table(table, n_resamples=500, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = assay.evaluate([float(v) for v in values], [[0.0]] * 600, metrics=["mae"], n_resamples=500, seed=7)
    g = ev.global_scores if hasattr(ev, "global_scores") else ev[0]["score"]["global"]
    assert iv.interval(("A",), col) == pytest.approx((g["mae_ci_low"], g["mae_ci_high"]), rel=1e-12)
