"""'assay report' on each kind of input, and its errors: one line naming the path, exit 2, no page."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assay.cli import main
from assay_report.sources import build_report, detect


def _report(args, capsys):
    code = main(["report", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_detect_tells_each_kind_by_its_format(evaluation_files, comparison_file, parse_eval_files, manager_dir,
                                              tmp_path, build):
    run = build.run(tmp_path / "run", models=2, seeds=2, unc_types=["softmax"])
    assert detect(evaluation_files[0])[0] == "evaluation"
    assert detect(comparison_file)[0] == "comparison"
    assert detect(parse_eval_files[0])[0] == "parse-eval"
    assert detect(manager_dir)[0] == "uemanager"
    assert detect(run)[0] == "run"


def test_one_page_from_every_kind_at_once(evaluation_files, comparison_file, parse_eval_files, manager_dir,
                                          tmp_path, build, capsys):
    run = build.run(tmp_path / "run", models=2, seeds=2, unc_types=["softmax"])
    out = tmp_path / "all.html"
    code, stdout, err = _report([*evaluation_files, comparison_file, *parse_eval_files, manager_dir, run,
                                 "-o", out, "--json", "--n-resamples", "50"], capsys)
    assert code == 0, err
    doc = json.loads(stdout)
    assert doc["output"] == str(out) and doc["bytes"] == out.stat().st_size
    assert [s["kind"] for s in doc["sources"]] == ["evaluation", "evaluation", "comparison", "parse-eval",
                                                   "parse-eval", "uemanager", "run"]
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert "default-src 'none'" in text  # the Content-Security-Policy that keeps the page off the network


def test_the_page_inlines_vega_when_it_has_charts_and_references_nothing_outside(evaluation_files, manager_dir,
                                                                                   tmp_path, capsys):
    from html.parser import HTMLParser

    from assay_report.page import vega_js

    class Urls(HTMLParser):  # the page's own elements (a script's text is not parsed as markup)
        def __init__(self):
            super().__init__()
            self.found = []

        def handle_starttag(self, tag, attrs):
            self.found += [(tag, k, v) for k, v in attrs if k in ("src", "href", "srcset", "data", "action")]

    charts, tables = tmp_path / "charts.html", tmp_path / "tables.html"
    assert _report([manager_dir, "-o", charts], capsys)[0] == 0
    assert _report([evaluation_files[0], "-o", tables], capsys)[0] == 0
    shipped = vega_js()
    assert shipped in charts.read_text(encoding="utf-8")  # the whole bundle, inlined
    assert shipped[:2000] not in tables.read_text(encoding="utf-8")  # a page of tables does without it
    for page in (charts, tables):
        # no element loads anything by URL: no src= / href= / data= / action= on any element
        parser = Urls()
        parser.feed(page.read_text(encoding="utf-8"))
        assert parser.found == []


@pytest.mark.slow
def test_the_vega_bundle_is_vl_converts_and_is_kept_in_the_cache_folder(tmp_path, monkeypatch):
    import hashlib
    import importlib.metadata

    import vl_convert

    from assay_report import page

    monkeypatch.setenv(page.CACHE_ENV, str(tmp_path / "cache"))
    page.vega_js.cache_clear()
    try:
        text = page.vega_js()
        assert text == vl_convert.javascript_bundle(page.BUNDLE_SNIPPET)  # vl-convert's bundle, built live
        for name in ("window.vega=", "window.vegaLite=", "window.vegaEmbed="):
            assert name in text
        digest = hashlib.sha256(page.BUNDLE_SNIPPET.encode()).hexdigest()[:12]
        kept = tmp_path / "cache" / f"vega-bundle-{importlib.metadata.version('vl-convert-python')}-{digest}.js"
        assert kept.read_text(encoding="utf-8") == text
        # the next process reads the kept file: a marked copy proves it is the one read
        kept.write_text(text + "\n// kept", encoding="utf-8")
        page.vega_js.cache_clear()
        assert page.vega_js().endswith("// kept")
    finally:
        page.vega_js.cache_clear()


def test_a_cache_folder_that_cannot_be_written_is_warned_about(tmp_path, monkeypatch):
    from assay_report import page

    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(page.CACHE_ENV, str(blocker / "cache"))  # a folder under a file cannot be made
    page.vega_js.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match=r"could not keep the Vega bundle in .*a-file"):
            text = page.vega_js()
        assert "window.vegaEmbed=" in text
    finally:
        page.vega_js.cache_clear()


@pytest.mark.parametrize("damage", ["empty-folder", "damaged-json", "not-a-result", "missing"])
def test_bad_input_is_one_line_naming_the_path_and_no_page(tmp_path, capsys, damage, evaluation_files):
    if damage == "empty-folder":
        bad = tmp_path / "nothing-here"
        bad.mkdir()
    elif damage == "damaged-json":
        bad = tmp_path / "broken.json"
        bad.write_text(evaluation_files[0].read_text(encoding="utf-8")[:200], encoding="utf-8")
    elif damage == "not-a-result":
        bad = tmp_path / "list.json"
        bad.write_text("[1, 2, 3]", encoding="utf-8")
    else:
        bad = tmp_path / "absent.json"
    out = tmp_path / "report.html"
    code, stdout, err = _report([evaluation_files[0], bad, "-o", out], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("assay report: error: ") and str(bad) in lines[0], err
    assert not out.exists() and not list(tmp_path.glob(".report.html*")) and stdout == ""


def test_two_runs_with_different_metrics_are_refused_naming_the_second(tmp_path, capsys, build):
    a = build.run(tmp_path / "a", models=1, seeds=1, unc_types=["softmax"])
    b = build.run(tmp_path / "b", models=1, seeds=1, unc_types=["softmax"], metric_names=("auroc",))
    out = tmp_path / "report.html"
    code, _, err = _report([a, b, "-o", out], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{b}: its tasks and metrics" in err and not out.exists()


def test_two_evaluations_of_different_metrics_are_refused(tmp_path, capsys, evaluation_files):
    import assay

    other = assay.evaluate(["a", "b"], ["a", "a"], metrics=["accuracy"], n_resamples=0).save(tmp_path / "o.json")
    code, _, err = _report([evaluation_files[0], other, "-o", tmp_path / "r.html"], capsys)
    assert code == 2 and f"{other}: its scores" in err and not (tmp_path / "r.html").exists()


def test_a_failed_rebuild_leaves_the_previous_page_whole(tmp_path, capsys, evaluation_files):
    out = tmp_path / "r.html"
    assert _report([evaluation_files[0], "-o", out], capsys)[0] == 0
    before = out.read_bytes()
    assert _report([tmp_path / "absent.json", "-o", out], capsys)[0] == 2
    assert out.read_bytes() == before


def test_output_that_is_a_folder_is_refused_before_reading(tmp_path, capsys, evaluation_files):
    code, _, err = _report([evaluation_files[0], "-o", tmp_path], capsys)
    assert code == 2 and "is a directory" in err


def test_run_table_is_the_mean_and_std_over_seeds(tmp_path, build):
    run = build.run(tmp_path / "run", models=2, seeds=3, unc_types=["softmax", "ensemble"],
                    value=lambda m, s, unc, metric: m + s / 10 + (0.5 if unc == "ensemble" else 0))
    report = build_report([run])
    (table,) = report.sections
    labels = [c.label for c in table.columns]
    assert labels == ["pred_model", "unc_type", "aggregation", "ood: auroc", "ood: aurc"]
    rows = {r[:2]: r for r in table.rows}
    # model 1, ensemble: values 1.5, 1.6, 1.7 -> mean 1.6, sample std 0.1
    mean, std = rows[("model1", "ensemble")][3]
    assert mean == pytest.approx(1.6) and std == pytest.approx(0.1)
    # auroc: higher is better -> model1/ensemble is best; aurc: lower is better -> model0/softmax
    best = {(table.rows[r][0], table.rows[r][1], c) for r, c in table.best}
    assert best == {("model1", "ensemble", 3), ("model0", "softmax", 4)}


def test_report_command_loads_only_its_own_plugin(tmp_path, evaluation_files):
    code = ("import sys; from assay.cli import main; "
            f"rc = main(['report', {str(evaluation_files[0])!r}, '-o', {str(tmp_path / 'r.html')!r}]); "
            "print(sorted(m for m in sys.modules if m.startswith('assay_') and not m.startswith('assay_report')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]"


def test_values_layout_tree_is_the_mean_and_std_over_seeds_and_survives_a_move(tmp_path):
    import shutil

    written = tmp_path / "written"
    versions = []
    for seed, rate in (("1", 0.25), ("2", 0.75)):
        exp = written / "Softmax" / f"seed{seed}"
        exp.mkdir(parents=True)
        tree = {"mean": {"predictive": {"patch": {"metrics": {"auroc": rate, "rate": 1 - rate}}}}}
        (exp / "ood.json").write_text(json.dumps(tree), encoding="utf-8")
        versions.append({"pred_model": "Softmax", "params": {"seed": seed}, "version_name": f"seed{seed}",
                         "exp_path": str(exp), "unc_types": ["predictive"], "aggregations": ["patch"]})
    manifest = {"layout": "values", "base_path": str(written), "tasks": ["ood"], "versions": versions}
    (written / "assay-values-run.json").write_text(json.dumps(manifest), encoding="utf-8")
    moved = tmp_path / "moved"
    shutil.move(written, moved)
    (table,) = build_report([moved]).sections
    assert [c.label for c in table.columns][3:] == ["ood: auroc", "ood: rate"]
    (row,) = table.rows
    assert row[:3] == ("Softmax", "predictive", "patch")
    # 0.25 and 0.75: mean 0.5, sample std sqrt(((0.25)^2 * 2) / 1) = 0.353553...
    assert row[3] == [0.5, pytest.approx(0.3535533905932738)] and row[4][0] == 0.5
    assert table.best == ()  # the ValUES manifest declares no direction


def test_unpaired_systems_get_the_best_marked_and_a_note_instead_of_a_test(tmp_path):
    import assay

    a = assay.evaluate(["x", "y", "x"], ["x", "y", "y"], metrics=["accuracy"], n_resamples=0).save(tmp_path / "a.json")
    b = assay.evaluate(["x", "y"], ["x", "x"], metrics=["accuracy"], n_resamples=0).save(tmp_path / "b.json")
    table = build_report([a, b], n_resamples=20).sections[0]
    assert table.best == ((0, 1),)  # 2/3 > 1/2, higher is better (the results' own info)
    assert table.tied == ()
    assert any("b.json not tested against the best" in n for n in table.notes)


def test_a_comparison_table_puts_the_verdict_beside_its_own_p_value(tmp_path, comparison_file):
    comp = json.loads(comparison_file.read_text(encoding="utf-8"))
    (table,) = build_report([comparison_file]).sections
    names = [c.label for c in table.columns]
    (row,) = table.rows
    decides = names.index("p-value (decides: inverts the interval)")
    assert names[decides + 1] == "verdict" and row[decides + 1] == comp["verdict"]
    assert row[decides] == comp["p_value_percentile"] == comp["p_value"]
    assert (row[decides] < 1 - comp["confidence_level"]) == comp["significant"]
    assert row[names.index("p-value (second test: randomization)")] == comp["p_value_randomization"]
    assert row[names.index("p-value (second test: shifted bootstrap)")] == comp["p_value_bootstrap"]
    assert any("inverts that interval" in n for n in table.notes)
    # a file written before the p-value of the interval existed: its 'p_value' (randomization) is not shown as
    # the verdict's, and a note says why the cell is empty
    old = {k: v for k, v in comp.items() if k != "p_value_percentile"}
    old["p_value"] = comp["p_value_randomization"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    (table,) = build_report([path]).sections
    (row,) = table.rows
    assert row[decides] is None and row[decides + 1] == comp["verdict"]
    assert any(n.startswith("old.json: written by an assay before the p-value") for n in table.notes)
