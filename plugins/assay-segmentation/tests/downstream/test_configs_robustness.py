"""Bad config files for every config reader: ``assay run``, ``assay ue``, ``assay table``, ``assay plot``.

Each case asserts a clear error (an ``AssayError`` subclass) that names the file, the key
path and, for a typo, the closest known key; and that nothing was written or run.
The counts per command are in docs/reliability.md.
"""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from assay.cli import main
from assay.configfile import load_yaml
from assay.errors import AssayError, MissingResultError, ResultFileError
from assay_segmentation.downstream import ConfigError, build_grid, load_config, run_experiments
from assay_segmentation.report import load_results, render_table

RUN = """
base_path: data
output_path: out
experiments:
  - iter_params: {pred_model: [A], seed: [1, 2]}
    naming_scheme_version: "seed{seed}"
    prediction_models:
      A: {unc_types: [u], aggregations: [image_mean]}
tasks: [segmentation_performance, ambiguity_modeling]
task_params:
  segmentation_performance: {datasets: [id]}
  ambiguity_modeling: {datasets: [id], function: ambiguity_modeling}
"""

#: a 9-level "billion laughs": 9**9 (387 million) strings once expanded, 342 bytes (the issue's had 971)
BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9 if i else ['"lol"'] * 9) + "]\n"
    for i in range(9))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- assay run
# (edit of RUN, text the error must contain: key path, close match, expectation)
RUN_BAD = [
    # unknown keys at every depth, each with the closest known key
    (("tasks:", "tsks:"), ["tsks", "Did you mean 'tasks'?"]),
    (("output_path: out", "output_pth: out"), ["output_pth", "Did you mean 'output_path'?"]),
    (('naming_scheme_version: "seed{seed}"', 'naming_scheme_verison: "seed{seed}"'),
     ["experiments[0].naming_scheme_verison", "Did you mean 'naming_scheme_version'?"]),
    (("A: {unc_types: [u], aggregations", "A: {unc_type: [u], aggregations"),
     ["experiments[0].prediction_models.A.unc_type", "Did you mean 'unc_types'?"]),
    (("ambiguity_modeling: {datasets", "ambiguity_modelling: {datasets"),
     ["task_params.ambiguity_modelling", "Did you mean 'ambiguity_modeling'?"]),
    (("segmentation_performance: {datasets: [id]}", "segmentation_performance: {dataset: [id]}"),
     ["task_params.segmentation_performance.dataset", "Did you mean 'datasets'?"]),
    (("function: ambiguity_modeling}", "function: ambiguity_modelling}"),
     ["task_params.ambiguity_modeling.function", "Did you mean 'ambiguity_modeling'?"]),
    (("segmentation_performance: {datasets: [id]}",
      'segmentation_performance: {datasets: [id], function: "segmentation_performance[empty_valu=1.0]"}'),
     ["task_params.segmentation_performance.function.empty_valu", "Did you mean 'empty_value'?"]),
    (("segmentation_performance: {datasets: [id]}",
      "segmentation_performance: {datasets: [id], function: {name: segmentation_performance, emptyvalue: 1}}"),
     ["task_params.segmentation_performance.function.emptyvalue", "Did you mean 'empty_value'?"]),
    # wrong types
    (("tasks: [segmentation_performance, ambiguity_modeling]", "tasks: segmentation_performance"),
     ["tasks", "list of names"]),
    (("segmentation_performance: {datasets: [id]}", "segmentation_performance: {datasets: id}"),
     ["task_params.segmentation_performance.datasets", "list of names"]),
    (('naming_scheme_version: "seed{seed}"', "naming_scheme_version: [seed]"),
     ["experiments[0].naming_scheme_version", "format string"]),
    (("output_path: out", "output_path: out\nexecutor: [serial]"), ["executor", "registered executor"]),
    (("seed: [1, 2]", "seed: 2"), ["experiments[0].iter_params.seed", "non-empty list"]),
    (("seed: [1, 2]", "seed: [1, [2]]"), ["experiments[0].iter_params.seed[1]", "a string or a number"]),
    # bad naming-scheme format strings: the key, the scheme and the available fields
    (('"seed{seed}"', '"seed{sed}"'), ["experiments[0].naming_scheme_version", "{sed}", "Did you mean {seed}?",
                                       "Available fields: ", "seed"]),
    (('"seed{seed}"', '"seed{"'), ["experiments[0].naming_scheme_version", "'seed{'", "Available fields"]),
    (('"seed{seed}"', '"seed}"'), ["experiments[0].naming_scheme_version", "'seed}'", "Available fields"]),
    (('"seed{seed}"', '"seed{0}"'), ["experiments[0].naming_scheme_version", "{0}", "Available fields"]),
    (('"seed{seed}"', '"seed{seed.real}"'), ["experiments[0].naming_scheme_version", "seed.real"]),
    (('"seed{seed}"', '"seed{pred_model:d}"'), ["experiments[0].naming_scheme_version", "formats"]),
    (('naming_scheme_version: "seed{seed}"', 'naming_scheme_version: "seed{seed}"\n'
      '    naming_scheme_pred_model: "{model}"'),
     ["experiments[0].naming_scheme_pred_model", "{model}", "Available fields: pred_model, seed"]),
    (('naming_scheme_version: "seed{seed}"', 'naming_scheme_version: "seed{seed}"\n'
      '    references: "{base_path}/refs/{splt}"'), ["experiments[0].references", "{splt}", "Did you mean {split}?"]),
    # output confinement: '..' and absolute naming schemes
    (('"seed{seed}"', '"../../data/seed{seed}"'),
     ["experiments[0].naming_scheme_version", "outside the output folder"]),
    (('naming_scheme_version: "seed{seed}"', 'naming_scheme_version: "seed{seed}"\n'
      '    naming_scheme_pred_model: "/tmp/{pred_model}"'),
     ["experiments[0].naming_scheme_pred_model", "outside the output folder", "/tmp/A"]),
    (('naming_scheme_version: "seed{seed}"', 'naming_scheme_version: "seed{seed}"\n'
      '    naming_scheme_pred_model: ".."'), ["naming_scheme_pred_model", "outside the output folder"]),
    # two versions, one output folder
    (('"seed{seed}"', '"fixed"'), ["experiments[0].naming_scheme_version", "same output folder",
                                   "{'pred_model': 'A', 'seed': 1}", "{'pred_model': 'A', 'seed': 2}"]),
]


@pytest.mark.parametrize("edit, expect", RUN_BAD, ids=[e[1][0][:40] for e in RUN_BAD])
def test_run_config_errors(tmp_path, edit, expect):
    assert edit[0] in RUN
    path = write(tmp_path / "c.yaml", RUN.replace(*edit, 1))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    assert msg.startswith(str(path) + ": "), msg
    for part in expect:
        assert part in msg, msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]  # nothing written, nothing run


def test_run_config_typo_in_a_defaults_file_names_that_file(tmp_path):
    tasks = write(tmp_path / "parts" / "tasks.yaml",
                  "# @package _global_\ntask_params:\n  ambiguity_modelling: {datasets: [id]}\n")
    main_file = write(tmp_path / "c.yaml", "defaults: [parts/tasks]\n" + RUN.split("task_params:")[0])
    with pytest.raises(ConfigError, match="Did you mean 'ambiguity_modeling'") as info:
        load_config(main_file)
    assert str(info.value).startswith(f"{tasks}: task_params.ambiguity_modelling: unknown task")


def test_run_accepts_top_level_definitions_used_by_interpolation(tmp_path):
    text = RUN.replace("base_path: data", "root: data\nbase_path: ${root}")
    assert load_config(write(tmp_path / "c.yaml", text))["base_path"] == str(tmp_path / "data")
    with pytest.raises(ConfigError, match="unknown key 'root'"):  # defined but used by nothing: a typo
        load_config(write(tmp_path / "d.yaml", "root: data\n" + RUN))


def test_duplicate_output_folders_across_experiments_name_both(tmp_path):
    cfg = load_config(write(tmp_path / "c.yaml", RUN))
    twice = {**cfg, "experiments": cfg["experiments"] + [{**cfg["experiments"][0], "name": "second"}]}
    with pytest.raises(ConfigError, match=r"experiment0:A/seed1 .* and second:A/seed1 .* same output folder"):
        build_grid(twice)


def test_run_split_names_that_escape_are_refused_before_anything_runs(tmp_path):
    path = write(tmp_path / "c.yaml", RUN.replace("{datasets: [id]}", "{datasets: ['../../../escaped']}", 1))
    with pytest.raises(ConfigError, match=r"task_params.segmentation_performance.datasets: .*outside the output"):
        run_experiments(path, executor="serial")
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "out").exists()


def test_run_output_override_is_the_confinement_root(tmp_path):
    assert load_config(write(tmp_path / "c.yaml", RUN.replace('"seed{seed}"', '"../seed{seed}"')))  # out/seed1
    with pytest.raises(ConfigError, match="outside the output folder"):
        load_config(write(tmp_path / "c.yaml", RUN.replace('"seed{seed}"', '"../../seed{seed}"')))
    cfg = {"base_path": str(tmp_path / "d"), "output_path": str(tmp_path / "o"), "config_file": "x.yaml",
           "experiments": [{"iter_params": {"pred_model": ["A"]}, "naming_scheme_pred_model": "../../{pred_model}",
                            "prediction_models": {"A": {"unc_types": ["u"]}}}]}
    with pytest.raises(ConfigError, match=r"x.yaml: experiments\[0\].naming_scheme_pred_model: .*outside"):
        build_grid(cfg)


# --------------------------------------------------------------------------- the shared YAML loader
def _bounded(call, *args):
    start = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        call(*args)
    assert time.perf_counter() - start < 2.0
    return str(info.value)


def test_alias_bomb_is_refused_quickly_by_every_reader(tmp_path, capsys):
    assert len(BOMB) < 1000
    bomb = write(tmp_path / "bomb.yaml", BOMB)
    assert "alias bomb" in _bounded(load_yaml, bomb)
    run_cfg = write(tmp_path / "run.yaml", RUN + BOMB)
    assert _bounded(load_config, run_cfg).startswith(f"{run_cfg}: expected at most 100,000 YAML nodes")
    ue_cfg = write(tmp_path / "ue.yaml", "data: d.jsonl\nestimators: [msp]\ngen_metrics: [accuracy]\n"
                                         "ue_metrics: [prr]\n" + BOMB)
    start = time.perf_counter()
    assert main(["ue", str(ue_cfg)]) != 0
    assert main(["plot", str(tmp_path), "--along", "pred_model", "-o", str(tmp_path / "p.png"),
                 "--config", str(bomb)]) != 0
    assert time.perf_counter() - start < 4.0
    err = capsys.readouterr().err
    assert f"{ue_cfg}: expected at most" in err and f"{bomb}: expected at most" in err


@pytest.mark.parametrize("text, expect", [
    ("a: &a [1, *a]\n", "recursive alias"),
    ("[" * 100_000 + "]" * 100_000, "nested less deeply"),
    ("x: !!python/object/apply:os.system ['true']\n", "valid YAML"),
    ("a: [\n", "valid YAML"),
])
def test_loader_refuses_hostile_yaml(tmp_path, text, expect):
    assert expect in _bounded(load_yaml, write(tmp_path / "c.yaml", text))


def test_loader_refuses_non_utf8_large_files_and_directories(tmp_path):
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes("base_path: données\n".encode("latin-1"))
    assert f"{latin}: expected UTF-8 text, got byte 0xe9 at offset 15" in _bounded(load_yaml, latin)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (5 * 1024 * 1024))
    assert "at most 4,194,304 bytes" in _bounded(load_yaml, big)
    assert "got a directory" in _bounded(load_yaml, tmp_path)


def test_interpolation_and_defaults_fan_out_are_bounded(tmp_path):
    levels = ["l0: [" + ", ".join(["x"] * 10) + "]"]
    levels += [f"l{i}: [" + ", ".join([f'"${{l{i - 1}}}"'] * 10) + "]" for i in range(1, 9)]
    path = write(tmp_path / "c.yaml", RUN.replace("base_path: data", 'base_path: data\nexecutor: "${l8}"') +
                 "\n".join(levels) + "\n")
    assert "once interpolations are expanded" in _bounded(load_config, path)
    for i in range(6):  # each file lists the next one 10 times: 10**6 reads without a bound
        write(tmp_path / f"f{i}.yaml", "defaults: [" + ", ".join([f"f{i + 1}"] * 10) + "]\n")
    write(tmp_path / "f6.yaml", "executor: serial\n")
    assert "at most 200 config files" in _bounded(load_config, write(tmp_path / "m.yaml", "defaults: [f0]\n" + RUN))


# --------------------------------------------------------------------------- assay ue
UE = "data: d.jsonl\nestimators: [msp]\ngen_metrics: [accuracy]\nue_metrics: [prr]\n"
UE_BAD = [
    (("ue_metrics:", "ue_metric:"), ["ue_metric", "Did you mean 'ue_metrics'?"]),
    (("data:", "dta:"), ["dta", "Did you mean 'data'?"]),
    (("[msp]", "[mps]"), ["estimators[0]", "Did you mean 'msp'?"]),
    (("[prr]", "[prr, rocauc]"), ["ue_metrics[1]", "Did you mean 'roc_auc'?"]),
    (("[prr]", "['prr[max_rejecton=0.5]']"), ["ue_metrics[0].max_rejecton", "Did you mean 'max_rejection'?"]),
    (("[accuracy]", "[acuracy]"), ["gen_metrics[0]", "Did you mean 'accuracy'?"]),
    (("[msp]", "msp"), ["estimators", "non-empty list of names"]),
    (("[msp]", "[]"), ["estimators", "non-empty list of names"]),
    (("data: d.jsonl", "data: 3"), ["data", "a path"]),
    (("data: d.jsonl\n", ""), ["data", "expected this key"]),
    (("[prr]\n", "[prr]\nnan_policy: ignore\n"), ["nan_policy", "'drop' or 'raise'"]),
    (("[prr]\n", "[prr]\nplots: yes please\n"), ["plots", "true or false"]),
    (("[prr]\n", "[prr]\nsave_path: [a]\n"), ["save_path", "a path"]),
]


@pytest.mark.parametrize("edit, expect", UE_BAD, ids=[e[1][0] for e in UE_BAD])
def test_ue_config_errors(tmp_path, capsys, edit, expect):
    assert edit[0] in UE
    path = write(tmp_path / "c.yaml", UE.replace(*edit, 1))
    assert main(["ue", str(path)]) != 0
    err = capsys.readouterr().err
    assert f"error: {path}: " in err
    for part in expect:
        assert part in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_ue_config_not_utf8_and_not_a_mapping(tmp_path, capsys):
    bad = tmp_path / "c.yaml"
    bad.write_bytes(b"data: \xff\n")
    assert main(["ue", str(bad)]) != 0
    write(tmp_path / "l.yaml", "- data\n")
    assert main(["ue", str(tmp_path / "l.yaml")]) != 0
    err = capsys.readouterr().err
    assert f"{bad}: expected UTF-8 text" in err and "l.yaml: (top level): expected a mapping" in err


# --------------------------------------------------------------------------- assay table
def _results(root: Path, values: dict[int, float | None]) -> Path:
    """A hand-made 'assay run' output: model M, seeds 1..3, task t with metric x on split id."""
    versions = [{"pred_model": "M", "params": {"pred_model": "M", "seed": s}, "version_name": f"seed{s}",
                 "unc_types": ["u"], "aggregations": [], "output_dir": f"M/seed{s}"} for s in (1, 2, 3)]
    manifest = {"versions": versions, "tasks": {"t": {"file_name": "t.json", "datasets": ["id"],
                                                      "combine_splits": False,
                                                      "metrics": [{"name": "x", "higher_is_better": True,
                                                                   "levels": [], "per_image": False}]}}}
    root.mkdir(parents=True, exist_ok=True)
    (root / "assay-results.json").write_text(json.dumps(manifest))
    for seed, value in values.items():
        (root / "M" / f"seed{seed}" / "id").mkdir(parents=True)
        (root / "M" / f"seed{seed}" / "id" / "t.json").write_text(json.dumps({"mean": {"metrics": {"x": value}}}))
    return root


def test_table_all_files_present_gives_the_mean_over_seeds(tmp_path):
    table = load_results(_results(tmp_path / "r", {1: 0.2, 2: 0.4, 3: 0.9}))
    (row,), (col,) = table.rows, table.columns
    assert table.mean(row, col) == pytest.approx(0.5)  # (0.2 + 0.4 + 0.9) / 3
    assert table.std(row, col) == pytest.approx(((0.09 + 0.01 + 0.16) / 2) ** 0.5)


def test_table_missing_seed_file_is_an_error_naming_it(tmp_path, capsys):
    res = _results(tmp_path / "r", {1: 0.2, 3: 0.9})  # seed 2 deleted
    with pytest.raises(MissingResultError, match=r"M/seed2/id/t\.json \(version M/seed2, task t\)"):
        load_results(res)
    assert main(["table", str(res)]) != 0
    err = capsys.readouterr().err
    assert "1 result file(s) listed by the manifest are missing" in err and "--allow-missing" in err


def test_table_allow_missing_marks_the_cell(tmp_path, capsys):
    res = _results(tmp_path / "r", {1: 0.2, 3: 0.9})
    table = load_results(res, allow_missing=True)
    (row,), (col,) = table.rows, table.columns
    assert table.missing == {(row, col): (1, 3)}
    for fmt in ("markdown", "latex", "html"):
        text = render_table(table, fmt)
        assert "n/a (1 of 3 missing)" in text and "55.00" not in text  # not the mean of the two left
    assert main(["table", str(res), "--allow-missing"]) == 0
    assert "n/a (1 of 3 missing)" in capsys.readouterr().out


@pytest.mark.parametrize("damage, expect", [
    (lambda r: (r / "M/seed1/id/t.json").write_text("[1, 2]"), "t.json: expected the results of task 't' (a JSON "
                                                                 "object), got a JSON list"),
    (lambda r: (r / "M/seed1/id/t.json").write_text('{"mean": '), "t.json: expected the results of task 't' (JSON)"),
    (lambda r: (r / "M/seed1/id/t.json").write_bytes(b'{"mean": "\xff"}'), "t.json: expected the results"),
    (lambda r: (r / "assay-results.json").write_text("[]"), "assay-results.json: expected the manifest"),
    (lambda r: (r / "assay-results.json").write_text('{"versions": {}, "tasks": {}}'),
     "assay-results.json: versions: expected a list"),
    (lambda r: (r / "assay-results.json").write_text('{"versions": [{}], "tasks": {}}'),
     "assay-results.json: versions[0]: expected a mapping with pred_model"),
    (lambda r: (r / "assay-results.json").unlink(), "assay-results.json: expected the manifest of 'assay run' here"),
])
def test_table_corrupt_files_name_the_file(tmp_path, capsys, damage, expect):
    res = _results(tmp_path / "r", {1: 0.2, 2: 0.4, 3: 0.9})
    damage(res)
    with pytest.raises(ResultFileError, match=None) as info:
        load_results(res)
    assert expect in str(info.value)
    assert main(["table", str(res)]) != 0
    assert expect in capsys.readouterr().err


def test_table_negative_digits(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:  # argparse rejects it, naming the flag (assay.cli._args)
        main(["table", str(_results(tmp_path / "r", {1: 0.2, 2: 0.4, 3: 0.9})), "--digits", "-1"])
    assert info.value.code == 2
    assert "argument --digits: expected a non-negative integer; got -1" in capsys.readouterr().err


# --------------------------------------------------------------------------- assay plot
PLOT_BAD = [
    ("colouring: {}\n", ["colouring", "Did you mean 'coloring'?"]),
    ("filter: {pred_modle: [M]}\n", ["filter.pred_modle", "Did you mean 'pred_model'?"]),
    ("filter: {pred_model: [N]}\n", ["filter.pred_model[0]", "unknown pred_model 'N'", "Values in these results: M"]),
    ("filter: {unc_type: {pred_model: [Mm]}}\n", ["filter.unc_type.pred_model[0]", "Did you mean 'M'?"]),
    ("ordering: {pred_model: M}\n", ["ordering.pred_model", "a list of values"]),
    ("ordering: {unc_typ: [u]}\n", ["ordering.unc_typ", "Did you mean 'unc_type'?"]),
    ("coloring: {pred_model: {MM: red}}\n", ["coloring.pred_model.MM", "Did you mean 'M'?"]),
    ("coloring: {pred_model: {M: 3}}\n", ["coloring.pred_model.M", "matplotlib colour"]),
    ("df_naming: {'t: y id': Y}\n", ["df_naming.t: y id", "Did you mean 't: x id'?"]),
    ("filter: [M]\n", ["filter", "a mapping"]),
    ("- filter\n", ["(top level)", "a mapping"]),
]


@pytest.mark.parametrize("text, expect", PLOT_BAD, ids=[e[1][0] for e in PLOT_BAD])
def test_plot_config_errors(tmp_path, capsys, text, expect):
    res = _results(tmp_path / "r", {1: 0.2, 2: 0.4, 3: 0.9})
    cfg = write(tmp_path / "plot.yaml", text)
    assert main(["plot", str(res), "--along", "pred_model", "-o", str(tmp_path / "p.png"), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"error: --config {cfg}: " in err
    for part in expect:
        assert part in err, err
    assert not (tmp_path / "p.png").exists()


def test_plot_config_not_utf8_and_missing_results(tmp_path, capsys):
    res = _results(tmp_path / "r", {1: 0.2, 3: 0.9})
    cfg = tmp_path / "plot.yaml"
    cfg.write_bytes(b"df_naming: {M: \xe9}\n")
    assert main(["plot", str(res), "--along", "pred_model", "-o", str(tmp_path / "p.png"), "--config", str(cfg)]) != 0
    assert main(["plot", str(res), "--along", "pred_model", "-o", str(tmp_path / "p.png")]) != 0
    err = capsys.readouterr().err
    assert f"{cfg}: expected UTF-8 text" in err and "seed2/id/t.json" in err


def test_every_reader_error_is_an_assay_error(tmp_path):
    assert issubclass(ConfigError, AssayError) and issubclass(ResultFileError, AssayError)


def test_run_python_dict_config_is_checked_too(tmp_path):
    import yaml

    cfg = yaml.safe_load(RUN.replace("ambiguity_modeling: {datasets", "ambiguity_modelling: {datasets"))
    cfg.update(base_path=str(tmp_path / "data"), output_path=str(tmp_path / "out"))
    with pytest.raises(ConfigError, match=r"<config dict>: task_params.ambiguity_modelling: .*'ambiguity_modeling'"):
        run_experiments(cfg, executor="serial")
    assert not (tmp_path / "out").exists()


def test_run_cli_config_not_utf8_or_a_directory(tmp_path, capsys):
    latin = tmp_path / "c.yaml"
    latin.write_bytes(RUN.replace("data", "donn\xe9es").encode("latin-1"))
    assert main(["run", str(latin)]) != 0
    assert main(["run", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert f"{latin}: expected UTF-8 text" in err and f"{tmp_path}: expected a config file, got a directory" in err


def test_table_and_plot_flags_with_typos_are_errors(tmp_path, capsys):
    res = str(_results(tmp_path / "r", {1: 0.2, 2: 0.4, 3: 0.9}))
    assert main(["table", res, "--metrics", "xy"]) != 0  # was: an empty table
    assert main(["table", res, "--over", "sed"]) != 0  # was: one row per seed, no mean
    assert main(["plot", res, "--along", "pred_model", "-o", str(tmp_path / "p.png"), "--metrics", "xx"]) != 0
    err = capsys.readouterr().err
    assert "metrics of these results (x). Did you mean 'x'? Got 'xy' instead." in err
    assert "iterated parameter of these results (pred_model, seed). Did you mean 'seed'? Got 'sed'" in err
    assert "Got 'xx' instead." in err


def test_unwritable_outputs_fail_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "out"
    blocker.write_text("a file where the output folder should be")
    path = write(tmp_path / "c.yaml", RUN)  # output_path: out; no data: the check comes before any reading
    with pytest.raises(ConfigError, match=r"c.yaml: output_path: expected a folder assay can write to, got .*out"):
        run_experiments(path, executor="serial")
    res = str(_results(tmp_path / "r", {1: 0.2, 2: 0.4, 3: 0.9}))
    assert main(["table", res, "-o", str(blocker / "t.md")]) == 2
    assert f"assay table: error: -o {blocker / 't.md'}: " in capsys.readouterr().err  # the flag as typed


def test_table_marks_a_mean_over_fewer_seeds_because_of_nan(tmp_path):
    table = load_results(_results(tmp_path / "r", {1: 0.2, 2: None, 3: 0.6}))  # NaN is written as null
    text = render_table(table, "markdown")
    assert "40.00 ± 28.28 (1 of 3 NaN)" in text  # mean (0.2 + 0.6) / 2, std sqrt(2 * 0.2**2) of the two left


def test_two_tasks_writing_the_same_file_are_refused(tmp_path):
    text = RUN.replace("tasks: [segmentation_performance, ambiguity_modeling]",
                       "tasks: [segmentation_performance, ambiguity_modeling, ncc_again]")
    text += "  ncc_again: {datasets: [id], function: ambiguity_modeling}\n"
    with pytest.raises(ConfigError, match=r"tasks 'ambiguity_modeling' and 'ncc_again' would both write .*"
                                          r"ambiguity_modeling\.json"):
        run_experiments(write(tmp_path / "c.yaml", text), executor="serial")
    assert not (tmp_path / "out").exists()


def test_plot_along_typo_has_a_close_match(tmp_path, capsys):
    res = str(_results(tmp_path / "r", {1: 0.2, 2: 0.4, 3: 0.9}))
    assert main(["plot", res, "--along", "pred_modl", "-o", str(tmp_path / "p.png")]) != 0
    assert "Did you mean 'pred_model'? Got 'pred_modl' instead." in capsys.readouterr().err
