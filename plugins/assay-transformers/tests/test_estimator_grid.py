"""Every registered LM-Polygraph estimator through ONE UEManager, at batch sizes 1, 2 and 5 (issue 28).

The grid is derived, not typed: LM-Polygraph 0.7.0's estimator classes (read from the installed
package by ``scripts/polygraph_table.py``, the script that writes ``docs/polygraph/estimators.md``)
that assay's estimator registry holds, less :data:`EXCLUDED` (each entry says why). A newly
registered class is in the grid the day it is registered; if the backend cannot compute its
statistics the test fails until it is given options here or an exclusion with its reason.

For a tiny causal model and a tiny seq2seq model (built here from configs, 3 layers: RAUQ reads
the middle layers), and for the black-box ``openai_server`` (``transformers serve``), one manager
runs the whole mix at batch sizes 1, 2 (batches of 2, 2, 1) and 5, and each estimator runs again
alone in a manager of its own. Checked, per estimator:

- the mix gives the same numbers at every batch size, exactly. The white-box models run in float64
  (``model_options={"dtype": "float64"}``): in float32 the greedy pass over a padded batch rounds
  differently from a batch of one (the attention over masked pad positions is summed in another
  order, an error proportional to the logits' magnitude), which moved the values by up to 1.4e-5
  (measured: maximum_claim_probability on the T5, 3.5e-6 for focus_claim on the GPT-2), enough to
  hide a real batch-dependence of that size; in float64 the same rounding is ~1e-14, below what
  the float32 statistics (log-softmax rows, hidden states) the backend stores can show, so any
  difference left is a bug;
- the value in the mix equals the value alone at the same batch size, exactly (same computation:
  a mix must not change a value);
- the values are numbers (finite on some example), so an estimator that silently gave NaN
  everywhere is not counted as passing.

Everything is local: the NLI and cross-encoder folders of conftest.py, a sentence-BERT folder,
a spaCy pipeline folder and an IDF table for Focus, and the density estimators' training
statistics, all built here.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.plugins import get_registry
from assay.uncertainty import UEManager
from assay.uncertainty.graph import StatDependencyError

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")]

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ["the capital of france is", "what", "who is the big red river city of two", "yes no a small blue",
           "a small river"]
#: the density estimators' training prompts: more than the hidden size (32), so the covariance is not singular
TRAIN = [" ".join(np.random.default_rng(i).choice(["the", "a", "big", "small", "red", "blue", "river", "city", "what",
                                                  "who", "is", "one", "two", "three", "yes", "no"], 1 + i % 4))
         for i in range(48)]
MAX_NEW, SAMPLES_N = 4, 3
BATCH_SIZES = (1, 2, 5)
#: the white-box models run in float64 (module docstring)
DTYPE = "float64"

#: LM-Polygraph classes registered in assay that the grid leaves out, and why
ENSEMBLE = ("EPTtu", "EPTdu", "EPTmi", "EPTrmi", "EPTepkl", "EPTent5", "EPTent10", "EPTent15",
            "PETtu", "PETdu", "PETmi", "PETrmi", "PETepkl", "PETent5", "PETent10", "PETent15",
            "EPStu", "EPSrmi", "EPSrmiabs", "PEStu", "PESrmi", "PESrmiabs")
EXCLUDED: dict[str, str] = {
    # read `ensemble_token_scores`, which only an ensemble of models gives: the ensemble backend is being built
    # (engineer p10-ensemble); until then no model backend computes the statistic
    **{c: "needs an ensemble backend (ensemble_token_scores; p10-ensemble builds it)" for c in ENSEMBLE},
    # parse a confidence *number* the model states (1S: in its answer; 2S: asked again, as a chat); the tiny
    # models' 25-word vocabulary has no digits and no chat template, so every value would be NaN (Verbalized2S on the
    # black-box backend, with a server whose vocabulary has numbers: test_blackbox_followup.py)
    "Verbalized1S": "needs a model that states its confidence as a number",
    "Verbalized2S": "needs a chat model that states its confidence as a number when asked",
}
#: per model kind: more exclusions
KIND_EXCLUDED: dict[str, dict[str, str]] = {
    # LM-Polygraph's eliciting-prompt attention is one attention over prompt + answer + suffix: causal models only
    # (the calculator raises on a seq2seq model, test_whitebox_stats.py checks it)
    "seq2seq": {"CSL": "attention_weights_eliciting_prompt is defined for causal models only"},
}


def _polygraph_table() -> Any:
    spec = importlib.util.spec_from_file_location("polygraph_table", ROOT / "scripts" / "polygraph_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lm_polygraph_class_names() -> list[str]:
    table = _polygraph_table()
    return [name for name, _ in table.lm_polygraph_classes(table.lm_polygraph_estimators_dir())]


def grid_classes(kind: str) -> list[str]:
    """The LM-Polygraph classes assay registers, less the exclusions (of every kind, and of ``kind``)."""
    registry = get_registry("estimator")
    skip = {**EXCLUDED, **KIND_EXCLUDED.get(kind, {})}
    return [c for c in lm_polygraph_class_names() if c in registry and c not in skip]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """One intra-op thread: the models are tiny, and on a loaded machine torch's thread pool makes a forward pass
    ~50x slower (0.19 s against 0.003 s measured with 2 threads on 2 busy cores). Restored after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --------------------------------------------------------------------------- the local folders
@pytest.fixture(scope="module")
def env(tmp_path_factory, tiny_tokenizer, nli_dir, cross_encoder_dir, whitebox_models):
    """Every folder and fitted statistic the grid needs, built once for the module."""
    import spacy
    import torch
    from transformers import BertConfig, BertModel

    from assay_transformers.density_training import training_stats
    from assay_transformers.generation import HFModel

    root = tmp_path_factory.mktemp("grid")
    tok = tiny_tokenizer()
    torch.manual_seed(9)  # SemanticEntropyToken's sentence-BERT (clusters the vocabulary)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16, max_position_embeddings=16,
                         initializer_range=2.0)).save_pretrained(root / "sbert")
    tok.save_pretrained(root / "sbert")
    # Focus: an IDF table over the vocabulary and a spaCy pipeline tagging the content words as nouns
    np.save(root / "idf.npy", np.random.default_rng(3).uniform(0.5, 3.0, len(tok)))
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    for word in ("capital", "france", "paris", "river", "city", "big", "small", "red", "blue", "answer", "question",
                 "yes", "no", "one", "two", "three"):
        ruler.add([[{"ORTH": word}]], {"POS": "NOUN"})
    nlp.to_disk(root / "spacy")
    out: dict[str, Any] = {"nli": nli_dir, "ce": cross_encoder_dir, "root": root}
    for kind in ("causal", "seq2seq"):
        folder = whitebox_models[kind]  # conftest's 3-layer GPT-2 (512 positions) and T5
        hf = HFModel(str(folder), device="cpu", dtype=DTYPE)
        train = training_stats(hf, TRAIN, max_new_tokens=MAX_NEW)
        background = training_stats(hf, TRAIN[::-1][:40], max_new_tokens=MAX_NEW)
        train["background_train_embeddings_decoder"] = background["train_embeddings_decoder"]
        # claims (LM-Polygraph's Claim as a mapping): the whole greedy answer, and its first token and the rest
        # (the answers do not depend on the batch size; the test checks it)
        claims = []
        for (g,) in hf.generate(PROMPTS, max_new_tokens=MAX_NEW, rows=False):
            n = len(g.tokens)
            parts = [range(n)] + ([range(1), range(1, n)] if n > 1 else [])
            claims.append([{"claim_text": hf.tokenizer.decode([g.tokens[i] for i in ids], skip_special_tokens=True),
                            "aligned_token_ids": list(ids)} for ids in parts])
        out[kind] = {"folder": folder, "train": train, "claims": claims}
    return out


def _options(cls: str, env: dict[str, Any], kind: str) -> dict[str, Any]:
    """The options an estimator class needs (folders, fitted statistics), else none."""
    root, folder = env["root"], env[kind]["folder"] if kind in env else None
    focus = {"gamma": 0.9, "p": 0.0, "model_name": str(folder), "path": str(root / "idf.npy"), "idf_dataset": "none",
             "trust_remote_code": False, "idf_seed": 0, "idf_dataset_size": -1, "spacy_path": str(root / "spacy")}
    train = env[kind]["train"] if kind in env else None
    return {
        "MahalanobisDistanceSeq": {"train_stats": train}, "RelativeMahalanobisDistanceSeq": {"train_stats": train},
        "RDESeq": {"train_stats": train}, "PPLMDSeq": {"train_stats": train},
        "Focus": focus, "FocusClaim": focus,
        "SemanticEntropyToken": {"tokenizer_path": str(folder), "tokenizer_save_path": None,
                                 "semantic_bert_path": str(root / "sbert"), "batch_size": 8},
        # words of the tiny vocabulary stand for LM-Polygraph's "Highly Likely", "Probable" ...
        "Linguistic1S": {"expressions": {"paris": 0.9, "the": 0.7, "a": 0.5, "no": 0.1}},
        "RandomBaselineClaim": {"seed": 5},  # its own generator (without: numpy's global one, not reproducible)
        "PTrueEmpirical": {"num_samples": 3},
    }.get(cls, {})


def _calculators(env: dict[str, Any], folder: Any) -> list[str]:
    nli, ce = env["nli"], env["ce"]
    return [f"semantic_matrix[nli_model={nli}, device=cpu]", f"greedy_semantic_matrix[nli_model={nli}, device=cpu]",
            f"concat_greedy_semantic_matrix[nli_model={nli}, device=cpu]",
            f"greedy_alternatives_nli[nli_model={nli}, tokenizer={folder}, device=cpu]",
            f"greedy_alternatives_fact_pref_nli[nli_model={nli}, tokenizer={folder}, device=cpu]",
            f"claim_to_samples_nli[nli_model={nli}, device=cpu]",
            f"cross_encoder_similarity[cross_encoder={ce}, tokenizer={folder}, device=cpu]",
            f"greedy_cross_encoder_similarity[cross_encoder={ce}, device=cpu]"]


def _estimators(classes: list[str], env: dict[str, Any], kind: str) -> list[Any]:
    registry = get_registry("estimator")
    return [registry.get(c).create(**_options(c, env, kind)) for c in classes]


def _values(man: UEManager, est: Any) -> np.ndarray:
    """An estimator's values in a run, flat (token and claim levels: every example's values in order)."""
    values = man.estimations[(est.level, est.name)]
    if est.level == "sequence":
        return np.asarray(values, dtype=np.float64)
    return np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1) for v in values] or [np.zeros(0)])


def _records(claims: list[Any] | None) -> list[dict[str, Any]]:
    out = []
    for i, p in enumerate(PROMPTS):
        # no_fewshot_input_texts: LM-Polygraph's prompt without few-shot examples (semantic density's default reads it)
        rec: dict[str, Any] = {"input": p, "reference": "paris", "no_fewshot_input_texts": p}
        if claims is not None:
            rec["claims"] = claims[i]
        out.append(rec)
    return out


def _run(model: Any, estimators: list[Any], calcs: list[str], batch_size: int, records: list[dict[str, Any]],
         **kw: Any) -> UEManager:
    man = UEManager(records, model=model, estimators=estimators, stat_calculators=calcs, gen_metrics=[],
                    ue_metrics=[], batch_size=batch_size, max_new_tokens=MAX_NEW, samples_n=SAMPLES_N, seed=11,
                    progress=False, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN-with-a-warning values are compared as NaN
        man()
    return man


def _check_grid(runs: dict[int, UEManager], alone: dict[str, UEManager], objs: dict[int, list[Any]]) -> None:
    """The checks of the module docstring: identical values at every batch size and alone, finite somewhere."""
    first, last = runs[BATCH_SIZES[0]], BATCH_SIZES[-1]
    for j, est in enumerate(objs[BATCH_SIZES[0]]):
        base = _values(first, est)
        assert np.isfinite(base).any(), f"{est.name}: no finite value at all"
        for b in BATCH_SIZES[1:]:  # (NaN equals NaN here: a NaN must stay a NaN)
            np.testing.assert_array_equal(_values(runs[b], objs[b][j]), base, err_msg=f"{est.name}, batch size {b}")
        # (the key is the estimator's level and name, the same for every object of its class)
        np.testing.assert_array_equal(_values(alone[est.name], est), _values(runs[last], objs[last][j]),
                                      err_msg=f"{est.name}: alone vs in the mix")


# --------------------------------------------------------------------------- the white-box grid
def test_the_grid_is_derived_from_the_registry_and_the_exclusions_are_live():
    names = lm_polygraph_class_names()
    assert len(names) == 83  # LM-Polygraph 0.7.0's lm_polygraph.estimators
    registry = get_registry("estimator")
    stale = [c for c in {**EXCLUDED, **KIND_EXCLUDED["seq2seq"]} if c not in names or c not in registry]
    assert not stale, f"exclusions of classes that are not registered LM-Polygraph classes: {stale}"
    assert len(grid_classes("causal")) == len([c for c in names if c in registry]) - len(EXCLUDED)


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_every_estimator_in_one_manager_gives_the_same_numbers_for_any_batch_size_and_alone(env, kind):
    folder = env[kind]["folder"]
    classes = grid_classes(kind)
    calcs = _calculators(env, folder)
    records = _records(env[kind]["claims"])
    model_options = {"device": "cpu", "dtype": DTYPE}
    objs = {b: _estimators(classes, env, kind) for b in BATCH_SIZES}
    labels = [e.name for e in objs[1]]
    assert len(set(labels)) == len(labels), "two classes share an assay name"
    assert {e.level for e in objs[1]} == {"sequence", "token", "claim"}
    runs = {b: _run(str(folder), objs[b], calcs, b, records, model_options=model_options) for b in BATCH_SIZES}
    assert runs[1].stats["answer"] == runs[2].stats["answer"] == runs[5].stats["answer"]
    assert runs[1].stats["sample_texts"] == runs[5].stats["sample_texts"]
    alone = {}
    for c in classes:
        (est,) = _estimators([c], env, kind)
        alone[est.name] = _run(str(folder), [est], calcs, BATCH_SIZES[-1], records, model_options=model_options)
    _check_grid(runs, alone, objs)


# --------------------------------------------------------------------------- the black-box grid
#: black-box model: options that make an estimator computable from texts alone
BLACKBOX_OPTIONS: dict[str, dict[str, Any]] = {
    # the default class_probability_estimation="sum" reads sample_log_probs, which a text-only server lacks
    "SemanticEntropy": {"class_probability_estimation": "frequency"},
}


def test_every_sample_based_estimator_on_the_black_box_server_gives_the_same_numbers_for_any_batch_size(
        openai_server, env):
    from assay_transformers.blackbox import OpenAIModel

    registry = get_registry("estimator")
    classes = grid_classes("blackbox")

    def create(c: str) -> Any:
        # the white-box options where there is no black-box one (the folders; they matter only if planning passes)
        return registry.get(c).create(**(BLACKBOX_OPTIONS.get(c) or _options(c, env, "causal")))

    calcs = _calculators(env, env["causal"]["folder"])
    # claims of the black-box answers: their text is what the claim NLI reads (the token ids are not read here)
    records = _records([[{"claim_text": p, "aligned_token_ids": [0]}] for p in PROMPTS])

    def model() -> Any:
        return OpenAIModel(openai_server.base_url, name=openai_server.model)

    # each estimator alone, on one backend (it keeps every answer: the first run's requests serve the others); an
    # estimator whose statistics the backend cannot compute stops at planning, before any request
    shared = model()
    alone, missing = {}, {}
    for c in classes:
        est = create(c)
        try:
            alone[est.name] = _run(shared, [est], calcs, BATCH_SIZES[-1], records)
        except StatDependencyError as exc:
            missing[c] = str(exc).split(": it is not")[0]
    runnable = [c for c in classes if c not in missing]
    # the sample-based families are all there (a floor: a bug that stopped them all would otherwise pass)
    # (PTrueEmpirical: its follow-up question goes to the server through stats["model"])
    assert {"LexicalSimilarity", "NumSemSets", "SemanticEntropy", "DegMat", "Eccentricity", "EigValLaplacian",
            "KernelLanguageEntropy", "LUQ", "LabelProb", "FrequencyScoringClaim", "PTrueEmpirical"} <= set(runnable), \
        missing
    objs = {b: [create(c) for c in runnable] for b in BATCH_SIZES}
    runs = {b: _run(model(), objs[b], calcs, b, records) for b in BATCH_SIZES}
    assert runs[1].stats["sample_texts"] == runs[2].stats["sample_texts"] == runs[5].stats["sample_texts"]
    assert runs[1].stats["answer"] == runs[5].stats["answer"]
    assert any(len(set(t)) > 1 for t in runs[1].stats["sample_texts"])  # sampled, not greedy
    _check_grid(runs, alone, objs)
    print(f"\nblack-box: {len(runnable)} estimators: {', '.join(runnable)}; not computable from texts: "
          f"{', '.join(sorted(missing))}")
