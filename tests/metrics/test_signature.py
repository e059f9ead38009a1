"""The provenance signature of evaluations: saved and loaded, printed under the table, checked by compare."""

from __future__ import annotations

import importlib.metadata as metadata
import json

import pytest

import assay
from assay.cli import main
from assay.errors import SaveFormatError, SignatureMismatchError
from assay.metrics.api import load_results

PREDS_A, PREDS_B, REFS = [1, 0, 1, 1, 0, 1], [1, 1, 1, 1, 0, 0], [[1], [1], [0], [1], [0], [1]]
SIG = (f"metrics:f1[average=macro]|resample:bootstrap|ci:percentile|n:30|level:0.95|seed:0|"
       f"assay:{assay.__version__}|plugins:assay-classic={metadata.version('assay-classic')}")


def evaluate(preds, **options):
    return assay.evaluate(preds, REFS, metrics=[options.pop("metric", "f1[average=macro]")],
                          n_resamples=options.pop("n_resamples", 30), **options)


def write_jsonl(path, values):
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


def test_save_load_round_trip_and_summary(tmp_path):
    res = evaluate(PREDS_A)
    assert res.info["signature"] == SIG
    assert res.summary().splitlines()[-1] == f"signature: {SIG}"
    res.save(tmp_path / "a.json")
    assert json.loads((tmp_path / "a.json").read_text())["info"]["signature"] == SIG
    back = load_results(tmp_path / "a.json")
    assert back.info["signature"] == SIG and back.signature == res.signature
    assert back.summary().splitlines()[-1] == f"signature: {SIG}"


def test_older_files_without_a_signature_still_load(tmp_path):
    evaluate(PREDS_A).save(tmp_path / "a.json")
    data = json.loads((tmp_path / "a.json").read_text())
    del data["info"]["signature"]
    (tmp_path / "a.json").write_text(json.dumps(data))
    old = load_results(tmp_path / "a.json")
    assert old.signature is None and "signature" not in old.summary()
    # compared with a new result: not refused, noted
    c = assay.compare(old, evaluate(PREDS_B), n_resamples=20)
    assert any("carry no signature" in n for n in c.notes)


@pytest.mark.parametrize("bad", [12, "seed:x|assay:1", "metrics"])
def test_a_damaged_signature_names_the_file_and_field(tmp_path, bad):
    evaluate(PREDS_A).save(tmp_path / "a.json")
    data = json.loads((tmp_path / "a.json").read_text())
    data["info"]["signature"] = bad
    (tmp_path / "a.json").write_text(json.dumps(data))
    with pytest.raises(SaveFormatError, match="info.signature") as info:
        load_results(tmp_path / "a.json")
    assert info.value.field == "info.signature" and str(tmp_path / "a.json") in str(info.value)


@pytest.mark.parametrize(("options", "listed"), [
    ({"seed": 5}, "seed: 0 (a) vs 5 (b)"),
    ({"n_resamples": 40}, "n: 30 (a) vs 40 (b)"),
    ({"confidence_level": 0.9}, "level: 0.95 (a) vs 0.9 (b)"),
    ({"ci_method": "wilson"}, "ci: percentile (a) vs wilson (b)"),
    ({"metric": "f1[average=micro]"}, "metrics f1: f1[average=macro] (a) vs f1[average=micro] (b)"),
])
def test_compare_refuses_results_computed_differently(options, listed):
    a, b = evaluate(PREDS_A), evaluate(PREDS_B, **options)
    with pytest.raises(SignatureMismatchError, match="allow_signature_mismatch=True") as info:
        assay.compare(a, b, metric="f1[average=macro]", n_resamples=20)
    assert listed in str(info.value)
    c = assay.compare(a, b, metric="f1[average=macro]", n_resamples=20, allow_signature_mismatch=True)
    assert f"signatures differ (allowed): {listed}" in c.notes
    assert c.signature_a == a.info["signature"] and c.signature_b == b.info["signature"]


def test_compare_prints_both_signatures():
    a, b = evaluate(PREDS_A), evaluate(PREDS_B)
    c = assay.compare(a, b, n_resamples=20)
    lines = str(c).splitlines()
    assert lines[-2:] == [f"  signature a: {SIG}", f"  signature b: {SIG}"]
    assert c.to_dict()["signature_a"] == SIG


def test_cli_evaluate_prints_the_signature_under_the_table(tmp_path, capsys):
    p, r = write_jsonl(tmp_path / "p.jsonl", PREDS_A), write_jsonl(tmp_path / "r.jsonl", REFS)
    assert main(["evaluate", "-m", "f1[average=macro]", "-p", str(p), "-r", str(r), "--n-resamples", "30"]) == 0
    out = capsys.readouterr().out.splitlines()
    table_end = next(i for i, line in enumerate(out) if line.startswith("(6 instances"))
    assert out[table_end + 1] == f"signature: {SIG}"
    assert main(["evaluate", "-m", "f1[average=macro]", "-p", str(p), "-r", str(r), "--n-resamples", "30",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["info"]["signature"] == SIG


def test_cli_compare_refuses_naming_the_flag_and_the_flag_overrides(tmp_path, capsys):
    p, q, r = (write_jsonl(tmp_path / "p.jsonl", PREDS_A), write_jsonl(tmp_path / "q.jsonl", PREDS_B),
               write_jsonl(tmp_path / "r.jsonl", REFS))
    common = ["-m", "f1[average=macro]", "-r", str(r), "--n-resamples", "30"]
    assert main(["evaluate", *common, "-p", str(p), "-o", str(tmp_path / "a.json")]) == 0
    assert main(["evaluate", *common, "-p", str(q), "--seed", "4", "-o", str(tmp_path / "b.json")]) == 0
    capsys.readouterr()
    args = ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--n-resamples", "20"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay compare: error: ") and "seed: 0 (a) vs 4 (b)" in err
    assert "--allow-different-signatures" in err and "allow_signature_mismatch" not in err
    assert main([*args, "--allow-different-signatures"]) == 0
    out = capsys.readouterr().out
    assert f"  signature a: {SIG}" in out and f"  signature b: {SIG.replace('seed:0', 'seed:4')}" in out
    assert "signatures differ (allowed): seed: 0 (a) vs 4 (b)" in out
