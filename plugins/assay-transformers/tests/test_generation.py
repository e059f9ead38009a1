"""Whitebox statistics of real (tiny) Hugging Face models against a manual forward pass.

The expected values come from one plain ``model(...)`` call over the prompt and the
generated tokens, with ``torch.log_softmax`` in the test: no ``generate``, no KV cache,
no padding. Tolerance: generation runs step by step with a KV cache and left padding, the
manual pass over the whole sequence at once; float32 sums taken in a different order
(other matrix shapes, other kernels) differ by a few units in the last place of logits of
magnitude ~10-25, so log-probabilities agree to ~1e-5 and we allow 2e-4 absolute. The
tokens themselves must be identical.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from assay.errors import InvalidParameterError
from assay_transformers.generation import HFModel
from assay_transformers.stats import EntropyCalculator, GreedyProbsCalculator, SamplingGenerationCalculator

ATOL = 2e-4
PROMPTS = ["the capital of france is", "what", "who is the big red river city of two", "yes no", "a small blue"]


def manual_rows(hf: HFModel, prompt: str, tokens: list[int]) -> np.ndarray:
    """log_softmax rows at the steps that produced ``tokens``, from one forward pass (computed here)."""
    model, tok = hf.model, hf.tokenizer
    ids = tok(prompt, return_tensors="pt")["input_ids"]
    gen = torch.tensor([tokens], dtype=torch.long)
    with torch.no_grad():
        if hf.type == "causal":
            logits = model(input_ids=torch.cat([ids, gen], dim=1)).logits[0]
            rows = logits[ids.shape[1] - 1: ids.shape[1] - 1 + len(tokens)]
        else:
            start = torch.tensor([[model.config.decoder_start_token_id]])
            dec = torch.cat([start, gen[:, :-1]], dim=1)
            rows = model(input_ids=ids, decoder_input_ids=dec).logits[0]
    return torch.log_softmax(rows.double(), dim=-1).numpy()


@pytest.fixture(scope="module", params=["causal", "seq2seq"])
def hf(request, model_dirs):
    return HFModel(model_dirs[request.param])


def test_greedy_statistics_equal_a_manual_forward_pass(hf):
    out = GreedyProbsCalculator(hf, max_new_tokens=6)({"input_texts": PROMPTS})
    for i, prompt in enumerate(PROMPTS):
        tokens = out["greedy_tokens"][i].tolist()
        assert 1 <= len(tokens) <= 6
        rows = manual_rows(hf, prompt, tokens)
        lp = out["greedy_log_probs"][i]
        assert lp.shape == (len(tokens), len(hf.tokenizer))
        np.testing.assert_allclose(lp, rows, atol=ATOL, rtol=0)
        assert tokens == rows.argmax(axis=1).tolist()  # greedy: each token is the step's argmax
        np.testing.assert_allclose(out["greedy_log_likelihoods"][i], rows[np.arange(len(tokens)), tokens],
                                   atol=ATOL, rtol=0)
        assert out["greedy_texts"][i] == " ".join(hf.tokenizer.convert_ids_to_tokens(
            [t for t in tokens if t not in (0, 1)]))
        entropy = -(np.exp(rows) * rows).sum(axis=1)
        np.testing.assert_allclose(EntropyCalculator()({"greedy_log_probs": [lp]})["entropy"][0], entropy,
                                   atol=1e-4, rtol=0)


def test_generation_stops_at_eos_and_keeps_its_row(hf):
    first = hf.generate([PROMPTS[2]], max_new_tokens=6)[0][0]
    eos = first.tokens[2]  # make the third generated token the end of sequence
    cut = first.tokens.index(eos) + 1
    hf.model.generation_config.eos_token_id = eos
    try:
        model = HFModel((hf.model, hf.tokenizer))
        out = GreedyProbsCalculator(model, max_new_tokens=6)({"input_texts": [PROMPTS[2]]})
        gen = model.generate([PROMPTS[2]], max_new_tokens=6)[0][0]
    finally:
        hf.model.generation_config.eos_token_id = 1
    tokens = out["greedy_tokens"][0].tolist()
    assert tokens == first.tokens[:cut] and tokens[-1] == eos and gen.ended_with_eos
    assert out["greedy_log_probs"][0].shape[0] == cut  # the EOS step's row is kept
    rows = manual_rows(hf, PROMPTS[2], tokens)
    np.testing.assert_allclose(out["greedy_log_likelihoods"][0], rows[np.arange(cut), tokens], atol=ATOL, rtol=0)
    words = hf.tokenizer.convert_ids_to_tokens(tokens[:-1])
    assert out["greedy_texts"][0] == " ".join(w for w in words if w not in ("<pad>", "<eos>"))  # EOS not in the text


def test_a_stop_string_ends_the_text_before_it_and_keeps_the_token(hf):
    first = hf.generate([PROMPTS[2]], max_new_tokens=6)[0][0]
    words = first.text.split()
    stop = words[1] if len(words) > 1 else words[0]
    gen = hf.generate([PROMPTS[2]], max_new_tokens=6, generation_params={"stop_strings": [stop]})[0][0]
    # the specification: the text before the first occurrence of the stop string; the tokens up to the
    # shortest prefix whose text contains it
    assert gen.text == first.text[: first.text.index(stop)] and not gen.ended_with_eos
    n = next(k for k in range(1, len(first.tokens) + 1)
             if stop in hf.tokenizer.decode(first.tokens[:k], skip_special_tokens=True))
    assert gen.tokens == first.tokens[:n] and len(gen.log_probs) == n
    np.testing.assert_array_equal(gen.log_probs, first.log_probs[:n])


def test_batch_of_four_equals_one_at_a_time(hf):
    calc = GreedyProbsCalculator(hf, max_new_tokens=6)
    together = calc({"input_texts": PROMPTS[:4]})
    for i, prompt in enumerate(PROMPTS[:4]):
        alone = calc({"input_texts": [prompt]})
        assert together["greedy_tokens"][i].tolist() == alone["greedy_tokens"][0].tolist()
        assert together["greedy_texts"][i] == alone["greedy_texts"][0]
        np.testing.assert_allclose(together["greedy_log_probs"][i], alone["greedy_log_probs"][0], atol=ATOL, rtol=0)


def test_samples_are_reproducible_with_a_seed_and_scored_by_the_model(hf):
    def run(seed):
        calc = SamplingGenerationCalculator(hf, samples_n=3, max_new_tokens=5, seed=seed,
                                            generation_params={"temperature": 1.5})
        return calc({"input_texts": PROMPTS[:2]})

    a, b, c = run(7), run(7), run(8)
    assert a["sample_texts"] == b["sample_texts"] and len(a["sample_texts"][0]) == 3
    assert [[t.tolist() for t in s] for s in a["sample_tokens"]] == [[t.tolist() for t in s] for s in b["sample_tokens"]]
    assert a["sample_texts"] != c["sample_texts"]  # another seed, other draws (5 tokens x 6 samples)
    for i, prompt in enumerate(PROMPTS[:2]):
        for tokens, lps in zip(a["sample_tokens"][i], a["sample_log_probs"][i]):
            tokens = tokens.tolist()
            rows = manual_rows(hf, prompt, tokens)  # the model's own distribution, not the tempered one
            np.testing.assert_allclose(lps, rows[np.arange(len(tokens)), tokens], atol=ATOL, rtol=0)


def test_top_k_is_off_unless_given_whatever_the_model_config_says(hf):
    greedy = hf.generate(PROMPTS[:2], max_new_tokens=5)
    old = hf.model.generation_config.top_k
    hf.model.generation_config.top_k = 1  # a model default that would make sampling greedy
    try:
        free = hf.generate(PROMPTS[:2], max_new_tokens=5, do_sample=True, num_return_sequences=4, seed=0,
                           generation_params={"temperature": 2.0})
        one = hf.generate(PROMPTS[:2], max_new_tokens=5, do_sample=True, num_return_sequences=2, seed=0,
                          generation_params={"temperature": 2.0, "top_k": 1})
    finally:
        hf.model.generation_config.top_k = old
    assert all(s.tokens == g[0].tokens for g, samples in zip(greedy, one) for s in samples)  # top_k=1 is greedy
    assert any(s.tokens != g[0].tokens for g, samples in zip(greedy, free) for s in samples)


def test_a_tokenizer_without_a_pad_token_still_batches(model_dirs):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_dirs["causal"])
    tok = AutoTokenizer.from_pretrained(model_dirs["causal"])
    tok.pad_token = None  # as GPT-2's own tokenizer
    hf = HFModel((model, tok))
    together = hf.generate(PROMPTS[:3], max_new_tokens=4)
    alone = [hf.generate([p], max_new_tokens=4)[0] for p in PROMPTS[:3]]
    assert [g[0].tokens for g in together] == [g[0].tokens for g in alone]
    assert tok.pad_token is None  # the user's tokenizer is left as it was


def test_a_model_that_is_not_on_disk_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidParameterError, match=r"is not on disk: no such folder.*no download"):
        HFModel(tmp_path / "no-such-model")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidParameterError, match=r"holds no config.json"):
        HFModel(tmp_path / "empty")


@pytest.mark.parametrize("params, match", [
    ({"temprature": 1.0}, "Unknown generation parameter 'temprature'"),
    ({"top_k": 0}, "top_k"),
    ({"top_p": 1.5}, "top_p"),
    ({"temperature": -1}, "temperature"),
    ({"stop_strings": [""]}, "stop_strings"),
])
def test_bad_generation_parameters_are_errors_naming_the_key(hf, params, match):
    with pytest.raises(InvalidParameterError, match=match):
        hf.generate(["a"], max_new_tokens=2, generation_params=params)


def test_entropy_of_hand_made_rows():
    # two equally likely tokens: log 2; one certain token (the other -inf): 0; uniform over 4: log 4
    with np.errstate(divide="ignore"):
        rows = np.log(np.array([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]]))
    out = EntropyCalculator()({"greedy_log_probs": [rows]})["entropy"][0]
    np.testing.assert_allclose(out, [np.log(2), 0.0, np.log(4)], rtol=1e-12)
