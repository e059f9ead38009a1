"""unitxt's ``metric_pipeline`` catalog entries (``metrics.rag.*`` ...), built from their JSON, against unitxt 1.26.10.

Each entry's own unitxt ``MetricPipeline`` (fetched from unitxt's local catalog) runs on the
same instances as ``assay.evaluate(metrics=[name])``. The instances carry their ``task_data``
fields at the top level too, as the rows of the data frame unitxt's ``evaluate`` scores: that is
where the ``metrics.rag.external_rag.*`` entries read ``answer`` and ``contexts``, and where assay
reads them (from ``task_data``). Sockets are blocked.
"""

from __future__ import annotations

import math

import pytest
import unitxt.artifact as unitxt_artifact  # the reference, installed by make setup (a missing one fails)

import assay
from assay.errors import EvaluationError, InvalidParameterError

# slow: importing unitxt (datasets, pandas) takes seconds
# no_network (conftest.py): every socket connection fails the test
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_network")]


def _close(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return b == pytest.approx(a, rel=1e-9, abs=1e-12)


def _numbers(d):
    return {k: v for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}

ANSWERS = ["The tower is in Paris", "It opened in 1889", "Gustave Eiffel built it", "nobody knows"]
QUESTIONS = ["Where is the Eiffel tower?", "When did the tower open?", "Who built the tower?", "How tall is it?"]
TASK_DATA = [
    {"question": q, "reference_answers": refs, "reference_context_ids": ids, "contexts": ctx,
     "answer": ans, "ground_truths": refs, "context_ids": got, "ground_truths_context_ids": ids}
    for q, refs, ids, ctx, ans, got in zip(
        QUESTIONS,
        [["Paris", "in Paris France"], ["1889"], ["Eiffel's company built it"], ["330 metres"]],
        [["c1"], ["c2", "c5"], ["c9"], ["c4"]],
        [["The Eiffel tower is in Paris.", "Paris is in France"], ["It opened in March 1889"],
         ["Built by the company of Gustave Eiffel", "a tower"], ["unrelated text"]],
        ["the tower is in paris france", "1889", "Eiffel", "330 m"],
        [["c1", "c2"], ["c3", "c5", "c2"], ["c7", "c8"], ["c4"]])]
DICT_PREDICTIONS = [{"answer": a, "contexts": td["contexts"], "context_ids": td["context_ids"]}
                    for a, td in zip(ANSWERS, TASK_DATA)]
REFERENCES = [td["reference_answers"] for td in TASK_DATA]


def _pipelines():
    from assay_unitxt.catalog import catalog_entries, load_status

    return sorted(n for n in load_status() if catalog_entries()[n]["entry"].get("__type__") == "metric_pipeline"
                  and catalog_entries()[n]["needs"] == "nothing"  # around a model: test_unitxt_catalog_rag_models.py
                  # compared in test_unitxt_catalog_names.py and test_unitxt_catalog_rest.py
                  and n not in ("metrics.ndcg", "metrics.squad", "metrics.sacrebleu"))


PIPELINES = _pipelines()


def _predictions(name):
    # response_generation scores the answer text itself; the other entries take it (and the retrieved
    # contexts) from a RAG system's output dict, or from the row (the deprecated and external_rag entries)
    return ANSWERS if ".response_generation." in name else DICT_PREDICTIONS


def _assay_inputs(name, predictions, references):
    """What assay is given where the entry replaces an argument without reading it (unitxt ignores what it is
    given there): references None, and as predictions the row's field the entry scores."""
    metric = assay.load_metric(name)
    unread = next((step.fields for step in metric.preprocess_steps if type(step).__name__ == "_Unread"), [])
    if "prediction" in unread:
        field = next(src for step in metric.preprocess_steps for src, dst in getattr(step, "pairs", [])
                     if dst == "prediction")
        predictions = [td[field] for td in TASK_DATA]
    return predictions, (None if "references" in unread else references)


def unitxt_run(name, predictions, references, task_data):
    from unitxt.stream import MultiStream

    metric, _ = unitxt_artifact.fetch_artifact(name)
    rows = [{**td, "prediction": p, "references": r, "task_data": td}
            for p, r, td in zip(predictions, references, task_data)]
    out = list(metric(MultiStream.from_iterables({"test": rows}, copying=True))["test"])
    return [o["score"]["instance"] for o in out], out[0]["score"]["global"]


def test_the_pipeline_entries_load():
    # every offline metrics.rag.* pipeline (metrics.sacrebleu and metrics.token_overlap_with_context: see the listing)
    assert len(PIPELINES) == 35 and all(n.startswith("metrics.rag.") for n in PIPELINES)
    # and the 53 around a model entry (test_unitxt_catalog_rag_models.py): 88 metrics.rag.* pipelines load
    from assay_unitxt.catalog import catalog_entries, load_status

    rag = [n for n in load_status() if n.startswith("metrics.rag.")
           and catalog_entries()[n]["entry"].get("__type__") == "metric_pipeline"]
    assert len(rag) == 88


@pytest.mark.parametrize("name", PIPELINES)
def test_pipeline_entry_matches_unitxt(name):
    preds = _predictions(name)
    u_inst, u_glob = unitxt_run(name, preds, REFERENCES, TASK_DATA)
    a_preds, a_refs = _assay_inputs(name, preds, REFERENCES)
    res = assay.evaluate(a_preds, a_refs, task_data=TASK_DATA, metrics=[name], n_resamples=100, seed=0)
    a_inst, a_glob = [r["score"]["instance"] for r in res], res.global_scores
    if u_glob["score_name"] == "score":
        # unitxt's main_score "score" keeps the literal name; assay names the wrapped metric's main score
        assert a_glob["score_name"] == a_glob["score_name"].rsplit("_", 1)[0] + "_mrr", a_glob["score_name"]
    else:
        assert a_glob["score_name"] == u_glob["score_name"]
    u_vals = {k: v for k, v in _numbers(u_glob).items() if "_ci_" not in k}
    a_vals = {k: v for k, v in _numbers(a_glob).items() if "_ci_" not in k}
    assert set(a_vals) == set(u_vals), f"global scores: assay {sorted(a_vals)}, unitxt {sorted(u_vals)}"
    for k, v in u_vals.items():
        assert _close(v, a_vals[k]), f"{name} global {k}: unitxt {v}, assay {a_vals[k]}"
    u_ci = {k for k in u_glob if "_ci_" in k}
    a_ci = {k for k in a_glob if "_ci_" in k}
    assert a_ci == u_ci, f"interval names: assay {sorted(a_ci)}, unitxt {sorted(u_ci)}"
    for k in a_ci:
        if k.endswith("_ci_low"):
            base = k[: -len("_ci_low")]
            assert a_glob[k] <= a_glob[base] + 1e-12 <= a_glob[base + "_ci_high"] + 2e-12, k
    for i, (u, a) in enumerate(zip(u_inst, a_inst)):
        u_i, a_i = _numbers(u), _numbers(a)
        assert set(a_i) == set(u_i), f"instance {i}: assay {sorted(a_i)}, unitxt {sorted(u_i)}"
        for k, v in u_i.items():
            assert _close(v, a_i[k]), f"{name} instance {i} {k}: unitxt {v}, assay {a_i[k]}"


def test_token_recall_by_hand():
    # "the tower is in paris" against "paris" / "in paris france": recall max(1/1, 2/3) = 1;
    # "it opened in 1889" against "1889": 1; "gustave eiffel built it" against "eiffels company built it":
    # built, it -> 2/4; "nobody knows" against "330 metres": 0
    res = assay.evaluate(DICT_PREDICTIONS, None, task_data=TASK_DATA, n_resamples=0,
                         metrics=["metrics.rag.end_to_end.answer_correctness.token_recall"])
    assert res.global_scores["score_name"] == "answer_correctness_token_recall_recall"
    assert [r["score"]["instance"]["answer_correctness_token_recall_recall"] for r in res] == [1.0, 1.0, 0.5, 0.0]


def test_context_mrr_by_hand():
    # retrieved c1,c2 / relevant c1 -> 1; c3,c5,c2 / c2,c5 -> 1/2; c7,c8 / c9 -> 0; c4 / c4 -> 1
    res = assay.evaluate(DICT_PREDICTIONS, None, task_data=TASK_DATA, n_resamples=0,
                         metrics=["metrics.rag.end_to_end.context_correctness.mrr"])
    assert res.global_scores["context_correctness_mrr"] == pytest.approx(2.5 / 4)


def test_external_rag_reads_the_row_from_task_data():
    answers = [td["answer"] for td in TASK_DATA]
    with pytest.raises(EvaluationError, match=r"task_data"):
        assay.evaluate(answers, None, metrics=["metrics.rag.external_rag.faithfulness"], n_resamples=0)
    # a score_prefix override replaces the entry's, as unitxt's pipeline does
    res = assay.evaluate(answers, None, task_data=TASK_DATA, n_resamples=0,
                         metrics=["metrics.rag.external_rag.faithfulness[score_prefix=f_]"])
    assert res.global_scores["score_name"] == "f_precision"


@pytest.mark.parametrize(("preds", "refs", "what"), [
    (ANSWERS, None, "predictions given differ"),                               # not the row's answers
    ([td["answer"] for td in TASK_DATA], REFERENCES, "pass references=None"),  # the row's contexts replace them
])
def test_an_input_the_pipeline_replaces_unread_is_refused(preds, refs, what):
    with pytest.raises(InvalidParameterError, match=what):
        assay.evaluate(preds, refs, task_data=TASK_DATA, metrics=["metrics.rag.external_rag.faithfulness"],
                       n_resamples=0)


def test_serializer_refuses_a_value_it_does_not_render():
    td = [{**TASK_DATA[0], "question": {"role": "user", "content": "x"}}]
    with pytest.raises(EvaluationError, match=r"MultiTypeSerializer.*'prediction'"):
        assay.evaluate(DICT_PREDICTIONS[:1], None, task_data=td, n_resamples=0,
                       metrics=["metrics.rag.end_to_end.context_relevance.token_precision"])


def test_a_pipeline_that_is_not_built_says_why(tmp_path, monkeypatch):
    from assay.plugins import _catalog_files
    from assay_unitxt.catalog import catalog_entries, not_loaded_reason

    # no local catalog: another test (unitxt's tutorial) may have stored this name in a folder of its own
    monkeypatch.setattr(_catalog_files, "_registered", [])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(_catalog_files.CATALOG_ENV, raising=False)
    from assay_unitxt.catalog.pipelines import unsupported

    # the general builder does not build an inline huggingface_metric (metrics.sacrebleu has its own builder)
    entry = catalog_entries()["metrics.sacrebleu"]["entry"]
    assert "inline `huggingface_metric`" in unsupported(entry, lambda name: True)
    entry = catalog_entries()["metrics.token_overlap_with_context"]["entry"]
    assert "inline `token_overlap`" in unsupported(entry, lambda name: True)
    assert "add_to_catalog" in not_loaded_reason("metrics.token_overlap_with_context")
    with pytest.raises(assay.errors.UnknownNameError):
        assay.load_metric("metrics.token_overlap_with_context")
    with pytest.raises(InvalidParameterError):
        assay.load_metric("metrics.rag.end_to_end.answer_correctness[main_score=7]")


@pytest.mark.parametrize("name", ["metrics.rag.end_to_end.recommended.cpu_only.all",
                                  "metrics.rag.external_rag.recommended.cpu_only.all",
                                  "metrics.rag.response_generation.recommended.cpu_only.all"])
def test_a_list_of_several_metrics_names_its_members(name):
    # unitxt's list of several metrics: the listing names the members, which load and run together
    from assay_unitxt.catalog import catalog_entries, not_loaded_reason

    items = catalog_entries()[name]["entry"]["items"]
    assert all(f'"{i}"' in not_loaded_reason(name) for i in items)
    with pytest.raises(assay.errors.UnknownNameError):
        assay.load_metric(name)
    if ".external_rag." in name:
        # its members disagree on the predictions: answer_relevance reads the prediction dict, the others
        # replace it with the row's fields and refuse one: each runs alone
        assert all(assay.load_metric(item).main_score for item in items)
        return
    preds = _predictions(items[0])
    together = assay.evaluate(preds, None, task_data=TASK_DATA, metrics=items, n_resamples=0).global_scores
    for item in items:
        alone = assay.evaluate(preds, None, task_data=TASK_DATA, metrics=[item], n_resamples=0).global_scores
        assert together[alone["score_name"]] == alone["score"]
