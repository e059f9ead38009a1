"""One set of conventions for every ``assay`` command (docs/cli.md, "Conventions").

``-o/--output`` is a FILE or a FOLDER by what the command writes; ``--json`` leaves only
JSON on stdout; ``-m/--metric NAME`` selects metrics everywhere; errors name the flag the
user typed, never the Python parameter; results and their headers share stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import types
from pathlib import Path

import pytest

import assay_parsing  # noqa: F401 - parse-eval needs the plugin (installed by make test)
import assay_parsing.parse_eval as parse_eval_cli
from assay.cli import COMMANDS, build_parser, main
from assay.cli._errors import flag_for_parameters
from assay.cli._output import describe_executor
from assay.errors import InvalidParameterError

FILE_COMMANDS = ("evaluate", "compare", "parse-eval", "report", "table", "plot")
FOLDER_COMMANDS = ("ue", "run", "demo")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


# --------------------------------------------------------------------------- -o/--output
@pytest.mark.parametrize("command", FILE_COMMANDS + FOLDER_COMMANDS)
def test_output_is_a_file_or_a_folder_by_what_the_command_writes(command):
    action = _option(_subparsers()[command], "-o")
    assert action is not None and action.option_strings == ["-o", "--output"]
    kind = "FILE" if command in FILE_COMMANDS else "FOLDER"
    assert action.metavar == kind
    assert action.help.startswith("write ") and f" {kind}" in action.help


def test_every_command_writing_files_has_the_output_flag():
    with_output = {name for name, p in _subparsers().items() if _option(p, "--output")}
    assert with_output == set(FILE_COMMANDS + FOLDER_COMMANDS)


def test_a_folder_given_for_a_file_output_names_the_flag(tmp_path, capsys):
    (tmp_path / "p.jsonl").write_text("1\n0\n")
    (tmp_path / "r.jsonl").write_text("1\n1\n")
    assert main(["evaluate", "-m", "accuracy", "-p", str(tmp_path / "p.jsonl"), "-r", str(tmp_path / "r.jsonl"),
                 "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"assay evaluate: error: --output {tmp_path}: is a directory") and "FILE" in err


def test_a_file_given_for_a_folder_output_names_the_flag(tmp_path, capsys):
    (tmp_path / "taken").write_text("x")
    assert main(["demo", "-o", str(tmp_path / "taken"), "--section", "metrics"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"assay demo: error: -o {tmp_path / 'taken'}: exists and is not a directory")
    assert "FOLDER" in err


# --------------------------------------------------------------------------- --json
def test_every_command_accepts_json():
    assert {name for name, p in _subparsers().items() if not _option(p, "--json")} == set()
    assert len(_subparsers()) >= len(COMMANDS)


def test_evaluate_json_is_only_json(tmp_path, capsys):
    (tmp_path / "p.jsonl").write_text("1\n0\n1\n1\n")
    (tmp_path / "r.jsonl").write_text("1\n1\n1\n0\n")
    assert main(["evaluate", "-m", "accuracy", "-p", str(tmp_path / "p.jsonl"), "-r", str(tmp_path / "r.jsonl"),
                 "--n-resamples", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["global"]["accuracy"] == pytest.approx(2 / 4)  # rows 1 and 3 agree


def test_compare_writes_its_json_to_the_output_file(tmp_path, capsys):
    refs = "1\n1\n0\n0\n1\n"
    (tmp_path / "r.jsonl").write_text(refs)
    for name, preds in (("A", "1\n0\n0\n1\n1\n"), ("B", "1\n1\n0\n0\n1\n")):
        (tmp_path / f"{name}.jsonl").write_text(preds)
        assert main(["evaluate", "-m", "accuracy", "-p", str(tmp_path / f"{name}.jsonl"),
                     "-r", str(tmp_path / "r.jsonl"), "-o", str(tmp_path / f"{name}.json"), "--n-resamples", "0"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "A.json"), str(tmp_path / "B.json"), "-m", "accuracy",
                 "--n-resamples", "50", "-o", str(tmp_path / "c.json"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads((tmp_path / "c.json").read_text()) == printed
    assert printed["difference"] == pytest.approx(1.0 - 3 / 5)  # B 5/5, A 3/5


def test_compare_takes_one_metric_and_says_so(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "A.json"), str(tmp_path / "B.json"), "-m", "accuracy",
                 "--metric", "f1"]) == 2
    assert "assay compare: error: --metric: compare tests one metric per run; got 2" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["plugins", "--json"], ["list", "metric", "--json"],
                                  ["list", "metric", "accuracy", "--json"]])
def test_listing_json_is_only_json(argv, capsys):
    assert main(argv) == 0
    json.loads(capsys.readouterr().out)


def test_run_json_sends_the_progress_to_stderr(monkeypatch, tmp_path, capsys):
    import assay_segmentation.downstream as downstream  # 'assay run' is a command of assay-segmentation
    from assay_segmentation.downstream import RunSummary

    def fake_run(config, *, output, executor, verbose, **options):  # options: overrides, tasks, allow_import
        print("progress line")  # what the runner prints on the way
        return RunSummary(output_dir=tmp_path, versions=3, tasks=("t",), files=(tmp_path / "a.json",), images=6,
                          fitted={}, seconds=1.5)

    monkeypatch.setattr(downstream, "run_experiments", fake_run)
    assert main(["run", str(tmp_path / "c.yaml"), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"output": str(tmp_path), "versions": 3, "tasks": ["t"], "images": 6,
                                        "files": [str(tmp_path / "a.json")], "seconds": 1.5}
    assert "progress line" in captured.err
    assert main(["run", str(tmp_path / "c.yaml")]) == 0  # without --json: the summary line alone on stdout
    captured = capsys.readouterr()
    assert captured.out.startswith("assay run: 3 versions x 1 tasks (t), 6 image evaluations, 1 files in ")
    assert "progress line" in captured.err and "progress line" not in captured.out


def test_demo_json_sends_the_narrative_to_stderr(monkeypatch, tmp_path, capsys):
    from assay import hookimpl
    from assay.plugins import PluginSystem, use_plugin_system

    section = types.ModuleType("assay_test_fake_section")

    @hookimpl
    def assay_register_demo_sections(register):
        register("fake", lambda out_dir: print(f"narrative for {out_dir.name}"), title="a fake section")

    section.assay_register_demo_sections = assay_register_demo_sections
    system = PluginSystem(entry_points=False)
    system.register_plugin(section)
    with use_plugin_system(system):
        assert main(["demo", "--section", "fake", "-o", str(tmp_path / "d"), "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert [s["section"] for s in data["sections"]] == ["fake"]
    assert data["sections"][0]["folder"] == str(tmp_path / "d" / "fake")
    assert "narrative for fake" in captured.err


def _ue_files(tmp_path: Path) -> Path:
    rows = [{"log_probs": [-0.1], "correct": 1}, {"log_probs": [-2.0], "correct": 0},
            {"log_probs": [-0.5, -0.5], "correct": 1}]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text("data: d.jsonl\nestimators: [msp]\ngen_metrics: [accuracy]\n"
                                     "ue_metrics: [prr, rpp]\nsave_path: out\nplots: false\n")
    return tmp_path / "c.yaml"


def test_ue_json_and_metric_flag(tmp_path, capsys):
    config = _ue_files(tmp_path)
    assert main(["ue", str(config), "-m", "roc_auc", "-o", str(tmp_path / "o"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # -m replaces ue_metrics of the config: only roc_auc. msp = 0.1, 2.0, 1.0: the one failure is
    # the most uncertain, so as a failure detector the uncertainty ranks perfectly: ROC-AUC 1
    # the interval is NaN: with 3 examples a resample has no failure with probability (2/3)^3, so some of
    # the 1000 resamples leave ROC-AUC undefined; the only estimator is the best of its column
    assert data["scores"] == [{"level": "sequence", "estimator": "msp", "gen_metric": "accuracy",
                               "ue_metric": "roc_auc", "value": 1.0, "ci_low": "NaN", "ci_high": "NaN",
                               "not_worse_than_best": True}]
    assert data["resampling"]["n_resamples"] == 1000 and data["resampling"]["seed"] == 0
    assert data["output"] == str(tmp_path / "o") and (tmp_path / "o" / "table.md").is_file()


def test_ue_unknown_metric_names_the_flag(tmp_path, capsys):
    assert main(["ue", str(_ue_files(tmp_path)), "--metric", "roc_aux"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay ue: error: --metric 'roc_aux': unknown UE metric") and "roc_auc" in err


# --------------------------------------------------------------------------- assay table / plot: -m
def _results(root: Path) -> Path:
    """A hand-made 'assay run' output: model M, seeds 1..3, task t with metrics x and y on split id."""
    versions = [{"pred_model": "M", "params": {"pred_model": "M", "seed": s}, "version_name": f"seed{s}",
                 "unc_types": ["u"], "aggregations": [], "output_dir": f"M/seed{s}"} for s in (1, 2, 3)]
    metrics = [{"name": n, "higher_is_better": n == "x", "levels": [], "per_image": False} for n in ("x", "y")]
    manifest = {"versions": versions, "tasks": {"t": {"file_name": "t.json", "datasets": ["id"],
                                                      "combine_splits": False, "metrics": metrics}}}
    root.mkdir(parents=True, exist_ok=True)
    (root / "assay-results.json").write_text(json.dumps(manifest))
    for seed, value in {1: 0.2, 2: 0.4, 3: 0.9}.items():
        (root / "M" / f"seed{seed}" / "id").mkdir(parents=True)
        (root / "M" / f"seed{seed}" / "id" / "t.json").write_text(
            json.dumps({"mean": {"metrics": {"x": value, "y": 1 - value}}}))
    return root


@pytest.mark.parametrize("select", [["-m", "x"], ["--metric", "x"], ["--metrics", "x"]])
def test_table_selects_metrics_with_metric_and_the_old_spelling(tmp_path, capsys, select):
    assert main(["table", str(_results(tmp_path / "r")), *select, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["metric"] for c in data["columns"]] == ["x"]
    (cell,) = data["cells"]
    assert cell["row"]["pred_model"] == "M" and sorted(cell["values"]) == [0.2, 0.4, 0.9]
    assert cell["mean"] == pytest.approx(0.5)  # (0.2 + 0.4 + 0.9) / 3
    assert cell["std"] == pytest.approx(math.sqrt((0.09 + 0.01 + 0.16) / 2))


@pytest.mark.parametrize(("typed", "shown"), [("-m", "-m"), ("--metrics", "--metrics")])
def test_table_unknown_metric_names_the_flag_typed_not_the_parameter(tmp_path, capsys, typed, shown):
    assert main(["table", str(_results(tmp_path / "r")), typed, "z"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"assay table: error: {shown}: must name metrics of these results (x, y)")
    assert "parameter" not in err


def test_plot_and_table_repeat_metric():
    subparsers = _subparsers()
    for command in ("table", "plot"):
        args = subparsers[command].parse_args(["res", "-m", "x", "--metric", "y", "--along", "d", "-o", "p.png"]
                                              if command == "plot" else ["res", "-m", "x", "--metric", "y"])
        assert args.metric == ["x", "y"]


# --------------------------------------------------------------------------- errors name flags
def test_parameter_names_become_the_flag_typed():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards")
    parser.add_argument("-n", "--n-resamples", dest="n_resamples")
    message = "The 'num_shards' parameter of parallelEvaluate must be an integer >= 1. Got 0 instead."
    expected = "--shards: must be an integer >= 1. Got 0 instead."
    assert flag_for_parameters(message, parser, ["--shards", "0"]) == expected
    message = "Got 3 but the 'n_resamples' parameter of bootstrap must be >= 1."  # not at the start: no colon
    assert flag_for_parameters(message, parser, ["-n", "3"]) == "Got 3 but -n must be >= 1."
    message = "The 'beta' parameter of f1 must be >= 0."  # an option of a metric spec, not a flag: unchanged
    assert flag_for_parameters(message, parser, []) == message


def test_a_library_error_in_a_command_names_the_flag(monkeypatch, capsys):
    def raises(args):
        raise InvalidParameterError("The 'num_shards' parameter of parallelEvaluate must be an integer >= 1. "
                                    "Got 0 instead.")

    monkeypatch.setattr(parse_eval_cli, "run", raises)  # the plugin's registered command calls it
    assert main(["parse-eval", "g.conllu", "s.conllu", "--shards", "3"]) == 2
    assert capsys.readouterr().err == ("assay parse-eval: error: --shards: must be an integer >= 1. "
                                       "Got 0 instead.\n")


# --------------------------------------------------------------------------- assay list KIND NAME
def test_list_metric_f1_shows_doc_options_defaults_and_orientation(capsys):
    assert main(["list", "metric", "f1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("metric f1  [classic")
    assert "F-beta" in out and "fbeta_score" in out  # the docstring, with its formula and reference
    options = {line.split()[0]: line.split("=", 1)[1].strip() for line in out.splitlines()
               if line.startswith("  ") and " = " in line}
    # sklearn's fbeta_score defaults: average='binary', pos_label=1, beta given; zero_division 'warn'
    assert options["average"] == "'binary'" and options["beta"] == "1.0" and options["pos_label"] == "1"
    assert options["zero_division"] == "'warn'"
    assert "main score 'f1'; higher is better; needs references" in out


def test_list_ue_metric_shows_the_convention_and_its_alternatives(capsys):
    assert main(["list", "ue_metric", "aurc", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # CONVENTIONS.md: aurc under fd-shifts (default), torch-uncertainty, values, lm-polygraph
    assert data["convention"]["default"] == "fd-shifts"
    assert set(data["convention"]["choices"]) == {"fd-shifts", "torch-uncertainty", "values", "lm-polygraph"}
    assert data["higher_is_better"] is False
    assert main(["list", "ue_metric", "prr"]) == 0
    out = capsys.readouterr().out
    assert "max_rejection  = 1.0" in out and "normalize      = False" in out


def test_list_unknown_name_is_an_error_with_the_close_match(capsys):
    assert main(["list", "metric", "f2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay list: error: NAME 'f2': ") and "f1" in err


# --------------------------------------------------------------------------- assay demo --help
def test_demo_help_lists_every_section_with_a_line(capsys):
    from assay.demo import sections

    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines()]
    assert {"treebank", "metrics", "uncertainty", "segmentation", "spark"} <= set(sections())
    for name in sections():
        line = next((line for line in lines if line.split(" ", 1)[0] == name), "")
        assert len(line) > len(name) + 10, name


# --------------------------------------------------------------------------- streams and reprs
GOLD = ("1\tA\ta\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\tB\tb\tVERB\t_\t_\t0\troot\t_\t_\n"
        "3\tC\tc\tNOUN\t_\t_\t2\tobj\t_\t_\n\n")
SYSTEM = GOLD.replace("3\tC\tc\tNOUN\t_\t_\t2\tobj", "3\tC\tc\tNOUN\t_\t_\t1\tobj")  # C attached to A


@pytest.fixture
def parse_files(tmp_path):
    (tmp_path / "g.conllu").write_text(GOLD)
    (tmp_path / "s.conllu").write_text(SYSTEM)
    return str(tmp_path / "g.conllu"), str(tmp_path / "s.conllu")


def test_parse_eval_headers_and_numbers_share_stdout(parse_files, capsys, monkeypatch):
    import logging

    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # pytest's log capture would take the lines
    assert main(["parse-eval", *parse_files, "--executor", "threads", "--workers", "2"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    header = lines.index("UAS (parallel, 2 threads):")
    # UAS 2/3 (C's head is wrong); the seed's second line adds one root per sentence: 3/4
    assert lines[header + 1].endswith("Unlabelled accuracy: 0.666666666667 (2, 3)")
    assert lines[header + 2].endswith("Unlabelled attachment accuracy: 0.750000000000 (3, 4)")
    assert "Executor(" not in captured.out + captured.err
    assert captured.err == ""


def test_parse_eval_json_is_only_json(parse_files, tmp_path, capsys):
    assert main(["parse-eval", *parse_files, "--json", "-o", str(tmp_path / "scores.json")]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["signature"].startswith("evaluators:uas,las,clas,tagging_accuracy|format:conllu|")
    data = document["scores"]
    uas = next(d for d in data if d["metric"] == "uas")
    assert (uas["correct"], uas["total"]) == (2, 3) and uas["value"] == pytest.approx(2 / 3)
    upos = next(d for d in data if d["metric"] == "tagging_accuracy")
    assert (upos["correct"], upos["total"]) == (3, 3)
    assert json.loads((tmp_path / "scores.json").read_text()) == document
    assert "UAS (sequential):" in captured.err  # the headers, with the EVALUATOR lines, on stderr


def test_executors_are_described_in_words():
    from assay import load_executor

    with load_executor("processes", workers=2) as processes, load_executor("threads", workers=1) as threads:
        assert describe_executor(processes) == "2 worker processes"
        assert describe_executor(threads) == "1 thread"
    with load_executor("serial") as serial:
        assert describe_executor(serial) == "this process"
