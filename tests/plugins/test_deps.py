"""assay.plugins.deps.require: the one optional-import helper of the plugins and executors."""

from __future__ import annotations

import sys

import pytest

from assay.errors import MissingDependencyError
from assay.plugins.deps import require


def test_installed_module_is_returned():
    import json

    assert require("json") is json


def test_missing_module_names_the_distribution_and_the_extra():
    with pytest.raises(MissingDependencyError) as info:
        require("assay_no_such_module.sub", package="no-such-dist", extra="spark", purpose="the test")
    message = str(info.value)
    assert message == ("no-such-dist is required for the test but is not installed; install it with: "
                       "pip install 'assay[spark]'")
    assert isinstance(info.value, ImportError)


def test_a_failing_import_inside_an_installed_module_is_said(tmp_path, monkeypatch):
    (tmp_path / "assay_broken_dep.py").write_text("import assay_missing_inner\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "assay_broken_dep", raising=False)
    with pytest.raises(MissingDependencyError, match="importing it failed: No module named 'assay_missing_inner'"):
        require("assay_broken_dep", purpose="a plugin")
