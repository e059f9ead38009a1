"""The option-mismatch message of ``sync`` (issue 27, item 19), checked on the gathered identities alone.

The two-process run (``test_sync.py``, slow) checks the same through torch; this module needs
no torch: it feeds ``_check_agree`` what ``all_gather_object`` would have gathered.
"""

from __future__ import annotations

import pytest

from assay.errors import InvalidParameterError
from assay.plugins import load_metric
from assay_interop.distributed import _check_agree, _identity


def gathered(*metrics):
    """What every rank holds after the gather: rank r's (identity, state) per metric."""
    return [[(_identity(m), m.state.__getstate__())] for m in metrics]


def test_macro_versus_micro_names_average_and_both_values():
    macro, micro = load_metric("f1[average=macro]"), load_metric("f1[average=micro]")
    assert macro.additive != micro.additive  # the derived attribute differs too, and sorts first
    with pytest.raises(InvalidParameterError) as info:
        _check_agree([macro], gathered(macro, micro))
    message = str(info.value)
    assert "average='micro' on rank 1 and average='macro' on rank 0" in message
    assert "additive" not in message and "n_stats" not in message


def test_two_options_that_differ_are_both_named():
    a, b = load_metric("f1[average=macro, zero_division=0]"), load_metric("f1[average=weighted, zero_division=1]")
    with pytest.raises(InvalidParameterError) as info:
        _check_agree([a], gathered(a, b))
    message = str(info.value)
    assert "average='weighted' on rank 1 and average='macro' on rank 0" in message
    assert "zero_division=1.0 on rank 1 and zero_division=0.0 on rank 0" in message


def test_the_same_options_agree():
    a, b = load_metric("f1[average=macro]"), load_metric("f1[average=macro]")
    _check_agree([a], gathered(a, b))  # no error
