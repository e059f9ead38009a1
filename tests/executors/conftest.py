from __future__ import annotations

import importlib
import multiprocessing
from pathlib import Path

import pytest


@pytest.fixture
def helpers(monkeypatch):
    """The module-level helpers, importable by spawned workers too (their folder is put on sys.path)."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    return importlib.import_module("assay_test_helpers")


@pytest.fixture(autouse=True)
def no_leftover_workers():
    """Every executor test must leave no worker process behind."""
    yield
    assert multiprocessing.active_children() == []
