"""LM-Polygraph 0.7.0's NLI- and sample-based estimators: assay's value equals LM-Polygraph's class, run live.

Every estimator is called on the same statistics dictionary as LM-Polygraph's own class
(random statistics, fixed seed, LM-Polygraph's layout: ``(B, K, K)`` arrays, per-sample sums
in ``sample_log_probs`` ...), values equal to 1e-6; where assay's columns hold the same data in
another layout (a list of ``(K, K)`` arrays; token log-probabilities per sample; class ids per
example) the value is the same. The NLI stat calculators run a tiny random NLI model built in
``conftest.py`` (a BERT sequence classifier with ENTAILMENT / NEUTRAL / CONTRADICTION labels
saved to a temporary folder) next to LM-Polygraph's ``SemanticMatrixCalculator`` and
``SemanticClassesCalculator`` on the same model object.
"""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

from assay import load_estimator
from assay.errors import InvalidParameterError
from assay_transformers import polygraph_semantic as ps
from assay_transformers import semantic
from assay_transformers.cross_encoder import CrossEncoderSimilarityCalculator, GreedyCrossEncoderSimilarityCalculator
from assay_transformers.nli import SemanticClassesCalculator, SemanticMatrixCalculator

B, K, D = 7, 5, 6
WORDS = ["the", "a", "capital", "of", "france", "paris", "is", "what"]  # in conftest's tokenizer vocabulary
_LPM = []


@pytest.fixture(autouse=True, scope="module")
def _peer(lpm):
    _LPM.append(lpm)


def lm_polygraph_module(dotted):
    return _LPM[0](dotted)


def lp(module: str, cls: str):
    return getattr(lm_polygraph_module(f"estimators.{module}"), cls)


def _texts(rng):
    pool = ["paris", "the capital is paris", "lyon", "a big city", "paris", "blue river", "the answer is no", ""]
    return [[pool[j] for j in rng.integers(0, len(pool), K)] for _ in range(B)]


def _lp_classes(classes, texts):
    calc = lm_polygraph_module("stat_calculators.semantic_classes").SemanticClassesCalculator()
    return calc({"sample_texts": texts, "semantic_matrix_classes": classes, "entailment_id": 2}, texts, None)[
        "semantic_classes_entail"]


@pytest.fixture(scope="module")
def stats():
    rng = np.random.default_rng(28)
    p = rng.dirichlet(np.full(3, 0.7), size=(B, K, K))  # columns: contradiction, neutral, entailment
    texts = _texts(rng)
    lengths = rng.integers(1, 6, size=(B, K))
    token_ll = [[np.log(rng.uniform(0.05, 1.0, n)) for n in row] for row in lengths]
    greedy_len = rng.integers(1, 7, size=B)
    out = {
        "sample_texts": texts,
        "semantic_matrix_entail": p[..., 2], "semantic_matrix_contra": p[..., 0],
        "semantic_matrix_classes": p.argmax(-1),
        "semantic_matrix_entail_logits": rng.normal(0, 2, (B, K, K)),
        "semantic_matrix_contra_logits": rng.normal(0, 2, (B, K, K)),
        "sample_log_likelihoods": token_ll,
        "sample_log_probs": np.array([[t.sum() for t in row] for row in token_ll]),
        "sample_tokens": [[list(range(n)) for n in row] for row in lengths],
        "sample_token_similarity": [[rng.uniform(0, 1, n) for n in row] for row in lengths],
        "sample_sentence_similarity": rng.uniform(0, 1, (B, K, K)),
        "greedy_log_likelihoods": [np.log(rng.uniform(0.05, 1.0, n)) for n in greedy_len],
        "token_similarity": [rng.uniform(0, 1, n) for n in greedy_len],
        "greedy_sentence_similarity": rng.uniform(0, 1, (B, K)),
        "entropy": [rng.uniform(0, 3, n) for n in greedy_len],
        "sample_embeddings": rng.normal(size=(B, K, D)),
    }
    for prefix in ("greedy", "concat_greedy"):
        q = rng.dirichlet(np.full(3, 0.7), size=(B, K))
        out[f"{prefix}_semantic_matrix_contra_forward"] = q[..., 0]
        out[f"{prefix}_semantic_matrix_neutral_forward"] = q[..., 1]
    out["semantic_classes_entail"] = _lp_classes(out["semantic_matrix_classes"], texts)
    return out


def assay_layout(stats):
    """The same statistics as assay's columns hold them (lists of per-example arrays; token log-probs)."""
    out = {k: list(v) if isinstance(v, np.ndarray) else v for k, v in stats.items()}
    out["sample_log_probs"] = stats["sample_log_likelihoods"]  # assay: token log-probabilities per sample
    out["sample_log_likelihoods"] = [np.array([t.sum() for t in row]) for row in stats["sample_log_likelihoods"]]
    out["semantic_classes_entail"] = SemanticClassesCalculator()(
        {"sample_texts": stats["sample_texts"], "semantic_matrix_classes": list(stats["semantic_matrix_classes"]),
         "entailment_id": [2] * B})["semantic_classes_entail"]
    return out


def check(ours, theirs, stats, *, layouts=True):
    want = np.asarray(theirs(stats), dtype=np.float64)
    np.testing.assert_allclose(ours(stats), want, rtol=0, atol=1e-6)
    if layouts:
        np.testing.assert_allclose(ours(assay_layout(stats)), want, rtol=0, atol=1e-6)
    return want


# --------------------------------------------------------------------------- the five renamed ones
# use_unique_responses with "frequency": LM-Polygraph ignores it, assay rejects it (the next test)
@pytest.mark.parametrize("cpe, est, unique", [("sum", "mean", False), ("sum", "direct", False), ("sum", "mean", True),
                                              ("sum", "direct", True), ("frequency", "mean", False),
                                              ("frequency", "direct", False)])
def test_semantic_entropy(stats, cpe, est, unique):
    opts = dict(class_probability_estimation=cpe, entropy_estimation=est, use_unique_responses=unique)
    want = check(ps.SemanticEntropy(**opts), lp("semantic_entropy", "SemanticEntropy")(**opts), stats)
    assert len(set(np.round(want, 9))) > 1
    assert type(load_estimator("semantic_entropy", **opts)) is ps.SemanticEntropy


def test_semantic_entropy_rejects_unique_with_frequency():
    with pytest.raises(InvalidParameterError, match="use_unique_responses"):
        ps.SemanticEntropy(class_probability_estimation="frequency", use_unique_responses=True)


def test_num_sem_sets(stats):
    want = check(ps.NumSemSets(), lp("num_sem_sets", "NumSemSets")(), stats)
    assert set(want) > {1.0} or len(set(want)) > 1


@pytest.mark.parametrize("name, module, cls", [("deg_mat", "deg_mat", "DegMat"),
                                               ("eccentricity", "eccentricity", "Eccentricity"),
                                               ("semantic_eigval_laplacian", "eig_val_laplacian", "EigValLaplacian")])
@pytest.mark.parametrize("opts", [{}, {"affinity": "contra"}, {"similarity_score": "Jaccard_score"}])
def test_graph_estimators(stats, name, module, cls, opts):
    ours = load_estimator(name, **opts)
    assert type(ours).__name__ == cls and ours.name == name
    check(ours, lp(module, cls)(**opts), stats)


def test_eccentricity_threshold(stats):
    check(ps.Eccentricity(thres=0.5), lp("eccentricity", "Eccentricity")(thres=0.5), stats)


# --------------------------------------------------------------------------- item 2: the embedding spelling
def test_embedding_clustering_keeps_the_old_estimators():
    samples = {"sample_texts": [["the cat sat", "the cat sat down", "a dog"], ["yes", "yes"]]}
    for name, emb_cls in {"semantic_entropy": semantic.SemanticEntropy, "num_sem_sets": semantic.NumSemSets,
                          "deg_mat": semantic.DegMat, "eccentricity": semantic.Eccentricity,
                          "semantic_eigval_laplacian": semantic.SemanticEigValLaplacian}.items():
        est = load_estimator(f"{name}[clustering=embedding, similarity=rougeL]")
        assert type(est) is emb_cls
        np.testing.assert_array_equal(est(samples), emb_cls(similarity="rougeL")(samples))
        with pytest.warns(FutureWarning, match=rf"'{name}' now computes LM-Polygraph's NLI-based .*"
                                               r"clustering=embedding"):
            old = load_estimator(f"{name}[similarity=rougeL]")
        assert type(old) is emb_cls
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert type(load_estimator(name)).__module__ == "assay_transformers.polygraph_semantic"


def test_clustering_options_that_do_not_fit_are_errors():
    with pytest.raises(InvalidParameterError, match="'similarity'.*clustering=embedding"):
        load_estimator("deg_mat[clustering=nli, similarity=rougeL]")
    with pytest.raises(InvalidParameterError, match="takes no 'affinity'"):
        load_estimator("deg_mat[clustering=embedding, affinity=contra]")
    with pytest.raises(InvalidParameterError, match="'clustering'.*'nli', 'embedding'"):
        load_estimator("num_sem_sets[clustering=jaccard]")
    with pytest.raises(InvalidParameterError, match="similarity_score"):
        load_estimator("deg_mat[similarity_score=cosine]")


# --------------------------------------------------------------------------- the other families
@pytest.mark.parametrize("opts", [{}, {"t": 1.0}, {"normalize": False, "scale": False}, {"jitter": 0.1}])
def test_kernel_language_entropy(stats, opts):
    check(ps.KernelLanguageEntropy(**opts), lp("kernel_language_entropy", "KernelLanguageEntropy")(**opts), stats)


def test_luq(stats):
    check(ps.LUQ(), lp("luq", "LUQ")(), stats)


def test_sar_family(stats):
    check(ps.TokenSAR(), lp("token_sar", "TokenSAR")(), stats)
    check(ps.SentenceSAR(), lp("sentence_sar", "SentenceSAR")(), stats)
    check(ps.SAR(), lp("sar", "SAR")(), stats)


def test_sar_without_token_log_probabilities_is_an_error(stats):
    bad = dict(assay_layout(stats))
    bad["sample_log_probs"] = bad["sample_log_likelihoods"]
    with pytest.raises(InvalidParameterError, match="example 0 needs each sample's token log-probabilities"):
        ps.SAR()(bad)


@pytest.mark.parametrize("concat_input", [True, False])
def test_semantic_density(stats, concat_input):
    check(ps.SemanticDensity(concat_input=concat_input),
          lp("semantic_density", "SemanticDensity")(concat_input=concat_input), stats)


@pytest.mark.parametrize("alpha", [1e-3, 0.5])
def test_eigenscore(stats, alpha):
    check(ps.EigenScore(alpha=alpha), lp("eigenscore", "EigenScore")(alpha=alpha), stats)


@pytest.mark.parametrize("cls", ["CocoaMSP", "CocoaPPL", "CocoaMTE"])
def test_cocoa(stats, cls):
    check(getattr(ps, cls)(), lp("cocoa", cls)(), stats)


def test_claim_conditioned_probability():
    rng = np.random.default_rng(5)
    outcomes = ["entail", "contra", "neutral"]
    tokens, alternatives, nli = [], [], []
    for _ in range(B):
        n = int(rng.integers(0, 6))
        tokens.append(list(rng.integers(0, 50, n)))
        alts, mats = [], []
        for _ in range(n):
            m = int(rng.integers(1, 5))
            alts.append([(f"w{j}", float(np.log(rng.uniform(0.01, 1)))) for j in range(m)])
            mats.append([[str(rng.choice(outcomes)) if i == 0 or j == 0 else None for j in range(m)]
                         for i in range(m)])
        alternatives.append(alts)
        nli.append(mats)
    stats = {"greedy_tokens": tokens, "greedy_tokens_alternatives": alternatives,
             "greedy_tokens_alternatives_nli": nli}
    want = check(ps.ClaimConditionedProbability(),
                 lp("claim_conditioned_probability", "ClaimConditionedProbability")(), stats, layouts=False)
    assert len(set(np.round(want, 9))) > 2


def test_every_estimator_loads_by_its_name():
    for cls, _ in ps.ESTIMATORS:
        assert type(load_estimator(cls.name)) is cls


# --------------------------------------------------------------------------- the NLI stat calculators
def _lp_nli_model(folder, batch_size):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True).eval()
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return types.SimpleNamespace(deberta=model, deberta_tokenizer=tok, batch_size=batch_size, device="cpu")


@pytest.mark.parametrize("batch_size", [10, 3])
def test_semantic_matrix_calculator_equals_lm_polygraphs(nli_dir, batch_size):
    rng = np.random.default_rng(1)
    words = WORDS[:8]
    texts = [[" ".join(rng.choice(words, int(rng.integers(1, 4)))) for _ in range(4)] for _ in range(5)]
    texts[0][2] = texts[0][0]  # a repeated answer
    ours = SemanticMatrixCalculator(nli_dir, batch_size=batch_size, device="cpu")({"sample_texts": texts})
    theirs_calc = lm_polygraph_module("stat_calculators.semantic_matrix").SemanticMatrixCalculator(
        _lp_nli_model(nli_dir, batch_size))
    theirs = theirs_calc({"sample_texts": texts}, [], None)
    for key in ("semantic_matrix_entail", "semantic_matrix_contra", "semantic_matrix_entail_logits",
                "semantic_matrix_contra_logits"):
        np.testing.assert_allclose(np.stack(ours[key]), theirs[key], rtol=0, atol=1e-6, err_msg=key)
    np.testing.assert_array_equal(np.stack(ours["semantic_matrix_classes"]), theirs["semantic_matrix_classes"])
    assert ours["entailment_id"] == [theirs["entailment_id"]] * 5
    # the classes: assay's calculator and LM-Polygraph's on these matrices
    lp_classes = _lp_classes(theirs["semantic_matrix_classes"], texts)
    got = SemanticClassesCalculator()({"sample_texts": texts, **ours})["semantic_classes_entail"]
    assert [list(c) for c in got] == [[lp_classes["sample_to_class"][i][j] for j in range(4)] for i in range(5)]
    assert len({int(x) for c in got for x in c}) > 1 and any(len(set(c)) < 4 for c in got)


def test_semantic_entropy_from_the_nli_model_equals_lm_polygraph(nli_dir):
    rng = np.random.default_rng(2)
    texts = [[" ".join(rng.choice(WORDS[:6], int(rng.integers(1, 3)))) for _ in range(5)] for _ in range(6)]
    sample_log_probs = rng.normal(-3, 1, (6, 5))
    ours = {"sample_texts": texts, "sample_log_probs": list(sample_log_probs)}
    ours.update(SemanticMatrixCalculator(nli_dir, device="cpu")(ours))
    ours.update(SemanticClassesCalculator()(ours))
    theirs = {"sample_texts": texts, "sample_log_probs": sample_log_probs}
    theirs.update(lm_polygraph_module("stat_calculators.semantic_matrix").SemanticMatrixCalculator(
        _lp_nli_model(nli_dir, 10))(theirs, [], None))
    theirs["semantic_classes_entail"] = _lp_classes(theirs["semantic_matrix_classes"], texts)
    for name, module, cls in [("semantic_entropy", "semantic_entropy", "SemanticEntropy"),
                              ("num_sem_sets", "num_sem_sets", "NumSemSets"), ("deg_mat", "deg_mat", "DegMat"),
                              ("luq", "luq", "LUQ"),
                              ("kernel_language_entropy", "kernel_language_entropy", "KernelLanguageEntropy")]:
        np.testing.assert_allclose(load_estimator(name)(ours), lp(module, cls)()(theirs), rtol=0, atol=1e-6,
                                   err_msg=name)


def test_semantic_matrix_needs_a_local_folder(tmp_path):
    with pytest.raises(InvalidParameterError, match="not on disk"):
        SemanticMatrixCalculator(tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    with pytest.raises(InvalidParameterError, match="no config.json"):
        SemanticMatrixCalculator(tmp_path / "bad")


def test_an_nli_model_without_nli_labels_is_an_error(tmp_path, tiny_tokenizer):
    from transformers import BertConfig, BertForSequenceClassification

    tok = tiny_tokenizer()
    BertForSequenceClassification(BertConfig(vocab_size=len(tok), hidden_size=8, num_hidden_layers=1,
                                             num_attention_heads=1, intermediate_size=8,
                                             num_labels=3)).save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    with pytest.raises(InvalidParameterError, match="names no ENTAILMENT, NEUTRAL, CONTRADICTION label"):
        SemanticMatrixCalculator(tmp_path / "m", device="cpu")({"sample_texts": [["a", "b"]]})


# --------------------------------------------------------------------------- the cross-encoder calculators
def _lp_model(tokenizer):
    return types.SimpleNamespace(device=lambda: "cpu", tokenizer=tokenizer)


def test_cross_encoder_calculators_equal_lm_polygraphs(cross_encoder_dir, tiny_tokenizer):
    tok = tiny_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": ["<sep>"]})  # a special token among the greedy ones
    sep = tok.convert_tokens_to_ids("<sep>")
    rng = np.random.default_rng(3)
    ids = [tok.convert_tokens_to_ids(w) for w in WORDS]
    prompts = ["what is the capital of france", "who is a big city", "the river"]
    greedy = [[ids[1], ids[5], sep, ids[2]], [ids[3]], []]
    samples = [[list(rng.choice(ids, int(rng.integers(1, 4)))) for _ in range(4)] for _ in prompts]
    samples[0][1] = samples[0][0]  # a repeated sample
    texts = [[tok.decode(s, skip_special_tokens=True) for s in row] for row in samples]
    deps = {"input_texts": prompts, "greedy_tokens": greedy, "sample_tokens": samples, "sample_texts": texts,
            "greedy_texts": [tok.decode(g, skip_special_tokens=True) for g in greedy]}
    ours = CrossEncoderSimilarityCalculator(cross_encoder_dir, tok, batch_size=3, device="cpu")(deps)
    theirs = lm_polygraph_module("stat_calculators.cross_encoder_similarity").CrossEncoderSimilarityMatrixCalculator(
        batch_size=3, cross_encoder_name=str(cross_encoder_dir))(deps, prompts, _lp_model(tok))
    np.testing.assert_allclose(np.stack(ours["sample_sentence_similarity"]), theirs["sample_sentence_similarity"],
                               rtol=0, atol=1e-6)
    for a, b in zip(ours["token_similarity"], theirs["token_similarity"]):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    assert ours["token_similarity"][0][2] == 1.0 and list(ours["token_similarity"][1]) == [0.5]
    for row_a, row_b in zip(ours["sample_token_similarity"], theirs["sample_token_similarity"]):
        for a, b in zip(row_a, row_b):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    g_ours = GreedyCrossEncoderSimilarityCalculator(cross_encoder_dir, batch_size=3, device="cpu")(deps)
    g_theirs = lm_polygraph_module(
        "stat_calculators.greedy_cross_encoder_similarity").GreedyCrossEncoderSimilarityMatrixCalculator(
        batch_size=3, cross_encoder_name=str(cross_encoder_dir))(deps, prompts, _lp_model(tok))
    for key in GreedyCrossEncoderSimilarityCalculator.stats:
        np.testing.assert_allclose(np.stack(g_ours[key]), g_theirs[key], rtol=0, atol=1e-6, err_msg=key)
    assert np.ptp(np.stack(ours["sample_sentence_similarity"])) > 1e-3  # the scores vary


# --------------------------------------------------------------------------- in the manager
def test_manager_runs_the_nli_estimators_with_the_nli_calculator(nli_dir):
    from assay.uncertainty import UEManager

    rng = np.random.default_rng(4)
    data = []
    for i in range(6):
        texts = [" ".join(rng.choice(WORDS[:6], int(rng.integers(1, 3)))) for _ in range(4)]
        data.append({"sample_texts": texts, "answer": texts[0], "correct": int(i % 2),
                     "sample_log_probs": [list(np.log(rng.uniform(0.1, 1, 2))) for _ in texts]})
    names = ["semantic_entropy", "SemanticEntropy[entropy_estimation=direct]", "num_sem_sets", "luq",
             "kernel_language_entropy", "eccentricity[affinity=contra]"]
    man = UEManager(data, estimators=names, stat_calculators=[f"semantic_matrix[nli_model={nli_dir}, device=cpu]"],
                    gen_metrics=["accuracy"], ue_metrics=["prr"])
    man()
    stats = {"sample_texts": [d["sample_texts"] for d in data],
             "sample_log_probs": np.array([[sum(x) for x in d["sample_log_probs"]] for d in data])}
    stats.update(lm_polygraph_module("stat_calculators.semantic_matrix").SemanticMatrixCalculator(
        _lp_nli_model(nli_dir, 10))(stats, [], None))
    stats["semantic_classes_entail"] = _lp_classes(stats["semantic_matrix_classes"], stats["sample_texts"])
    for name, theirs in [("semantic_entropy", lp("semantic_entropy", "SemanticEntropy")()),
                         ("SemanticEntropy[entropy_estimation=direct]",
                          lp("semantic_entropy", "SemanticEntropy")(entropy_estimation="direct")),
                         ("num_sem_sets", lp("num_sem_sets", "NumSemSets")()), ("luq", lp("luq", "LUQ")()),
                         ("kernel_language_entropy", lp("kernel_language_entropy", "KernelLanguageEntropy")()),
                         ("eccentricity[affinity=contra]", lp("eccentricity", "Eccentricity")(affinity="contra"))]:
        np.testing.assert_allclose(man.estimations[("sequence", name)], theirs(stats), rtol=0, atol=1e-6,
                                   err_msg=name)


def test_a_bare_nli_name_without_the_nli_calculator_names_the_missing_statistic():
    from assay.uncertainty import UEManager
    from assay.uncertainty.graph import StatDependencyError

    data = [{"sample_texts": ["a", "b"], "answer": "a", "correct": 1}, {"sample_texts": ["c", "c"], "answer": "c",
                                                                         "correct": 0}]
    with pytest.raises(StatDependencyError, match="semantic_matrix"):
        UEManager(data, estimators=["num_sem_sets"], gen_metrics=["accuracy"], ue_metrics=["prr"])()


@pytest.mark.parametrize("concat", [False, True])
def test_greedy_semantic_matrix_and_semantic_density_equal_lm_polygraphs(nli_dir, concat):
    from assay_transformers.nli import ConcatGreedySemanticMatrixCalculator, GreedySemanticMatrixCalculator

    rng = np.random.default_rng(6)
    texts = [[" ".join(rng.choice(WORDS, int(rng.integers(1, 4)))) for _ in range(5)] for _ in range(4)]
    texts[1][3] = texts[1][0]
    tokens = [[list(range(len(t.split()))) for t in row] for row in texts]
    deps = {"sample_texts": texts, "greedy_texts": [row[0] for row in texts], "sample_tokens": tokens,
            "no_fewshot_input_texts": ["what is ", "the capital ", "a ", "who is "],
            "sample_log_probs": rng.normal(-2, 1, (4, 5)),
            "greedy_log_likelihoods": [np.log(rng.uniform(0.1, 1, n)) for n in (1, 2, 3, 2)]}
    ours_cls = ConcatGreedySemanticMatrixCalculator if concat else GreedySemanticMatrixCalculator
    module = lm_polygraph_module("stat_calculators.greedy_semantic_matrix")
    theirs_cls = module.ConcatGreedySemanticMatrixCalculator if concat else module.GreedySemanticMatrixCalculator
    ours = ours_cls(nli_dir, batch_size=2, device="cpu")(deps)
    theirs = theirs_cls(_lp_nli_model(nli_dir, 2))(deps, [], None)
    assert set(ours) == set(theirs) and len(ours) == 9
    for key in theirs:
        np.testing.assert_allclose(np.stack(ours[key]), theirs[key], rtol=0, atol=1e-6, err_msg=key)
    want = lp("semantic_density", "SemanticDensity")(concat_input=concat)({**deps, **theirs})
    np.testing.assert_allclose(load_estimator("semantic_density", concat_input=concat)({**deps, **ours}), want,
                               rtol=0, atol=1e-6)


# --------------------------------------------------------------------------- CCP's statistics
def test_greedy_alternatives_are_the_top_tokens_greedy_first():
    from assay_transformers.alternatives import GreedyAlternativesCalculator

    rng = np.random.default_rng(7)
    lp_rows = [np.log(rng.dirichlet(np.ones(12), size=n)) for n in (3, 1, 0)]
    tokens = [[int(np.argmax(r)) if t != 1 else int(np.argsort(r)[-3]) for t, r in enumerate(rows)] for rows in lp_rows]
    out = GreedyAlternativesCalculator(n_alternatives=4)({"greedy_log_probs": lp_rows, "greedy_tokens": tokens})
    for rows, toks, alts in zip(lp_rows, tokens, out["greedy_tokens_alternatives"]):
        assert len(alts) == len(rows)
        for row, tok, a in zip(rows, toks, alts):
            top4 = set(np.argsort(row)[-4:].tolist())  # by a sort, independently of argpartition
            assert {t for t, _ in a} == top4 and all(v == row[t] for t, v in a)
            if tok in top4:
                assert a[0][0] == tok


def test_greedy_alternatives_nli_and_ccp_equal_lm_polygraphs(nli_dir, tiny_tokenizer):
    from assay_transformers.alternatives import GreedyAlternativesCalculator, GreedyAlternativesNLICalculator

    tok = tiny_tokenizer()
    rng = np.random.default_rng(8)
    ids = [tok.convert_tokens_to_ids(w) for w in WORDS]
    log_probs, tokens = [], []
    for n in (4, 2, 3):
        rows = np.full((n, len(tok)), -30.0)
        for r in rows:
            r[ids] = np.log(rng.dirichlet(np.ones(len(ids))))
        log_probs.append(rows)
        tokens.append([int(ids[np.argmax(r[ids])]) for r in rows])
    deps = {"greedy_log_probs": log_probs, "greedy_tokens": tokens}
    deps.update(GreedyAlternativesCalculator(n_alternatives=4)(deps))
    ours = GreedyAlternativesNLICalculator(nli_dir, tok, batch_size=3, device="cpu")(deps)
    theirs = lm_polygraph_module("stat_calculators.greedy_alternatives_nli").GreedyAlternativesNLICalculator(
        _lp_nli_model(nli_dir, 3))(deps, [], _lp_model(tok))
    assert ours["greedy_tokens_alternatives_nli"] == theirs["greedy_tokens_alternatives_nli"]
    classes = {c for ex in ours["greedy_tokens_alternatives_nli"] for m in ex for row in m for c in row if c}
    assert len(classes) > 1
    deps.update(ours)
    np.testing.assert_allclose(load_estimator("ClaimConditionedProbability")(deps),
                               lp("claim_conditioned_probability", "ClaimConditionedProbability")()(deps),
                               rtol=0, atol=1e-6)


# --------------------------------------------------------------------------- SemanticEntropyToken
def test_semantic_entropy_token_equals_lm_polygraphs(model_dirs, tiny_tokenizer, tmp_path):
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(9)
    tok = tiny_tokenizer()
    bert = tmp_path / "bert"
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16, max_position_embeddings=16, initializer_range=2.0)).save_pretrained(bert)
    tok.save_pretrained(bert)
    lm = model_dirs["causal"]
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    ours = load_estimator("SemanticEntropyToken", tokenizer_path=str(lm), tokenizer_save_path=str(tmp_path / "ours"),
                          semantic_bert_path=str(bert), batch_size=4)
    theirs = lp("semantic_entropy_token", "SemanticEntropyToken")(
        tokenizer_path=str(lm), tokenizer_save_path=str(tmp_path / "theirs"), semantic_bert_path=str(bert),
        batch_size=4)
    np.testing.assert_array_equal(ours.classes(), theirs.classes)
    assert 1 < len(set(theirs.classes.tolist())) < len(theirs.classes)
    rng = np.random.default_rng(10)
    v = len(tok)
    stats = {"greedy_log_probs": [np.log(rng.dirichlet(np.ones(v), size=n)) for n in (4, 1, 6)]}
    got, want = ours(stats), theirs(stats)
    assert [len(g) for g in got] == [3, 0, 5]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-6)
    # the cache: LM-Polygraph's file name, and a cached file is read back rather than recomputed
    files = sorted(p.name for p in (tmp_path / "ours").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "theirs").iterdir()) and len(files) == 1
    np.save(tmp_path / "ours" / files[0], np.arange(v) % 2)
    cached = load_estimator("semantic_entropy_token", tokenizer_path=str(lm),
                            tokenizer_save_path=str(tmp_path / "ours"), semantic_bert_path=str(bert))
    np.testing.assert_array_equal(cached.classes(), np.arange(v) % 2)


# --------------------------------------------------------------------------- a model run, batch sizes
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::assay.errors.UndefinedMetricWarning")
def test_a_model_run_gives_lm_polygraphs_values_for_any_batch_size(model_dirs, nli_dir, cross_encoder_dir):
    from assay.uncertainty import UEManager

    qa = [("the capital of france is", "paris"), ("what", "small"), ("who is the big red river", "two"),
          ("yes no", "no"), ("a small blue", "red")]
    records = [{"input": q, "reference": a} for q, a in qa]
    lm = model_dirs["causal"]
    estimators = ["semantic_entropy", "num_sem_sets", "luq", "sar", "token_sar", "sentence_sar", "cocoa_msp",
                  "cocoa_mte", "claim_conditioned_probability", "semantic_density[concat_input=false]"]
    calcs = [f"semantic_matrix[nli_model={nli_dir}, device=cpu]",
             f"greedy_semantic_matrix[nli_model={nli_dir}, device=cpu]",
             f"greedy_alternatives_nli[nli_model={nli_dir}, tokenizer={lm}, device=cpu]",
             f"cross_encoder_similarity[cross_encoder={cross_encoder_dir}, tokenizer={lm}, device=cpu]",
             f"greedy_cross_encoder_similarity[cross_encoder={cross_encoder_dir}, device=cpu]"]
    keep = ["sample_texts", "sample_log_probs", "sample_tokens", "semantic_classes_entail", "semantic_matrix_entail",
            "semantic_matrix_contra", "semantic_matrix_entail_logits", "semantic_matrix_contra_logits",
            "sample_sentence_similarity", "sample_token_similarity", "token_similarity", "greedy_log_likelihoods",
            "greedy_sentence_similarity", "entropy", "greedy_tokens", "greedy_tokens_alternatives",
            "greedy_tokens_alternatives_nli", "greedy_semantic_matrix_contra_forward",
            "greedy_semantic_matrix_neutral_forward"]
    runs = []
    for batch_size in (1, 3):
        man = UEManager(records, model=str(lm), model_options={"device": "cpu"}, estimators=estimators,
                        stat_calculators=calcs, gen_metrics=["accuracy"], ue_metrics=["prr"], batch_size=batch_size,
                        max_new_tokens=4, samples_n=3, seed=3, save_stats=keep)
        man()
        runs.append(man)
    # the greedy pass of a padded batch differs from a batch of one by float32 rounding (~1e-7): 1e-6
    assert runs[0].stats["answer"] == runs[1].stats["answer"]
    assert runs[0].stats["sample_texts"] == runs[1].stats["sample_texts"]
    for name in estimators:
        np.testing.assert_allclose(runs[0].estimations[("sequence", name)], runs[1].estimations[("sequence", name)],
                                   rtol=0, atol=1e-6, err_msg=name)
    # LM-Polygraph's classes on the run's statistics, in LM-Polygraph's layout
    st = dict(runs[1].stats)
    lp_stats = {k: st[k] for k in keep}
    lp_stats["sample_log_likelihoods"] = [list(map(np.asarray, s)) for s in st["sample_log_probs"]]
    lp_stats["sample_log_probs"] = [np.array([np.sum(t) for t in s]) for s in st["sample_log_probs"]]
    for key in ("semantic_matrix_entail", "semantic_matrix_contra", "semantic_matrix_entail_logits",
                "semantic_matrix_contra_logits", "sample_sentence_similarity"):
        lp_stats[key] = np.stack(st[key])
    lp_stats["semantic_classes_entail"] = {
        "sample_to_class": {i: dict(enumerate(map(int, c))) for i, c in enumerate(st["semantic_classes_entail"])},
        "class_to_sample": {i: [list(np.flatnonzero(np.asarray(c) == k)) for k in range(max(c) + 1)]
                            for i, c in enumerate(st["semantic_classes_entail"])}}
    for name, theirs in [("semantic_entropy", lp("semantic_entropy", "SemanticEntropy")()),
                         ("num_sem_sets", lp("num_sem_sets", "NumSemSets")()), ("luq", lp("luq", "LUQ")()),
                         ("sar", lp("sar", "SAR")()), ("token_sar", lp("token_sar", "TokenSAR")()),
                         ("sentence_sar", lp("sentence_sar", "SentenceSAR")()),
                         ("cocoa_msp", lp("cocoa", "CocoaMSP")()), ("cocoa_mte", lp("cocoa", "CocoaMTE")()),
                         ("claim_conditioned_probability",
                          lp("claim_conditioned_probability", "ClaimConditionedProbability")()),
                         ("semantic_density[concat_input=false]",
                          lp("semantic_density", "SemanticDensity")(concat_input=False))]:
        np.testing.assert_allclose(runs[1].estimations[("sequence", name)], theirs(lp_stats), rtol=0, atol=1e-6,
                                   err_msg=name)


def test_examples_with_different_sample_counts_equal_lm_polygraph_one_example_at_a_time():
    # assay's columns may hold a different K per example (LM-Polygraph's (B, K, K) arrays cannot): the per-example
    # path gives LM-Polygraph's value on each example alone
    rng = np.random.default_rng(11)
    ks = [2, 5, 3, 1, 4]
    ex = []
    for k in ks:
        p = rng.dirichlet(np.full(3, 0.7), size=(k, k))
        ex.append({"sample_texts": [str(j % 2) for j in range(k)], "semantic_matrix_entail": p[..., 2],
                   "semantic_matrix_contra": p[..., 0], "semantic_matrix_entail_logits": rng.normal(0, 2, (k, k)),
                   "semantic_matrix_contra_logits": rng.normal(0, 2, (k, k)),
                   "sample_log_probs": rng.normal(-2, 1, k), "sample_sentence_similarity": rng.uniform(0, 1, (k, k)),
                   "greedy_sentence_similarity": rng.uniform(0, 1, k),
                   "greedy_log_likelihoods": np.log(rng.uniform(0.1, 1, 3)), "entropy": rng.uniform(0, 2, 3)})
    ragged = {key: [e[key] for e in ex] for key in ex[0]}
    for name, module, cls in [("num_sem_sets", "num_sem_sets", "NumSemSets"), ("deg_mat", "deg_mat", "DegMat"),
                              ("eccentricity", "eccentricity", "Eccentricity"),
                              ("semantic_eigval_laplacian", "eig_val_laplacian", "EigValLaplacian"),
                              ("kernel_language_entropy", "kernel_language_entropy", "KernelLanguageEntropy"),
                              ("luq", "luq", "LUQ"), ("sentence_sar", "sentence_sar", "SentenceSAR"),
                              ("cocoa_msp", "cocoa", "CocoaMSP"), ("cocoa_ppl", "cocoa", "CocoaPPL"),
                              ("cocoa_mte", "cocoa", "CocoaMTE")]:
        theirs = lp(module, cls)()
        with np.errstate(all="ignore"), warnings.catch_warnings():  # one sample: LUQ and scaled KLE divide by 0
            warnings.simplefilter("ignore", RuntimeWarning)
            want = [float(theirs({key: (np.asarray(v)[None] if key != "sample_texts" else [v])
                                  for key, v in e.items()})[0]) for e in ex]
            got = load_estimator(name)(ragged)
        if name == "kernel_language_entropy":  # one sample, scaled: LM-Polygraph divides by log 1 = 0 (inf); assay NaN
            assert np.isinf(want[3]) and np.isnan(got[3])
            got, want = np.delete(got, 3), np.delete(want, 3)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6, err_msg=name)
