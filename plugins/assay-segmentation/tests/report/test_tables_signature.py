"""The run's signature under every table (Markdown, LaTeX, HTML) and plot; result files carrying it still aggregate."""

from __future__ import annotations

import json

import pytest

from assay.cli import main
from assay.errors import ResultFileError
from assay_segmentation.downstream import write_json_atomic
from assay_segmentation.report import load_results, render_table

SIG = "tasks:segmentation_performance|aggregations:image_mean|assay:0.1.0|plugins:assay-segmentation=0.1.0"
DICE = {1: 0.5, 2: 0.7}


def make(tmp_path, manifest_signature=SIG):
    versions = []
    for seed in (1, 2):
        rel = f"A/seed{seed}"
        versions.append({"pred_model": "A", "params": {"pred_model": "A", "seed": seed}, "version_name": f"seed{seed}",
                         "unc_types": ["u"], "aggregations": {"m": "image_mean"}, "output_dir": rel})
        # the top-level "signature" key sits beside the image ids and "mean": readers must skip it
        write_json_atomic(tmp_path / rel / "id" / "seg.json", {"img": {"metrics": {"dice": 0.0}},
                                                               "mean": {"metrics": {"dice": DICE[seed]}},
                                                               "signature": SIG})
    tasks = {"segmentation_performance": {"function": "segmentation_performance", "file_name": "seg.json",
                                          "datasets": ["id"], "combine_splits": False,
                                          "metrics": [{"name": "dice", "higher_is_better": True, "levels": []}]}}
    manifest = {"versions": versions, "tasks": tasks}
    if manifest_signature is not None:
        manifest["signature"] = manifest_signature
    write_json_atomic(tmp_path / "assay-results.json", manifest)
    return tmp_path


def test_tables_aggregate_and_carry_the_signature_in_every_format(tmp_path):
    table = load_results(make(tmp_path))
    assert table.signature == SIG
    (column,) = table.columns
    assert table.mean(table.rows[0], column) == pytest.approx(0.6)  # (0.5 + 0.7) / 2: the key is not a value
    md = render_table(table, "markdown")
    assert md.rstrip("\n").splitlines()[-1] == f"Signature: `{SIG}`"
    tex = render_table(table, "latex")
    lines = tex.splitlines()
    assert f"% assay signature: {SIG}" in lines
    assert lines.index(f"% assay signature: {SIG}") == lines.index(r"\end{table}") - 1  # under the table
    assert SIG.replace("_", r"\_") not in tex  # a comment, not typeset text
    html = render_table(table, "html")
    assert f'<p class="assay-signature"><small>Signature: <code>{SIG}</code></small></p>' in html
    assert html.index("assay-signature") > html.index("</table>")
    # kept when columns or rows are selected
    assert table.select_metrics(["dice"]).filter_rows({"unc_type": ["x"]}).signature == SIG


def test_html_escapes_the_signature(tmp_path):
    table = load_results(make(tmp_path, manifest_signature="metrics:x[s='<b>']|assay:1"))
    assert "<code>metrics:x[s=&#x27;&lt;b&gt;&#x27;]|assay:1</code>" in render_table(table, "html")


def test_results_written_before_the_signature_have_no_footer(tmp_path):
    table = load_results(make(tmp_path, manifest_signature=None))
    assert table.signature == ""
    assert "ignature" not in render_table(table, "markdown") + render_table(table, "latex") + \
        render_table(table, "html")


def test_a_signature_that_is_not_a_string_names_the_manifest(tmp_path):
    with pytest.raises(ResultFileError, match=r"assay-results\.json: signature: expected a signature string"):
        load_results(make(tmp_path, manifest_signature=["x"]))


@pytest.mark.parametrize("fmt", ["markdown", "latex", "html"])
def test_cli_table_prints_it(tmp_path, capsys, fmt):
    assert main(["table", str(make(tmp_path)), "--format", fmt]) == 0
    assert SIG in capsys.readouterr().out


def test_plots_carry_it_as_a_footer(tmp_path):
    import matplotlib  # the plot extra, installed by make test; a missing one must fail

    from assay_segmentation.report import bar_plot

    root = make(tmp_path / "r")
    # a second prediction model, so that the bars differ (a plot of one group has nothing to compare)
    manifest = json.loads((root / "assay-results.json").read_text(encoding="utf-8"))
    manifest["versions"].append({"pred_model": "B", "params": {"pred_model": "B", "seed": 1}, "version_name": "seed1",
                                 "unc_types": ["u"], "aggregations": {"m": "image_mean"}, "output_dir": "B/seed1"})
    write_json_atomic(root / "B/seed1/id/seg.json", {"mean": {"metrics": {"dice": 0.9}}})
    write_json_atomic(root / "assay-results.json", manifest)
    table = load_results(root)
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text in the SVG
        path = bar_plot(table, "pred_model", tmp_path / "p.svg")
    assert f"signature: {SIG}" in path.read_text(encoding="utf-8")
