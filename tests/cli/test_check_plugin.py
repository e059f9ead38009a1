"""``assay check-plugin DIST``: the conformance report of an installed plugin distribution.

The fake distributions are throwaway ``*.dist-info`` folders on ``sys.path`` (as in
``tests/plugins/conftest.py``), discovered through real ``assay`` entry points.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from assay.cli import main
from assay.plugins import PluginSystem, use_plugin_system

FAKE = '''
from assay import hookimpl
from assay.metrics import GlobalMetric, InstanceMetric


class GoodMatch(InstanceMetric):
    """1 when the prediction is among the references."""

    main_score = "match"
    prediction_type = str
    # hand count: "a" in ["a"], "b" not in ["c"], "c" in ["x", "c"], "d" in ["d"] -> 3 of 4
    examples = [{"predictions": ["a", "b", "c", "d"], "references": [["a"], ["c"], ["x", "c"], ["d"]],
                 "global_target": {"match": 0.75}}]

    def compute_instance(self, prediction, references, task_data=None):
        return float(prediction in references)


class FirstPrediction(GlobalMetric):
    """Broken on purpose: the score is the first prediction, so it depends on the order of the instances."""

    main_score = "first"
    prediction_type = float
    per_instance = False

    def compute_global(self, predictions, references, task_data):
        return float(predictions[0]) if predictions else float("nan")


class LastShardWins(InstanceMetric):
    """Broken on purpose: merge keeps only the last state, so shard-then-merge loses data."""

    main_score = "match"
    prediction_type = str

    def compute_instance(self, prediction, references, task_data=None):
        return float(prediction in references)

    def merge(self, *others):
        for other in others:
            self.__dict__["_state"] = other.state
        return self


@hookimpl
def assay_register_metrics(register):
    register("good_match", GoodMatch, description="a correct metric")
    register("first_prediction", FirstPrediction, description="order-dependent on purpose")
    register("last_shard_wins", LastShardWins, description="not merge-invariant on purpose")
'''

EMPTY = '''
from assay import hookimpl

@hookimpl
def assay_register_tasks(register):
    pass
'''

BROKEN = '''
raise RuntimeError("this plugin is broken on purpose")
'''


def _distribution(root, dist, module, source, ep_name=None):
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-2.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 2.0.1\n")
    (info / "entry_points.txt").write_text(f"[assay]\n{ep_name or module} = {module}\n")


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Three throwaway distributions on sys.path, and a plugin system that discovers them."""
    _distribution(tmp_path, "assay-fake-metrics", "assay_fake_metrics", FAKE, ep_name="fake")
    _distribution(tmp_path, "assay-fake-empty", "assay_fake_empty", EMPTY)
    _distribution(tmp_path, "assay-fake-broken", "assay_fake_broken", BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    with use_plugin_system(PluginSystem()):
        yield tmp_path


def _rows(out):
    """{(name, check): result} from the table."""
    rows = {}
    for line in out.splitlines()[2:]:  # after the header and its rule
        if not line.strip():
            break
        name, kind, check, result = line.split(None, 3)
        rows[(name, check)] = result
    return rows


@pytest.mark.slow
def test_first_party_classic_passes_every_check(capsys):
    assert main(["check-plugin", "assay-classic"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    metrics = {name for name, _ in rows if name != "classic"}
    # 16 before issue 13, + chrf, ter, rouge, metrics.token_overlap, roc_auc_multiclass, roc_auc_multilabel;
    # + the 8 depth metrics of issue 24 (their torch-uncertainty class names are aliases, checked once)
    assert {"accuracy", "f1", "bleu", "roc_auc", "spearman", "silog", "abs_rel"} <= metrics and len(metrics) == 30
    assert set(rows.values()) == {"PASS"}
    # every metric got every check, none silently omitted
    for name in metrics:
        assert {check for n, check in rows if n == name} == {
            "instantiate", "examples", "order", "chunking", "shard-merge", "one-at-a-time", "pickling",
            "evaluate", "bad-inputs"}
    assert out.rstrip().splitlines()[-1] == f"assay-classic 0.1.0: 30 names, {len(rows)} checks: {len(rows)} passed, " \
                                            "0 failed, 0 skipped"


def test_broken_metrics_fail_the_check_they_break(installed, capsys):
    assert main(["check-plugin", "assay-fake-metrics"]) == 1
    out = capsys.readouterr().out
    rows = _rows(out)
    assert rows[("fake", "load")] == "PASS"
    assert {check: r for (name, check), r in rows.items() if name == "good_match"} == {
        "instantiate": "PASS", "examples": "PASS", "order": "PASS", "chunking": "PASS", "shard-merge": "PASS",
        "one-at-a-time": "PASS", "pickling": "PASS", "evaluate": "PASS", "bad-inputs": "PASS"}
    assert rows[("first_prediction", "order")].startswith("FAIL(FirstPrediction: shuffling the instances changed")
    # no examples declared: the checks ran on generated floats, and the report says so
    assert rows[("first_prediction", "examples")].startswith("SKIP(no examples declared; the checks ran on 12 "
                                                             "generated instances of prediction_type float")
    assert rows[("first_prediction", "shard-merge")] == "PASS"  # shards keep the order: only `order` breaks
    assert rows[("last_shard_wins", "shard-merge")].startswith("FAIL(LastShardWins: sharding into 3 and merging")
    assert rows[("last_shard_wins", "order")] == "PASS"
    # a NaN first prediction gives NaN without a word: a bad input must be an error (or NaN with a warning)
    assert rows[("first_prediction", "bad-inputs")] == (
        "FAIL(a NaN prediction: returned NaN without an UndefinedMetricWarning)")
    assert out.rstrip().splitlines()[-1] == (
        "assay-fake-metrics 2.0.1: 3 names, 29 checks: 23 passed, 3 failed, 3 skipped")  # + declaration: none


def test_entry_point_name_and_json(installed, capsys):
    assert main(["check-plugin", "fake", "--json", "-k", "good_match"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["distribution"] == "assay-fake-metrics" and report["version"] == "2.0.1"
    assert report["ok"] is True
    # load + 9 checks of good_match; the plugin declares no names: its declaration check does not apply
    assert report["counts"] == {"pass": 10, "fail": 0, "skip": 1}
    assert {r["name"] for r in report["results"]} == {"fake", "good_match"}


def test_json_reports_the_failure_with_its_check(installed, capsys):
    assert main(["check-plugin", "assay_fake_metrics", "--json", "-k", "last_*"]) == 1
    report = json.loads(capsys.readouterr().out)
    failed = [r for r in report["results"] if r["status"] == "FAIL"]
    assert [(r["name"], r["kind"], r["check"]) for r in failed] == [("last_shard_wins", "metric", "shard-merge")]
    assert "sharding into 3 and merging changed the scores" in failed[0]["reason"]


def test_unknown_distribution_is_a_usage_error_with_close_matches(installed, capsys):
    assert main(["check-plugin", "assay-fake-metric"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay check-plugin: error: No installed assay plugin distribution or entry point named "
                          "'assay-fake-metric'. Did you mean: assay-fake-metrics")
    assert "Traceback" not in err


def test_installed_distribution_without_entry_point_is_named(capsys):
    assert main(["check-plugin", "pluggy"]) == 2
    assert "'pluggy' is installed but declares no entry point in the 'assay' group" in capsys.readouterr().err


def test_a_distribution_that_registers_nothing_is_a_usage_error(installed, capsys):
    assert main(["check-plugin", "assay-fake-empty"]) == 2
    assert "'assay-fake-empty' is installed but registers nothing" in capsys.readouterr().err


def test_a_plugin_that_fails_to_load_fails_its_load_check(installed, capsys):
    assert main(["check-plugin", "assay-fake-broken"]) == 1
    rows = _rows(capsys.readouterr().out)
    assert rows[("assay_fake_broken", "load")].startswith("FAIL(RuntimeError while importing")


def test_filters_that_select_nothing_name_the_flag(installed, capsys):
    assert main(["check-plugin", "assay-fake-metrics", "--kind", "executor"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay check-plugin: error: --kind executor: assay-fake-metrics registers no name of "
                          "that kind; it registers metric.")
    assert main(["check-plugin", "assay-fake-metrics", "-k", "good_mach"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay check-plugin: error: -k good_mach: matches none of the names")
    assert "Did you mean: good_match?" in err


def test_kind_filter_accepts_the_plural(installed, capsys):
    assert main(["check-plugin", "assay-fake-metrics", "--kind", "metrics", "-k", "good"]) == 0
    assert {name for name, _ in _rows(capsys.readouterr().out)} == {"fake", "good_match"}


def test_assay_names_the_builtins(capsys):
    assert main(["check-plugin", "assay", "-k", "jsonl", "-k", "serial"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows[("jsonl", "round-trip")] == "PASS"  # on the sample the jsonl registration declares
    assert rows[("serial", "run-order")] == "PASS" and rows[("serial", "errors-propagate")] == "PASS"


# --------------------------------------------------------------------------- hangs and exits (issue 27, item 14)
HANGS = '''
import os
import time

from assay import hookimpl
from assay.metrics import InstanceMetric


class Sleeper(InstanceMetric):
    """map_batch sleeps far past any bound: a check must end as a FAIL, not hang the report."""

    main_score = "match"
    prediction_type = str

    def compute_instance(self, prediction, references, task_data=None):
        return float(prediction in references)

    def map_batch(self, predictions, references, task_data=None):
        time.sleep(600)


class Exiter(InstanceMetric):
    """Ends the process running it as soon as it scores anything."""

    main_score = "match"
    prediction_type = str

    def compute_instance(self, prediction, references, task_data=None):
        os._exit(3)


class Fine(InstanceMetric):
    main_score = "match"
    prediction_type = str

    def compute_instance(self, prediction, references, task_data=None):
        return float(prediction in references)


@hookimpl
def assay_register_metrics(register):
    register("sleeper", Sleeper, description="hangs on purpose")
    register("exiter", Exiter, description="calls os._exit on purpose")
    register("fine", Fine, description="a correct metric, checked after the other two")
'''


@pytest.fixture
def hanging(tmp_path, monkeypatch):
    _distribution(tmp_path, "assay-fake-hangs", "assay_fake_hangs", HANGS)
    monkeypatch.syspath_prepend(str(tmp_path))
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    with use_plugin_system(PluginSystem()):
        yield tmp_path


def test_a_sleeping_map_batch_fails_its_check_within_the_timeout(hanging, capsys):
    import time

    started = time.monotonic()
    assert main(["check-plugin", "assay-fake-hangs", "-k", "sleeper", "--check-timeout", "1"]) == 1
    assert time.monotonic() - started < 30  # one bound per hung check, not the 600 s sleep
    rows = _rows(capsys.readouterr().out)
    failed = {check: r for (name, check), r in rows.items() if name == "sleeper" and r.startswith("FAIL")}
    assert len(failed) == 1, rows
    (check, result), = failed.items()
    assert result.startswith("FAIL(the check did not finish within 1 s (check-plugin's per-check timeout, "
                             "--check-timeout)")
    # the checks after it are reported as not run, naming it
    skipped = [r for (name, c), r in rows.items() if name == "sleeper" and r.startswith("SKIP(not run: the check")]
    assert skipped and all(f"'{check}'" in r for r in skipped)


def test_a_plugin_calling_os_exit_fails_the_check_and_the_report_goes_on(hanging, capsys):
    assert main(["check-plugin", "assay-fake-hangs", "-k", "exiter", "-k", "fine", "--check-timeout", "60"]) == 1
    out = capsys.readouterr().out
    rows = _rows(out)
    failed = [(c, r) for (name, c), r in rows.items() if name == "exiter" and r.startswith("FAIL")]
    assert len(failed) == 1, rows
    assert "ended the process running it with exit status 3 (os._exit(3)" in failed[0][1]
    # the other name is still checked, and passes
    assert {r for (name, _), r in rows.items() if name == "fine"} == {"PASS"} or all(
        r == "PASS" or r.startswith("SKIP(no examples") for (name, _), r in rows.items() if name == "fine")
    assert out.rstrip().splitlines()[-1].startswith("assay-fake-hangs 2.0.1: 2 names")


def test_check_timeout_must_be_a_number_of_seconds(hanging, capsys):
    with pytest.raises(SystemExit) as info:  # argparse's usage error
        main(["check-plugin", "assay-fake-hangs", "--check-timeout", "soon"])
    assert info.value.code == 2
    assert "argument --check-timeout: must be a number of seconds >= 0" in capsys.readouterr().err
