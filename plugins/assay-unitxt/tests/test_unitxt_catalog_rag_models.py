"""unitxt's ``metrics.rag.*`` pipelines around a model entry (BERTScore, sentence-BERT, reward, perplexity),
against unitxt 1.26.10 live, on tiny local models.

The tiny seeded models of ``test_unitxt_catalog_models.py`` are built once for the module, under
the Hub ids the wrapped entries name (``ASSAY_HF_MODELS_PATH``'s layout). assay loads each entry by
its catalog name, the wrapped metric reading that folder; unitxt's own pipeline (fetched from its
catalog) has its wrapped metric's ``model_name`` pointed at the same folder. Both run on the same
RAG rows (written in the tiny models' vocabulary); score names, main score, intervals and the
instance and global values must agree to a relative 1e-6. Sockets are blocked.
"""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import pytest

import assay
from assay.errors import InvalidParameterError
from assay_unitxt.catalog.models import ModelFolderNotFoundError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# slow: unitxt, torch and transformers take seconds to import
# offline: conftest's no_network fails a test that opens a socket or resolves a name
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_network")]


def _sibling(name):
    """A test module next to this one (the tiny-model builders; pytest's importlib mode has no package)."""
    spec = importlib.util.spec_from_file_location(f"_p9rag_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tiny = _sibling("test_unitxt_catalog_models")

#: the wrapped entry's Hub id -> (builder of its tiny model, the BERTScore layer unitxt uses for it)
MODELS = {
    "microsoft/deberta-large-mnli": (lambda f: tiny.build_encoder(f, 18, 1, "deberta"), 18),
    "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli": (lambda f: tiny.build_encoder(f, 10, 3, "deberta-v2"), 10),
    "sentence-transformers/all-MiniLM-L12-v2": (lambda f: tiny.build_sentence_transformer(f, 20), None),
    "BAAI/bge-large-en-v1.5": (lambda f: tiny.build_sentence_transformer(f, 21), None),
    "OpenAssistant/reward-model-deberta-v3-large-v2": (lambda f: tiny.build_classifier(f, 1, 5), None),
    "google/flan-t5-small": (lambda f: tiny.build_t5(f, 7), None),
    "google/t5_xxl_true_nli_mixture": (lambda f: tiny.build_t5(f, 8), None),
}


def _model_pipelines():
    from assay_unitxt.catalog import catalog_entries, load_status

    return sorted(n for n in load_status() if catalog_entries()[n]["needs"] == "model"
                  and catalog_entries()[n]["entry"].get("__type__") == "metric_pipeline")


PIPELINES = _model_pipelines()


#: the entries whose wrapped metric is a unitxt MapReduceMetric (Reward) given a score_prefix in the wrapped name
PREFIXED_MAP_REDUCE = {"metrics.rag.end_to_end.answer_reward"}


def _hub_id(name):
    from unitxt.artifact import fetch_artifact

    return fetch_artifact(name)[0].metric.model_name




@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """Every wrapped entry's tiny model, once, under its Hub id."""
    root = tmp_path_factory.mktemp("rag-models")
    for hub_id, (make, _) in MODELS.items():
        make(root / hub_id)
    return root


@pytest.fixture
def models_path(hub, monkeypatch):
    monkeypatch.setenv("ASSAY_HF_MODELS_PATH", str(hub))
    return hub


# RAG rows in the tiny tokenizers' words (unknown words would all read as one token)
QUESTIONS = ["the capital of france is", "was the dog big", "is the sky red", "a cat sat on"]
ANSWERS = ["paris", "it was big", "the sky is red", "a dog ran"]
TASK_DATA = [
    {"question": q, "reference_answers": refs, "reference_context_ids": ids, "contexts": ctx,
     "answer": ans, "ground_truths": refs, "context_ids": got, "ground_truths_context_ids": ids}
    for q, refs, ids, ctx, ans, got in zip(
        QUESTIONS,
        [["paris", "paris is the capital of france"], ["the dog was small"], ["the sky is red"], ["the mat"]],
        [["c1"], ["c2"], ["c3"], ["c4"]],
        [["paris is the capital of france", "the cat sat on the mat"], ["the dog ran in the park"],
         ["red sky", "birds sing"], ["a cat sat on a mat"]],
        ["paris is the capital", "the dog was small", "the sky is red", "the mat"],
        [["c1", "c2"], ["c2"], ["c3", "c5"], ["c6"]])]
DICT_PREDICTIONS = [{"answer": a, "contexts": td["contexts"], "context_ids": td["context_ids"]}
                    for a, td in zip(ANSWERS, TASK_DATA)]
REFERENCES = [td["reference_answers"] for td in TASK_DATA]


def _numbers(d):
    return {k: v for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _close(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return b == pytest.approx(a, rel=1e-6, abs=1e-9)


def unitxt_run(name, folder, layer, predictions):
    from unitxt.artifact import fetch_artifact
    from unitxt.stream import MultiStream

    pipeline, _ = fetch_artifact(name)
    inner = pipeline.metric
    inner.model_name = str(folder)  # unitxt's from_pretrained reads the folder
    if type(inner).__name__ == "BertScore" and inner.model_layer is None:
        inner.model_layer = layer  # bert-score's layer for the Hub id (a folder path has none)
    if hasattr(inner, "lm"):
        inner.lm = None
    rows = [{**td, "prediction": p, "references": r, "task_data": td}
            for p, r, td in zip(predictions, REFERENCES, TASK_DATA)]
    out = list(pipeline(MultiStream.from_iterables({"test": rows}, copying=True))["test"])
    return [o["score"]["instance"] for o in out], out[0]["score"]["global"]


def _assay_inputs(metric, predictions):
    """As in test_unitxt_catalog_pipelines.py: where the entry replaces an argument unread, assay is given the
    row's field it scores (predictions) or None (references)."""
    unread = next((step.fields for step in metric.preprocess_steps if type(step).__name__ == "_Unread"), [])
    if "prediction" in unread:
        field = next(src for step in metric.preprocess_steps for src, dst in getattr(step, "pairs", [])
                     if dst == "prediction")
        predictions = [td[field] for td in TASK_DATA]
    return predictions, (None if "references" in unread else REFERENCES)


def test_the_model_pipelines_load():
    # every metrics.rag.* pipeline around a model entry but the four around HHEM-2.1 and
    # metrics.rag.context_perplexity (a list-valued instance score; see the listing)
    assert len(PIPELINES) == 53 and all(n.startswith("metrics.rag.") for n in PIPELINES)
    assert {_hub_id(n) for n in PIPELINES} == set(MODELS)


@pytest.mark.parametrize("name", PIPELINES)
def test_model_pipeline_matches_unitxt(models_path, name):
    hub_id = _hub_id(name)
    preds = ANSWERS if ".response_generation." in name else DICT_PREDICTIONS
    u_inst, u_glob = unitxt_run(name, models_path / hub_id, MODELS[hub_id][1], preds)
    metric = assay.load_metric(name)
    a_preds, a_refs = _assay_inputs(metric, preds)
    res = assay.evaluate(a_preds, a_refs, task_data=TASK_DATA, metrics=[name], n_resamples=100, seed=0)
    a_inst, a_glob = [r["score"]["instance"] for r in res], res.global_scores
    if u_glob["score_name"] == "score":
        # unitxt's main_score "score" keeps the literal name; assay names the wrapped metric's main score
        # (assay_unitxt.pipeline.MetricPipeline), whose value unitxt reports as "score" too
        assert a_glob["score_name"] == metric.score_prefix + metric.metric.main_score
    else:
        assert a_glob["score_name"] == u_glob["score_name"]
    u_vals = {k: v for k, v in _numbers(u_glob).items() if "_ci_" not in k}
    a_vals = {k: v for k, v in _numbers(a_glob).items() if "_ci_" not in k}
    assert set(a_vals) == set(u_vals), f"global scores: assay {sorted(a_vals)}, unitxt {sorted(u_vals)}"
    for k, v in u_vals.items():
        assert _close(v, a_vals[k]), f"{name} global {k}: unitxt {v}, assay {a_vals[k]}"
    u_ci, a_ci = {k for k in u_glob if "_ci_" in k}, {k for k in a_glob if "_ci_" in k}
    if name in PREFIXED_MAP_REDUCE:
        # unitxt's MapReduceMetric.annotate_scores looks up the main score's interval under its unprefixed name
        # after prefixing the scores, so a prefixed Reward reports no score_ci_*; assay keeps them, equal to the
        # main score's interval
        assert a_ci - u_ci == {"score_ci_low", "score_ci_high"}
        main = a_glob["score_name"]
        ci = (a_glob["score_ci_low"], a_glob["score_ci_high"])
        assert ci == (a_glob[main + "_ci_low"], a_glob[main + "_ci_high"])
        a_ci -= {"score_ci_low", "score_ci_high"}
    assert a_ci == u_ci, f"interval names: assay {sorted(a_ci)}, unitxt {sorted(u_ci)}"
    for i, (u, a) in enumerate(zip(u_inst, a_inst)):
        u_i, a_i = _numbers(u), _numbers(a)
        assert set(a_i) == set(u_i), f"instance {i}: assay {sorted(a_i)}, unitxt {sorted(u_i)}"
        for k, v in u_i.items():
            assert _close(v, a_i[k]), f"{name} instance {i} {k}: unitxt {v}, assay {a_i[k]}"
    assert len({round(u["score"], 6) for u in u_inst}) > 1  # the tiny model separates the rows


def test_the_model_option_reaches_the_wrapped_metric(hub, monkeypatch):
    monkeypatch.delenv("ASSAY_HF_MODELS_PATH", raising=False)
    name = "metrics.rag.response_generation.answer_relevance.answer_reward"
    folder = hub / "OpenAssistant" / "reward-model-deberta-v3-large-v2"
    u_inst, _ = unitxt_run(name, folder, None, ANSWERS)
    res = assay.evaluate(ANSWERS, None, task_data=TASK_DATA, metrics=[f"{name}[model={folder}]"], n_resamples=0)
    main = res.global_scores["score_name"]
    assert [r["score"]["instance"][main] for r in res] == pytest.approx([u[main] for u in u_inst], rel=1e-6)


def test_a_missing_folder_names_the_pipeline_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HF_MODELS_PATH", str(tmp_path))
    name = "metrics.rag.end_to_end.faithfulness.bert_score_k_precision"
    with pytest.raises(ModelFolderNotFoundError, match=rf"{name.replace('.', '[.]')} needs the Hugging Face model "
                                                       r"'microsoft/deberta-large-mnli'.*was searched"):
        assay.evaluate(DICT_PREDICTIONS, None, task_data=TASK_DATA, metrics=[name], n_resamples=0)
    with pytest.raises(InvalidParameterError, match=r"^metrics\.rag\.answer_reward: the 'model' option must be a local "
                                                    r"folder"):
        assay.load_metric(f"metrics.rag.answer_reward[model={tmp_path / 'nowhere'}]")


@pytest.mark.parametrize("name", ["metrics.rag.end_to_end.faithfulness.bert_score_k_precision",
                                  "metrics.rag.response_generation.faithfulness.sentence_bert_mini_lm",
                                  "metrics.rag.end_to_end.answer_reward",
                                  "metrics.rag.external_rag.context_relevance"])
def test_model_pipelines_keep_assays_invariances(models_path, name):
    """assay check-plugin's checks (order, chunking, shard-then-merge, one at a time, pickling: the wrapped model is
    loaded again), which it skips without the folders."""
    from assay.testing import check_evaluate_matches, check_invariances

    metric = assay.load_metric(name)
    preds = ANSWERS if ".response_generation." in name else DICT_PREDICTIONS
    preds, refs = _assay_inputs(metric, preds)
    check_invariances(metric, preds, refs, TASK_DATA, atol=1e-6)
    check_evaluate_matches(metric, preds, refs, TASK_DATA, atol=1e-6)
