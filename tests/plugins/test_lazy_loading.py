"""Plugins loaded on demand: a lookup imports only the plugins that declare the name.

Each test writes throwaway distributions (a module and a ``*.dist-info`` with its entry points) into
a folder on ``sys.path``; what a lookup imported is read from ``sys.modules`` of a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import assay
from assay.errors import AmbiguousNameError, PluginLoadError, UnknownNameError
from assay.plugins import BUILTIN_DECLARATIONS, PluginSystem, use_plugin_system
from assay.plugins.declarations import compare

FIRST_PARTY = ("assay_classic", "assay_interop", "assay_parsing", "assay_segmentation", "assay_transformers",
               "assay_uncertainty")


def metric_plugin(*names: str, namespace: str | None = None) -> str:
    """A plugin module registering the metrics ``names`` (and a metric namespace)."""
    source = "from assay import hookimpl\n\n\nclass M:\n    def __init__(self, scale=1):\n        self.scale = scale\n"
    source += "\n\n@hookimpl\ndef assay_register_metrics(register):\n"
    source += "".join(f"    register({n!r}, M)\n" for n in names) or "    pass\n"
    if namespace:
        source += ("\n\n@hookimpl\ndef assay_register_metric_namespaces(register):\n"
                   f"    register({namespace!r}, lambda name, **kw: ('resolved', name, kw))\n")
    return source


BROKEN = "raise RuntimeError('broken on purpose')\n"


def write_dist(root: Path, dist: str, source: str, *, declares: dict[str, list[str]] | None = None) -> str:
    """A distribution ``dist`` whose ``assay`` entry point (named after it) loads a fresh module; ``declares``
    maps an entry-point group to the names declared there. Returns the module's name."""
    module = f"{dist.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n\n")
    text = f"[assay]\n{dist.replace('-', '_')} = {module}\n"
    for group, names in (declares or {}).items():
        text += f"\n[{group}]\n" + "".join(f"{n} = {module}\n" for n in names)
    (info / "entry_points.txt").write_text(text)
    return module


@pytest.fixture
def dists(tmp_path, monkeypatch):
    """A folder on sys.path (and on PYTHONPATH for subprocesses) for throwaway distributions."""
    monkeypatch.syspath_prepend(str(tmp_path))
    for var in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def imported_by(root: Path | None, code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter; return its stdout's JSON, with ``modules``: the plugin modules
    imported (the first-party packages, and the throwaway modules of ``root``)."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS")}
    environ.update(env)
    if root is not None:
        environ["PYTHONPATH"] = str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")
    ours = FIRST_PARTY + tuple(sorted(p.stem for p in root.glob("*.py")) if root is not None else ())
    script = (f"import json, sys\nresult = {{}}\n{textwrap.dedent(code)}\n"
              f"result['modules'] = sorted(m for m in sys.modules if m.split('.')[0] in {ours!r})\n"
              "print(json.dumps(result, default=str))")
    run = subprocess.run([sys.executable, "-c", script], env=environ, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    out["stderr"] = run.stderr
    return out


def tops(modules: list[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


# --------------------------------------------------------------------------- the first-party plugins
def test_load_metric_accuracy_imports_assay_classic_alone():
    out = imported_by(None, "import assay\nresult['m'] = type(assay.load_metric('accuracy')).__module__")
    assert out["m"].startswith("assay_classic.")
    assert tops(out["modules"]) == {"assay_classic"}


def test_a_sentence_evaluator_lookup_imports_assay_parsing_alone():
    out = imported_by(None, "import assay\nresult['uas'] = repr(assay.load_sentence_evaluator('uas'))")
    assert tops(out["modules"]) == {"assay_parsing"}


def test_a_namespaced_lookup_imports_the_plugin_that_declares_the_namespace():
    code = "import assay\nresult['in'] = 'sklearn:accuracy_score' in assay.get_registry('metric')"
    out = imported_by(None, code)
    assert out["in"] is True and tops(out["modules"]) == {"assay_interop"}


@pytest.mark.parametrize("info", [i for i in PluginSystem().plugins if not i.builtin
                                  and (i.distribution or "").startswith("assay-")], ids=lambda i: i.name)
def test_every_first_party_plugin_declares_exactly_what_it_registers(info):
    (source,) = [s for s in PluginSystem().sources() if s.name == info.name]
    assert info.status == "loaded", info.error
    assert source.declared is not None, f"{info.distribution} declares no names"
    assert compare(source.declared, info.registered) == {"missing": {}, "extra": {}}


def test_the_built_in_declarations_are_what_the_built_ins_register():
    system = PluginSystem(entry_points=False)
    registered = {info.name: {k: frozenset(v) for k, v in info.registered.items()} for info in system.plugins}
    assert registered == BUILTIN_DECLARATIONS


def test_a_metric_lookup_imports_no_executor_and_an_executor_lookup_no_plugin():
    code = """
    import assay
    assay.load_metric('accuracy')
    result['executors'] = sorted(m for m in sys.modules if m.startswith('assay.executors'))
    """
    assert imported_by(None, code)["executors"] == []
    out = imported_by(None, "import assay\nresult['w'] = assay.load_executor('threads[workers=2]').workers")
    assert out["w"] == 2 and out["modules"] == []


# --------------------------------------------------------------------------- throwaway distributions
def test_a_lookup_imports_only_the_declaring_plugin(dists):
    alpha = write_dist(dists, "zz-alpha", metric_plugin("zz_alpha_metric"),
                       declares={"assay.metrics": ["zz_alpha_metric"]})
    beta = write_dist(dists, "zz-beta", metric_plugin("zz_beta_metric"), declares={"assay.metrics": ["zz_beta_metric"]})
    broken = write_dist(dists, "zz-broken", BROKEN, declares={"assay.metrics": ["zz_broken_metric"]})
    code = """
    import assay
    from assay.plugins import get_plugin_system
    result['scale'] = assay.load_metric('zz_alpha_metric[scale=3]').scale
    result['loaded'] = get_plugin_system().loaded
    result['summary'] = get_plugin_system().problems_summary()
    """
    out = imported_by(dists, code)
    assert out["scale"] == 3 and out["loaded"] is False and out["summary"] is None
    assert out["modules"] == [alpha]
    assert beta not in out["modules"] and broken not in out["modules"]


def test_a_name_two_plugins_declare_loads_both_and_is_ambiguous(dists):
    write_dist(dists, "zz-one", metric_plugin("zz_shared"), declares={"assay.metrics": ["zz_shared"]})
    write_dist(dists, "zz-two", metric_plugin("zz_shared", "zz_other"), declares={"assay.metrics": ["zz_shared",
                                                                                                    "zz_other"]})
    third = write_dist(dists, "zz-three", metric_plugin("zz_third"), declares={"assay.metrics": ["zz_third"]})
    with use_plugin_system(PluginSystem()) as system:
        with pytest.raises(AmbiguousNameError, match=r"'zz_shared' is ambiguous: it is registered by 2 plugins"):
            assay.load_metric("zz_shared")
        assert assay.load_metric("zz-two:zz_shared").scale == 1
        assert third not in sys.modules and not system.loaded
        assert system.problems_summary() == ("assay: warning: 1 name clash (metric 'zz_shared': zz_one and zz_two) "
                                             "(run 'assay plugins' for details)")


def test_an_undeclared_plugin_still_works_and_its_clashes_are_seen(dists):
    legacy = write_dist(dists, "zz-legacy", metric_plugin("zz_legacy_metric", "accuracy"))
    code = """
    import assay
    result['scale'] = assay.load_metric('zz_legacy_metric', scale=2).scale
    try:
        assay.load_metric('accuracy')
    except Exception as exc:
        result['accuracy'] = type(exc).__name__ + ': ' + str(exc)
    """
    out = imported_by(dists, code)
    assert out["scale"] == 2
    # undeclared: loaded on the first lookup, so the clash with assay-classic's accuracy is never missed
    assert out["accuracy"].startswith("AmbiguousNameError: Metric name 'accuracy' is ambiguous")
    assert tops(out["modules"]) == {legacy, "assay_classic"}


def test_a_name_nobody_declares_loads_every_plugin_before_answering(dists):
    stale = write_dist(dists, "zz-stale", metric_plugin("zz_here"), declares={"assay.metrics": ["zz_gone"]})
    with use_plugin_system(PluginSystem()) as system:
        assert assay.load_metric("zz_here").scale == 1  # registered but not declared: found by loading everything
        assert system.loaded
    # declared but not registered: an unknown name, after loading all
    with use_plugin_system(PluginSystem()), pytest.raises(UnknownNameError, match=r"No metric named 'zz_gone'"):
        assay.load_metric("zz_gone")
    assert stale in sys.modules


def test_check_plugin_names_what_a_stale_declaration_gets_wrong(dists, capsys):
    from assay.cli import main

    write_dist(dists, "zz-stale", metric_plugin("zz_here", "zz_also"),
               declares={"assay.metrics": ["zz_gone", "zz_also"], "assay.tasks": ["zz_task"]})
    write_dist(dists, "zz-good", metric_plugin("zz_good"), declares={"assay.metrics": ["zz_good"]})
    with use_plugin_system(PluginSystem()):
        assert main(["check-plugin", "zz-stale", "--json", "-k", "zz_also"]) == 1
        results = json.loads(capsys.readouterr().out)["results"]
        (row,) = [r for r in results if r["check"] == "declaration"]
        assert (row["name"], row["status"]) == ("zz_stale", "FAIL")
        assert row["reason"] == ("registered but not declared: assay.metrics: zz_here; declared but not registered: "
                                 "assay.metrics: zz_gone; assay.tasks: zz_task")
        assert main(["check-plugin", "zz-stale", "-k", "zz_also"]) == 1
        out = capsys.readouterr().out
        # the tables that declare what the plugin registers, to paste
        assert '[project.entry-points."assay.metrics"]\nzz_also = "zz_stale_' in out
        assert main(["check-plugin", "zz-good"]) in (0, 1)  # the metric's own checks may fail; not its declaration
        assert [line.split() for line in capsys.readouterr().out.splitlines() if " declaration " in line] == [
            ["zz_good", "plugin", "declaration", "PASS"]]


def test_check_plugin_reports_an_undeclared_plugin_as_not_declared(dists, capsys):
    from assay.cli import main

    write_dist(dists, "zz-legacy", metric_plugin("zz_legacy_metric"))
    with use_plugin_system(PluginSystem()):
        main(["check-plugin", "zz-legacy", "--json"])
        results = json.loads(capsys.readouterr().out)["results"]
    (row,) = [r for r in results if r["check"] == "declaration"]
    assert row["status"] == "SKIP" and row["applies"] is False and row["reason"].startswith("declares no names")


def test_a_declaration_for_a_module_that_is_no_entry_point_fails_the_check(dists, capsys):
    from assay.cli import main

    module = write_dist(dists, "zz-orphan", metric_plugin("zz_orphan_metric"),
                        declares={"assay.metrics": ["zz_orphan_metric"]})
    points = next(dists.glob("zz_orphan-*.dist-info")) / "entry_points.txt"
    points.write_text(points.read_text() + f"zz_lost = {module}_old\n")
    with use_plugin_system(PluginSystem()):
        assert main(["check-plugin", "zz-orphan", "--json"]) == 1
    rows = [r for r in json.loads(capsys.readouterr().out)["results"] if r["check"] == "declaration"]
    assert [(r["name"], r["status"]) for r in rows] == [("zz_orphan", "PASS"), ("zz_lost", "FAIL")]
    assert rows[1]["reason"] == (f"declared in assay.metrics for '{module}_old', which is not an 'assay' entry point "
                                 "of zz-orphan")


def test_a_namespace_lookup_loads_only_the_namespace_plugin(dists):
    space = write_dist(dists, "zz-space", metric_plugin(namespace="zzns"),
                       declares={"assay.metric_namespaces": ["zzns"]})
    other = write_dist(dists, "zz-other", metric_plugin("zz_other"), declares={"assay.metrics": ["zz_other"]})
    with use_plugin_system(PluginSystem()) as system:
        assert assay.load_metric("zzns:Thing[k=1]") == ("resolved", "Thing", {"k": 1})
        assert space in sys.modules and other not in sys.modules and not system.loaded


def test_disable_and_load_only_keep_a_declared_plugin_out(dists, monkeypatch):
    module = write_dist(dists, "zz-alpha", metric_plugin("zz_alpha_metric"),
                        declares={"assay.metrics": ["zz_alpha_metric"]})
    for var, value in (("ASSAY_DISABLE_PLUGINS", "zz-alpha"), ("ASSAY_LOAD_PLUGINS", "classic")):
        monkeypatch.setenv(var, value)
        with use_plugin_system(PluginSystem()) as system:
            with pytest.raises(UnknownNameError, match="No metric named 'zz_alpha_metric'"):
                assay.load_metric("zz_alpha_metric")
            (info,) = [p for p in system.plugins if p.distribution == "zz-alpha"]
            assert info.status == "disabled" and var in (info.error or "")
        monkeypatch.delenv(var)
    assert module not in sys.modules


def test_strict_mode_checks_every_plugin_on_the_first_lookup(dists, monkeypatch):
    write_dist(dists, "zz-alpha", metric_plugin("zz_alpha_metric"), declares={"assay.metrics": ["zz_alpha_metric"]})
    write_dist(dists, "zz-broken", BROKEN, declares={"assay.metrics": ["zz_broken_metric"]})
    monkeypatch.setenv("ASSAY_STRICT_PLUGINS", "1")
    with use_plugin_system(PluginSystem()), pytest.raises(PluginLoadError,
                                                          match="Plugin 'zz_broken' failed .*broken on purpose"):
        assay.load_metric("zz_alpha_metric")


# --------------------------------------------------------------------------- broken plugins, reported by name
def _cli(root: Path, *argv: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("ASSAY_STRICT_PLUGINS", "ASSAY_DISABLE_PLUGINS", "ASSAY_LOAD_PLUGINS")}
    environ["PYTHONPATH"] = str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "assay", *argv], env=environ, capture_output=True, text=True)


def test_the_warning_line_names_the_broken_and_the_clashing_plugins(dists):
    write_dist(dists, "zz-broken", BROKEN, declares={"assay.metrics": ["zz_broken_metric"]})
    write_dist(dists, "zz-acc", metric_plugin("accuracy"), declares={"assay.metrics": ["accuracy"]})
    run = _cli(dists, "list", "metric")  # a listing loads every plugin
    assert run.returncode == 0
    assert run.stderr.splitlines()[-1] == (
        "assay: warning: 1 plugin failed to load (zz_broken from zz-broken), 1 name clash (metric 'accuracy': "
        "classic and zz_acc) (run 'assay plugins' for details)")
    listing = _cli(dists, "plugins")
    assert "zz_broken  [zz-broken 1.0]  failed" in listing.stdout and "broken on purpose" in listing.stdout


def test_a_broken_declared_plugin_is_reported_by_the_lookup_that_needs_it(dists):
    write_dist(dists, "zz-broken", BROKEN, declares={"assay.metrics": ["zz_broken_metric"]})
    write_dist(dists, "zz-fine", metric_plugin("zz_fine"), declares={"assay.metrics": ["zz_fine"]})
    code = """
    import assay
    from assay.plugins import get_plugin_system
    result['fine'] = assay.load_metric('zz_fine').scale
    result['after_fine'] = get_plugin_system().problems_summary()
    try:
        assay.load_metric('zz_broken_metric')
    except Exception as exc:
        result['error'] = type(exc).__name__
    result['after_broken'] = get_plugin_system().problems_summary()
    """
    out = imported_by(dists, code)
    assert out["fine"] == 1 and out["after_fine"] is None  # not needed, not imported, not reported
    assert out["error"] == "UnknownNameError"
    assert out["after_broken"] == ("assay: warning: 1 plugin failed to load (zz_broken from zz-broken) "
                                   "(run 'assay plugins' for details)")
