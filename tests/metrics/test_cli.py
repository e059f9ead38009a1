"""``assay evaluate`` and ``assay compare`` on JSON Lines and CSV files."""

from __future__ import annotations

import json
import re

import pytest

from assay.cli import main


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.jsonl").write_text("1\n0\n1\n1\n\n0\n1\n")                  # blank lines are skipped
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({"prediction": v}) + "\n" for v in [1, 1, 1, 1, 0, 1]))
    (tmp_path / "refs.csv").write_text("id,references\n0,1\n1,1\n2,0\n3,1\n4,0\n5,1\n")
    return tmp_path


def test_evaluate_table_and_output(files, samples_system, capsys):
    rc = main(["evaluate", "-m", "sample_accuracy", "-m", "sample_f1[score_prefix=p_]", "-p", str(files / "a.jsonl"),
               "-r", str(files / "refs.csv"), "--csv-cells", "json", "--n-resamples", "200",
               "-o", str(files / "A.json")])
    out = capsys.readouterr().out
    assert rc == 0
    # a = 1 0 1 1 0 1, refs = 1 1 0 1 0 1: 4 of 6 right; tp = 3, fp = 1, fn = 1 -> F1 = 6 / 8
    assert re.search(r"^accuracy +0\.6667 +\[", out, re.M) and re.search(r"^p_f1 +0\.7500 +\[", out, re.M)
    saved = json.loads((files / "A.json").read_text())
    assert saved["global"]["accuracy"] == pytest.approx(4 / 6) and len(saved["instances"]) == 6


def test_evaluate_json(files, samples_system, capsys):
    rc = main(["evaluate", "-m", "sample_accuracy", "-p", str(files / "b.jsonl"), "-r", str(files / "refs.csv"),
               "--csv-cells", "json", "--json", "--seed", "5"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["global"]["accuracy"] == pytest.approx(5 / 6) and data["info"]["seed"] == 5


def test_compare(files, samples_system, capsys):
    for name in ("a", "b"):
        main(["evaluate", "-m", "sample_accuracy", "-p", str(files / f"{name}.jsonl"), "-r", str(files / "refs.csv"),
              "--csv-cells", "json", "--n-resamples", "0", "-o", str(files / f"{name.upper()}.json")])
    capsys.readouterr()
    rc = main(["compare", str(files / "A.json"), str(files / "B.json"), "--json", "--n-resamples", "300"])
    c = json.loads(capsys.readouterr().out)
    assert rc == 0 and c["difference"] == pytest.approx(1 / 6)
    # one discordant instance: every randomization round gives |delta_r| = 1/6, so p = 1 exactly
    assert c["p_value_randomization"] == 1.0 and c["seed"] == 0


def test_errors_are_reported(files, samples_system, capsys):
    (files / "short.jsonl").write_text("1\n")
    assert main(["evaluate", "-m", "sample_accuracy", "-p", str(files / "short.jsonl"),
                 "-r", str(files / "refs.csv"), "--csv-cells", "json"]) == 2
    assert "must pair up" in capsys.readouterr().err
    (files / "bad.jsonl").write_text("1\n{oops\n")
    assert main(["evaluate", "-m", "sample_accuracy", "-p", str(files / "bad.jsonl")]) == 2
    assert "bad.jsonl:2: invalid JSON" in capsys.readouterr().err
    assert main(["evaluate", "-m", "nope", "-p", str(files / "a.jsonl")]) == 2
    assert "No metric named 'nope'" in capsys.readouterr().err
