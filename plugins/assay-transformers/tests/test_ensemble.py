"""A deep ensemble of tiny models as a model backend: ``ensemble_token_scores`` against plain forward passes.

Three tiny random GPT-2 models (seeds 0, 1, 2) and three tiny T5 models share the word-level
tokenizer of conftest.py (its ``tiny_tokenizer`` fixture; the models are built here as conftest's
are, since test modules cannot import conftest). For each decoded beam the test re-runs every member teacher-forced
on prompt + beam (one plain forward pass, ``model(...).logits``), and derives every field of the
statistic from those log-probabilities by Malinin & Gales' formulas, written here in numpy.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from assay.cli import main
from assay.errors import InvalidParameterError
from assay.uncertainty import UEManager
from assay_transformers.ensemble import TOKEN_MEASURES, ModelEnsemble
from assay_transformers.generation import HFModel
from assay_uncertainty.estimators_lmp_ensemble import ENSEMBLE_SEQUENCE_CLASSES, ENSEMBLE_TOKEN_CLASSES, batch_scores

pytestmark = pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")

PROMPTS = ["the capital of france is", "what", "who is the big red river", "yes no"]


def _build(folder, kind, seed, tok):
    from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    if kind == "causal":
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=32, n_layer=2, n_head=2,
                                           bos_token_id=1, eos_token_id=1, pad_token_id=0, initializer_range=0.25))
    else:
        model = T5ForConditionalGeneration(T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2,
                                                    num_decoder_layers=2, num_heads=4, eos_token_id=1, pad_token_id=0,
                                                    decoder_start_token_id=0, initializer_factor=2.0))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def members(tmp_path_factory, tiny_tokenizer):
    root, tok = tmp_path_factory.mktemp("ensemble"), tiny_tokenizer()
    return {kind: [_build(root / f"{kind}-{s}", kind, s, tok) for s in range(3)] for kind in ("causal", "seq2seq")}


def _ensemble(folders, **kw):
    # float64 weights: the decoding's incremental forward passes and the test's teacher-forced ones then agree to
    # ~1e-12 (in float32 they differ by float32 rounding, ~1e-7 relative)
    return ModelEnsemble([HFModel(str(f), device="cpu", dtype="float64") for f in folders], **kw)


def _teacher_forced(model, kind, prompt_ids, tokens):
    """``(T, V)`` float64 log-softmax of the model's next-token logits before each of ``tokens`` (one forward pass)."""
    with torch.no_grad():
        if kind == "causal":
            ids = torch.tensor([prompt_ids + tokens])
            logits = model(input_ids=ids).logits[0, len(prompt_ids) - 1: -1]
        else:
            start = model.config.decoder_start_token_id
            logits = model(input_ids=torch.tensor([prompt_ids]),
                           decoder_input_ids=torch.tensor([[start] + tokens[:-1]])).logits[0]
    return torch.log_softmax(logits.double(), -1).numpy()


def _entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def _posteriors(lps, tokens):
    """The ``pe`` and ``ep`` posteriors ``(T, V)`` (log) before each token, from the members' rows ``(M, T, V)``."""
    m, t_len, _ = lps.shape
    chosen = lps[:, np.arange(t_len), tokens]  # (M, T)
    cum = np.concatenate([np.zeros((m, 1)), np.cumsum(chosen, 1)[:, :-1]], 1)  # each member's log P(prefix)
    w = np.exp(cum - cum.max(0))
    w /= w.sum(0)  # ep: the members' weights p_m(prefix) / sum_m p_m(prefix)
    return {"pe": np.log(np.exp(lps).mean(0)), "ep": np.log((w[:, :, None] * np.exp(lps)).sum(0))}, chosen


def _expected(lps, tokens, mode, penalty=1.0):
    """Every field of one beam from the members' teacher-forced rows ``lps`` ``(M, T, V)`` (numpy, by the formulas)."""
    m, t_len, _ = lps.shape
    post, chosen = _posteriors(lps, tokens)
    norm = t_len ** penalty
    out = {}
    for mo, lp in post.items():
        p = np.exp(lp)
        rows = {name: [] for name in TOKEN_MEASURES}
        for t in range(t_len):
            tu = _entropy(p[t])
            du = np.mean([_entropy(np.exp(lps[i, t])) for i in range(m)])
            ept = -(p[t] * lps[:, t].mean(0)).sum()
            rows["total_uncertainty"].append(tu)
            rows["entropy"].append(tu)
            rows["data_uncertainty"].append(du)
            rows["mutual_information"].append(tu - du)
            rows["epkl_total_uncertainty"].append(ept)
            rows["epkl"].append(ept - du)
            rows["rmi"].append(ept - tu)
            for k in (5, 10, 15):
                top = np.sort(p[t])[::-1][:k]
                rows[f"entropy_top{k}"].append(_entropy(top / top.sum()))
        out[mo] = {name: sum(v) / norm for name, v in rows.items()}
    out["log_probas"] = chosen.sum(1) / norm
    out["score"] = post[mode][np.arange(t_len), tokens].sum() / norm
    return out


def _rows(ens, kind, prompt, tokens):
    prompt_ids = list(ens.members[0].tokenizer(prompt)["input_ids"])
    return np.stack([_teacher_forced(m.model, kind, prompt_ids, list(tokens)) for m in ens.members])


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
@pytest.mark.parametrize("mode", ["pe", "ep"])
def test_every_field_equals_the_formulas_on_teacher_forced_forward_passes(members, kind, mode):
    ens = _ensemble(members[kind], ensembling_mode=mode, num_beams=3)
    for prompt in PROMPTS[:3]:
        got = ens.token_scores(prompt, max_new_tokens=5)
        beams = [list(t) for t in got["tokens"]]
        assert len(beams) == 3 and len({tuple(b) for b in beams}) == 3  # three distinct beams
        scores = []
        for b, tokens in enumerate(beams):
            assert len(tokens) == 5 or tokens[-1] == 1  # max_new_tokens, or EOS (id 1) ends it
            want = _expected(_rows(ens, kind, prompt, tokens), tokens, mode)
            for mo in ("pe", "ep"):
                for name in TOKEN_MEASURES:
                    assert got[f"{mo}_token_level_scores"][name][b] == pytest.approx(want[mo][name], abs=1e-9), \
                        (mo, name)
                np.testing.assert_allclose(got[f"{mo}_token_level_scores"]["log_probas"][:, b], want["log_probas"],
                                           atol=1e-9)
            assert got["scores_unbiased"][b] == pytest.approx(want["score"], abs=1e-9)
            scores.append(want["score"])
        weights = np.exp(scores) / np.exp(scores).sum()
        np.testing.assert_allclose(got["weights"], weights, atol=1e-9)
        assert scores == sorted(scores, reverse=True)  # best first
        assert got["entropy_top5"] is got[f"{mode}_token_level_scores"]["entropy_top5"]


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
@pytest.mark.parametrize("mode", ["pe", "ep"])
def test_one_beam_is_greedy_decoding_of_the_ensemble_posterior(members, kind, mode):
    ens = _ensemble(members[kind], ensembling_mode=mode, num_beams=1)
    for prompt in PROMPTS:
        tokens: list[int] = []
        for _ in range(6):  # brute force: all V next tokens scored by the posterior of plain forward passes
            rows = _rows(ens, kind, prompt, tokens + [0])  # a placeholder last token: rows[:, -1] is the next step
            nxt = int(np.argmax(_posteriors(rows, tokens + [0])[0][mode][-1]))
            tokens.append(nxt)
            if nxt == 1:
                break
        assert list(ens.token_scores(prompt, max_new_tokens=6)["tokens"][0]) == tokens


def test_two_beams_of_two_steps_are_the_best_by_brute_force(members):
    """max_new_tokens=2, B=2: the two best first tokens, then the best continuations of the unfinished ones."""
    ens = _ensemble(members["causal"], ensembling_mode="pe", num_beams=2)
    prompt = PROMPTS[0]
    first = _posteriors(_rows(ens, "causal", prompt, [0]), [0])[0]["pe"][0]
    top2 = list(np.argsort(-first)[:2])
    cands = []
    for a in top2:
        if a == 1:
            continue
        second = _posteriors(_rows(ens, "causal", prompt, [int(a), 0]), [int(a), 0])[0]["pe"][1]
        cands += [(first[a] + second[v], [int(a), v]) for v in range(len(second))]
    finished = [([1], first[1])] if 1 in top2 else []
    best = sorted(cands, key=lambda c: -c[0])[: 2 - len(finished)]
    want = {tuple(t): s / len(t) for t, s in finished} | {tuple(t): s / 2 for s, t in best}
    got = ens.token_scores(prompt, max_new_tokens=2)
    assert [tuple(t) for t in got["tokens"]] == sorted(want, key=lambda t: -want[t])


def _manager(folders, batch_size, mode="pe", **kw):
    names = [*ENSEMBLE_TOKEN_CLASSES, *ENSEMBLE_SEQUENCE_CLASSES]
    man = UEManager([{"input": p, "reference": "paris"} for p in PROMPTS[:3]], model=str(folders[0]),
                    model_options={"device": "cpu", "dtype": "float64", "ensemble": [str(f) for f in folders[1:]],
                                   "ensembling_mode": mode, "ensemble_generation_params": {"num_beams": 3}},
                    estimators=names, gen_metrics=["accuracy"], ue_metrics=["prr"], batch_size=batch_size,
                    max_new_tokens=4, seed=0, save_stats=["ensemble_token_scores"], progress=False, **kw)
    man()
    return man


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_every_ensemble_estimator_runs_in_the_manager_equal_at_batch_sizes_1_2_3_and_to_lm_polygraph(members, kind,
                                                                                                   lpm, tmp_path):
    mans = [_manager(members[kind], b) for b in (1, 2, 3)]
    est_tok = lpm("estimators.ensemble_token_measures")
    est_seq = lpm("estimators.ensemble_sequence_measures")
    data = batch_scores(mans[0].stats["ensemble_token_scores"])
    ens = _ensemble(members[kind], num_beams=3)
    for i, prompt in enumerate(PROMPTS[:3]):  # the statistic is the ensemble's decoding of each prompt
        np.testing.assert_array_equal(data["weights"][i], ens.token_scores(prompt, max_new_tokens=4)["weights"])
    for name in [*ENSEMBLE_TOKEN_CLASSES, *ENSEMBLE_SEQUENCE_CLASSES]:
        values = [m.estimations[("sequence", name)] for m in mans]
        assert np.all(np.isfinite(values[0])), name
        np.testing.assert_array_equal(values[0], values[1])
        np.testing.assert_array_equal(values[0], values[2])
        module = est_tok if name in ENSEMBLE_TOKEN_CLASSES else est_seq
        theirs = getattr(module, name)()({"ensemble_token_scores": data})
        np.testing.assert_allclose(values[0], theirs, atol=1e-6, err_msg=name)
    assert any("ensemble=ModelEnsemble(" in note for note in mans[0].notes)
    with pytest.warns(RuntimeWarning, match="ensemble_token_scores"):  # a dict column: said, not saved
        mans[0].save(tmp_path / "run")
    loaded = UEManager.load(tmp_path / "run")
    assert "ensemble_token_scores" not in loaded.stats
    for name in ENSEMBLE_TOKEN_CLASSES:
        np.testing.assert_array_equal(loaded.estimations[("sequence", name)], mans[0].estimations[("sequence", name)])


def test_folders_with_another_vocabulary_are_rejected_naming_them(members, tmp_path, tiny_tokenizer):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", "le", "la", *[f"w{i}" for i in range(20)]])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    assert len(tok) == len(tiny_tokenizer())  # same size, other words
    other = tmp_path / "french"
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=32, n_layer=1, n_head=2,
                               eos_token_id=1, pad_token_id=0)).save_pretrained(other)
    tok.save_pretrained(other)
    with pytest.raises(InvalidParameterError, match="different tokenizer vocabularies") as info:
        HFModel(str(members["causal"][0]), device="cpu", ensemble=[str(other)])
    assert "french" in str(info.value)
    with pytest.raises(InvalidParameterError, match="different types"):
        HFModel(str(members["causal"][0]), device="cpu", ensemble=[str(members["seq2seq"][1])])


@pytest.mark.parametrize("kw, match", [
    ({"ensembling_mode": "ep"}, "'ensembling_mode' applies to an ensemble"),
    ({"ensemble_generation_params": {"num_beams": 2}}, "'ensemble_generation_params' applies to an ensemble"),
    ({"ensemble": [], "ensembling_mode": "pe"}, "non-empty list"),
    ({"ensemble": ["X"], "ensembling_mode": "pp"}, "'ensembling_mode' must be one of pe, ep"),
    ({"ensemble": ["X"], "ensemble_generation_params": {"num_beam": 2}}, "unknown keys 'num_beam'"),
    ({"ensemble": ["X"], "ensemble_generation_params": {"num_beams": 0}}, "num_beams must be an integer >= 1"),
])
def test_ensemble_options_are_checked(members, kw, match):
    kw = {k: ([str(members["causal"][1])] if v == ["X"] else v) for k, v in kw.items()}
    with pytest.raises(InvalidParameterError, match=match):
        HFModel(str(members["causal"][0]), device="cpu", **kw)


def test_a_repetition_penalty_is_rejected_with_an_ensemble(members):
    with pytest.raises(InvalidParameterError, match="repetition_penalty"):
        _manager(members["causal"], 3, generation_params={"repetition_penalty": 1.2})


def test_assay_ue_runs_an_ensemble_from_the_config(members, tmp_path, capsys):
    folders = members["causal"]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps({"question": q, "answer": "paris"}) + "\n"
                                               for q in PROMPTS))
    cfg = {"model": {"path": str(folders[0]), "device": "cpu", "dtype": "float64",
                     "ensemble": [str(f) for f in folders[1:]],
                     "ensembling_mode": "ep", "ensemble_generation_params": {"num_beams": 2, "length_penalty": 0.5},
                     "max_new_tokens": 3, "batch_size": 2},
           "dataset": {"path": "qa.jsonl", "text_column": "question", "label_column": "answer"},
           "seed": 1, "estimators": ["msp", "ept_mi", "eps_rmi"], "gen_metrics": ["accuracy"],
           "ue_metrics": ["prr"], "save_path": "out", "plots": False}
    path = tmp_path / "ue.yaml"
    path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) == 0
    man = UEManager.load(tmp_path / "out" / "seed-1")
    ens = _ensemble(folders, ensembling_mode="ep", num_beams=2, length_penalty=0.5)
    scores = [ens.token_scores(p, max_new_tokens=3) for p in PROMPTS]
    want = [(s["weights"] * s["ep_token_level_scores"]["mutual_information"]).sum() for s in scores]
    np.testing.assert_allclose(man.estimations[("sequence", "ept_mi")], want, atol=1e-12)
    cfg["model"]["ensemble_generation_params"] = {"beams": 2}
    path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) != 0
    assert "model.ensemble_generation_params.beams: unknown key" in capsys.readouterr().err
    del cfg["model"]["ensemble"]
    cfg["model"]["ensemble_generation_params"] = {"num_beams": 2}
    path.write_text(json.dumps(cfg))
    assert main(["ue", str(path)]) != 0
    assert "model.ensembling_mode: expected no ensemble setting without 'ensemble'" in capsys.readouterr().err
