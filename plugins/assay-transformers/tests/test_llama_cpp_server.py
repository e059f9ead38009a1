"""Black-box log-probabilities against a real server that returns them: llama-cpp-python's OpenAI server.

The server (the session fixture ``llama_cpp_server``) runs a tiny random Llama model that the
fixture builds as a Hugging Face folder and converts to GGUF
(:mod:`assay_transformers.testing.tiny_gguf`). Checked here:

- the client lays out what the server sent: its raw JSON, read here with ``urllib``;
- the server's log-probabilities are the model's: the same model's float32 log-softmax computed
  by transformers from the Hugging Face folder (the reference; :data:`TOL`);
- the UEManager on the black-box model with log-probabilities gives the same statistics and
  estimator values at batch sizes 1, 2 and 5, equal to LM-Polygraph 0.7.0's own
  ``BlackboxGreedyTextsCalculator`` (run live against the same server), ``EntropyCalculator``
  and estimator classes on the statistics they build, and the sampled answers are the server's
  answers to the requests the backend documents (seeds, ``n`` asked again with a warning).

The server keeps the previous request's evaluated prompt and evaluates only what differs (its
prefix cache, always on): the same request sent twice is evaluated in other float32 batches and
its log-probabilities differ in the 7th digit. So "the server's raw JSON" is the JSON of the
very response the client parsed (:func:`record`), and numbers from two different requests are
compared to :data:`REPEAT_TOL`; texts and tokens are compared exactly.
"""

from __future__ import annotations

import json
import types
import urllib.request

import numpy as np
import pytest

from assay.uncertainty import UEManager
from assay_transformers.blackbox import OpenAIModel
from assay_transformers.openai_api import NIgnoredWarning, OpenAIClient

# random tiny models answer nothing right: PRR on constant accuracy is NaN with this warning
pytestmark = pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")

#: |server - transformers| for a log-probability. Both evaluate the same float32 weights, but llama.cpp's kernels
#: (blocked SIMD dot products, its own RMS norm, RoPE, softmax and exp) round in another order than torch's:
#: float32 rounding (~6e-8 relative) over a few thousand operations per value, on logits of magnitude ~10, gives
#: differences of order 1e-6 to 1e-5 (measured: at most 4.6e-6 over the five greedy answers). 1e-4 leaves a margin,
#: and is far below what a wrong conversion gives (a permuted RoPE row or a transposed matrix changes values by ~1).
TOL = 1e-4

#: |a - b| for a log-probability (and sums of a few) that the server returned for two different requests with the
#: same prompt and seed: the prompt evaluated from a different cached prefix (module docstring) rounds differently in
#: float32; measured: at most 1.9e-6 between the runs at batch sizes 1, 2 and 5 (the greedy answers' equal).
REPEAT_TOL = 1e-5

PROMPTS = ["what is the capital of france", "who is the big red river", "a small blue city", "yes no",
           "the answer is"]
RECORDS = [{"input": p, "reference": "paris"} for p in PROMPTS]
TOP = 5
MAX_NEW = 6
SAMPLES = 4
SEED = 3
SEQUENCE = ["msp", "perplexity", "mean_token_entropy", "max_token_entropy", "MaximumSequenceProbability",
            "Perplexity", "MeanTokenEntropy", "mc_sequence_entropy", "mc_normalized_sequence_entropy",
            "lexical_similarity"]
TOKEN = ["MaximumTokenProbability", "TokenEntropy"]


def post(server, path, body):
    """The server's raw JSON answer to ``body`` (no client library in between)."""
    req = urllib.request.Request(f"{server.base_url}/{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def record(client):
    """Keep the raw JSON and the parsed response of each request ``client`` (an OpenAIClient) sends, with its
    arguments, in ``client.recorded``: [(kwargs, raw JSON, parsed response), ...]. The requests go out unchanged
    (``with_raw_response`` is the ``openai`` package's access to the HTTP response of the same call)."""
    client.recorded = []
    for resource in (client._client.chat.completions, client._client.completions):
        def create(_raw_create=resource.with_raw_response.create, **kwargs):  # bound before create is replaced
            raw = _raw_create(**kwargs)
            parsed = raw.parse()
            client.recorded.append((kwargs, json.loads(raw.text), parsed))
            return parsed
        resource.create = create
    return client


def chat_body(server, prompt, **kw):
    return {"model": server.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": MAX_NEW,
            "logprobs": True, "top_logprobs": TOP, **kw}


@pytest.fixture(scope="module")
def hf(llama_cpp_server):
    """The Hugging Face model the GGUF file came from, and its tokenizer (float32, CPU)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = llama_cpp_server.tiny.hf_dir
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32).eval()
    return types.SimpleNamespace(model=model, tok=AutoTokenizer.from_pretrained(folder, local_files_only=True))


def chat_prompt_ids(hf, prompt):
    """The ids llama-cpp-python's server evaluates for a chat prompt: the template, tokenized, no BOS."""
    text = hf.tok.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False)
    return hf.tok(text, add_special_tokens=False).input_ids


def reference_log_probs(hf, prompt_ids, gen_ids):
    """transformers' logits and log-softmax at each generated position: two ``(T, V)`` float64 arrays."""
    import torch

    ids = torch.tensor([list(prompt_ids) + list(gen_ids)])
    with torch.no_grad():
        logits = hf.model(ids).logits[0, len(prompt_ids) - 1: len(prompt_ids) - 1 + len(gen_ids)].double()
    return logits.numpy(), torch.log_softmax(logits, dim=-1).numpy()


#: llama-cpp-python's server's default repeat penalty (a field outside the OpenAI API, applied at temperature 0 too)
REPEAT_PENALTY = 1.1


def penalised_argmax(logits, generated):
    """The token llama.cpp's greedy sampler picks: the argmax of the logits after its repeat penalty on the tokens
    generated so far in this answer (the last 64; a positive logit divided by the penalty, a negative one
    multiplied)."""
    logits = np.array(logits, dtype=np.float64)
    for tok in set(generated[-64:]):
        logits[tok] = logits[tok] / REPEAT_PENALTY if logits[tok] > 0 else logits[tok] * REPEAT_PENALTY
    return int(np.argmax(logits))


def check_against_reference(hf, server, prompt_ids, tokens, values, tops, *, greedy):
    """The server's tokens, their log-probabilities and the top alternatives, against transformers'."""
    ids = [server.tiny.piece_ids[t] for t in tokens]
    logits, ref = reference_log_probs(hf, prompt_ids, ids)
    np.testing.assert_allclose(values, ref[np.arange(len(ids)), ids], rtol=0, atol=TOL)
    for t, top in enumerate(tops):
        best = np.argsort(-ref[t])[:TOP]
        top_ids = [server.tiny.piece_ids[a] for a, _ in top]
        assert set(best) <= set(top_ids), t  # the K most likely tokens (and the chosen one, when not among them)
        np.testing.assert_allclose([v for _, v in top], ref[t, top_ids], rtol=0, atol=TOL)
        if greedy:
            assert ids[t] == penalised_argmax(logits[t], ids[:t]), t
    return float(np.max(np.abs(values - ref[np.arange(len(ids)), ids]), initial=0.0))


# ----------------------------------------------------------------------------------------------- the model
def test_llama_cpp_tokenizes_as_the_hugging_face_tokenizer(llama_cpp_server, hf):
    from llama_cpp import Llama

    llm = Llama(model_path=str(llama_cpp_server.gguf), vocab_only=True, verbose=False)
    for text in [*PROMPTS, "what is the capital of france ", "Paris, France!\nyes"]:
        assert llm.tokenize(text.encode(), add_bos=True, special=True) == hf.tok(text).input_ids, text
        assert llm.tokenize(text.encode(), add_bos=False, special=True) == hf.tok(
            text, add_special_tokens=False).input_ids, text
    assert llm.token_bos() == 0 and llm.token_eos() == 1


# ---------------------------------------------------------------------------------------------- the client
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_chat_log_probabilities_are_the_servers_and_the_models(llama_cpp_server, hf, temperature):
    prompt = PROMPTS[0]
    client = record(OpenAIClient(llama_cpp_server.base_url, model=llama_cpp_server.model, logprobs=True,
                                 top_logprobs=TOP))
    (c,) = client.complete(prompt, max_tokens=MAX_NEW, temperature=temperature, seed=11)
    assert client.logprobs_returned is True
    ((sent, raw, _),) = client.recorded
    assert sent["logprobs"] is True and sent["top_logprobs"] == TOP and sent["seed"] == 11
    # the client's layout is the raw JSON's, value for value
    choice = raw["choices"][0]
    content = choice["logprobs"]["content"]
    assert c.text == choice["message"]["content"] and c.finish_reason == choice["finish_reason"]
    assert c.tokens == [x["token"] for x in content] and "".join(c.tokens) == c.text
    assert c.token_log_probs.tolist() == [x["logprob"] for x in content]
    assert c.top_log_probs == [[(a["token"], a["logprob"]) for a in x["top_logprobs"]] for x in content]
    assert len(c.tokens) >= 1
    # and the numbers are the model's
    check_against_reference(hf, llama_cpp_server, chat_prompt_ids(hf, prompt), c.tokens, c.token_log_probs,
                            c.top_log_probs, greedy=temperature == 0)


def test_completions_log_probabilities_are_the_servers_and_the_models(llama_cpp_server, hf):
    prompt = PROMPTS[1]
    client = record(OpenAIClient(llama_cpp_server.base_url, model=llama_cpp_server.model, endpoint="completions",
                                 logprobs=True, top_logprobs=TOP))
    (c,) = client.complete(prompt, max_tokens=MAX_NEW, temperature=0)
    ((sent, raw, _),) = client.recorded
    assert sent["logprobs"] == TOP and sent["prompt"] == prompt
    lp = raw["choices"][0]["logprobs"]
    assert c.text == raw["choices"][0]["text"] and c.tokens == lp["tokens"]
    assert c.token_log_probs.tolist() == lp["token_logprobs"]
    # the completions endpoint gives the alternatives as an object: the client sorts them, most likely first
    assert c.top_log_probs == [sorted(d.items(), key=lambda kv: -kv[1]) for d in lp["top_logprobs"]]
    # a completions prompt starts with BOS (the GGUF file's add_bos_token)
    check_against_reference(hf, llama_cpp_server, hf.tok(prompt).input_ids, c.tokens, c.token_log_probs,
                            c.top_log_probs, greedy=True)


def test_n_answers_are_asked_again_with_a_warning_and_reproducible(llama_cpp_server):
    client = record(OpenAIClient(llama_cpp_server.base_url, model=llama_cpp_server.model, logprobs=True,
                                 top_logprobs=TOP))
    with pytest.warns(NIgnoredWarning, match=r"returned 1 choice\(s\) for n=4: the server ignores 'n'"):
        first = client.complete(PROMPTS[0], n=4, max_tokens=MAX_NEW, temperature=1.0, seed=7)
    assert len(first) == 4 and client.requests == 4 and client.n_honoured is False
    assert len({c.text for c in first}) > 1  # sampled, not greedy
    # the k-th answer is the server's one choice to the k-th request: seed 7 + k, n = 4 - k
    assert [(sent["seed"], sent["n"]) for sent, _, _ in client.recorded] == [(7, 4), (8, 3), (9, 2), (10, 1)]
    for c, (_, raw, _) in zip(first, client.recorded):
        (choice,) = raw["choices"]
        assert c.text == choice["message"]["content"]
        assert c.token_log_probs.tolist() == [x["logprob"] for x in choice["logprobs"]["content"]]
    again = client.complete(PROMPTS[0], n=4, max_tokens=MAX_NEW, temperature=1.0, seed=7)  # warned once per client
    assert [c.text for c in again] == [c.text for c in first]
    for a, b in zip(again, first):
        np.testing.assert_allclose(a.token_log_probs, b.token_log_probs, rtol=0, atol=REPEAT_TOL)


def test_top_logprobs_zero_still_returns_the_chosen_tokens_log_probabilities(llama_cpp_server):
    """llama-cpp-python returns no log-probabilities for ``logprobs=true`` without ``top_logprobs``: the client
    sends ``top_logprobs=0``, and the backend then gives the log-probabilities but no entropy statistics."""
    bare = post(llama_cpp_server, "chat/completions", {**chat_body(llama_cpp_server, PROMPTS[0], temperature=0),
                                                       "top_logprobs": None})
    assert bare["choices"][0]["logprobs"] is None  # the server's behaviour the client works around
    model = OpenAIModel(llama_cpp_server.base_url, name=llama_cpp_server.model, logprobs=True, top_logprobs=0)
    man = UEManager(RECORDS[:2], model=model, estimators=["msp"], max_new_tokens=MAX_NEW, samples_n=1, seed=SEED)
    man()
    assert all(len(lp) for lp in man.stats["log_probs"])
    assert "entropy" not in man.stats and "top_logprobs" not in man.stats
    assert model.base_stats == ("answer", "log_probs")


# --------------------------------------------------------------------------------------------- the manager
def run(server, batch_size):
    model = OpenAIModel(server.base_url, name=server.model, logprobs=True, top_logprobs=TOP)
    record(model.client)
    man = UEManager(RECORDS, model=model, estimators=[*SEQUENCE, *TOKEN], gen_metrics=["accuracy"],
                    ue_metrics=["prr"], batch_size=batch_size, max_new_tokens=MAX_NEW, samples_n=SAMPLES, seed=SEED,
                    save_stats=["greedy_tokens", "greedy_log_likelihoods", "greedy_tokens_alternatives", "entropy",
                                "sample_log_probs"])
    with pytest.warns(NIgnoredWarning):  # the server ignores n: the backend asks again, and says so
        man()
    man.recorded = model.client.recorded
    return man


@pytest.fixture(scope="module")
def runs(llama_cpp_server):
    return {b: run(llama_cpp_server, b) for b in (1, 2, 5)}


def greedy_responses(man):
    """The raw JSON and parsed response of each example's greedy request (temperature 0), in the examples' order."""
    got = {sent["messages"][-1]["content"]: (raw, parsed) for sent, raw, parsed in man.recorded
           if sent["temperature"] == 0}
    return [got[p] for p in PROMPTS]


def _close(a, b, atol):
    """Equal structure, numbers within ``atol`` (texts equal)."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (list, tuple)) and (not a or not isinstance(a[0], (int, float, np.floating))):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_close(x, y, atol) for x, y in zip(a, b))
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return x.shape == y.shape and bool(np.all(np.abs(x - y) <= atol))


def test_same_statistics_and_values_for_any_batch_size(runs):
    """Texts and tokens equal; log-probabilities and the values made of them equal to REPEAT_TOL (each batch size
    sends the requests in another order, so the server's prefix cache splits the evaluations differently)."""
    one = runs[1]
    assert all(len(t) for t in one.stats["greedy_tokens"])  # the tiny model answers: no empty generation
    assert any(len(set(s)) > 1 for s in one.stats["sample_texts"])
    for b in (2, 5):
        for key in ("answer", "greedy_tokens", "sample_texts"):
            assert runs[b].stats[key] == one.stats[key], (b, key)
        assert [[[t for t, _ in step] for step in g] for g in runs[b].stats["greedy_tokens_alternatives"]] == [
            [[t for t, _ in step] for step in g] for g in one.stats["greedy_tokens_alternatives"]]
        for key in ("log_probs", "greedy_log_likelihoods", "entropy", "top_logprobs", "sample_log_probs",
                    "greedy_tokens_alternatives"):
            assert _close(runs[b].stats[key], one.stats[key], REPEAT_TOL), (b, key)
        for name in SEQUENCE:
            np.testing.assert_allclose(runs[b].estimations[("sequence", name)], one.estimations[("sequence", name)],
                                       rtol=0, atol=REPEAT_TOL * MAX_NEW, err_msg=name)
        for name in TOKEN:
            assert _close(runs[b].estimations[("token", name)], one.estimations[("token", name)], REPEAT_TOL), name
    for name in SEQUENCE:
        values = np.asarray(one.estimations[("sequence", name)], dtype=float)
        assert np.isfinite(values).all() and np.ptp(values) > 0, name


def test_greedy_statistics_are_the_servers_answers_and_the_models(runs, llama_cpp_server, hf):
    man = runs[2]
    worst = 0.0
    for i, (prompt, (raw, _)) in enumerate(zip(PROMPTS, greedy_responses(man))):
        content = raw["choices"][0]["logprobs"]["content"]
        assert man.stats["answer"][i] == raw["choices"][0]["message"]["content"]
        assert man.stats["greedy_tokens"][i] == [x["token"] for x in content]
        assert list(man.stats["log_probs"][i]) == [x["logprob"] for x in content]
        assert list(man.stats["greedy_log_likelihoods"][i]) == [x["logprob"] for x in content]
        # assay's top_logprobs: each step's alternatives, one per token, most likely first
        assert man.stats["top_logprobs"][i] == [sorted({a["token"]: a["logprob"] for a in x["top_logprobs"]}.values(),
                                                       reverse=True) for x in content]
        tops = [[(a["token"], a["logprob"]) for a in x["top_logprobs"]] for x in content]
        worst = max(worst, check_against_reference(hf, llama_cpp_server, chat_prompt_ids(hf, prompt),
                                                   man.stats["greedy_tokens"][i], man.stats["log_probs"][i], tops,
                                                   greedy=True))
    assert worst < TOL


def test_assay_token_entropies_renormalise_the_servers_alternatives(runs):
    """assay's mean/max token entropy: the entropy of each step's returned alternatives renormalised (hand-derived
    here from the server's raw answer)."""
    man = runs[5]
    for i, (raw, _) in enumerate(greedy_responses(man)):
        h = []
        for x in raw["choices"][0]["logprobs"]["content"]:
            lp = np.array(list({a["token"]: a["logprob"] for a in x["top_logprobs"]}.values()))
            p = np.exp(lp) / np.exp(lp).sum()
            h.append(-(p * np.log(p)).sum())
        np.testing.assert_allclose(man.estimations[("sequence", "mean_token_entropy")][i], np.mean(h), atol=1e-12)
        np.testing.assert_allclose(man.estimations[("sequence", "max_token_entropy")][i], np.max(h), atol=1e-12)


def test_samples_are_the_servers_answers_to_the_documented_requests(runs, lpm):
    """Each example's samples: requests seeded SeedSequence([seed, position]) + k, with n = samples_n - k (the
    server ignores n: asked again); their log-probabilities give LM-Polygraph's Monte Carlo entropies."""
    man = runs[1]
    sums, tokens = [], []
    for i, prompt in enumerate(PROMPTS):
        seed = int(np.random.SeedSequence([SEED, i]).generate_state(1)[0])
        sent = [(s, raw) for s, raw, _ in man.recorded
                if s["temperature"] != 0 and s["messages"][-1]["content"] == prompt]
        assert [(s["seed"], s["n"], s["temperature"]) for s, _ in sent] == [
            (seed + k, SAMPLES - k, 1.0) for k in range(SAMPLES)]
        texts = [raw["choices"][0]["message"]["content"] for _, raw in sent]
        lps = [[x["logprob"] for x in raw["choices"][0]["logprobs"]["content"]] for _, raw in sent]
        assert man.stats["sample_texts"][i] == texts
        assert [list(s) for s in man.stats["sample_log_probs"][i]] == lps
        sums.append([float(np.sum(s)) for s in lps])
        tokens.append([[x["token"] for x in raw["choices"][0]["logprobs"]["content"]] for _, raw in sent])
    theirs = {"sample_log_probs": sums, "sample_tokens": tokens}
    mc = lpm("estimators.monte_carlo_sequence_entropy").MonteCarloSequenceEntropy()(theirs)
    mcn = lpm("estimators.monte_carlo_normalized_sequence_entropy").MonteCarloNormalizedSequenceEntropy()(theirs)
    np.testing.assert_allclose(man.estimations[("sequence", "mc_sequence_entropy")], mc, rtol=0, atol=1e-9)
    np.testing.assert_allclose(man.estimations[("sequence", "mc_normalized_sequence_entropy")], mcn, rtol=0,
                               atol=1e-9)


class _LmPolygraphOpenAIModel:
    """LM-Polygraph's ``BlackboxModel`` as its ``BlackboxGreedyTextsCalculator`` uses it, on the local server.

    lm-polygraph is installed without its dependencies, and its ``lm_polygraph.utils.model``
    imports its whole model zoo; this stands in for ``BlackboxModel.from_openai(...,
    supports_logprobs=True)`` with ``GenerationParameters(temperature=0.0)``: its
    ``generate_texts`` sends, per prompt, the request LM-Polygraph's sends (one user message,
    ``logprobs=True``, ``top_logprobs``, ``max_tokens``, the temperature and its other defaults)
    with the ``openai`` client, and keeps ``self.logprobs`` (each response's
    ``choices[0].logprobs``) as it does. With ``replay`` (prompt -> parsed response) it uses
    those responses instead of sending: the very responses assay's backend parsed.
    """

    supports_logprobs = True

    def __init__(self, base_url, name, replay=None):
        import openai

        self.client, self.name, self.replay = openai.OpenAI(base_url=base_url, api_key="EMPTY"), name, replay

    def generate_texts(self, input_texts, max_new_tokens, n, output_scores=False, top_logprobs=5):
        assert n == 1 and output_scores
        self.logprobs, texts = [], []
        for prompt in input_texts:
            if self.replay is not None:
                r = self.replay[prompt]
            else:
                r = self.client.chat.completions.create(
                    model=self.name, messages=[{"role": "user", "content": prompt}], max_tokens=max_new_tokens,
                    temperature=0.0, top_p=1.0, presence_penalty=0.0, logprobs=True, top_logprobs=top_logprobs)
            texts.append(r.choices[0].message.content)
            self.logprobs.append(r.choices[0].logprobs)
        return texts


def lm_polygraph_greedy_statistics(lpm, model):
    """LM-Polygraph's BlackboxGreedyTextsCalculator and EntropyCalculator, run on ``model``'s answers."""
    import sys

    stub = types.ModuleType("lm_polygraph.utils.model")
    stub.Model = stub.WhiteboxModel = stub.BlackboxModel = type("Model", (), {})
    sys.modules["lm_polygraph.utils.model"] = stub
    try:
        module = lpm("stat_calculators.greedy_probs_blackbox")
    finally:
        sys.modules.pop("lm_polygraph.utils.model", None)
    # LM-Polygraph maps each alternative to a slot of a 50,000-wide row with Python's hash(); two alternatives whose
    # hashes collide (per process, PYTHONHASHSEED) count once. A collision-free slot per token text here, so that the
    # comparison does not depend on the process's hash seed (blackbox.py's docstring).
    slots: dict[str, int] = {}
    module.hash = lambda s: slots.setdefault(s, len(slots))
    theirs = module.BlackboxGreedyTextsCalculator(top_logprobs=TOP)({}, PROMPTS, model, max_new_tokens=MAX_NEW)
    theirs.update(lpm("stat_calculators.entropy").EntropyCalculator()(theirs))
    return theirs


def lm_polygraph_values(lpm, theirs):
    mp, te = lpm("estimators.max_probability"), lpm("estimators.token_entropy")
    sequence = {"MaximumSequenceProbability": mp.MaximumSequenceProbability(), "msp": mp.MaximumSequenceProbability(),
                "Perplexity": lpm("estimators.perplexity").Perplexity(),
                "perplexity": lpm("estimators.perplexity").Perplexity(), "MeanTokenEntropy": te.MeanTokenEntropy()}
    token = {"MaximumTokenProbability": mp.MaximumTokenProbability(), "TokenEntropy": te.TokenEntropy()}
    return ({name: cls(theirs) for name, cls in sequence.items()}, {name: cls(theirs) for name, cls in token.items()})


def test_equal_lm_polygraphs_blackbox_calculator_and_estimators_on_the_same_responses(runs, llama_cpp_server, lpm):
    for b, man in runs.items():
        replay = {p: parsed for p, (_, parsed) in zip(PROMPTS, greedy_responses(man))}
        theirs = lm_polygraph_greedy_statistics(lpm, _LmPolygraphOpenAIModel(llama_cpp_server.base_url,
                                                                             llama_cpp_server.model, replay))
        assert man.stats["answer"] == theirs["greedy_texts"], b
        assert man.stats["greedy_tokens"] == theirs["greedy_tokens"], b
        assert man.stats["greedy_tokens_alternatives"] == theirs["greedy_tokens_alternatives"], b
        assert _close(man.stats["greedy_log_likelihoods"], theirs["greedy_log_likelihoods"], 0.0), b
        for mine, their in zip(man.stats["entropy"], theirs["entropy"], strict=True):
            np.testing.assert_allclose(mine, their, rtol=0, atol=1e-12)
        sequence, token = lm_polygraph_values(lpm, theirs)
        for name, expected in sequence.items():
            np.testing.assert_allclose(man.estimations[("sequence", name)], expected, rtol=0, atol=1e-6,
                                       err_msg=f"{name} (batch size {b})")
        for name, expected in token.items():  # one array per example (all steps but the last)
            assert _close(man.estimations[("token", name)], expected, 1e-6), f"{name} (batch size {b})"


def test_lm_polygraphs_own_requests_give_the_same_statistics(runs, llama_cpp_server, lpm):
    """LM-Polygraph's calculator sending its own requests (temperature 0, its top_p and presence_penalty defaults):
    the same answers and tokens, the numbers to REPEAT_TOL (other requests)."""
    man = runs[1]
    theirs = lm_polygraph_greedy_statistics(lpm, _LmPolygraphOpenAIModel(llama_cpp_server.base_url,
                                                                         llama_cpp_server.model))
    assert man.stats["answer"] == theirs["greedy_texts"]
    assert man.stats["greedy_tokens"] == theirs["greedy_tokens"]
    assert _close(man.stats["greedy_log_likelihoods"], theirs["greedy_log_likelihoods"], REPEAT_TOL)
    assert _close(man.stats["entropy"], theirs["entropy"], REPEAT_TOL)
    sequence, _ = lm_polygraph_values(lpm, theirs)
    for name, expected in sequence.items():
        np.testing.assert_allclose(man.estimations[("sequence", name)], expected, rtol=0, atol=REPEAT_TOL * MAX_NEW,
                                   err_msg=name)
