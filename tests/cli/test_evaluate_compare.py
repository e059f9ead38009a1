"""``assay evaluate`` and ``assay compare`` never print a number the inputs do not support.

- without ``--references`` a metric that compares with references is an error (it used to
  print ``accuracy 0.0000``);
- CSV cells are text unless ``--csv-cells json`` (``true``, ``1`` and ``1.0`` used to be equal);
- ``compare`` names a better system only when the interval of ``b - a`` excludes 0.
"""

from __future__ import annotations

import json
import re

import pytest

from assay.cli import main


def write_jsonl(path, values):
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- references required
def test_accuracy_without_references_is_an_error_naming_the_flag(tmp_path, capsys):
    preds = write_jsonl(tmp_path / "p.jsonl", [1, 0, 1])
    assert main(["evaluate", "-m", "accuracy", "-p", str(preds)]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no score at all, in particular not "accuracy 0.0000"
    assert err.startswith("assay evaluate: error: -r/--references: metric 'accuracy'")
    assert "Traceback" not in err


@pytest.mark.parametrize("metric", ["f1", "mse", "exact_match", "brier"])
def test_other_reference_metrics_without_references_are_errors(tmp_path, capsys, metric):
    preds = write_jsonl(tmp_path / "p.jsonl", [1, 0, 1])
    assert main(["evaluate", "-m", metric, "-p", str(preds), "--n-resamples", "0"]) == 2
    assert "-r/--references" in capsys.readouterr().err


def test_reference_free_metric_runs_without_references(tmp_path, capsys):
    # ensemble of 3 members, 2 classes. votes (0, 1, 0): 1 - C(2,2)/C(3,2) = 2/3; votes (0, 0, 0): 0. mean 1/3
    probs = [[[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], [[0.7, 0.3], [0.8, 0.2], [0.6, 0.4]]]
    preds = write_jsonl(tmp_path / "probs.jsonl", probs)
    assert main(["evaluate", "-m", "disagreement", "-p", str(preds), "--n-resamples", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["global"]["disagreement"] == pytest.approx(1 / 3)


# --------------------------------------------------------------------------- CSV cells are text
PRED_CSV = "prediction\ntrue\n1.0\n1\nx\n0\n"
REF_CSV = "references\n1\n1\n1\nx\nfalse\n"
# as text: 'true'!='1', '1.0'!='1', '1'=='1', 'x'=='x', '0'!='false' -> 2 of 5 = 0.4
# as JSON: true==1, 1.0==1, 1==1, 'x'=='x', 0==false (Python equality) -> 5 of 5 = 1.0


def _accuracy(capsys, *extra):
    rc = main(["evaluate", "-m", "accuracy", "--n-resamples", "0", "--json", *extra])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)["global"]["accuracy"]


def test_csv_cells_are_text_by_default(tmp_path, capsys):
    (tmp_path / "p.csv").write_text(PRED_CSV)
    (tmp_path / "r.csv").write_text(REF_CSV)
    assert _accuracy(capsys, "-p", str(tmp_path / "p.csv"), "-r", str(tmp_path / "r.csv")) == pytest.approx(2 / 5)


def test_csv_cells_json_is_asked_for_explicitly(tmp_path, capsys):
    (tmp_path / "p.csv").write_text(PRED_CSV)
    (tmp_path / "r.csv").write_text(REF_CSV)
    got = _accuracy(capsys, "-p", str(tmp_path / "p.csv"), "-r", str(tmp_path / "r.csv"), "--csv-cells", "json")
    assert got == pytest.approx(5 / 5)


def test_text_csv_against_typed_jsonl_is_an_error_not_a_zero(tmp_path, capsys):
    # '1' (text) never equals 1 (a JSON number): scoring would silently give 0
    preds = write_jsonl(tmp_path / "p.jsonl", [1, 0, 1])
    (tmp_path / "r.csv").write_text("references\n1\n0\n0\n")
    assert main(["evaluate", "-m", "accuracy", "-p", str(preds), "-r", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay evaluate: error: -r ") and "--csv-cells json" in err
    # with typed cells: 1==1, 0==0, 1!=0 -> 2 of 3
    got = _accuracy(capsys, "-p", str(preds), "-r", str(tmp_path / "r.csv"), "--csv-cells", "json")
    assert got == pytest.approx(2 / 3)


def test_help_documents_csv_cells(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "--csv-cells {text,json}" in capsys.readouterr().out


# --------------------------------------------------------------------------- compare verdicts
def _saved(tmp_path, name, preds, refs):
    p = write_jsonl(tmp_path / f"{name}.jsonl", preds)
    r = write_jsonl(tmp_path / "refs.jsonl", refs)
    out = tmp_path / f"{name}.json"
    assert main(["evaluate", "-m", "accuracy", "-p", str(p), "-r", str(r), "--n-resamples", "0", "-o", str(out)]) == 0
    return out


def test_compare_does_not_call_a_winner_when_the_interval_spans_zero(tmp_path, capsys):
    # 10 instances, all references 1. a is wrong on 0 and 1, b on 2: b - a = (2 - 1) / 10 = +0.1.
    # A resample that draws neither instance 0 nor 1 (probability 0.8^10 = 0.107) has b - a <= 0,
    # so more than 2.5 % of resamples are <= 0: the 95 % interval contains 0. The old output said
    # "b is better" here.
    refs = [1] * 10
    a = _saved(tmp_path, "a", [0, 0] + [1] * 8, refs)
    b = _saved(tmp_path, "b", [1, 1, 0] + [1] * 7, refs)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--n-resamples", "2000"]) == 0
    out = capsys.readouterr().out
    assert "b - a: +0.1000" in out
    assert "is better" not in out
    assert "no significant difference on accuracy at the 95% level" in out
    # the p-value of the interval's own test, beside the verdict; the other two labelled as second tests
    p = float(re.search(r"p-value: ([0-9.]+) \(inverts that interval: the test that decides\)", out).group(1))
    assert p >= 0.05 and f"includes 0; p = {p:g} >= 0.05)" in out
    assert re.search(r"second tests, not deciding: p = [0-9.]+ \(approximate randomization\), "
                     r"[0-9.]+ \(shifted bootstrap\)", out)


def test_compare_calls_a_winner_when_the_interval_excludes_zero(tmp_path, capsys):
    # 40 instances; b right on all, a wrong on the first 20: every resample has b - a >= 0, and
    # b - a = 0 only if no instance of the first 20 is drawn (probability 2^-40): interval > 0.
    refs = [1] * 40
    a = _saved(tmp_path, "a", [0] * 20 + [1] * 20, refs)
    b = _saved(tmp_path, "b", [1] * 40, refs)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--n-resamples", "500", "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["difference"] == pytest.approx(0.5) and c["ci_low"] > 0
    assert c["better"] == "b" and c["significant"] is True and c["verdict"].startswith("b is better on accuracy")
