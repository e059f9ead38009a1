"""unitxt's MetricPipeline example (Copy / ListFieldValues / Rename, a metric by catalog name) runs as written.

Hand derivation for the example's data (unitxt's TokenOverlap on SQuAD-normalized words):
"apple" against the context "apple 2e": 1 common token, P = 1/1, R = 1/2, F1 = 2/3;
"boy" against "boy": P = R = F1 = 1; "cat" against "dog": all 0. Global (mean):
f1 = (2/3 + 1 + 0) / 3 = 5/9, precision = 2/3, recall = 1/2 (unitxt's targets 0.56, 0.67, 0.5).
"""

from __future__ import annotations

import pickle

import pytest

import assay
from assay.errors import EvaluationError, InvalidParameterError
from assay.plugins import _catalog_files
from assay_unitxt.operators import Copy, CopyFields, ListFieldValues, Rename
from assay_unitxt.pipeline import MetricPipeline

PREDICTIONS = ["apple", "boy", "cat"]
REFERENCES = [["apple2"], ["boys"], ["dogs"]]
TASK_DATA = [{"context": "apple 2e"}, {"context": "boy"}, {"context": "dog"}]
F1, PRECISION, RECALL = 5 / 9, 2 / 3, 1 / 2
INSTANCES = [(2 / 3, 1.0, 0.5), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)]  # (f1, precision, recall)


@pytest.fixture(autouse=True)
def isolated_catalog(tmp_path, monkeypatch):
    monkeypatch.setattr(_catalog_files, "_registered", [])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(_catalog_files.CATALOG_ENV, raising=False)


def docs_pipeline(metric="metrics.token_overlap"):
    """unitxt's documentation example, verbatim but for the imports."""
    return MetricPipeline(
        main_score="score",
        preprocess_steps=[
            Copy(field="task_data/context", to_field="references"),
            ListFieldValues(fields=["references"], to_field="references"),
        ],
        metric=metric,
        postprocess_steps=[
            Rename(
                field_to_field=[
                    ("score/global/f1", "score/global/f1_overlap_with_context"),
                    ("score/global/recall", "score/global/recall_overlap_with_context"),
                    (
                        "score/global/precision",
                        "score/global/precision_overlap_with_context",
                    ),
                ],
            ),
        ],
    )


def test_the_documentation_example_runs_as_written_and_gives_unitxts_values():
    res = assay.evaluate(PREDICTIONS, REFERENCES, metrics=[docs_pipeline()], task_data=TASK_DATA, n_resamples=0)
    g = res[0]["score"]["global"]
    assert g["f1_overlap_with_context"] == pytest.approx(F1)
    assert g["precision_overlap_with_context"] == pytest.approx(PRECISION)
    assert g["recall_overlap_with_context"] == pytest.approx(RECALL)
    assert "f1" not in g  # renamed, not copied
    assert g["score"] == pytest.approx(F1) and g["score_name"] == "f1_overlap_with_context"
    for r, (f1, p, rc) in zip(res, INSTANCES):
        inst = r["score"]["instance"]  # the renames address score/global only
        assert (inst["f1"], inst["precision"], inst["recall"]) == pytest.approx((f1, p, rc))


def test_the_test_suite_variant_with_copy_keeps_the_sources_and_their_intervals():
    # unitxt's prepare/metrics script: CopyFields, postpreprocess_steps (its older spelling), a metric object
    metric = MetricPipeline(
        main_score="score",
        preprocess_steps=[
            CopyFields(field_to_field=[("task_data/context", "references")], use_query=True),
            ListFieldValues(fields=["references"], to_field="references"),
        ],
        metric=assay.load_metric("metrics.token_overlap"),
        postpreprocess_steps=[
            CopyFields(field_to_field=[
                ("score/global/f1", "score/global/f1_overlap_with_context"),
                ("score/global/recall", "score/global/recall_overlap_with_context"),
                ("score/global/precision", "score/global/precision_overlap_with_context"),
            ]),
        ],
    )
    res = assay.evaluate(PREDICTIONS, REFERENCES, metrics=[metric], task_data=TASK_DATA, n_resamples=200, seed=1)
    g = res[0]["score"]["global"]
    for name, value in (("f1", F1), ("precision", PRECISION), ("recall", RECALL)):
        assert g[name] == pytest.approx(value) and g[f"{name}_overlap_with_context"] == pytest.approx(value)
        assert 0.0 <= g[f"{name}_ci_low"] <= value <= g[f"{name}_ci_high"] <= 1.0
        assert f"{name}_overlap_with_context_ci_low" not in g  # copies get no interval, as in unitxt
    assert g["score_name"] == "f1" and g["score"] == pytest.approx(F1)


def test_a_rename_whose_source_does_not_exist_is_an_error_naming_the_path():
    p = MetricPipeline(metric="metrics.token_overlap",
                       postprocess_steps=[Rename(field_to_field=[("score/global/f2", "score/global/x")])])
    with pytest.raises(EvaluationError, match="'score/global/f2' does not exist.*Present: \\['f1', 'precision'"):
        p.update(["cat dog"], [["cat"]]).compute_scores()
    skip = MetricPipeline(metric="metrics.token_overlap", postprocess_steps=[
        Rename(field_to_field=[("score/global/f2", "score/global/x")], not_exist_ok=True)])
    assert skip.update(["cat dog"], [["cat"]]).compute_scores()["f1"] == pytest.approx(2 / 3)  # P = 1/2, R = 1


def test_instance_paths_rename_instance_scores_only():
    p = MetricPipeline(metric="metrics.token_overlap",
                       postprocess_steps=[Rename(field="score/instance/f1", to_field="score/instance/f1_ctx")])
    res = assay.evaluate(["cat dog"], [["cat"]], metrics=[p], n_resamples=0)
    assert res[0]["score"]["instance"]["f1_ctx"] == pytest.approx(2 / 3)
    assert "f1" not in res[0]["score"]["instance"]
    assert res[0]["score"]["global"]["f1"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("step, match", [
    (Rename(field="f1", to_field="score/global/x"), "must start with 'score/global/'"),
    (Rename(field="score/global/f1", to_field="score/instance/f1"), "between global and instance"),
    (Rename(field="score/global", to_field="score/global/x"), "must start with"),
])
def test_bad_postprocess_paths_are_rejected_at_construction(step, match):
    with pytest.raises(InvalidParameterError, match=match):
        MetricPipeline(metric="metrics.token_overlap", postprocess_steps=[step])


def test_bad_arguments_are_rejected():
    with pytest.raises(InvalidParameterError, match="not both"):
        MetricPipeline(metric="metrics.token_overlap", postprocess_steps=[Copy(field="score/global/f1")],
                       postpreprocess_steps=[Copy(field="score/global/f1")])
    with pytest.raises(InvalidParameterError, match="Copy / Rename"):
        MetricPipeline(metric="metrics.token_overlap", postprocess_steps=[lambda d: d])
    with pytest.raises(InvalidParameterError, match="Metric or a catalog name"):
        MetricPipeline(metric=3)
    with pytest.raises(assay.UnknownNameError, match="metrics.no_such"):
        MetricPipeline(metric="metrics.no_such")
    with pytest.raises(InvalidParameterError, match="field_to_field"):
        Copy(field_to_field=[("a",)])
    with pytest.raises(InvalidParameterError, match="not both"):
        Copy(field="a", field_to_field=[("a", "b")])
    with pytest.raises(InvalidParameterError, match="'fields'"):
        ListFieldValues(fields="references", to_field="references")


def test_operators_leave_their_input_unchanged_and_name_missing_fields():
    inst = {"prediction": "p", "references": None, "task_data": {"context": "c", "more": {"x": 1}}}
    out = Rename(field="task_data/more/x", to_field="task_data/y")(inst)
    assert out["task_data"] == {"context": "c", "more": {}, "y": 1}
    assert inst["task_data"] == {"context": "c", "more": {"x": 1}}
    assert ListFieldValues(fields=["prediction", "task_data/context"], to_field="references")(inst)["references"] \
        == ["p", "c"]
    with pytest.raises(EvaluationError, match="'task_data/nope' does not exist"):
        Copy(field="task_data/nope", to_field="references")(inst)
    with pytest.raises(EvaluationError, match="'nope' does not exist"):
        ListFieldValues(fields=["nope"], to_field="references")(inst)


def test_a_metric_by_local_catalog_name_and_the_pipeline_itself_stored_in_the_catalog():
    assay.add_to_catalog(assay.load_metric("metrics.token_overlap"), "metrics.my_overlap")
    p = docs_pipeline(metric="metrics.my_overlap")
    assay.add_to_catalog(p, "metrics.token_overlap_with_context", overwrite=True)
    loaded = assay.load_metric("metrics.token_overlap_with_context")
    assert isinstance(loaded, MetricPipeline) and isinstance(loaded.preprocess_steps[0], Copy)
    out = loaded.update(PREDICTIONS, REFERENCES, TASK_DATA).compute_scores()
    assert out["f1_overlap_with_context"] == pytest.approx(F1)
    assert out["recall_overlap_with_context"] == pytest.approx(RECALL)


def test_streaming_shards_and_pickling_match_one_pass():
    whole = docs_pipeline().update(PREDICTIONS, REFERENCES, TASK_DATA).compute_scores()
    a = docs_pipeline().update(PREDICTIONS[:1], REFERENCES[:1], TASK_DATA[:1])
    b = docs_pipeline().update(PREDICTIONS[1:], REFERENCES[1:], TASK_DATA[1:])
    first = pickle.loads(pickle.dumps(a)).compute_scores()
    assert first["f1_overlap_with_context"] == pytest.approx(2 / 3)  # the first instance alone
    merged = a.merge(b).compute_scores()
    for key in ("f1_overlap_with_context", "precision_overlap_with_context", "recall_overlap_with_context"):
        assert merged[key] == pytest.approx(whole[key])
    assert whole["f1_overlap_with_context"] == pytest.approx(F1)
