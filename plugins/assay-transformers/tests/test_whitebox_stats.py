"""The model backend's LM-Polygraph statistics (whitebox_stats.py) against LM-Polygraph 0.7.0's calculators, live.

LM-Polygraph's stat calculators run here on the same tiny model (a copy loaded with eager
attention) through LM-Polygraph's own ``WhiteboxModel`` (``lm_polygraph/utils/model.py``,
imported with bare parent packages; ``openai``, which that file imports for its black-box
class only, is a bare module when it is not installed), one prompt at a time (LM-Polygraph
pads a batch; assay never does). Where LM-Polygraph's calculator fails on a seq2seq model
(``forwardpass_attention_weights``; ``attention_all``, which reads ``out.attentions``) the
reference is ``model.generate``'s own per-step attentions (a KV-cache computation, not the
full forward pass the backend runs).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from assay.errors import InvalidParameterError
from assay.uncertainty import UEManager
from assay.uncertainty.base import StatCalculator
from assay_transformers.density_training import training_stats
from assay_transformers.generation import HFModel
from assay_transformers.stats import GreedyProbsCalculator
from assay_transformers.whitebox_stats import (
    ClaimPTruePrompt,
    ElicitingPromptAttention,
    GreedyAttention,
    GreedyLMProbs,
    HiddenStateEmbeddings,
    PolygraphModel,
    PTruePrompt,
    SampleEmbeddings,
)

pytestmark = pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")

PROMPTS = ["the capital of france is", "what", "who is the big red river city of two", "yes no a small blue"]
MAX_NEW = 6


def _load_lm_polygraph() -> dict[str, types.ModuleType]:
    """LM-Polygraph's WhiteboxModel and stat-calculator modules (module docstring); sys.modules restored after."""
    spec = importlib.util.find_spec("lm_polygraph")
    if spec is None or not spec.submodule_search_locations:
        raise AssertionError("lm-polygraph==0.7.0 is not installed: run `make setup`")
    root = Path(next(iter(spec.submodule_search_locations)))
    before = set(sys.modules)
    for name, folder in {"lm_polygraph": root, "lm_polygraph.utils": root / "utils",
                         "lm_polygraph.stat_calculators": root / "stat_calculators",
                         "lm_polygraph.estimators": root / "estimators",
                         "lm_polygraph.estimators.claim": root / "estimators" / "claim"}.items():
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
    stub_openai = importlib.util.find_spec("openai") is None
    if stub_openai:
        sys.modules["openai"] = types.ModuleType("openai")
    try:
        model = importlib.import_module("lm_polygraph.utils.model")
        adapters = types.ModuleType("lm_polygraph.model_adapters")
        adapters.WhiteboxModel, adapters.BlackboxModel = model.WhiteboxModel, model.BlackboxModel
        adapters.WhiteboxModelvLLM = type("WhiteboxModelvLLM", (), {})
        sys.modules["lm_polygraph.model_adapters"] = adapters
        mods = {"model": model}
        for m in ("greedy_probs", "embeddings", "attention_forward_pass", "greedy_lm_probs", "prompt", "sample",
                  "attention_eliciting_prompt"):
            mods[m] = importlib.import_module(f"lm_polygraph.stat_calculators.{m}")
        for m in ("attention_score", "rauq", "pointwise_mutual_information", "p_true", "csl", "claim.p_true"):
            mods[f"estimators.{m}"] = importlib.import_module(f"lm_polygraph.estimators.{m}")
        return mods
    finally:
        # only ours: transformers' lazily imported modules stay, and so does a real openai package with its
        # submodules (popping the package alone left `openai.lib` & co. behind, and a later `import openai`
        # made a second package object without them: the black-box tests then failed after this file)
        for name in set(sys.modules) - before:
            if (name == "openai" and stub_openai) or name.startswith("lm_polygraph"):
                sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def lmp():
    return _load_lm_polygraph()


@pytest.fixture(scope="module")
def folders(whitebox_models):
    """conftest's GPT-2 and T5 (3 layers each, the GPT-2 with 512 positions for LM-Polygraph's eliciting prompt)."""
    return whitebox_models


def _theirs(lmp, folder, kind, attn="eager"):
    """LM-Polygraph's WhiteboxModel on the folder; ``attn=None``: the model's default attention (the backend's)."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    auto = AutoModelForCausalLM if kind == "causal" else AutoModelForSeq2SeqLM
    model = auto.from_pretrained(folder, **({"attn_implementation": attn} if attn else {})).eval()
    tok = AutoTokenizer.from_pretrained(folder, padding_side="left")
    return lmp["model"].WhiteboxModel(model, tok, model_type="CausalLM" if kind == "causal" else "Seq2SeqLM")


def _greedy(ours, prompts=PROMPTS):
    return GreedyProbsCalculator(ours, max_new_tokens=MAX_NEW)({"input_texts": prompts})


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_hidden_states_and_greedy_attention_equal_lm_polygraphs_generation(lmp, folders, kind):
    ours = HFModel(str(folders[kind]))
    theirs = _theirs(lmp, folders[kind], kind)
    greedy = _greedy(ours)
    emb = HiddenStateEmbeddings(ours)({"input_texts": PROMPTS, "greedy_tokens": greedy["greedy_tokens"]})
    att = GreedyAttention(ours)({"input_texts": PROMPTS, "greedy_tokens": greedy["greedy_tokens"]})
    calc = lmp["greedy_probs"].GreedyProbsCalculator(output_attentions=kind == "causal", output_hidden_states=True)
    checked_attention = 0
    for i, prompt in enumerate(PROMPTS):
        ref = calc({}, [prompt], theirs, max_new_tokens=MAX_NEW)
        if list(ref["greedy_tokens"][0]) != list(greedy["greedy_tokens"][i]):
            continue  # LM-Polygraph masks EOS for 2 steps (min_new_tokens=2): a different answer, not comparable
        # float32: the KV-cached decoder of generate and one forward pass round differently (T5 here: 4e-5 of ~1)
        np.testing.assert_allclose(emb["embeddings_decoder"][i], ref["embeddings_decoder"][0], rtol=1e-4, atol=1e-4)
        if kind == "seq2seq":
            np.testing.assert_allclose(emb["embeddings_encoder"][i], ref["embeddings_encoder"][0], rtol=1e-5,
                                       atol=1e-5)
        else:
            np.testing.assert_allclose(att["attention_all"][i], ref["attention_all"][0], rtol=1e-5, atol=1e-6)
            checked_attention += 1
    assert kind == "seq2seq" or checked_attention >= 2
    if kind == "seq2seq":  # LM-Polygraph's calculator reads out.attentions, which seq2seq output lacks
        enc = ours.tokenizer(PROMPTS[0], return_tensors="pt")
        model = theirs.model
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=MAX_NEW, do_sample=False, output_attentions=True,
                                 return_dict_in_generate=True, pad_token_id=0, eos_token_id=1,
                                 decoder_start_token_id=0)
        tokens = list(greedy["greedy_tokens"][0])
        assert out.sequences[0, 1:1 + len(tokens)].tolist() == tokens
        grid = att["attention_all"][0]
        layers, heads = model.config.num_decoder_layers, model.config.num_heads
        for j in range(1, len(tokens)):
            step = torch.cat([a[0] for a in out.decoder_attentions[j]]).reshape(layers * heads, -1).numpy()
            np.testing.assert_allclose(grid[:, j, :j], step[:, -j:], rtol=1e-4, atol=1e-5)
            full = att["forwardpass_attention_weights"][0].reshape(layers * heads, len(tokens) + 1, -1)
            np.testing.assert_allclose(full[:, j, : j + 1], step, rtol=1e-4, atol=1e-5)


def test_forward_pass_attention_equals_lm_polygraphs(lmp, folders):
    ours = HFModel(str(folders["causal"]))
    theirs = _theirs(lmp, folders["causal"], "causal")
    greedy = _greedy(ours)
    att = GreedyAttention(ours)({"input_texts": PROMPTS, "greedy_tokens": greedy["greedy_tokens"]})
    calc = lmp["attention_forward_pass"].AttentionForwardPassCalculator()
    for i, prompt in enumerate(PROMPTS):
        ref = calc({"greedy_tokens": [list(greedy["greedy_tokens"][i])]}, [prompt], theirs)
        np.testing.assert_allclose(att["forwardpass_attention_weights"][i], ref["forwardpass_attention_weights"][0],
                                   rtol=1e-5, atol=1e-6)
    assert ours.model.config._attn_implementation != "eager"  # switched for the pass and back


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_lm_probs_and_p_true_equal_lm_polygraphs(lmp, folders, kind):
    ours = HFModel(str(folders[kind]))
    theirs = _theirs(lmp, folders[kind], kind)
    greedy = _greedy(ours)
    samples = [["paris", "the red city"], ["no"], ["two three", "one"], ["yes", "blue blue"]]
    stats = {"input_texts": PROMPTS, "greedy_tokens": greedy["greedy_tokens"], "greedy_texts": greedy["greedy_texts"],
             "sample_texts": samples}
    lm = GreedyLMProbs(ours)(stats)
    pt = PTruePrompt(ours)(stats)
    pts = PTruePrompt(ours, sampling=True)(stats)
    ref_lm = lmp["greedy_lm_probs"].GreedyLMProbsCalculator()
    ref_pt, ref_pts = lmp["prompt"].PromptCalculator(), lmp["prompt"].SamplingPromptCalculator()
    for i, prompt in enumerate(PROMPTS):
        one = {"input_texts": [prompt], "greedy_tokens": [list(greedy["greedy_tokens"][i])],
               "greedy_texts": [greedy["greedy_texts"][i]], "sample_texts": [samples[i]]}
        r = ref_lm(one, [prompt], theirs)
        np.testing.assert_allclose(lm["greedy_lm_log_likelihoods"][i], r["greedy_lm_log_likelihoods"][0],
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(lm["greedy_lm_log_probs"][i], r["greedy_lm_log_probs"][0], rtol=1e-5, atol=1e-5)
        assert pt["p_true"][i] == pytest.approx(float(ref_pt(one, [prompt], theirs)["p_true"][0]), rel=1e-5, abs=1e-5)
        assert pts["p_true_sampling"][i] == pytest.approx(
            float(ref_pts(one, [prompt], theirs)["p_true_sampling"][0]), rel=1e-5, abs=1e-5)
    assert len(set(np.round(pt["p_true"], 6))) > 1  # the prompts differ, and so do the values
    # (tolerances: the backend runs sdpa attention, LM-Polygraph's copy eager; float32 rounding differs)


def test_eliciting_prompt_attention_equals_lm_polygraphs_and_is_causal_only(lmp, folders):
    ours = HFModel(str(folders["causal"]))
    theirs = _theirs(lmp, folders["causal"], "causal")
    greedy = _greedy(ours)
    got = ElicitingPromptAttention(ours)({"input_texts": PROMPTS, "greedy_tokens": greedy["greedy_tokens"]})
    calc = lmp["attention_eliciting_prompt"].AttentionElicitingPromptCalculator()
    for i, prompt in enumerate(PROMPTS):
        ref = calc({"greedy_tokens": [list(greedy["greedy_tokens"][i])], "greedy_texts": [""]}, [prompt], theirs)
        np.testing.assert_allclose(got["attention_weights_eliciting_prompt"][i],
                                   ref["attention_weights_eliciting_prompt"][0], rtol=1e-5, atol=1e-6)
    s2s = HFModel(str(folders["seq2seq"]))
    with pytest.raises(InvalidParameterError, match="causal models only"):
        ElicitingPromptAttention(s2s)({"input_texts": PROMPTS[:1], "greedy_tokens": [[3, 1]]})


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_sample_embeddings_equal_lm_polygraphs(lmp, folders, kind):
    ours = HFModel(str(folders[kind]))
    theirs = _theirs(lmp, folders[kind], kind)
    calc = lmp["sample"].SamplingGenerationCalculator(samples_n=3)
    for prompt in PROMPTS[:3]:
        torch.manual_seed(7)
        ref = calc({}, [prompt], theirs, max_new_tokens=MAX_NEW)
        # LM-Polygraph's sample_tokens leave EOS out; assay's keep it (a sample shorter than MAX_NEW ended with EOS)
        tokens = [list(t) + ([1] if len(t) < MAX_NEW else []) for t in ref["sample_tokens"][0]]
        got = SampleEmbeddings(ours)({"input_texts": [prompt], "sample_tokens": [tokens]})
        assert len(got["sample_embeddings"][0]) == len(ref["sample_embeddings"][0]) == 3
        for g, r in zip(got["sample_embeddings"][0], ref["sample_embeddings"][0]):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-4)  # float32 rounding, as embeddings_decoder


def test_polygraph_model_generate_texts_is_seeded_per_input(folders):
    ours = HFModel(str(folders["causal"]))
    view = PolygraphModel(ours, seed=5)
    a = view.generate_texts(["what", "yes no"], max_new_tokens=4, num_return_sequences=3, do_sample=True)
    b = view.generate_texts(["yes no"], max_new_tokens=4, num_return_sequences=3, do_sample=True)
    assert len(a) == 6 and a[3:] == b  # the same input draws the same replies, whatever else is asked with it
    with pytest.raises(InvalidParameterError, match="no chat template"):
        view.generate_texts([[{"role": "user", "content": "what"}]])


ESTIMATORS = ["mahalanobis_distance", "ppl_md", "rauq", "attention_score", "csl", "mean_pointwise_mutual_information",
              "MeanConditionalPointwiseMutualInformation", "p_true_empirical", "eigenscore", "renyi_neg", "msp",
              "p_true", "PTrueSampling"]


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_manager_runs_the_new_families_with_the_same_numbers_for_any_batch_size(folders, kind):
    from assay.plugins import get_registry

    train = training_stats(str(folders[kind]), ["the big city", "a small river", "one two three", "what is red",
                                                "who is blue", "the answer is yes"], max_new_tokens=MAX_NEW)
    names = [n for n in ESTIMATORS if kind == "causal" or n != "csl"]

    def run(batch_size):
        reg = get_registry("estimator")
        ests = [reg.get(n).create(train_stats=train) if n in ("mahalanobis_distance", "ppl_md") else n for n in names]
        man = UEManager([{"input": p} for p in PROMPTS], model=str(folders[kind]), estimators=ests, gen_metrics=[],
                        ue_metrics=[], batch_size=batch_size, max_new_tokens=MAX_NEW, samples_n=3, seed=11)
        man()
        return man

    one, three = run(1), run(3)
    assert one.stats["answer"] == three.stats["answer"]
    for name in one.estimator_names:
        a, b = one.estimations[("sequence", name)], three.estimations[("sequence", name)]
        assert np.all(np.isfinite(a)), name
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3, err_msg=name)
    # the values are the statistics' (p_true_empirical: 1 - share of "True" replies; none: the vocabulary lacks it)
    assert one.estimations[("sequence", "p_true_empirical")].tolist() == [1.0] * len(PROMPTS)
    assert "model" not in one.stats and "tokenizer" not in one.stats


def test_manager_values_equal_lm_polygraphs_estimators_on_lm_polygraphs_statistics(lmp, folders):
    """The UEManager on the model (batches of 3) against LM-Polygraph's estimator classes on the statistics
    LM-Polygraph's calculators compute (one prompt at a time), the greedy answer and its log-likelihoods
    being the manager's (LM-Polygraph's generation masks EOS for two steps, a different answer at times)."""
    names = ["attention_score", "rauq", "mean_pointwise_mutual_information", "p_true", "csl"]
    man = UEManager([{"input": p} for p in PROMPTS], model=str(folders["causal"]), estimators=names, gen_metrics=[],
                    ue_metrics=[], batch_size=3, max_new_tokens=MAX_NEW, samples_n=1, seed=1,
                    save_stats=["greedy_tokens", "greedy_log_likelihoods"])
    man()
    theirs = _theirs(lmp, folders["causal"], "causal")
    calcs = [lmp["attention_forward_pass"].AttentionForwardPassCalculator(),
             lmp["greedy_lm_probs"].GreedyLMProbsCalculator(), lmp["prompt"].PromptCalculator(),
             lmp["attention_eliciting_prompt"].AttentionElicitingPromptCalculator()]
    est = {"attention_score": lmp["estimators.attention_score"].AttentionScore(),
           "rauq": lmp["estimators.rauq"].RAUQ(),
           "mean_pointwise_mutual_information": lmp["estimators.pointwise_mutual_information"]
           .MeanPointwiseMutualInformation(),
           "p_true": lmp["estimators.p_true"].PTrue(), "csl": lmp["estimators.csl"].CSL()}
    generation = lmp["greedy_probs"].GreedyProbsCalculator(output_attentions=True)
    rauq_checked = 0
    for i, prompt in enumerate(PROMPTS):
        tokens = [int(t) for t in man.stats["greedy_tokens"][i]]
        stats = {"input_texts": [prompt], "greedy_tokens": [tokens], "greedy_texts": [man.stats["answer"][i]],
                 "greedy_log_likelihoods": [list(man.stats["greedy_log_likelihoods"][i])], "model": theirs}
        for calc in calcs:
            stats.update(calc(stats, [prompt], theirs))
        gen = generation({}, [prompt], theirs, max_new_tokens=MAX_NEW)
        for name in names:
            if name == "rauq":
                if list(gen["greedy_tokens"][0]) != tokens:
                    continue
                stats["attention_all"] = gen["attention_all"]
                rauq_checked += 1
            ref = float(np.asarray(est[name](stats)).reshape(-1)[0])
            assert man.estimations[("sequence", name)][i] == pytest.approx(ref, rel=1e-5, abs=1e-5), (name, i)
    assert rauq_checked >= 2


# ----------------------------------------------------------------------------- p_true_claim (ClaimPromptCalculator)
def _claims_of(tokens, tok):
    """Claims of one greedy answer: each token a claim (even positions with a claim_text, odd ones without, so the
    calculator decodes their tokens), and one claim of the first two tokens with a text of its own."""
    claims = [({"aligned_token_ids": [k], "claim_text": tok.decode([int(tokens[k])], skip_special_tokens=True)}
               if k % 2 == 0 else {"aligned_token_ids": [k]}) for k in range(len(tokens))]
    if len(tokens) >= 2:
        claims.append({"aligned_token_ids": [0, 1], "claim_text": "the red river of paris"})
    return claims


def _claim_text(claim, tokens, tok):
    """The text LM-Polygraph's calculator is given for a claim: its claim_text, else its tokens decoded."""
    if "claim_text" in claim:
        return claim["claim_text"]
    return tok.decode([int(tokens[k]) for k in claim["aligned_token_ids"]], skip_special_tokens=True)


def _theirs_p_true_claim(lmp, theirs, prompts, claims, tokens, tok):
    """LM-Polygraph's ClaimPromptCalculator, one claim at a time: the batch's claims' values end to end."""
    ref = lmp["prompt"].ClaimPromptCalculator()
    flat = []
    for prompt, example, toks in zip(prompts, claims, tokens):
        for claim in example:
            one = {"claim_input_texts_concatenated": [prompt],
                   "claim_texts_concatenated": [_claim_text(claim, toks, tok)]}
            flat.append(float(ref(one, [prompt], theirs)["p_true_claim"][0]))
    return flat


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_p_true_claim_equals_lm_polygraphs_claim_prompt_calculator(lmp, folders, kind):
    ours = HFModel(str(folders[kind]))
    theirs = _theirs(lmp, folders[kind], kind, attn=None)  # the backend's attention: the same float32 sums
    greedy = _greedy(ours)
    tok = ours.tokenizer
    claims = [_claims_of(t, tok) for t in greedy["greedy_tokens"]]
    claims[1] = []  # an example without claims
    stats = {"input_texts": PROMPTS, "greedy_tokens": greedy["greedy_tokens"], "claims": claims}
    got = ClaimPTruePrompt(ours)(stats)["p_true_claim"]
    assert [len(v) for v in got] == [len(c) for c in claims]
    ref = _theirs_p_true_claim(lmp, theirs, PROMPTS, claims, greedy["greedy_tokens"], tok)
    np.testing.assert_allclose(np.concatenate(got), ref, rtol=0, atol=1e-6)
    assert len(set(np.round(np.concatenate(got), 6))) > 3  # the claims' prompts differ, and so do the values
    # LM-Polygraph's estimator on its own (flat) statistic gives what assay's gives on the per-example one
    theirs_est = lmp["estimators.claim.p_true"].PTrueClaim()({"claims": claims, "p_true_claim": ref})
    from assay.plugins import get_registry

    mine = get_registry("estimator").get("PTrueClaim").create()({"claims": claims, "p_true_claim": got})
    for a, b in zip(mine, theirs_est):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_p_true_claim_errors_name_the_claim(folders):
    ours = HFModel(str(folders["causal"]))
    calc = ClaimPTruePrompt(ours)
    with pytest.raises(InvalidParameterError, match=r"example 0, claim 1: token index 9 is past the example's 2"):
        calc({"input_texts": ["what"], "greedy_tokens": [[5, 6]],
              "claims": [[{"aligned_token_ids": [0]}, {"aligned_token_ids": [9]}]]})
    with pytest.raises(InvalidParameterError, match="'claim_text' must be a string"):
        calc({"input_texts": ["what"], "greedy_tokens": [[5]],
              "claims": [[{"aligned_token_ids": [0], "claim_text": 3}]]})
    with pytest.raises(InvalidParameterError, match="one each per example"):
        calc({"input_texts": ["what", "who"], "greedy_tokens": [[5]], "claims": [[]]})
    with pytest.raises(InvalidParameterError, match="reads 'claims'"):
        calc({"input_texts": ["what"], "greedy_tokens": [[5]]})


class _TokenClaims(StatCalculator):
    """Test claims for a model run: :func:`_claims_of` on each greedy answer."""

    name, stats, dependencies = "test_token_claims", ("claims",), ("greedy_tokens",)

    def __init__(self, tok):
        super().__init__()
        self.tok = tok

    def __call__(self, stats):
        return {"claims": [_claims_of(t, self.tok) for t in stats["greedy_tokens"]]}


def test_manager_p_true_claim_is_the_same_for_any_batch_size_and_equals_lm_polygraphs(lmp, folders):
    """The UEManager computes p_true_claim on the model (claims from a calculator of the test) with the same values
    at batch sizes 1 and 3, equal to LM-Polygraph's PTrueClaim on its ClaimPromptCalculator's statistic."""
    tok = HFModel(str(folders["causal"])).tokenizer

    def run(batch_size):
        man = UEManager([{"input": p} for p in PROMPTS], model=str(folders["causal"]), estimators=["p_true_claim"],
                        stat_calculators=[_TokenClaims(tok)], gen_metrics=[], ue_metrics=[], batch_size=batch_size,
                        max_new_tokens=MAX_NEW, samples_n=1, seed=3, save_stats=["greedy_tokens"])
        man()
        return man

    one, three = run(1), run(3)
    a, b = (np.concatenate(m.estimations[("claim", "p_true_claim")]) for m in (one, three))
    tokens = [[int(t) for t in ts] for ts in one.stats["greedy_tokens"]]
    claims = [_claims_of(t, tok) for t in tokens]
    assert len(a) == sum(len(c) for c in claims) > len(PROMPTS)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    theirs = _theirs(lmp, folders["causal"], "causal", attn=None)
    flat = _theirs_p_true_claim(lmp, theirs, PROMPTS, claims, tokens, tok)
    ref = np.concatenate(lmp["estimators.claim.p_true"].PTrueClaim()({"claims": claims, "p_true_claim": flat}))
    np.testing.assert_allclose(a, ref, rtol=0, atol=1e-6)
