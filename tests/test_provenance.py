"""assay.provenance: the signature string, its parsing, and which differences change the numbers."""

from __future__ import annotations

import importlib.metadata as metadata
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import assay
from assay.errors import InvalidParameterError, SignatureMismatchError
from assay.plugins import load_aggregation, load_metric, load_task, load_ue_metric
from assay.provenance import (
    Signature,
    check_signatures,
    evaluation_signature,
    read_signature,
    signature_of,
    spec_of,
    versions_of,
)

V = assay.__version__
CLASSIC = metadata.version("assay-classic")


def sig(**changes):
    base = dict(components=(("metrics", ("f1[average=macro]", "accuracy")),), resampling="bootstrap",
                ci_method="percentile", n_resamples=1000, confidence_level=0.95, seed=0, assay="0.1.0",
                plugins=(("assay-classic", "0.1.0"),))
    return Signature(**(base | changes))


# ------------------------------------------------------------------ the string
def test_string_is_sacrebleu_like_and_written_by_hand():
    expected = ("metrics:f1[average=macro],accuracy|resample:bootstrap|ci:percentile|n:1000|level:0.95|seed:0|"
                "assay:0.1.0|plugins:assay-classic=0.1.0")
    assert sig().to_string() == expected == str(sig())
    assert Signature.from_string(expected) == sig()


def test_evaluate_records_metrics_with_options_resampling_and_versions():
    res = assay.evaluate([1, 0, 1, 1], [[1], [1], [0], [1]], metrics=["f1[average=macro, score_prefix=m_]",
                                                                      "accuracy"],
                         n_resamples=20, confidence_level=0.9, seed=7)
    expected = (f"metrics:f1[average=macro],accuracy|resample:bootstrap|ci:percentile|n:20|level:0.9|seed:7|"
                f"assay:{V}|plugins:assay-classic={CLASSIC}")
    assert res.info["signature"] == expected
    assert res.signature == Signature.from_string(expected)


def test_no_resampling_leaves_the_resampling_fields_out():
    res = assay.evaluate([1, 0], [[1], [1]], metrics=["accuracy"], n_resamples=0, seed=3)
    assert res.info["signature"] == f"metrics:accuracy|resample:none|assay:{V}|plugins:assay-classic={CLASSIC}"


@pytest.mark.parametrize(("groups", "strata", "method"), [
    (None, None, "bootstrap"), ([0, 0, 1, 1], None, "cluster-bootstrap"),
    (None, ["x", "y", "x", "y"], "stratified-bootstrap"), ([0, 0, 1, 1], ["x", "x", "y", "y"],
                                                           "stratified-cluster-bootstrap")])
def test_resampling_method_names_clusters_and_strata(groups, strata, method):
    res = assay.evaluate([1, 0, 1, 1], [[1], [1], [0], [1]], metrics=["accuracy"], n_resamples=10,
                         groups=groups, strata=strata, ci_method="wilson")
    assert f"|resample:{method}|ci:wilson|n:10|" in res.info["signature"]


def test_convention_is_always_shown_and_defaults_are_not():
    assert spec_of(load_ue_metric("aurc")) == "aurc[convention=fd-shifts]"
    assert spec_of(load_ue_metric("aurc[convention=values]")) == "aurc[convention=values]"
    f1 = load_metric("f1[average=binary]")
    assert spec_of(f1, "f1[average=binary]") == "f1"  # the default: same as plain "f1"
    assert spec_of(load_metric("f1"), "f1") == "f1"
    # options from the attributes, keys sorted, score_prefix never
    assert spec_of(load_metric("f1[zero_division=0.0, average=macro]"), "f1[score_prefix=x_]") \
        == "f1[average=macro, zero_division=0.0]"


def test_requirements_are_recorded_as_libs():
    plugins, libs = versions_of([load_metric("bleu")])
    assert plugins == (("assay-classic", CLASSIC),)
    assert libs == (("sacrebleu", metadata.version("sacrebleu")),)


def test_code_outside_a_distribution_has_no_version():
    class Local:
        pass

    assert versions_of([Local()]) == ((), ())


def test_tasks_and_aggregations():
    s = signature_of({"tasks": [load_task("calibration")],
                      "aggregations": [("patch_max[patch_size=5]", load_aggregation("patch_max[patch_size=5]"))]})
    seg = metadata.version("assay-segmentation")
    assert s.to_string() == (f"tasks:calibration|aggregations:patch_max[patch_size=5]|assay:{V}|"
                             f"plugins:assay-segmentation={seg}")


# ------------------------------------------------------------------ parsing
def test_parsing_keeps_brackets_quotes_and_unknown_fields():
    text = "metrics:f1[labels=[1, 2], average=macro],x[s='a|b,c']|estimators:msp|n:5|assay:9.9|libs:foo=1.0"
    s = Signature.from_string(text)
    assert s.component("metrics") == ("f1[labels=[1, 2], average=macro]", "x[s='a|b,c']")
    assert s.component("estimators") == ("msp",) and s.n_resamples == 5 and s.libs == (("foo", "1.0"),)
    assert s.to_string() == text
    assert read_signature(s.to_dict()) == s and read_signature(text) == s and read_signature(None) is None


@pytest.mark.parametrize(("text", "match"), [
    ("", "non-empty"), ("metrics", "key:value"), ("n:ten|assay:1", "'n' must be an integer"),
    ("level:high", "'level' must be a number"), ("seed:1|seed:2", "twice"), ("metrics:f1[a=1", "Unbalanced"),
    ("plugins:assay-classic", "distribution=version")])
def test_malformed_signatures_name_the_field(text, match):
    with pytest.raises(InvalidParameterError, match=match):
        Signature.from_string(text)


_spec = st.from_regex(r"[a-z][a-z_]{0,6}(\[[a-z]{1,4}=[a-z0-9.]{1,5}\])?", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(metrics=st.lists(_spec, min_size=1, max_size=3), n=st.one_of(st.none(), st.integers(0, 10**6)),
       level=st.one_of(st.none(), st.floats(0.01, 0.999)), seed=st.one_of(st.none(), st.integers(0, 2**63 - 1)),
       plugins=st.dictionaries(st.from_regex(r"[a-z][a-z-]{0,8}", fullmatch=True),
                               st.from_regex(r"[0-9]{1,2}\.[0-9]{1,2}", fullmatch=True), max_size=3))
def test_round_trip(metrics, n, level, seed, plugins):
    s = Signature(components=(("metrics", tuple(metrics)),), n_resamples=n, confidence_level=level, seed=seed,
                  assay="1.2.3", plugins=tuple(sorted(plugins.items())))
    assert Signature.from_string(s.to_string()) == s


# ------------------------------------------------------------------ differences
def test_differences_that_change_the_numbers():
    diffs = sig().differences(sig(components=(("metrics", ("f1[average=micro]", "accuracy")),), seed=1,
                                  n_resamples=500))
    assert [(d.field, d.this, d.other, d.changes_numbers) for d in diffs] == [
        ("metrics f1", "f1[average=macro]", "f1[average=micro]", True),
        ("n", "1000", "500", True), ("seed", "0", "1", True)]


def test_differences_that_do_not():
    other = sig(components=(("metrics", ("assay-classic:f1[average=macro]", "bleu")),), assay="0.2.0",
                plugins=(("assay-classic", "0.2.0"), ("x", "1")))
    diffs = sig().differences(other)
    assert [(d.field, d.changes_numbers) for d in diffs] == [
        ("metrics accuracy", False), ("metrics bleu", False), ("assay", False), ("plugins assay-classic", False),
        ("plugins x", False)]
    # option order and 2 vs 2.0 are the same configuration
    a = sig(components=(("metrics", ("f1[beta=2, average=macro]",)),))
    b = sig(components=(("metrics", ("f1[average=macro, beta=2.0]",)),))
    assert a.differences(b) == []


def test_check_signatures_refuses_lists_and_allows():
    a, b = sig().to_string(), sig(confidence_level=0.9, plugins=(("assay-classic", "0.2.0"),)).to_string()
    with pytest.raises(SignatureMismatchError, match=r"level: 0\.95 \(a\) vs 0\.9 \(b\).*allow_signature_mismatch") \
            as info:
        check_signatures(a, b)
    assert [d.field for d in info.value.differences] == ["level"]
    assert pickle.loads(pickle.dumps(info.value)).differences == info.value.differences
    notes = check_signatures(a, b, allow=True)
    assert notes == ["signatures differ (allowed): level: 0.95 (a) vs 0.9 (b)",
                     "signatures differ in plugins assay-classic: 0.1.0 (a) vs 0.2.0 (b) (does not change the "
                     "numbers)"]
    assert check_signatures(a, a) == []
    assert "carry no signature" in check_signatures(None, b)[0]


def test_evaluation_signature_of_metric_objects():
    from assay_classic.classification import F1

    s = evaluation_signature([F1(average="macro", beta=2.0)], n_resamples=0, confidence_level=0.95,
                             ci_method="percentile", seed=0)
    assert s.component("metrics") == ("F1[average=macro, beta=2.0]",)


def test_docstring_example_runs():
    import doctest

    import assay.provenance

    result = doctest.testmod(assay.provenance, verbose=False)
    assert result.failed == 0 and result.attempted > 0


def test_base_class_arguments_are_not_options_but_a_subclass_s_are():
    from assay.metrics import Metric

    assert spec_of(load_ue_metric("augrc")) == "augrc[convention=fd-shifts]"  # not higher_is_better from UEMetric
    assert spec_of(load_metric("accuracy"), "accuracy") == "accuracy"

    class Close(Metric):
        main_score = "close"

        def __init__(self, *, tolerance: float = 0.0, score_prefix: str = "") -> None:
            super().__init__(score_prefix=score_prefix)
            self.tolerance = tolerance

    assert spec_of(Close()) == "Close"
    assert spec_of(Close(tolerance=0.5, score_prefix="c_")) == "Close[tolerance=0.5]"
