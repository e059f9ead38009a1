"""HuggingfaceMetric and the torch.distributed sync moved from the core to assay-interop: the old paths still work."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import assay
import assay.distributed
import assay.metrics
import assay.metrics.huggingface
import assay_interop.distributed
import assay_interop.huggingface
from assay.errors import MissingDependencyError
from assay.plugins import _catalog_files

SCRIPT = Path(__file__).resolve().parent / "data" / "hf_metrics" / "sum_match"


def test_old_paths_give_the_plugin_objects():
    from assay.distributed import sync
    from assay.metrics import HuggingfaceMetric
    from assay.metrics.huggingface import load_evaluate_module

    assert HuggingfaceMetric is assay_interop.huggingface.HuggingfaceMetric
    assert assay.metrics.huggingface.HuggingfaceMetric is HuggingfaceMetric
    assert load_evaluate_module is assay_interop.huggingface.load_evaluate_module
    assert sync is assay_interop.distributed.sync
    assert assay.distributed.__all__ == ["sync"] and "HuggingfaceMetric" in assay.metrics.__all__


@pytest.mark.parametrize("module,name", [(assay.distributed, "sync"), (assay.metrics, "HuggingfaceMetric"),
                                         (assay.metrics.huggingface, "HuggingfaceMetric")])
def test_without_the_plugin_an_old_path_names_the_install(monkeypatch, module, name):
    for mod in [m for m in sys.modules if m == "assay_interop" or m.startswith("assay_interop.")]:
        monkeypatch.setitem(sys.modules, mod, None)  # as when assay-interop is not installed
    with pytest.raises(MissingDependencyError, match=rf"{module.__name__}\.{name} \(it moved to assay_interop\..*"
                                                     r"pip install assay-interop"):
        getattr(module, name)


def test_a_catalog_entry_saved_with_the_old_path_still_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(_catalog_files, "_registered", [])
    monkeypatch.delenv(_catalog_files.CATALOG_ENV, raising=False)
    f = tmp_path / "cat" / "metrics" / "sum_match.json"
    f.parent.mkdir(parents=True)
    # what add_to_catalog wrote before the move
    f.write_text(json.dumps({"assay_catalog_entry": 1, "kind": "metric",
                             "__class__": "assay.metrics.huggingface.HuggingfaceMetric",
                             "args": {"hf_metric_name": str(SCRIPT), "main_score": "match",
                                      "prediction_type": {"__type__": "str"}}}))
    assay.register_local_catalog(tmp_path / "cat")
    m = assay.load_metric("metrics.sum_match")
    assert isinstance(m, assay_interop.huggingface.HuggingfaceMetric) and m.prediction_type is str
