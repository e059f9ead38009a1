"""The UEManager on a black-box model behind a real local OpenAI-compatible server (issue 28, item 5).

The server is ``transformers serve`` on a tiny random chat model (the session fixture
``openai_server`` of ``assay_transformers.testing.pytest_plugin``, or one started here when a
test kills it). The sample-based estimators' values are compared with LM-Polygraph 0.7.0's
own classes, run live on the same sampled texts (NLI matrices from LM-Polygraph's own
``SemanticMatrixCalculator`` on the same tiny NLI model folder).
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

from assay.cli import main
from assay.uncertainty import UEManager
from assay_transformers.blackbox import OpenAIModel
from assay_transformers.openai_api import ModelRequestError

# random tiny models answer nothing right: PRR on constant accuracy is NaN with this warning
pytestmark = pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")

RECORDS = [{"input": q, "reference": a} for q, a in [
    ("the capital of france is", "paris"), ("what", "small"), ("who is the big red river city of two", "two"),
    ("yes no", "no"), ("a small blue", "red")]]
ESTIMATORS = ["lexical_similarity", "num_sem_sets", "semantic_entropy[class_probability_estimation=frequency]",
              "deg_mat", "eccentricity", "semantic_eigval_laplacian"]


def run(server, nli_dir, batch_size, *, model=None, records=RECORDS, estimators=ESTIMATORS, **kw):
    man = UEManager(records, model=model or OpenAIModel(server.base_url, name=server.model), estimators=estimators,
                    stat_calculators=[f"semantic_matrix[nli_model={nli_dir}, device=cpu]"], gen_metrics=["accuracy"],
                    ue_metrics=["prr"], batch_size=batch_size, max_new_tokens=5, samples_n=4, seed=3, **kw)
    man()
    return man


def _lp_nli_model(folder):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True).eval()
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return types.SimpleNamespace(deberta=model, deberta_tokenizer=tok, batch_size=10, device="cpu")


@pytest.fixture(scope="module")
def runs(openai_server, nli_dir):
    return {b: run(openai_server, nli_dir, b) for b in (1, 2, 5)}


def test_same_samples_and_values_for_any_batch_size(runs):
    one = runs[1]
    texts = one.stats["sample_texts"]
    assert len(texts) == len(RECORDS) and all(len(t) == 4 for t in texts)
    assert any(len(set(t)) > 1 for t in texts)  # sampled, not greedy
    for b in (2, 5):
        assert runs[b].stats["sample_texts"] == texts
        assert runs[b].stats["answer"] == one.stats["answer"]
        for name in ESTIMATORS:
            np.testing.assert_array_equal(runs[b].estimations[("sequence", name)],
                                          one.estimations[("sequence", name)], err_msg=name)
    for name in ESTIMATORS:  # real values, not NaN everywhere, and not all the same
        values = np.asarray(one.estimations[("sequence", name)], dtype=float)
        assert np.isfinite(values).all() and np.ptp(values) > 0, name
    assert set(one.stats) >= {"answer", "sample_texts", "input_texts"}
    assert "log_probs" not in one.stats  # a text-only server: no log-probabilities are invented


def test_estimators_equal_lm_polygraphs_classes_on_the_sampled_texts(runs, nli_dir, lpm):
    man = runs[2]
    texts = man.stats["sample_texts"]
    theirs = {"sample_texts": texts, "blackbox_sample_texts": texts}
    theirs.update(lpm("stat_calculators.semantic_matrix").SemanticMatrixCalculator(_lp_nli_model(nli_dir))(
        theirs, [], None))
    theirs["semantic_classes_entail"] = lpm("stat_calculators.semantic_classes").SemanticClassesCalculator()(
        {**theirs, "entailment_id": 2}, [], None)["semantic_classes_entail"]
    classes = {
        "lexical_similarity": lpm("estimators.lexical_similarity").LexicalSimilarity(),
        "num_sem_sets": lpm("estimators.num_sem_sets").NumSemSets(),
        "semantic_entropy[class_probability_estimation=frequency]":
            lpm("estimators.semantic_entropy").SemanticEntropy(class_probability_estimation="frequency"),
        "deg_mat": lpm("estimators.deg_mat").DegMat(),
        "eccentricity": lpm("estimators.eccentricity").Eccentricity(),
        "semantic_eigval_laplacian": lpm("estimators.eig_val_laplacian").EigValLaplacian(),
    }
    for name, cls in classes.items():
        with np.errstate(all="ignore"):
            expected = cls(theirs)
        np.testing.assert_allclose(man.estimations[("sequence", name)], expected, rtol=0, atol=1e-6, err_msg=name)


def test_greedy_answers_equal_the_server_at_temperature_zero(runs, openai_server):
    from assay_transformers.openai_api import OpenAIClient

    client = OpenAIClient(openai_server.base_url, model=openai_server.model)
    expected = [client.complete(r["input"], max_tokens=5, temperature=0)[0].text for r in RECORDS]
    assert runs[1].stats["answer"] == expected
    assert runs[1].gen_metrics[("sequence", "accuracy")].tolist() == [
        float(a.strip().lower() == r["reference"]) for a, r in zip(expected, RECORDS)]


def test_a_model_url_picks_the_openai_backend(openai_server, nli_dir, runs):
    man = UEManager(RECORDS, model=openai_server.base_url, model_options={"name": openai_server.model},
                    estimators=["lexical_similarity"], gen_metrics=["accuracy"], ue_metrics=["prr"], batch_size=3,
                    max_new_tokens=5, samples_n=4, seed=3)
    man()
    assert "OpenAIModel(" in man.notes[0]
    np.testing.assert_array_equal(man.estimations[("sequence", "lexical_similarity")],
                                  runs[1].estimations[("sequence", "lexical_similarity")])


def test_unsupported_generation_params_are_errors(openai_server):
    from assay.errors import InvalidParameterError

    man = UEManager(RECORDS, model=OpenAIModel(openai_server.base_url, name=openai_server.model),
                    estimators=["lexical_similarity"], generation_params={"top_k": 5})
    with pytest.raises(InvalidParameterError, match="'top_k': an OpenAI-compatible endpoint has no such field"):
        man()


def test_logprobs_asked_of_a_server_without_them_is_an_error_naming_the_request(openai_server):
    model = OpenAIModel(openai_server.base_url, name=openai_server.model, logprobs=True)
    man = UEManager(RECORDS, model=model, estimators=["lexical_similarity"], max_new_tokens=3, samples_n=2)
    with pytest.raises(ModelRequestError, match="for prompt 0 returned no log-probabilities"):
        man()


class _KillAfter:
    """An estimator of sample_texts (lexical similarity's values) that kills the server after ``after`` calls."""

    level = "sequence"
    dependencies = ("sample_texts",)

    def __init__(self, server, after):
        from assay import load_estimator

        self.server, self.after, self.calls = server, after, 0
        self.inner = load_estimator("lexical_similarity")

    def __call__(self, stats):
        self.calls += 1
        if self.calls == self.after:
            self.server.kill()
        return self.inner(stats)


def test_a_server_killed_mid_run_names_the_request_and_keeps_the_results(tmp_path, nli_dir, runs):
    from assay_transformers.testing.openai_server import build_tiny_chat_model, start_server

    folder = build_tiny_chat_model(tmp_path / "tiny-chat")  # the fixture's model: same seed, same weights
    opts = {"stat_calculators": [f"semantic_matrix[nli_model={nli_dir}, device=cpu]"], "gen_metrics": ["accuracy"],
            "ue_metrics": ["prr"], "batch_size": 2, "max_new_tokens": 5, "samples_n": 4, "seed": 3}
    with start_server(folder) as server:
        model = OpenAIModel(server.base_url, name=server.model, max_retries=1, timeout=20)
        # batches of 2: the server dies after the second batch's estimators; the third batch's request fails
        man = UEManager(RECORDS, model=model, estimators=[*ESTIMATORS, _KillAfter(server, after=2)], **opts)
        with pytest.raises(ModelRequestError) as info:
            man()
        assert not server.alive()
        port = server.port
    err = info.value
    assert err.index == 4 and "prompt 4" in str(err) and f"{server.base_url}/chat/completions" in str(err)
    assert "APIConnectionError" in str(err)
    assert any("batch of examples 4 to 4" in n and "UEManager.partial" in n for n in err.__notes__)
    # the finished batches are kept, equal to the uninterrupted run's first four examples
    part, full = man.partial, runs[1]
    assert part["n_examples"] == 4
    assert part["stats"]["sample_texts"] == full.stats["sample_texts"][:4]
    assert part["stats"]["answer"] == full.stats["answer"][:4]
    for name in ESTIMATORS:
        np.testing.assert_array_equal(part["estimations"][name], full.estimations[("sequence", name)][:4])
    assert list(part["gen_metrics"]["accuracy"]) == list(full.gen_metrics[("sequence", "accuracy")][:4])
    assert any("model run stopped at the batch of examples 4 to 4" in n for n in man.notes)
    # the backend kept every answer: on a server restarted at the same address, a new run with the same backend
    # sends only example 4's requests (its greedy answer and 4 samples, one request each on this server)
    with start_server(folder, port=port) as server:
        sent = model.client.requests
        again = UEManager(RECORDS, model=model, estimators=ESTIMATORS, **opts)
        again()
        assert model.client.requests - sent == 5
    assert again.stats["sample_texts"] == full.stats["sample_texts"]
    for name in ESTIMATORS:
        np.testing.assert_array_equal(again.estimations[("sequence", name)], full.estimations[("sequence", name)])


def _config(tmp_path, server, **model):
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps({"question": r["input"], "answer": r["reference"]}) + "\n"
                                               for r in RECORDS))
    cfg = {"model": {"url": server.base_url, "name": server.model, "batch_size": 2, "max_new_tokens": 5,
                     "samples_n": 4, "timeout": 30, "max_retries": 1, **model},
           "dataset": {"path": "qa.jsonl", "text_column": "question", "label_column": "answer"},
           "seed": 3, "estimators": ["lexical_similarity", "num_distinct_answers"], "gen_metrics": ["accuracy"],
           "ue_metrics": ["prr"], "save_path": "out", "plots": False}
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps(cfg))  # JSON is YAML
    return path


def test_assay_ue_config_with_a_url_runs_the_black_box_model(openai_server, tmp_path, runs):
    assert main(["ue", str(_config(tmp_path, openai_server)), "--n-resamples", "0"]) == 0
    man = UEManager.load(tmp_path / "out" / "seed-3")
    assert man.stats["sample_texts"] == runs[1].stats["sample_texts"]  # same seed: the Python run's samples
    np.testing.assert_array_equal(man.estimations[("sequence", "lexical_similarity")],
                                  runs[1].estimations[("sequence", "lexical_similarity")])


@pytest.mark.parametrize(("model", "where"), [
    ({"type": "causal"}, "model.type: expected no 'type' with 'url'"),
    ({"path": "folder"}, "model.url: expected either 'path' (a local model folder) or 'url', not both"),
    ({"endpoint": "responses"}, "model.endpoint: expected chat or completions"),
    ({"timeout": 0}, "model.timeout: expected a number of seconds > 0"),
    ({"url": "127.0.0.1:8000"}, "model.url: expected an http(s) URL"),
    ({"name": None}, "model.name: expected the model name the server serves"),
])
def test_config_errors_name_the_key(tmp_path, capsys, model, where):
    server = types.SimpleNamespace(base_url="http://127.0.0.1:1/v1", model="m")
    path = _config(tmp_path, server, **model)
    if model.get("name", "") is None:
        cfg = json.loads(path.read_text())
        del cfg["model"]["name"]
        path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) != 0
    assert where in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_url_keys_without_a_url_are_errors(tmp_path, capsys):
    path = _config(tmp_path, types.SimpleNamespace(base_url="http://127.0.0.1:1/v1", model="m"))
    cfg = json.loads(path.read_text())
    del cfg["model"]["url"]
    cfg["model"]["path"] = "folder"
    path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) != 0
    assert "model.name: expected no 'name' without 'url'" in capsys.readouterr().err


def test_the_log_probability_statistics_layout(monkeypatch):
    """With logprobs=True, on answers that carry them (the OpenAI layout, as the client parses it; the local server
    returns none): LM-Polygraph's greedy statistics and assay's sample_log_probs."""
    from assay_transformers.openai_api import Completion

    model = OpenAIModel("http://127.0.0.1:1/v1", name="m", logprobs=True)
    answer = Completion(text="paris", tokens=["par", "is"], token_log_probs=np.array([-0.1, -0.2]),
                        top_log_probs=[[("par", -0.1), ("lyon", -2.5)], [("ee", -1.9), ("is", -0.2)]])
    sent = []

    def complete(prompt, **kw):
        sent.append((prompt, kw))
        return [answer] * kw["n"]

    monkeypatch.setattr(model.client, "complete", complete)
    assert model.base_stats == ("answer", "log_probs", "top_logprobs")
    greedy, sampling = model.calculators(max_new_tokens=4, generation_params={"temperature": 0.7}, samples_n=3,
                                         seed=5)
    out = greedy({"input_texts": ["q0", "q1"]})
    assert out["greedy_texts"] == out["answer"] == out["blackbox_greedy_texts"] == ["paris", "paris"]
    assert out["greedy_tokens"] == [["par", "is"]] * 2
    np.testing.assert_array_equal(out["greedy_log_likelihoods"][1], [-0.1, -0.2])
    np.testing.assert_array_equal(out["log_probs"][0], [-0.1, -0.2])
    # LM-Polygraph's layout: per step, the chosen token first, then the other alternatives
    assert out["greedy_tokens_alternatives"][0] == [[("par", -0.1), ("lyon", -2.5)], [("is", -0.2), ("ee", -1.9)]]
    # LM-Polygraph's black-box entropy: -sum p log p over the returned alternatives, not renormalised
    h = [-(np.exp(-0.1) * -0.1 + np.exp(-2.5) * -2.5), -(np.exp(-1.9) * -1.9 + np.exp(-0.2) * -0.2)]
    np.testing.assert_allclose(out["entropy"][1], h, rtol=0, atol=1e-15)
    # assay's top_logprobs field: the alternatives' log-probabilities, most likely first
    assert out["top_logprobs"][0] == [[-0.1, -2.5], [-0.2, -1.9]]
    samples = sampling({"input_texts": ["q0", "q1"]})
    assert samples["sample_texts"] == samples["blackbox_sample_texts"] == [["paris"] * 3] * 2
    np.testing.assert_array_equal(samples["sample_log_probs"][0][2], [-0.1, -0.2])
    greedy_kw, sample_kw = sent[0][1], sent[2][1]
    assert greedy_kw["temperature"] == 0.0 and greedy_kw["n"] == 1 and greedy_kw["index"] == 0
    assert sample_kw["temperature"] == 0.7 and sample_kw["n"] == 3 and sample_kw["index"] == 0
    assert sample_kw["seed"] == int(np.random.SeedSequence([5, 0]).generate_state(1)[0])
    assert sent[3][1]["index"] == 1 and sent[3][1]["seed"] == int(np.random.SeedSequence([5, 1]).generate_state(1)[0])


def test_log_probabilities_without_their_alternatives_are_an_error_naming_the_request(monkeypatch):
    """top_logprobs > 0 and a server that returns the tokens' log-probabilities without the alternatives: an error
    (assay's entropies would be 0 for a one-entry distribution), not zeros."""
    from assay_transformers.openai_api import Completion

    model = OpenAIModel("http://127.0.0.1:1/v1", name="m", logprobs=True, top_logprobs=3)
    bare = Completion(text="paris", tokens=["par", "is"], token_log_probs=np.array([-0.1, -0.2]),
                      top_log_probs=[[], []])
    monkeypatch.setattr(model.client, "complete", lambda prompt, **kw: [bare] * kw["n"])
    greedy, _ = model.calculators(max_new_tokens=4, samples_n=2)
    with pytest.raises(ModelRequestError, match=r"for prompt 0 returned tokens without their top_logprobs "
                                                r"alternatives \(asked for 3\).*run with top_logprobs=0"):
        greedy({"input_texts": ["q0"]})
