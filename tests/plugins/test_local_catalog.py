"""add_to_catalog / load_metric through local catalog folders (declarative JSON entries)."""

from __future__ import annotations

import json
import os
import sys

import pytest

import assay
from assay.errors import InvalidParameterError, SaveFormatError, UnknownNameError
from assay.metrics import InstanceMetric, MetricPipeline
from assay.plugins import _catalog_files


class SumAccuracy(InstanceMetric):
    """unitxt's tutorial metric: does the prediction equal the sum of the references?"""

    main_score = "sum_accuracy"
    prediction_type = float

    def __init__(self, *, relative_tolerance: float = 0.0, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.relative_tolerance = relative_tolerance

    def compute_instance(self, prediction, references, task_data=None):
        total = sum(references)
        return float(abs(prediction - total) <= self.relative_tolerance * abs(total))


class Hidden(InstanceMetric):
    """Keeps its option ``k`` under another name: no entry can read it back."""

    main_score = "h"

    def __init__(self, *, k: int = 1, score_prefix: str = "") -> None:
        super().__init__(score_prefix=score_prefix)
        self.k_value = k

    def compute_instance(self, prediction, references, task_data=None):
        return 1.0


@pytest.fixture(autouse=True)
def isolated_catalog(tmp_path, monkeypatch):
    """No folder registered by another test, the default folder under tmp, no ASSAY_CATALOG_PATH."""
    monkeypatch.setattr(_catalog_files, "_registered", [])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(_catalog_files.CATALOG_ENV, raising=False)
    return tmp_path


def test_add_to_catalog_writes_a_declarative_entry_in_the_default_folder(tmp_path):
    path = assay.add_to_catalog(SumAccuracy(relative_tolerance=0.1), "metrics.sum_accuracy")
    assert path == tmp_path / "config" / "assay" / "catalog" / "metrics" / "sum_accuracy.json"
    data = json.loads(path.read_text())
    assert data == {"assay_catalog_entry": 1, "kind": "metric", "__class__": f"{__name__}.SumAccuracy",
                    "args": {"relative_tolerance": 0.1}}
    m = assay.load_metric("metrics.sum_accuracy")
    assert isinstance(m, SumAccuracy) and m.relative_tolerance == 0.1
    # 1 + 2 = 3 within 10 %: 3.2 matches (|0.2| <= 0.3), 3.5 does not
    assert m.update([3.2, 3.5], [[1, 2], [1, 2]]).compute_scores()["sum_accuracy"] == 0.5


def test_overrides_replace_stored_arguments_and_unknown_keys_are_named():
    assay.add_to_catalog(SumAccuracy(relative_tolerance=0.1), "metrics.sum_accuracy")
    assert assay.load_metric("metrics.sum_accuracy[relative_tolerance=0.5]").relative_tolerance == 0.5
    assert assay.load_metric("metrics.sum_accuracy", relative_tolerance=0.0).relative_tolerance == 0.0
    with pytest.raises(InvalidParameterError, match="relative_tolerancee"):
        assay.load_metric("metrics.sum_accuracy[relative_tolerancee=1]")


def test_overwrite_is_honoured(tmp_path):
    root = tmp_path / "cat"
    assay.add_to_catalog(SumAccuracy(), "metrics.sum_accuracy", catalog_path=root)
    with pytest.raises(InvalidParameterError, match="already exists.*overwrite=True"):
        assay.add_to_catalog(SumAccuracy(relative_tolerance=0.2), "metrics.sum_accuracy", catalog_path=root)
    assert assay.load_metric("metrics.sum_accuracy").relative_tolerance == 0.0  # the old entry is intact
    assay.add_to_catalog(SumAccuracy(relative_tolerance=0.2), "metrics.sum_accuracy", overwrite=True,
                         catalog_path=root)
    assert assay.load_metric("metrics.sum_accuracy").relative_tolerance == 0.2


def test_catalog_path_argument_and_environment_variable(tmp_path, monkeypatch):
    env_root = tmp_path / "env"
    monkeypatch.setenv(_catalog_files.CATALOG_ENV, str(env_root))
    written = assay.add_to_catalog(SumAccuracy(), "metrics.from_env")
    assert written == env_root / "metrics" / "from_env.json"
    assert isinstance(assay.load_metric("metrics.from_env"), SumAccuracy)
    other = tmp_path / "other"
    assay.add_to_catalog(SumAccuracy(relative_tolerance=0.3), "metrics.from_arg", catalog_path=other)
    assert (other / "metrics" / "from_arg.json").is_file()
    assert assay.load_metric("metrics.from_arg").relative_tolerance == 0.3


def test_a_registered_class_is_stored_by_its_qualified_registered_name(tmp_path):
    path = assay.add_to_catalog(assay.load_metric("exact_match[ignore_case=true]"), "metrics.em_nocase")
    data = json.loads(path.read_text())
    assert data["__class__"] == "assay-classic:exact_match" and data["args"] == {"ignore_case": True}
    m = assay.load_metric("metrics.em_nocase")
    assert m.ignore_case is True and m.update(["A", "b"], [["a"], ["c"]]).compute_scores()["exact_match"] == 0.5


def test_evaluate_resolves_catalog_names():
    assay.add_to_catalog(SumAccuracy(), "metrics.sum_accuracy")
    res = assay.evaluate([3.0, 4.0], [[1, 2], [2, 3]], metrics=["metrics.sum_accuracy"], n_resamples=0)
    assert res[0]["score"]["global"]["sum_accuracy"] == 0.5  # 3 == 1 + 2; 4 != 2 + 3


def test_an_entry_naming_a_class_no_plugin_provides_is_a_clear_error(tmp_path):
    root = tmp_path / "cat"
    f = root / "metrics" / "ghost.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"assay_catalog_entry": 1, "kind": "metric", "__class__": "no_such_plugin_metric",
                             "args": {}}))
    assay.register_local_catalog(root)
    with pytest.raises(UnknownNameError) as err:
        assay.load_metric("metrics.ghost")
    assert str(f) in str(err.value) and "no_such_plugin_metric" in str(err.value)
    assert "registered by no installed plugin" in str(err.value)
    # a dotted class path of a module this process has not imported: never imported by the loader
    f.write_text(json.dumps({"assay_catalog_entry": 1, "kind": "metric",
                             "__class__": "some_unimported_module_xyz.Metric", "args": {}}))
    with pytest.raises(UnknownNameError, match="some_unimported_module_xyz' is not imported"):
        assay.load_metric("metrics.ghost")
    assert "some_unimported_module_xyz" not in sys.modules
    # an imported module without that class
    f.write_text(json.dumps({"assay_catalog_entry": 1, "kind": "metric", "__class__": f"{__name__}.Nope",
                             "args": {}}))
    with pytest.raises(UnknownNameError, match="defines no class 'Nope'"):
        assay.load_metric("metrics.ghost")


@pytest.mark.parametrize("content, match", [
    ("{not json", "metrics/bad.json"),
    (json.dumps({"kind": "metric", "__class__": "x"}), "not an assay catalog entry"),
    (json.dumps({"assay_catalog_entry": 1, "kind": "metric"}), "has no '__class__'"),
    (json.dumps({"assay_catalog_entry": 1, "kind": "metric", "__class__": "exact_match", "args": [1]}),
     "'args' must be an object"),
    (json.dumps({"assay_catalog_entry": 1, "kind": "metric", "__class__": "exact_match",
                 "args": {"ignore_case": {"__type__": "complex"}}}), "unknown type"),
    (json.dumps({"assay_catalog_entry": 1, "kind": "metric", "__class__": "exact_match", "code": "x"}),
     "unknown keys"),
])
def test_malformed_entries_name_the_file(tmp_path, content, match):
    root = tmp_path / "cat"
    f = root / "metrics" / "bad.json"
    f.parent.mkdir(parents=True)
    f.write_text(content)
    assay.register_local_catalog(root)
    with pytest.raises(SaveFormatError, match=match) as err:
        assay.load_metric("metrics.bad")
    assert str(f) in str(err.value)


def test_code_is_refused_and_names_are_checked(tmp_path):
    pipe = MetricPipeline(SumAccuracy(), preprocess=[lambda inst: inst])
    with pytest.raises(InvalidParameterError, match="function.*never code"):
        assay.add_to_catalog(pipe, "metrics.with_lambda")
    assert not (tmp_path / "config" / "assay" / "catalog" / "metrics" / "with_lambda.json").exists()

    def make_local():
        class Local(SumAccuracy):
            pass
        return Local()

    with pytest.raises(InvalidParameterError, match="defined inside a function"):
        assay.add_to_catalog(make_local(), "metrics.local")
    for bad in ("", "metrics..x", "a/b", "with space", 3):
        with pytest.raises(InvalidParameterError, match="catalog name"):
            assay.add_to_catalog(SumAccuracy(), bad)
    with pytest.raises(InvalidParameterError, match="a plugin registers a metric of that name"):
        assay.add_to_catalog(SumAccuracy(), "accuracy")
    with pytest.raises(InvalidParameterError, match="overwrite"):
        assay.add_to_catalog(SumAccuracy(), "metrics.x", overwrite="yes")


def test_an_option_that_cannot_be_read_back_is_refused_rather_than_dropped(tmp_path):
    with pytest.raises(InvalidParameterError, match="parameter 'k' is not kept as an attribute"):
        assay.add_to_catalog(Hidden(k=2), "metrics.hidden")
    m = SumAccuracy(relative_tolerance=0.1)
    m.relative_tolerance = "changed"  # not what the constructor accepts: rebuilt, then compared
    path = tmp_path / "config" / "assay" / "catalog" / "metrics" / "changed.json"
    assay.add_to_catalog(m, "metrics.changed")  # a str is data: stored as given and rebuilt the same
    assert json.loads(path.read_text())["args"] == {"relative_tolerance": "changed"}


def test_written_atomically_through_jsonio(tmp_path, monkeypatch):
    import assay.plugins.catalog as catalog

    assay.add_to_catalog(SumAccuracy(relative_tolerance=0.1), "metrics.sum_accuracy")
    calls = []
    real = catalog.write_json_atomic

    def spy(path, data, **kw):
        calls.append(path)
        return real(path, data, **kw)

    monkeypatch.setattr(catalog, "write_json_atomic", spy)
    p = assay.add_to_catalog(SumAccuracy(relative_tolerance=0.2), "metrics.sum_accuracy", overwrite=True)
    assert calls == [p]
    assert not [n for n in os.listdir(p.parent) if n != "sum_accuracy.json"]  # no temporary file left


def test_an_entry_that_refers_to_itself_is_an_error_not_a_recursion(tmp_path):
    root = tmp_path / "cat"
    f = root / "metrics" / "loop.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"assay_catalog_entry": 1, "kind": "metric",
                             "__class__": "assay.metrics.pipeline.MetricPipeline",
                             "args": {"metric": "metrics.loop"}}))
    assay.register_local_catalog(root)
    with pytest.raises(SaveFormatError, match="refers to itself"):
        assay.load_metric("metrics.loop")


def test_assay_list_and_plugins_show_catalog_entries_and_name_unreadable_ones(tmp_path, capsys):
    from assay.cli import main

    first, second = tmp_path / "first", tmp_path / "second"
    assay.add_to_catalog(assay.load_metric("token_overlap"), "metrics.overlap", catalog_path=first)
    assay.add_to_catalog(assay.load_metric("token_overlap"), "metrics.overlap", catalog_path=second)
    (second / "metrics" / "broken.json").write_text("{not json")
    _catalog_files.register_local_catalog(second)
    _catalog_files.register_local_catalog(first)  # searched first

    assert main(["list", "metric"]) == 0
    out = capsys.readouterr().out.split("Catalog entries", 1)[1].splitlines()
    overlap = [line for line in out if "metrics.overlap" in line]
    assert len(overlap) == 2
    assert str(first / "metrics" / "overlap.json") in overlap[0] and "shadowed" not in overlap[0]
    assert str(second / "metrics" / "overlap.json") in overlap[1] and "shadowed" in overlap[1]
    broken = [line for line in out if "metrics.broken" in line]
    assert len(broken) == 1 and "unreadable" in broken[0] and "invalid JSON at line 1" in broken[0]

    assert main(["list", "metric", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    catalog = [r for r in rows if r["plugin"] == "catalog"]
    assert [(r["name"], r["path"], r["shadowed"]) for r in catalog] == [
        ("metrics.overlap", str(first / "metrics" / "overlap.json"), False),
        ("metrics.overlap", str(second / "metrics" / "overlap.json"), True)]

    assert main(["plugins"]) == 0
    assert "metrics.overlap" in capsys.readouterr().out.split("Catalog entries", 1)[1]
    assert main(["list", "estimator"]) == 0  # a metric entry is not listed under another kind
    out = capsys.readouterr().out
    assert "metrics.overlap" not in out and "metrics.broken" in out  # an unreadable file has no kind
