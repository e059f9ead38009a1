"""The ValUES workflow moved from the core (assay.downstream, assay.report, assay.cli.run|table|plot) to this
plugin; the old import paths still give the same objects, and without the plugin they name the install."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap

import pytest

import assay
import assay.downstream
import assay.report
import assay_segmentation.downstream
import assay_segmentation.report
from assay.errors import MissingDependencyError

#: module paths of the core before the move -> where the code is now
MOVED_MODULES = {
    **{f"assay.downstream.{m}": f"assay_segmentation.downstream.{m}"
       for m in ("compose", "config", "data", "grid", "results", "runner", "targets", "values", "values_runner")},
    **{f"assay.report.{m}": f"assay_segmentation.report.{m}"
       for m in ("collect", "intervals", "plots", "tables", "values_config", "values_plots", "values_results")},
}

#: the names the two packages exported before the move (their __all__ then), written out here
OLD_DOWNSTREAM = ["MANIFEST", "ConfigError", "ExperimentVersion", "ImageData", "MetricInfo", "RunSummary", "Task",
                  "TaskContext", "build_grid", "list_images", "load_config", "load_image", "mean_tree", "read_json",
                  "read_manifest", "run_experiments", "validate_config", "write_json_atomic"]
OLD_REPORT = ["FORMATS", "Column", "ResultTable", "bar_data", "bar_plot", "check_plot_options", "colour_scale",
              "load_results", "render_table", "to_grid", "to_html", "to_latex", "to_markdown"]


def test_the_old_package_names_are_the_plugins_objects():
    assert sorted(assay.downstream.__all__) == sorted(OLD_DOWNSTREAM)
    assert sorted(assay.report.__all__) == sorted(OLD_REPORT)
    for name in OLD_DOWNSTREAM:
        assert getattr(assay.downstream, name) is getattr(assay_segmentation.downstream, name), name
    for name in OLD_REPORT:
        assert getattr(assay.report, name) is getattr(assay_segmentation.report, name), name
    assert assay.run_experiments is assay_segmentation.downstream.run_experiments
    from assay.downstream import load_config, run_experiments  # the documented form
    from assay.report import render_table
    assert (load_config, run_experiments, render_table) == (
        assay_segmentation.downstream.load_config, assay_segmentation.downstream.run_experiments,
        assay_segmentation.report.render_table)


def test_the_task_contract_stays_in_the_core():
    from assay.downstream.task import ExperimentVersion, ImageData, MetricInfo, Task, TaskContext

    for cls in (ExperimentVersion, ImageData, MetricInfo, Task, TaskContext):
        assert cls.__module__ == "assay.downstream.task"
        assert getattr(assay_segmentation.downstream, cls.__name__) is cls


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_every_old_module_path_imports_the_moved_names(old):
    new = importlib.import_module(MOVED_MODULES[old])
    alias = importlib.import_module(old)
    public = getattr(new, "__all__", None) or [n for n in vars(new) if not n.startswith("_")]
    assert public
    for name in public:
        assert getattr(alias, name) is getattr(new, name), f"{old}.{name}"
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        alias.no_such_name  # noqa: B018


def test_documented_submodule_imports():
    from assay.report.intervals import bootstrap_table
    from assay.report.values_config import load_plot_config
    from assay.report.values_plots import plot_values
    from assay_segmentation.report import intervals, values_config, values_plots

    assert (bootstrap_table, load_plot_config, plot_values) == (
        intervals.bootstrap_table, values_config.load_plot_config, values_plots.plot_values)


# Without the plugin: a fresh interpreter in which assay_segmentation cannot be imported (a meta-path
# finder that refuses it, as an uninstalled distribution would), so the core's aliases are what is left.
_WITHOUT_PLUGIN = textwrap.dedent("""
    import importlib.abc, sys

    class NoPlugin(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "assay_segmentation" or name.startswith("assay_segmentation."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoPlugin())
    import assay
    from assay.errors import MissingDependencyError

    from assay.downstream import ImageData, MetricInfo, Task, TaskContext  # the contract needs no plugin
    from assay.downstream.data import ImageData as again
    assert again is ImageData
    for attempt in ("from assay.downstream import run_experiments", "assay.run_experiments",
                    "from assay.report import render_table", "from assay.report.intervals import bootstrap_table",
                    "from assay.downstream.values import build_values_grid"):
        try:
            exec(attempt)
        except MissingDependencyError as exc:
            print(attempt, "->", exc)
        else:
            raise SystemExit(f"no error: {attempt}")
""")


def test_without_the_plugin_the_old_paths_name_the_install():
    done = subprocess.run([sys.executable, "-c", _WITHOUT_PLUGIN], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 5
    for line in lines:
        assert "assay-segmentation is required" in line and "pip install assay-segmentation" in line, line
    assert ("assay.report.intervals.bootstrap_table (it moved to assay_segmentation.report.intervals, in the "
            "assay-segmentation plugin)") in lines[3]


def test_a_module_missing_inside_the_plugin_is_not_reported_as_the_plugin_missing(monkeypatch):
    from assay._relocated import import_moved

    def missing_inner(name):
        raise ModuleNotFoundError("No module named 'hydra'", name="hydra")

    monkeypatch.setattr(importlib, "import_module", missing_inner)
    with pytest.raises(ModuleNotFoundError, match="hydra") as info:
        import_moved("assay_segmentation.downstream.compose", "assay-segmentation", old="assay.downstream.compose")
    assert not isinstance(info.value, MissingDependencyError)


_DECLARED_COMMAND = textwrap.dedent("""
    import contextlib, io, json, sys
    from assay.cli import OWN_COMMANDS, main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([sys.argv[1], "--help"])
        except SystemExit as exc:
            code = exc.code
    plugins = sorted(m for m in sys.modules if m.startswith("assay_") and "." not in m)
    print(json.dumps({"code": code, "help": out.getvalue(), "plugins": plugins, "own": sorted(OWN_COMMANDS)}))
""")


@pytest.mark.parametrize(("command", "words"), [("run", "Hydra overrides of config keys"),
                                                ("table", "--n-resamples"), ("plot", "--along DIM")])
def test_the_commands_are_the_plugins_and_load_it_alone(command, words):
    done = subprocess.run([sys.executable, "-c", _DECLARED_COMMAND, command], capture_output=True, text=True,
                          timeout=120, check=True)
    seen = json.loads(done.stdout)
    assert command not in seen["own"]
    assert seen["code"] == 0 and f"usage: assay {command}" in seen["help"] and words in seen["help"]
    assert seen["plugins"] == ["assay_segmentation"]  # declared in assay.commands: the other plugins stay unloaded
