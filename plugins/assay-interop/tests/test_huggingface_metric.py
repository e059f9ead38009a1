"""HuggingfaceMetric with a real ``evaluate`` module kept in the test data (tests/data/hf_metrics/sum_match).

The module's ``match`` is the weighted share of predictions found among their references
plus ``bonus``. For predictions a, b, c against [a], [x], [c, d] with weights 1, 2, 1 and
bonus 0.5: a and c match, so match = (1 + 1) / (1 + 2 + 1) + 0.5 = 1.0; instance b alone:
0 / 2 + 0.5 = 0.5. Every test runs with sockets blocked: nothing may reach a network.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
from pathlib import Path

import pytest

import assay
from assay.errors import InvalidParameterError, MissingDependencyError, UnknownNameError
from assay.plugins import _catalog_files
from assay_interop.huggingface import HuggingfaceMetric

pytestmark = pytest.mark.slow  # importing evaluate (datasets, pyarrow, pandas) takes seconds

SCRIPT_DIR = Path(__file__).resolve().parent / "data" / "hf_metrics" / "sum_match"
PREDS = ["a", "b", "c"]
REFS = [["a"], ["x"], ["c", "d"]]
TASK_DATA = [{"weights": 1.0, "bonus": 0.5}, {"weights": 2.0, "bonus": 0.5}, {"weights": 1.0, "bonus": 0.5}]


@pytest.fixture(scope="module")
def modules_cache(tmp_path_factory):
    """evaluate's module cache in a temporary folder (never the user's ~/.cache)."""
    import evaluate
    saved = evaluate.config.HF_MODULES_CACHE
    cache = tmp_path_factory.mktemp("hf_modules")
    evaluate.config.HF_MODULES_CACHE = cache
    yield cache
    evaluate.config.HF_MODULES_CACHE = saved


@pytest.fixture(autouse=True)
def no_network(monkeypatch, modules_cache, tmp_path):
    def refuse(*args, **kwargs):
        raise AssertionError(f"HuggingfaceMetric tried to reach the network: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(_catalog_files, "_registered", [])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(_catalog_files.CATALOG_ENV, raising=False)


def unitxt_style(name=str(SCRIPT_DIR), **kw):
    return HuggingfaceMetric(hf_metric_name=name, main_score="match", prediction_type=str,
                             hf_additional_input_fields_pass=["weights"],
                             hf_additional_input_fields_pass_one_value=["bonus"], **kw)


def test_a_local_module_with_per_instance_and_one_value_fields():
    res = assay.evaluate(PREDS, REFS, metrics=[unitxt_style()], task_data=TASK_DATA, n_resamples=0)
    g = res[0]["score"]["global"]
    assert g["match"] == pytest.approx(1.0) and g["score"] == pytest.approx(1.0) and g["score_name"] == "match"
    assert g["n"] == 3 and "tokens" not in g  # a list is not a score
    assert res[1]["score"]["instance"]["match"] == pytest.approx(0.5)


def test_the_script_file_path_hf_main_score_and_scale():
    m = HuggingfaceMetric(hf_metric_name=str(SCRIPT_DIR / "sum_match.py"), main_score="acc", hf_main_score="match",
                          scale=2.0)
    out = m.update(["a", "b"], [["a"], ["c"]]).compute_scores()
    assert out["acc"] == pytest.approx(0.25) and "match" not in out  # (1 / 2) / 2


def test_a_hub_name_loads_from_the_local_cache_only(modules_cache):
    # lay the module out as evaluate caches a Hub metric: evaluate_modules/metrics/evaluate-metric--NAME/HASH/NAME.py
    target = modules_cache / "evaluate_modules" / "metrics" / "evaluate-metric--sum_match" / ("0" * 64)
    target.mkdir(parents=True)
    shutil.copy(SCRIPT_DIR / "sum_match.py", target / "sum_match.py")
    for folder in (target, target.parent, target.parent.parent, target.parents[2]):
        (folder / "__init__.py").touch()
    m = HuggingfaceMetric(hf_metric_name="sum_match", main_score="match")
    assert m.update(["a", "b"], [["a"], ["c"]]).compute_scores()["match"] == pytest.approx(0.5)


def test_a_module_not_available_offline_says_so_and_what_to_do():
    with pytest.raises(UnknownNameError) as err:
        HuggingfaceMetric(hf_metric_name="not_cached_xyz", main_score="x").update(["a"], [["a"]]).compute_scores()
    msg = str(err.value)
    assert "'not_cached_xyz' is not available offline" in msg and "never downloads" in msg
    assert "evaluate.load('not_cached_xyz')" in msg and "local path" in msg
    with pytest.raises(UnknownNameError, match="no metric script at the local path"):
        HuggingfaceMetric(hf_metric_name="./no/such/dir/metric.py", main_score="x").module()


def test_task_data_fields_are_checked():
    m = unitxt_style()
    with pytest.raises(InvalidParameterError, match="'bonus'.*same.*0.5, 1.0"):
        m.update(PREDS, REFS, [*TASK_DATA[:2], {"weights": 1.0, "bonus": 1.0}]).compute_scores()
    with pytest.raises(InvalidParameterError, match="'weights', which instance 1 lacks"):
        unitxt_style().update(PREDS, REFS, [TASK_DATA[0], {"bonus": 0.5}, TASK_DATA[2]]).compute_scores()
    with pytest.raises(InvalidParameterError, match="type str; instance 0"):
        unitxt_style().update([1], [["a"]], [TASK_DATA[0]])
    for kwargs, match in (({"hf_metric_name": ""}, "hf_metric_name"), ({"main_score": 3}, "main_score"),
                          ({"scale": 0}, "scale"), ({"hf_additional_input_fields_pass": "weights"}, "list of field"),
                          ({"hf_compute_args": [1]}, "hf_compute_args")):
        args = {"hf_metric_name": str(SCRIPT_DIR), "main_score": "match", **kwargs}
        with pytest.raises(InvalidParameterError, match=match):
            HuggingfaceMetric(**args)


def test_stored_in_the_catalog_as_data(tmp_path):
    path = assay.add_to_catalog(unitxt_style(), "metrics.sum_match")
    data = json.loads(path.read_text())
    assert data["__class__"] == "assay_interop.huggingface.HuggingfaceMetric"
    assert data["args"]["prediction_type"] == {"__type__": "str"}
    m = assay.load_metric("metrics.sum_match")
    assert m.update(PREDS, REFS, TASK_DATA).compute_scores()["match"] == pytest.approx(1.0)


def test_missing_evaluate_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "evaluate", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'assay\[huggingface\]'"):
        unitxt_style().module()
