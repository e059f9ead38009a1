"""The demo's report section: one report per section, listed at the end, each opened in Chromium with a screenshot."""

from __future__ import annotations

import pytest

from assay.demo import run_demo

# spark (a Spark context) and transformers (a model) are left out for time; they report like treebank
# and uncertainty
SECTIONS = ["treebank", "metrics", "uncertainty", "segmentation", "values"]


@pytest.mark.slow
def test_the_demo_writes_one_report_per_section_and_lists_them(tmp_path, capsys, open_report, shot):
    run_demo(tmp_path, sections=[*SECTIONS, "report"])
    out = capsys.readouterr().out
    listed = out.split("reports to open (one self-contained HTML file each):\n", 1)[1].splitlines()
    listed = [line.strip() for line in listed if line.startswith("  /")]
    names = [p.rsplit("/", 1)[1] for p in listed]
    # metrics writes accuracy and BLEU results, which do not share their metrics: two pages
    assert names == ["treebank.html", "metrics-1.html", "metrics-2.html", "uncertainty.html", "segmentation.html",
                     "values.html"]
    for path in listed:
        assert f"written to {tmp_path / 'report' / path.rsplit('/', 1)[1]}" in out
        o = open_report(path)
        assert o.page.locator("table.data").count() >= 1
        shot(o, "demo-" + path.rsplit("/", 1)[1].removesuffix(".html"))
