"""``assay NAME``: a plugin that declares its command (entry-point group ``assay.commands``) is loaded alone.

The other plugins are not imported for that command; a broken one among them is not reported
there (``assay``, ``assay --help``, ``assay plugins`` and any registry lookup still load and
report all). Whatever prevents the targeted load -- no declaration, two, a disabled or broken
declared plugin, a declaration its plugin does not honour, ``ASSAY_STRICT_PLUGINS`` -- falls
back to loading every plugin, as before. The lean entry-point reader that finds the
declaration is checked against :mod:`importlib.metadata`.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from assay.plugins import COMMAND_GROUP, ENTRY_POINT_GROUP, PluginSystem, use_plugin_system
from assay.plugins._entry_points import read_entry_points

HELLO = '''
from assay import hookimpl

def _run(args):
    print("hello", args.who)
    return 0

def _arguments(parser):
    parser.add_argument("who")

@hookimpl
def assay_register_commands(register):
    register("hello", _run, help="say hello", add_arguments=_arguments)
'''

SILENT = '''
from assay import hookimpl

@hookimpl
def assay_register_metrics(register):
    register("zz_silent_metric", dict)
'''


def _distribution(root: Path, dist: str, module: str, source: str, *, commands: tuple[str, ...] = (),
                  ep_name: str | None = None) -> None:
    """``module.py`` and a ``*.dist-info`` with an ``assay`` entry point (named ``module``), declaring ``commands``.

    The module file gets a fresh name (nothing is served from ``sys.modules``)."""
    ep_name = ep_name or module
    module = f"{module}_{uuid.uuid4().hex[:8]}"
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 2.0\n\nA description.\n")
    text = f"[assay]\n{ep_name} = {module}\n"
    if commands:
        text += f"\n[{COMMAND_GROUP}]\n" + "".join(f"{c} = {module}\n" for c in commands)
    (info / "entry_points.txt").write_text(text)


@pytest.fixture
def dists(tmp_path, monkeypatch):
    """A folder on sys.path (and PYTHONPATH for subprocesses) to write throwaway distributions into."""
    monkeypatch.syspath_prepend(str(tmp_path))
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def _run(root: Path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS")}
    environ.update(env, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "assay", *argv], env=environ, capture_output=True, text=True)


# --------------------------------------------------------------------------- the lean entry-point reader
def _reference(groups):
    eps = metadata.entry_points()
    return sorted((g, e.name, e.value, e.dist.name if e.dist else None, e.dist.version if e.dist else None)
                  for g in groups for e in eps.select(group=g))


def test_the_lean_reader_finds_what_importlib_metadata_finds(dists, monkeypatch):
    _distribution(dists, "zz-hello", "zz_hello", HELLO, commands=("hello", "hi"))
    _distribution(dists, "zz-silent", "zz_silent", SILENT)
    later = dists / "later"  # a second copy of zz-hello in a folder later on sys.path: not the one found
    later.mkdir()
    (later / "zz_hello-1.0.dist-info").mkdir()
    (later / "zz_hello-1.0.dist-info" / "entry_points.txt").write_text("[assay]\nother = other_module\n")
    (later / "zz_Hello-1.0.egg-info").mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(later)])
    groups = (ENTRY_POINT_GROUP, COMMAND_GROUP, "console_scripts")
    lean = read_entry_points(groups)
    assert lean is not None, ([p for p in sys.path if os.path.isfile(p or ".") or p.endswith(".egg")],
                              [f for f in sys.meta_path if hasattr(f, "find_distributions")])
    found = sorted(e.key() for e in lean)
    assert found == _reference(groups)
    assert [k for k in found if k[:2] == (COMMAND_GROUP, "hello")][0][3:] == ("zz-hello", "2.0")
    assert (COMMAND_GROUP, "parse-eval", "assay_parsing.plugin", "assay-parsing", metadata.version("assay-parsing")) \
        in found


def test_the_lean_reader_leaves_a_zip_on_sys_path_to_importlib_metadata(dists, monkeypatch):
    archive = dists / "some.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip archive
    monkeypatch.syspath_prepend(str(archive))
    assert read_entry_points((ENTRY_POINT_GROUP,)) is None


def test_the_lean_reader_leaves_another_distribution_finder_to_importlib_metadata(dists, monkeypatch):
    class Finder:
        def find_spec(self, *args, **kwargs):
            return None

        def find_distributions(self, *args, **kwargs):
            return iter(())

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert read_entry_points((ENTRY_POINT_GROUP,)) is None


def test_entry_point_values_load_as_importlib_metadata_loads_them(dists):
    _distribution(dists, "zz-hello", "zz_hello", HELLO, commands=("hello",))
    (lean,) = [e for e in read_entry_points((COMMAND_GROUP,)) or [] if e.name == "hello"]
    (reference,) = tuple(metadata.entry_points().select(group=COMMAND_GROUP, name="hello"))
    assert lean.load() is reference.load()


# --------------------------------------------------------------------------- PluginSystem.load_command
def test_load_command_loads_the_declaring_plugin_alone(dists):
    _distribution(dists, "zz-hello", "zz_hello", HELLO, commands=("hello",))
    _distribution(dists, "zz-silent", "zz_silent", SILENT)
    system = PluginSystem()
    with use_plugin_system(system):
        entry = system.load_command("hello")
        assert entry is not None and entry.name == "hello" and entry.distribution == "zz-hello"
        assert not system.loaded
        assert [p.name for p in system._plugins.values()] == ["zz_hello"]  # not even the built-ins
        assert system._plugins["zz_hello"].version == "2.0"
        assert system.problems_summary() is None
        # a registry lookup loads the rest, the declared plugin once
        assert "zz_silent_metric" in system.registry("metric")
        names = [p.name for p in system.plugins]
        assert names.count("zz_hello") == 1 and "zz_silent" in names and "assay.executors.builtin" in names


@pytest.mark.parametrize("case", ["undeclared", "twice", "disabled", "strict", "not registered", "broken"])
def test_load_command_declines(dists, monkeypatch, case):
    commands = () if case == "undeclared" else ("hello",)
    source = {"broken": "raise RuntimeError('broken on purpose')", "not registered": SILENT}.get(case, HELLO)
    _distribution(dists, "zz-hello", "zz_hello", source, commands=commands)
    if case == "twice":
        _distribution(dists, "zz-hello-too", "zz_hello_too", HELLO, commands=("hello",))
    if case == "disabled":
        monkeypatch.setenv("ASSAY_DISABLE_PLUGINS", "zz-hello")
    if case == "strict":
        monkeypatch.setenv("ASSAY_STRICT_PLUGINS", "1")
    system = PluginSystem()
    assert system.load_command("hello") is None
    assert not system.loaded
    if case == "broken":  # recorded: the full load that follows reports it, once
        assert system.problems_summary() == ("assay: warning: 1 plugin failed to load (zz_hello from zz-hello) "
                                             "(run 'assay plugins' for details)")
        assert [p.name for p in system.plugins].count("zz_hello") == 1
    elif case == "not registered":
        assert "zz_silent_metric" in system.registry("metric")
    else:
        assert system._plugins == {}  # nothing loaded


def test_load_command_on_a_loaded_or_discovery_free_system_declines():
    system = PluginSystem(entry_points=False)
    assert system.load_command("parse-eval") is None
    installed = PluginSystem()
    installed.registry("command").names()  # a listing loads every plugin
    assert installed.load_command("parse-eval") is None


# --------------------------------------------------------------------------- the command line
def test_a_declared_command_runs_without_the_other_plugins(dists):
    _distribution(dists, "zz-hello", "zz_hello", HELLO, commands=("hello",))
    _distribution(dists, "zz-broken", "zz_broken", "raise RuntimeError('broken on purpose')")
    run = _run(dists, "hello", "you")
    assert (run.returncode, run.stdout, run.stderr) == (0, "hello you\n", "")  # the broken plugin is not loaded
    listing = _run(dists, "--help")  # every plugin: the broken one is reported
    assert listing.returncode == 0 and "hello" in listing.stdout
    assert "assay: warning: 1 plugin failed to load (zz_broken from zz-broken) (run 'assay plugins' for details)" \
        in listing.stderr
    strict = _run(dists, "hello", "you", ASSAY_STRICT_PLUGINS="1")  # strict: every plugin is checked
    assert strict.returncode != 0 and "broken on purpose" in strict.stderr


def test_a_broken_declared_plugin_is_reported(dists):
    _distribution(dists, "zz-hello", "zz_hello", "raise RuntimeError('broken on purpose')", commands=("hello",))
    run = _run(dists, "hello", "you")
    assert run.returncode == 2 and "invalid choice: 'hello'" in run.stderr
    assert run.stderr.rstrip().endswith("assay: warning: 1 plugin failed to load (zz_hello from zz-hello) "
                                        "(run 'assay plugins' for details)")


def test_a_command_two_plugins_register_is_still_refused(dists):
    # the second plugin registers 'hello' without declaring it: the targeted load does not see it, but 'assay' does
    _distribution(dists, "zz-hello", "zz_hello", HELLO, commands=("hello",))
    _distribution(dists, "zz-hello-too", "zz_hello_too", HELLO)
    assert _run(dists, "hello", "you").stdout == "hello you\n"
    listing = _run(dists, "--help")
    assert "the command 'hello' is registered by 2 plugins" in listing.stderr


@pytest.mark.parametrize("mode", [["--conll18"], []], ids=["conll18", "sentence-level"])
def test_parse_eval_imports_only_its_plugin(tmp_path, gold_conllu_pair, mode):
    gold, system = gold_conllu_pair
    code = (f"import sys; sys.argv = ['assay', 'parse-eval', *{mode!r}, '--json', sys.argv[1], sys.argv[2]]\n"
            "from assay.cli import main\n"
            "code = main()\n"
            "from assay.plugins import get_plugin_system\n"
            "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('assay_')}), "
            "'numpy' in sys.modules, 'importlib.metadata' in sys.modules, get_plugin_system().loaded,\n"
            "      file=sys.stderr)\n"
            "sys.exit(code)")
    run = subprocess.run([sys.executable, "-c", code, str(gold), str(system)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["signature"].endswith(f"plugins:assay-parsing={metadata.version('assay-parsing')}")
    assert run.stderr.strip().splitlines()[-1] == "['assay_parsing'] False False False"  # after the log lines


@pytest.fixture
def gold_conllu_pair(tmp_path):
    rows = ["1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_", "2\tyou\tyou\tPRON\t_\t_\t1\tvocative\t_\t_", ""]
    gold, system = tmp_path / "g.conllu", tmp_path / "s.conllu"
    gold.write_text("\n".join(rows), encoding="utf-8")
    system.write_text("\n".join(rows).replace("vocative", "obj"), encoding="utf-8")
    return gold, system


def test_own_commands_are_the_parsers():
    from assay.cli import OWN_COMMANDS, _subparsers, build_parser

    assert set(_subparsers(build_parser(plugin_commands=False)).choices) == OWN_COMMANDS


BROKEN_ARGUMENTS = '''
from assay import hookimpl

def _arguments(parser):
    raise RuntimeError("boom in add_arguments")

@hookimpl
def assay_register_commands(register):
    register("hello", lambda args: 0, help="say hello", add_arguments=_arguments)
'''


def test_a_declared_command_whose_arguments_fail_is_reported_once(dists):
    _distribution(dists, "zz-hello", "zz_hello", BROKEN_ARGUMENTS, commands=("hello",))
    run = _run(dists, "hello", "you")
    assert run.returncode == 2 and "invalid choice: 'hello'" in run.stderr
    assert run.stderr.count("its add_arguments raised RuntimeError: boom in add_arguments") == 1
