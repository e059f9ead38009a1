"""The examples in the core's and the executors' docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "assay.core.result",
    "assay.core.tally",
    "assay.core.pool",
    "assay.core.log",
    "assay.core.evaluator",
    "assay.executors.base",
    "assay.executors.builtin",
    "assay.executors._processes",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
