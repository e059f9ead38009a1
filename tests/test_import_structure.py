"""The import structure that ``make check`` enforces, pinned where issue 12 changed it.

``make check`` runs the whole import-linter contracts of ``pyproject.toml`` (the core imports
no plugin, no cycle at any depth, the layers). These tests pin the cycles removed here, with
grimp (import-linter's graph library, installed by the ``dev`` extra), so that ``make test``
fails too if one comes back. Function-level imports count: a cycle hidden inside a function
is still a cycle.
"""

from __future__ import annotations

import grimp
import pytest

from assay.metrics import _params, api, significance


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("assay", exclude_type_checking_imports=True)


def test_significance_does_not_import_the_api(graph):
    # compare() used to import new_seed and the resampling check from assay.metrics.api inside
    # the function, while api imports significance at its top: a cycle.
    chain = graph.find_shortest_chain(importer="assay.metrics.significance", imported="assay.metrics.api")
    assert chain is None, f"assay.metrics.significance reaches assay.metrics.api through {chain}"


def test_the_shared_pieces_live_below_both(graph):
    for module in ("assay.metrics.api", "assay.metrics.significance"):
        assert graph.direct_import_exists(importer=module, imported="assay.metrics._params")
    assert graph.find_shortest_chain(importer="assay.metrics._params", imported="assay.metrics.api") is None


def test_new_seed_is_one_function_in_the_range_results_record():
    assert api.new_seed is _params.new_seed is significance.new_seed
    seeds = {_params.new_seed() for _ in range(20)}
    assert all(isinstance(s, int) and 0 <= s < 2**63 for s in seeds)
    assert len(seeds) == 20  # 20 draws of 63 random bits: a repeat has probability ~2e-17
