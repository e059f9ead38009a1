"""The common suite over the live registry: every registered name of every kind conforms.

One test per registered name (``test_every_registered_name_conforms[metric:f1]`` ...), read
from the process-wide plugin system at collection time, so the names of a newly installed
plugin are checked without editing this file. A name whose checks cannot run (no sample
inputs) fails here; see :mod:`assay.testing.suite`.
"""

from __future__ import annotations

from assay.plugins import KINDS, get_plugin_system
from assay.testing.conformance import CHECKS_BY_KIND
from assay.testing.suite import conformance_test, registered_entries

#: Names left out of the parametrised suite, each with the reason. Keep it short: a name
#: belongs here only when the suite cannot check it in this process.
EXEMPT: dict[tuple[str, str], str] = {
    # Instantiating them starts a cluster (a Dask LocalCluster, a JVM with a SparkContext): a minute
    # each on CI, against the suite's ~20 s. The same checks run on the clusters those modules
    # already start: tests/dask/test_dask.py::test_the_dask_executor_conforms and
    # tests/spark/test_spark_conformance.py.
    ("executor", "dask"): "checked on the LocalCluster of tests/dask/test_dask.py",
    ("executor", "spark"): "checked on the session SparkContext in tests/spark/test_spark_conformance.py",
    # LM-Polygraph's estimators that ask the model a follow-up question: they read the model object from
    # stats["model"] (LM-Polygraph's manager passes it so), which is not a per-example column the suite can
    # permute or split. Checked against LM-Polygraph with a recording model in
    # plugins/assay-uncertainty/tests/test_polygraph_info.py.
    ("estimator", "p_true_empirical"): "calls stats['model']; test_polygraph_info.py",
    ("estimator", "PTrueEmpirical"): "calls stats['model']; test_polygraph_info.py",
    ("estimator", "verbalized_2s"): "calls stats['model']; test_polygraph_info.py",
    ("estimator", "Verbalized2S"): "calls stats['model']; test_polygraph_info.py",
    # LM-Polygraph's random baseline draws a number per claim in order, so permuting or splitting the examples
    # changes them by design. Checked against LM-Polygraph under the same numpy seed in
    # plugins/assay-uncertainty/tests/test_polygraph_claim.py.
    ("estimator", "random_baseline_claim"): "random by design; test_polygraph_claim.py",
    ("estimator", "RandomBaselineClaim"): "random by design; test_polygraph_claim.py",
    # Focus reads a spaCy pipeline, a tokenizer and an IDF table, local files given as options, none shipped with
    # assay. Checked against LM-Polygraph on folders built by plugins/assay-uncertainty/tests/test_polygraph_focus.py.
    **{("estimator", name): "needs local spaCy / tokenizer / IDF files; test_polygraph_focus.py"
       for name in ("focus", "Focus", "focus_claim", "FocusClaim")},
    ("stat_calculator", "claim_to_samples_nli"): "needs a local model folder; test_claim_nli.py",
    ("stat_calculator", "SemanticClassesClaimToSamplesCalculator"): "needs a local model folder; test_claim_nli.py",
    ("stat_calculator", "greedy_alternatives_fact_pref_nli"): "needs a local model folder; test_claim_nli.py",
    ("stat_calculator", "GreedyAlternativesFactPrefNLICalculator"): "needs a local model folder; test_claim_nli.py",
    # LM-Polygraph's statistics computed by a second model (NLI, cross-encoder, a BERT tokenizer folder): the factory
    # takes the model folder (never a download), and no such folder ships with assay. Their values are checked
    # against LM-Polygraph's own calculators on tiny models built by
    # plugins/assay-transformers/tests/test_polygraph_semantic.py; the generic checks (pickling, order, chunking)
    # do not run on them yet.
    **{(kind, name): "needs a local model folder; test_polygraph_semantic.py" for kind, names in (
        ("stat_calculator", ("semantic_matrix", "SemanticMatrixCalculator", "greedy_semantic_matrix",
                             "GreedySemanticMatrixCalculator", "concat_greedy_semantic_matrix",
                             "ConcatGreedySemanticMatrixCalculator", "cross_encoder_similarity",
                             "CrossEncoderSimilarityMatrixCalculator", "greedy_cross_encoder_similarity",
                             "GreedyCrossEncoderSimilarityMatrixCalculator", "greedy_alternatives_nli",
                             "GreedyAlternativesNLICalculator")),
        ("estimator", ("semantic_entropy_token", "SemanticEntropyToken")),
    ) for name in names},
}

test_every_registered_name_conforms = conformance_test(exempt=EXEMPT)


def test_every_kind_has_checks():
    missing = [kind for kind in KINDS if kind not in CHECKS_BY_KIND]
    assert not missing, f"kinds without conformance checks: {missing}"


def test_exemptions_name_registered_objects():
    registered = {(e.kind, e.name) for e in registered_entries(get_plugin_system())}
    stale = sorted(set(EXEMPT) - registered)
    assert not stale, f"exempt names that are not registered (remove them): {stale}"


def test_the_suite_covers_every_first_party_kind():
    # the first-party plugins register names of these kinds: a registry that lost a kind (a plugin that
    # failed to load) must not shrink the suite silently
    kinds = {e.kind for e in registered_entries(get_plugin_system())}
    assert {"metric", "ue_metric", "aggregation", "sentence_evaluator", "executor", "data_format", "estimator",
            "stat_calculator", "task", "generation_metric", "command", "demo_section"} <= kinds

