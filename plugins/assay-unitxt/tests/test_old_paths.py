"""The paths unitxt compatibility had in the core still work: lazy aliases, install hint, saved catalog entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import assay
import assay.metrics
import assay.metrics.operators
import assay_unitxt.group_aggregations
import assay_unitxt.operators
import assay_unitxt.pipeline
from assay.errors import MissingDependencyError, UnknownNameError
from assay.plugins import _catalog_files

OLD_PATHS = [
    ("assay.metrics", "MetricPipeline", assay_unitxt.pipeline),
    ("assay.metrics", "Copy", assay_unitxt.operators),
    ("assay.metrics", "Rename", assay_unitxt.operators),
    ("assay.metrics", "ListFieldValues", assay_unitxt.operators),
    ("assay.metrics.kinds", "MetricPipeline", assay_unitxt.pipeline),
    ("assay.metrics.pipeline", "MetricPipeline", assay_unitxt.pipeline),
    # the names that moved (operators added to the plugin since, Wrap and MultiTypeSerializer, have no old path)
    *[("assay.metrics.operators", name, assay_unitxt.operators) for name in assay.metrics.operators.__all__],
    *[("assay.metrics.group_aggregations", name, assay_unitxt.group_aggregations)
      for name in assay_unitxt.group_aggregations.__all__],
]


@pytest.fixture(autouse=True)
def isolated_catalog(tmp_path, monkeypatch):
    monkeypatch.setattr(_catalog_files, "_registered", [])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(_catalog_files.CATALOG_ENV, raising=False)


@pytest.mark.parametrize("old,name,new", OLD_PATHS, ids=[f"{o}.{n}" for o, n, _ in OLD_PATHS])
def test_an_old_path_gives_the_plugin_object(old, name, new):
    module = __import__(old, fromlist=[name])
    assert getattr(module, name) is getattr(new, name)
    assert name in module.__all__


def test_from_import_of_the_old_names():
    from assay.metrics import Copy, ListFieldValues, MetricPipeline, Rename
    from assay.metrics.operators import CopyFields, RenameFields

    assert (MetricPipeline, Copy, Rename, ListFieldValues, CopyFields, RenameFields) == (
        assay_unitxt.MetricPipeline, assay_unitxt.Copy, assay_unitxt.Rename, assay_unitxt.ListFieldValues,
        assay_unitxt.CopyFields, assay_unitxt.RenameFields)


@pytest.mark.parametrize("old,name", [("assay.metrics", "MetricPipeline"), ("assay.metrics", "Copy"),
                                      ("assay.metrics.operators", "Rename"),
                                      ("assay.metrics.pipeline", "MetricPipeline"),
                                      ("assay.metrics.group_aggregations", "nan_mean")])
def test_without_the_plugin_an_old_path_names_the_install(monkeypatch, old, name):
    # the plugin made unimportable, as when it is not installed
    for mod in [m for m in sys.modules if m == "assay_unitxt" or m.startswith("assay_unitxt.")]:
        monkeypatch.setitem(sys.modules, mod, None)
    module = __import__(old, fromlist=["__name__"])
    with pytest.raises(MissingDependencyError, match=rf"{old}\.{name} \(it moved to assay_unitxt\..*pip install "
                                                     r"assay-unitxt"):
        getattr(module, name)


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchThing'"):
        assay.metrics.NoSuchThing  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchThing'"):
        assay.metrics.operators.NoSuchThing  # noqa: B018


def _entry(root, name, data):
    f = root / "metrics" / f"{name}.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(data))
    return f


def test_an_entry_saved_with_the_old_paths_still_loads(tmp_path):
    # an entry as add_to_catalog wrote it before the move: the dotted paths of the core's modules
    root = tmp_path / "cat"
    _entry(root, "old_pipeline", {
        "assay_catalog_entry": 1, "kind": "metric", "__class__": "assay.metrics.pipeline.MetricPipeline",
        "args": {"metric": "metrics.token_overlap", "main_score": "score",
                 "preprocess_steps": [{"__class__": "assay.metrics.operators.Copy",
                                       "args": {"field": "task_data/context", "to_field": "references"}},
                                      {"__class__": "assay.metrics.operators.ListFieldValues",
                                       "args": {"fields": ["references"], "to_field": "references"}}],
                 "postprocess_steps": [{"__class__": "assay.metrics.operators.Rename",
                                        "args": {"field_to_field": [["score/global/f1",
                                                                     "score/global/f1_context"]]}}]}})
    assay.register_local_catalog(root)
    m = assay.load_metric("metrics.old_pipeline")
    assert isinstance(m, assay_unitxt.pipeline.MetricPipeline)
    assert isinstance(m.preprocess_steps[0], assay_unitxt.operators.Copy)
    # token F1 of each prediction against its context (the Copy): "apple" vs "apple 2e": P 1, R 1/2, F1 2/3;
    # "boy" vs "boy": 1; "cat" vs "dog": 0. Mean: 5/9, renamed by the Rename.
    scores = m.update(["apple", "boy", "cat"], [["x"], ["y"], ["z"]],
                      [{"context": "apple 2e"}, {"context": "boy"}, {"context": "dog"}]).compute_scores()
    assert scores["f1_context"] == pytest.approx(5 / 9) and m.main_score == "f1_context"


def test_a_new_entry_names_the_plugin_class_and_loads_in_a_fresh_process(tmp_path):
    from assay_unitxt.operators import Copy, ListFieldValues
    from assay_unitxt.pipeline import MetricPipeline

    root = tmp_path / "cat"
    pipe = MetricPipeline(metric="metrics.token_overlap", main_score="score",
                          preprocess_steps=[Copy(field="task_data/context", to_field="references"),
                                            ListFieldValues(fields=["references"], to_field="references")])
    path = assay.add_to_catalog(pipe, "metrics.context_overlap", catalog_path=root)
    data = json.loads(path.read_text())
    assert data["__class__"] == "assay_unitxt.pipeline.MetricPipeline"
    assert data["args"]["preprocess_steps"][0]["__class__"] == "assay_unitxt.operators.Copy"
    # a process that never imported assay_unitxt: the entry names an installed plugin's package, which loads
    code = textwrap.dedent(f"""
        import sys, assay
        assert "assay_unitxt" not in sys.modules
        assay.register_local_catalog({str(root)!r})
        m = assay.load_metric("metrics.context_overlap")
        s = m.update(["apple", "boy", "cat"], [["x"], ["y"], ["z"]],
                     [{{"context": "apple 2e"}}, {{"context": "boy"}}, {{"context": "dog"}}]).compute_scores()
        print(type(m).__module__, repr(s["f1"]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    module, f1 = out.stdout.split()
    assert module == "assay_unitxt.pipeline" and float(f1) == pytest.approx(5 / 9)


def test_an_entry_naming_a_module_of_no_plugin_is_still_refused(tmp_path, monkeypatch):
    # loading an entry imports only assay's and installed plugins' modules, never anyone else's code
    root = tmp_path / "cat"
    _entry(root, "unimported", {"assay_catalog_entry": 1, "kind": "metric", "__class__": "tabnanny.NannyNag"})
    assay.register_local_catalog(root)
    monkeypatch.delitem(sys.modules, "tabnanny", raising=False)
    with pytest.raises(UnknownNameError, match="module 'tabnanny' is not imported"):
        assay.load_metric("metrics.unimported")
    assert "tabnanny" not in sys.modules
