"""Broken third-party plugins never take assay down, and never go unreported.

Every case installs three throwaway distributions found through real ``assay`` entry
points, loaded in this order: ``rb-a-good`` (registers ``rb_metric``), the broken one
``rb-b-<case>``, and ``rb-c-after`` (registers ``rb_after``). ``assay plugins --json``
(the in-process CLI) must exit 0 with valid JSON, list the good plugins as loaded with
their names usable, name the broken plugin's problem, and print exactly one warning
line on stderr.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import assay
import assay.plugins.names
import assay.plugins.registry
from assay.cli import main
from assay.errors import AmbiguousNameError
from assay.plugins import PluginSystem, problems_summary, use_plugin_system

GOOD = '''
from assay import hookimpl

class Good:
    """A throwaway metric."""

@hookimpl
def assay_register_metrics(register):
    register("{name}", Good)
'''

HOOK = "from assay import hookimpl\n\n@hookimpl\ndef assay_register_metrics(register):\n    {body}\n"

# case id -> (module source, where the problem shows in the JSON, fragment that must be there)
CASES: dict[str, tuple[str, str, str]] = {
    "import_error": ("raise ImportError('needs a library that is not installed')", "error",
                     "ImportError while importing"),
    "missing_dependency": ("import rb_no_such_module_anywhere", "error", "ModuleNotFoundError"),
    "syntax_error": ("def broken(:\n    pass", "error", "SyntaxError"),
    "sys_exit": ("import sys\nsys.exit(3)", "error", "SystemExit while importing"),
    "keyboard_interrupt": ("raise KeyboardInterrupt", "error", "KeyboardInterrupt while importing"),
    "base_exception": ("class Odd(BaseException):\n    pass\nraise Odd('odd')", "error", "Odd while importing"),
    "hook_raises": (HOOK.format(body="raise ValueError('hook failed on purpose')"), "error",
                    "ValueError while registering: hook failed on purpose"),
    "hook_sys_exit": (HOOK.format(body="import sys; sys.exit(0)"), "error", "SystemExit while registering"),
    "hook_keyboard_interrupt": (HOOK.format(body="raise KeyboardInterrupt"), "error",
                                "KeyboardInterrupt while registering"),
    "non_callable_factory": (HOOK.format(body="register('rb_n', 42)"), "error", "factory that is not callable"),
    "bad_name": (HOOK.format(body="register('has space', dict)"), "error", "invalid metric name 'has space'"),
    "name_twice": (HOOK.format(body="register('rb_x', dict); register('rb_x', dict)"), "error",
                   "registered metric 'rb_x' twice"),
    "returns_instead_of_registering": (HOOK.format(body="return {'rb_x': dict}"), "error",
                                       "returned a dict, which assay ignores"),
    "misspelt_hook": ("from assay import hookimpl\n\n@hookimpl\ndef assay_register_metricz(register):\n"
                      "    register('rb_x', dict)\n", "error",
                      "unknown hook assay_register_metricz (did you mean assay_register_metrics?)"),
    "unmarked_hook": ("def assay_register_metrics(register):\n    register('rb_x', dict)\n", "error",
                      "function assay_register_metrics is not marked @hookimpl"),
    "hookwrapper": ("from assay import hookimpl\n\n@hookimpl(hookwrapper=True)\n"
                    "def assay_register_metrics(register):\n    register('rb_x', dict)\n    yield\n", "error",
                    "hook assay_register_metrics is a hookwrapper"),
    "wrapper": ("from assay import hookimpl\n\n@hookimpl(wrapper=True)\n"
                "def assay_register_metrics(register):\n    register('rb_x', dict)\n    return (yield)\n", "error",
                "hook assay_register_metrics is a wrapper"),
    "no_register_argument": ("from assay import hookimpl\n\n@hookimpl\ndef assay_register_metrics():\n    pass\n",
                             "error", "takes no 'register' argument"),
    "wrong_argument_name": ("from assay import hookimpl\n\n@hookimpl\ndef assay_register_metrics(regster):\n"
                            "    pass\n", "error", "regster"),
    "clash": (GOOD.format(name="rb_metric"), "clashes", "rb_metric"),
    "patch_at_import": ("import assay.plugins.names as n\n_orig = n.parse_value\n"
                        "def parse_value(*a, **k):\n    return _orig(*a, **k)\nn.parse_value = parse_value\n",
                        "replaced", "assay.plugins.names.parse_value"),
    "patch_at_registration": (HOOK.format(body="import assay.plugins.registry as r; _o = r.Registry.names; "
                                               "r.Registry.names = lambda self: _o(self)"),
                              "replaced", "assay.plugins.registry.Registry.names"),
}


def make_distribution(root: Path, dist: str, module: str, source: str, ep_name: str) -> None:
    """Write ``module.py`` and a ``*.dist-info`` with an ``assay`` entry point into ``root``."""
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[assay]\n{ep_name} = {module}\n")


@pytest.fixture
def install(tmp_path, monkeypatch):
    """``install({case: source})``: the good plugins around the given broken ones, alone on the allow-list."""
    tag = uuid.uuid4().hex[:8]  # fresh module names: nothing is served from sys.modules
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    # the patching cases replace these; monkeypatch puts the originals back afterwards
    monkeypatch.setattr(assay.plugins.names, "parse_value", assay.plugins.names.parse_value)
    monkeypatch.setattr(assay.plugins.registry.Registry, "names", assay.plugins.registry.Registry.names)
    monkeypatch.syspath_prepend(str(tmp_path))

    def install(broken: dict[str, str]) -> Path:
        make_distribution(tmp_path, "rb-a-good", f"rb_a_good_{tag}", GOOD.format(name="rb_metric"), "rb_a_good")
        make_distribution(tmp_path, "rb-c-after", f"rb_c_after_{tag}", GOOD.format(name="rb_after"), "rb_c_after")
        for case, source in broken.items():
            make_distribution(tmp_path, f"rb-b-{case}", f"rb_b_{case}_{tag}", source, f"rb_{case}")
        allow = ["rb_a_good", "rb_c_after", *(f"rb_{case}" for case in broken)]
        monkeypatch.setenv("ASSAY_LOAD_PLUGINS", ",".join(allow))
        return tmp_path

    return install


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    with use_plugin_system(PluginSystem()):
        code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_plugin_is_contained_and_named(case, install, capsys):
    source, field, fragment = CASES[case]
    install({case: source})
    code, out, err = run_cli(["plugins", "--json"], capsys)
    assert code == 0
    infos = {p["name"]: p for p in json.loads(out)}  # stdout is valid JSON
    assert infos["rb_a_good"]["status"] == infos["rb_c_after"]["status"] == "loaded"
    assert infos["rb_c_after"]["registered"] == {"metric": ["rb_after"]}
    broken = infos[f"rb_{case}"]
    shown = json.dumps(broken[field])
    assert fragment in (broken[field] if field == "error" else shown), broken
    assert broken["status"] == ("failed" if field == "error" else "loaded")
    if field == "error":
        assert broken["registered"] == {}  # all or nothing
    who = f"rb_{case} from rb-b-{case}"  # issue 27 item 18: the line names the plugins
    what = {"error": f"1 plugin failed to load ({who})", "clashes": "1 name clash (metric 'rb_metric': rb_a_good "
            "and rb_clash)", "replaced": f"1 plugin replaced assay functions ({who})"}[field]
    assert err.splitlines()[-1] == f"assay: warning: {what} (run 'assay plugins' for details)"
    assert "Traceback" not in err


@pytest.mark.parametrize("case", ["sys_exit", "misspelt_hook", "clash", "patch_at_import"])
def test_strict_mode_makes_each_problem_fatal(case, install, capsys, monkeypatch):
    install({case: CASES[case][0]})
    monkeypatch.setenv("ASSAY_STRICT_PLUGINS", "1")
    code, out, err = run_cli(["plugins"], capsys)
    assert code == 2
    assert err.startswith("assay plugins: error: ") and "ASSAY_STRICT_PLUGINS" in err
    assert "Traceback" not in err


def test_clash_is_ambiguous_and_qualified_names_choose(install):
    install({"clash": CASES["clash"][0]})
    system = PluginSystem()
    with use_plugin_system(system):
        with pytest.raises(AmbiguousNameError, match=r"'rb_metric' is ambiguous.*'rb_a_good' \(distribution rb-a-good\)"
                                                     r".*'rb_clash' \(distribution rb-b-clash\).*"
                                                     r"'rb-a-good:rb_metric' or 'rb-b-clash:rb_metric'"):
            assay.load_metric("rb_metric")
        first = assay.load_metric("rb-a-good:rb_metric")
        second = assay.load_metric("rb_clash:rb_metric")
    assert type(first).__module__.startswith("rb_a_good_") and type(second).__module__.startswith("rb_b_clash_")


def test_text_report_shows_every_problem_and_the_others(install, capsys):
    install({case: source for case, (source, _, _) in CASES.items()})
    code, out, err = run_cli(["plugins"], capsys)
    assert code == 0
    failed = [case for case, (_, field, _) in CASES.items() if field == "error"]
    for case in CASES:
        status = "failed" if case in failed else "loaded"
        assert f"rb_{case}  [rb-b-{case} 1.0]  {status}" in out
    assert "rb_a_good  [rb-a-good 1.0]  loaded" in out and "rb_c_after  [rb-c-after 1.0]  loaded" in out
    assert "unknown hook assay_register_metricz (did you mean assay_register_metrics?)" in out
    assert "clash: metric 'rb_metric' is also registered by rb_a_good; load one as rb-a-good:rb_metric, " \
           "rb-b-clash:rb_metric" in out
    assert "replaced: assay.plugins.names.parse_value" in out
    assert out.rstrip().endswith(f" plugins, {len(failed)} failed to load, 1 ambiguous name, "
                                 "2 replaced assay functions")
    first = ", ".join(f"rb_{case} from rb-b-{case}" for case in sorted(failed)[:3])  # in load order: by distribution
    assert err.splitlines()[-1] == (
        f"assay: warning: {len(failed)} plugins failed to load ({first} and {len(failed) - 3} more), 1 name clash "
        "(metric 'rb_metric': rb_a_good and rb_clash), 2 plugins replaced assay functions (rb_patch_at_import from "
        "rb-b-patch_at_import, rb_patch_at_registration from rb-b-patch_at_registration) (run 'assay plugins' for "
        "details)")
    assert sum("assay: warning" in line for line in err.splitlines()) == 1


def test_print_at_import_goes_to_stderr(install, capsys):
    install({"prints": "print('hello from a plugin')"})
    code, out, err = run_cli(["plugins", "--json"], capsys)
    assert code == 0 and json.loads(out)  # valid JSON despite the print
    assert "hello from a plugin" in err and "hello" not in out
    assert "assay: warning" not in err  # printing is not a problem worth a warning


def test_no_warning_when_all_is_well_or_nothing_was_loaded(install, capsys):
    install({"sys_exit": CASES["sys_exit"][0]})
    system = PluginSystem()
    with use_plugin_system(system):
        assert problems_summary() is None  # not loaded yet: nothing to say, and nothing loaded by asking
        assert not system.loaded
        system.registry("metric").names()
        assert problems_summary() == ("assay: warning: 1 plugin failed to load (rb_sys_exit from rb-b-sys_exit) "
                                      "(run 'assay plugins' for details)")
    fine = PluginSystem(entry_points=False)
    with use_plugin_system(fine):
        fine.registry("metric")
        assert problems_summary() is None


def subprocess_env(root: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("ASSAY_STRICT_PLUGINS", None)
    return env


def test_cli_subprocess_lists_everything_once_and_warns_once(install):
    cases = {case: CASES[case][0] for case in ("sys_exit", "keyboard_interrupt", "misspelt_hook", "clash")}
    cases["patch_lazy_export"] = "import assay\nassay.load_metric = lambda *a, **k: None\n"
    root = install(cases)
    env = subprocess_env(root)
    run = subprocess.run([sys.executable, "-m", "assay", "plugins", "--json"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    infos = {p["name"]: p for p in json.loads(run.stdout)}
    assert {"rb_a_good", "rb_c_after"} <= {n for n, p in infos.items() if p["status"] == "loaded"}
    assert infos["rb_sys_exit"]["status"] == infos["rb_keyboard_interrupt"]["status"] == "failed"
    assert infos["rb_patch_lazy_export"]["replaced"] == ["assay.load_metric"]
    assert run.stderr.splitlines() == [
        "assay: warning: 3 plugins failed to load (rb_keyboard_interrupt from rb-b-keyboard_interrupt, "
        "rb_misspelt_hook from rb-b-misspelt_hook, rb_sys_exit from rb-b-sys_exit), 1 name clash (metric "
        "'rb_metric': rb_a_good and rb_clash), 1 plugin replaced assay functions (rb_patch_lazy_export from "
        "rb-b-patch_lazy_export) (run 'assay plugins' for details)"]
    # a command that never loads plugins says nothing
    quiet = subprocess.run([sys.executable, "-m", "assay", "--version"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_a_real_ctrl_c_while_loading_still_interrupts(install):
    root = install({"sigint": "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n"})
    # `python -m assay plugins` with the disposition the test relies on set in the child before assay starts:
    # under nohup or in a background job the child inherits SIGINT ignored, and Ctrl-C would do nothing
    main = ("import runpy, signal, sys\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "sys.argv = ['assay', 'plugins']\nrunpy.run_module('assay', run_name='__main__', alter_sys=True)\n")
    run = subprocess.run([sys.executable, "-c", main], env=subprocess_env(root), capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 130 and "assay plugins: interrupted" in run.stderr
    assert "rb_c_after" not in run.stdout  # loading stopped: Ctrl-C is the user's, not the plugin's


def test_error_points_at_the_plugins_own_line(install, capsys):
    install({"bad_name": CASES["bad_name"][0]})
    code, out, _ = run_cli(["plugins", "--json"], capsys)
    error = {p["name"]: p for p in json.loads(out)}["rb_bad_name"]["error"]
    assert re.search(r" at \S+rb_b_bad_name_[0-9a-f]{8}\.py:5$", error), error  # line 5: the register(...) call
    assert "\n" not in error


def test_other_commands_end_with_the_same_single_warning_line(install, capsys):
    install({"sys_exit": CASES["sys_exit"][0], "clash": CASES["clash"][0]})
    code, out, err = run_cli(["list", "metric"], capsys)
    assert code == 0
    assert "rb-a-good:rb_metric" in out and "rb_after" in out
    assert err == ("assay: warning: 1 plugin failed to load (rb_sys_exit from rb-b-sys_exit), 1 name clash "
                   "(metric 'rb_metric': rb_a_good and rb_clash) (run 'assay plugins' for details)\n")


def test_two_distributions_with_one_entry_point_name_both_stay_on_record(tmp_path, monkeypatch):
    tag = uuid.uuid4().hex[:8]
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    make_distribution(tmp_path, "rb-same-1", f"rb_same_1_{tag}", "raise ImportError('first is broken')", "rb_same")
    make_distribution(tmp_path, "rb-same-2", f"rb_same_2_{tag}", GOOD.format(name="rb_second"), "rb_same")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ASSAY_LOAD_PLUGINS", "rb_same")
    infos = {p.name: p for p in PluginSystem().plugins if not p.builtin and p.status != "disabled"}
    assert infos["rb_same"].status == "failed" and "first is broken" in infos["rb_same"].error
    assert infos["rb_same@rb-same-2"].status == "loaded"
    assert infos["rb_same@rb-same-2"].registered == {"metric": ("rb_second",)}
