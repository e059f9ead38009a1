"""unitxt's catalog entries that run a Hugging Face model, on local model folders, against unitxt 1.26.10 live.

unitxt's entries name Hub models (``microsoft/deberta-xlarge-mnli``) that it downloads; assay reads
a local folder (``[model=FOLDER]`` or ``$ASSAY_HF_MODELS_PATH/<Hub id>``). The folders here hold
tiny models with seeded random weights, built in the test (configs saved with ``save_pretrained``,
tokenizers built from a word list), saved under the Hub ids of the entries. unitxt's own metric
class is pointed at the same folder (``model_name=<folder>``, which its ``from_pretrained`` calls
read) and run with ``unitxt.test_utils.metrics.apply_metric``; ``assay.evaluate(metrics=[name])``
must report the same score names, main score and intervals, and the same instance and global
values to a relative 1e-6. Every test runs with sockets blocked.
"""

from __future__ import annotations

import math
import os

import pytest

import assay
from assay.errors import InvalidParameterError, MissingDependencyError
from assay_unitxt.catalog.models import ModelFolderNotFoundError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# slow: unitxt, torch and transformers take seconds to import
# no_network (conftest.py): every socket connection fails the test
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_network")]

WORDS = ["the", "a", "capital", "of", "france", "paris", "is", "cat", "sat", "on", "mat", "dog", "ran", "blue", "sky",
         "red", "answer", "forty", "two", "42", "it", "was", "big", "small", "in", "park", "birds", "sing", "trees"]
PREDICTIONS = ["the cat sat on the mat", "a dog ran", "birds sing in trees", "paris", "it was big"]
REFERENCES = [["a cat sat on a mat"], ["the dog ran in the park", "dogs ran"], ["birds sing"],
              ["paris is the capital of france"], ["it was small", "big", "red sky"]]


def _tokenizer(folder, **kwargs):
    from transformers import BertTokenizerFast

    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    return BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True, **kwargs)


def build_encoder(folder, layers, seed, kind="deberta"):
    """A tiny random encoder (``kind``: deberta, deberta-v2, bert, distilbert) with ``layers`` layers. A
    DeBERTa tokenizer's model_max_length is left unset (transformers' huge default), as DeBERTa's is, so
    the cap to max_position_embeddings runs."""
    import torch
    import transformers

    folder.mkdir(parents=True)
    tok = _tokenizer(folder, **({} if kind.startswith("deberta") else {"model_max_length": 64}))
    torch.manual_seed(seed)
    if kind == "distilbert":
        model = transformers.DistilBertModel(transformers.DistilBertConfig(
            vocab_size=len(tok), dim=16, hidden_dim=32, n_layers=layers, n_heads=2, max_position_embeddings=64,
            initializer_range=0.5))
    else:
        config, cls = {"deberta": ("DebertaConfig", "DebertaModel"), "bert": ("BertConfig", "BertModel"),
                       "deberta-v2": ("DebertaV2Config", "DebertaV2Model")}[kind]
        model = getattr(transformers, cls)(getattr(transformers, config)(
            vocab_size=len(tok), hidden_size=16, num_hidden_layers=layers, num_attention_heads=2, intermediate_size=32,
            max_position_embeddings=64, initializer_range=0.5))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def build_sentence_transformer(folder, seed):
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel

    bert = folder.parent / (folder.name + "-bert")
    bert.mkdir(parents=True)
    tok = _tokenizer(bert, model_max_length=64)
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64, initializer_range=0.5)).save_pretrained(bert)
    tok.save_pretrained(bert)
    word = Transformer(str(bert), max_seq_length=64)
    pool = Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[word, pool], device="cpu").save(str(folder))
    return folder


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """A folder of model folders under the Hub ids of unitxt's entries (ASSAY_HF_MODELS_PATH's layout)."""
    root = tmp_path_factory.mktemp("hf-models")
    for seed, (_, hub_id, layers, kind) in enumerate(BERT_SCORE):  # as many layers as the entry uses
        build_encoder(root / hub_id, layers, seed, kind)
    build_encoder(root / "two-layers", 2, seed=10)
    for seed, hub_id in enumerate(["sentence-transformers/all-MiniLM-L12-v2", "BAAI/bge-large-en-v1.5",
                                   "sentence-transformers/all-mpnet-base-v2"]):
        build_sentence_transformer(root / hub_id, seed=20 + seed)
    return root


@pytest.fixture
def models_path(hub, monkeypatch):
    monkeypatch.setenv("ASSAY_HF_MODELS_PATH", str(hub))
    return hub


def _numbers(d):
    return {k: v for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def unitxt_run(metric, predictions, references):
    from unitxt.test_utils.metrics import apply_metric

    out = apply_metric(metric, predictions, references)
    return [o["score"]["instance"] for o in out], out[0]["score"]["global"]


def compare(name, unitxt_metric, predictions=PREDICTIONS, references=REFERENCES, *, atol=1e-6):
    """assay's ``name`` against ``unitxt_metric`` (unitxt's class on the same folder): names and values to atol."""
    u_inst, u_glob = unitxt_run(unitxt_metric, predictions, references)
    res = assay.evaluate(predictions, references, metrics=[name], n_resamples=100, seed=0)
    a_inst, a_glob = [r["score"]["instance"] for r in res], res.global_scores
    assert a_glob["score_name"] == u_glob["score_name"]
    u_ci, a_ci = {k for k in u_glob if "_ci_" in k}, {k for k in a_glob if "_ci_" in k}
    assert a_ci == u_ci, f"interval names: assay {sorted(a_ci)}, unitxt {sorted(u_ci)}"
    u_vals = {k: v for k, v in _numbers(u_glob).items() if "_ci_" not in k}
    a_vals = {k: v for k, v in _numbers(a_glob).items() if "_ci_" not in k}
    assert set(a_vals) == set(u_vals), f"global scores: assay {sorted(a_vals)}, unitxt {sorted(u_vals)}"
    for k, v in u_vals.items():
        assert a_vals[k] == pytest.approx(v, rel=atol, abs=1e-9), f"{name} global {k}: unitxt {v}, assay {a_vals[k]}"
    for k in a_ci:
        if k.endswith("_ci_low"):
            base = k[: -len("_ci_low")]
            assert a_glob[k] <= a_glob[base] + 1e-12 <= a_glob[base + "_ci_high"] + 2e-12, k
    for i, (u, a) in enumerate(zip(u_inst, a_inst)):
        assert a["score_name"] == u["score_name"]
        u_i, a_i = _numbers(u), _numbers(a)
        assert set(a_i) == set(u_i), f"instance {i}: assay {sorted(a_i)}, unitxt {sorted(u_i)}"
        for k, v in u_i.items():
            assert a_i[k] == pytest.approx(v, rel=atol, abs=1e-9), f"{name} [{i}] {k}: unitxt {v}, assay {a_i[k]}"
    return u_inst, a_glob


# ----------------------------------------------------------------------------------------------- BERTScore
#: entry, Hub id, the layer unitxt's BertScore uses, the kind of tiny model built under the Hub id
BERT_SCORE = [
    ("metrics.bert_score.deberta_xlarge_mnli", "microsoft/deberta-xlarge-mnli", 40, "deberta"),
    ("metrics.bert_score.deberta_large_mnli", "microsoft/deberta-large-mnli", 18, "deberta"),
    ("metrics.bert_score.deberta_base_mnli", "microsoft/deberta-base-mnli", 9, "deberta"),
    ("metrics.bert_score.deberta_v3_base_mnli_xnli_ml", "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli", 10, "deberta-v2"),
    ("metrics.bert_score.bert_base_uncased", "bert-base-uncased", 9, "bert"),
    ("metrics.bert_score.distilbert_base_uncased", "distilbert-base-uncased", 5, "distilbert"),
]


def _unitxt_bert_score(folder, layer):
    from unitxt.metrics import BertScore

    return BertScore(model_name=str(folder), model_layer=layer, __tags__={})


@pytest.mark.parametrize("entry, hub_id, layer, kind", BERT_SCORE)
def test_bert_score_entry_matches_unitxt_on_the_folder_of_its_hub_id(models_path, entry, hub_id, layer, kind):
    from bert_score.utils import model2layers
    from unitxt.artifact import fetch_artifact

    # the layer unitxt's BertScore uses: the entry's model_layer, else bert-score's layer for the Hub id
    assert (fetch_artifact(entry)[0].model_layer or model2layers[hub_id]) == layer
    u_inst, glob = compare(entry, _unitxt_bert_score(models_path / hub_id, layer))
    assert len({round(u["f1"], 4) for u in u_inst}) > 3  # the tiny model separates the pairs
    assert glob["score_name"] == "f1"


def test_bert_score_model_option_and_model_layer(hub, monkeypatch):
    monkeypatch.delenv("ASSAY_HF_MODELS_PATH", raising=False)
    folder = hub / "microsoft" / "deberta-xlarge-mnli"
    # the entry's own model_layer (10), on a folder given as an option
    compare(f"metrics.bert_score.deberta_v3_base_mnli_xnli_ml[model={folder}]", _unitxt_bert_score(folder, 10))
    compare(f"metrics.bert_score.deberta_base_mnli[model={folder}, model_layer=3]", _unitxt_bert_score(folder, 3))


def test_a_missing_folder_names_the_entry_and_the_hub_id(hub, monkeypatch):
    monkeypatch.delenv("ASSAY_HF_MODELS_PATH", raising=False)
    metric = assay.load_metric("metrics.bert_score.deberta_xlarge_mnli")  # built; the folder is needed to score
    with pytest.raises(ModelFolderNotFoundError, match=r"metrics\.bert_score\.deberta_xlarge_mnli needs the Hugging "
                       r"Face model 'microsoft/deberta-xlarge-mnli'.*ASSAY_HF_MODELS_PATH is not set"):
        metric.update(["a cat"], [["a cat"]]).compute_scores()
    assert issubclass(ModelFolderNotFoundError, MissingDependencyError)  # assay check-plugin skips, as for a package
    monkeypatch.setenv("ASSAY_HF_MODELS_PATH", str(hub / "microsoft"))  # one level too high: not found
    with pytest.raises(ModelFolderNotFoundError, match=r"was searched: .*microsoft/microsoft/deberta-xlarge-mnli"):
        assay.evaluate(["a cat"], [["a cat"]], metrics=["metrics.bert_score.deberta_xlarge_mnli"], n_resamples=0)
    with pytest.raises(InvalidParameterError, match=r"deberta_large_mnli: the 'model' option must be a local folder "
                                                    r"holding the model 'microsoft/deberta-large-mnli'"):
        assay.load_metric(f"metrics.bert_score.deberta_large_mnli[model={hub / 'nowhere'}]")


def test_a_folder_with_too_few_layers_is_an_error(hub):
    with pytest.raises(InvalidParameterError, match=r"uses layer 40 of 'microsoft/deberta-xlarge-mnli'.*has 2 layers"):
        assay.evaluate(["a cat"], [["a cat"]], n_resamples=0,
                       metrics=[f"metrics.bert_score.deberta_xlarge_mnli[model={hub / 'two-layers'}]"])


def test_bert_score_with_score_prefix_and_an_empty_reference_list(models_path):
    res = assay.evaluate(PREDICTIONS[:2], REFERENCES[:2], n_resamples=0,
                         metrics=["metrics.bert_score.deberta_large_mnli[score_prefix=my_]"])
    assert res.global_scores["score_name"] == "my_f1"
    assert set(res.global_scores) >= {"my_f1", "my_precision", "my_recall"}
    with pytest.raises(InvalidParameterError, match=r"references\[1\] is empty"):
        assay.evaluate(["a", "b"], [["a"], []], metrics=["metrics.bert_score.deberta_large_mnli"], n_resamples=0)
    assert math.isfinite(res.global_scores["my_f1"])


# ----------------------------------------------------------------------------------------------- sentence-BERT
@pytest.mark.parametrize("entry, hub_id", [
    ("metrics.sentence_bert.minilm_l12_v2", "sentence-transformers/all-MiniLM-L12-v2"),
    ("metrics.sentence_bert.bge_large_en_1_5", "BAAI/bge-large-en-v1.5"),
    ("metrics.sentence_bert.mpnet_base_v2", "sentence-transformers/all-mpnet-base-v2"),
    ("metrics.qa.open.recommended_local_gpu", "BAAI/bge-large-en-v1.5"),  # a metrics_list of bge_large_en_1_5
])
def test_sentence_bert_entry_matches_unitxt(models_path, entry, hub_id):
    from unitxt.metrics import SentenceBert

    u_inst, glob = compare(entry, SentenceBert(model_name=str(models_path / hub_id), __tags__={}))
    assert len({round(u["sbert_score"], 4) for u in u_inst}) > 3
    assert glob["score_name"] == "sbert_score"


def test_sentence_bert_missing_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("ASSAY_HF_MODELS_PATH", str(tmp_path))
    with pytest.raises(ModelFolderNotFoundError, match=r"metrics\.sentence_bert\.mpnet_base_v2 needs the Hugging Face "
                                                    r"model 'sentence-transformers/all-mpnet-base-v2'.*was searched"):
        assay.evaluate(["a"], [["a"]], metrics=["metrics.sentence_bert.mpnet_base_v2"], n_resamples=0)


# ----------------------------------------------------------------------------------------------- reward model
def build_classifier(folder, num_labels, seed):
    """A tiny random BERT sequence classifier (one label: a reward model's shape)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    folder.mkdir(parents=True)
    tok = _tokenizer(folder, model_max_length=64)
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, num_labels=num_labels, initializer_range=0.5)
    BertForSequenceClassification(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def reward_folders(hub):
    return {"one": build_classifier(hub / "OpenAssistant" / "reward-model-deberta-v3-large-v2", 1, seed=5),
            "three": build_classifier(hub / "three-labels", 3, seed=6)}


def test_reward_entry_matches_unitxt(models_path, reward_folders):
    from unitxt.metrics import Reward

    folder = reward_folders["one"]
    u_inst, glob = compare("metrics.reward.deberta_v3_large_v2", Reward(model_name=str(folder), __tags__={}))
    assert len({round(u["reward_score"], 4) for u in u_inst}) > 3
    assert glob["score_name"] == "reward_score"
    # a classifier of three labels: the pipeline's softmax maximum, on a folder given as an option
    three = reward_folders["three"]
    compare(f"metrics.reward.deberta_v3_large_v2[model={three}]", Reward(model_name=str(three), __tags__={}))


# ----------------------------------------------------------------------------------------------- perplexity
PPL_WORDS = ["the", "a", "cat", "sat", "on", "mat", "dog", "ran", "park", "birds", "sing", "paris", "is", "capital",
             "of", "france", "it", "was", "big", "small", "red", "sky", "1", "premise:", "hypothesis:", "complete",
             "given", "content:", "generate", "question", "based"]


def _word_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", "<unk>", *PPL_WORDS])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.post_processor = processors.TemplateProcessing(single="$A <eos>", special_tokens=[("<eos>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def build_t5(folder, seed):
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    tok = _word_tokenizer()
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
                   eos_token_id=1, pad_token_id=0, decoder_start_token_id=0, initializer_factor=2.0)
    T5ForConditionalGeneration(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def build_gpt2(folder, seed):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    tok = _word_tokenizer()
    tok.pad_token = None  # unitxt's fallback: the end-of-sequence token pads
    cfg = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=2, n_head=2, bos_token_id=1,
                     eos_token_id=1, initializer_range=0.25)
    GPT2LMHeadModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def lm_folders(hub):
    return {"flan": build_t5(hub / "google" / "flan-t5-small", seed=7),
            "nli": build_t5(hub / "google" / "t5_xxl_true_nli_mixture", seed=8),
            "gpt2": build_gpt2(hub / "gpt2-tiny", seed=9)}


def _unitxt_perplexity(name, folder):
    from unitxt.artifact import fetch_artifact

    metric, _ = fetch_artifact(name)  # the entry's templates and options, pointed at the folder
    metric.model_name = str(folder)
    metric.lm = None
    return metric


@pytest.mark.parametrize("entry, key", [
    ("metrics.perplexity.flan_t5_small", "flan"),
    ("metrics.perplexity_q.flan_t5_small", "flan"),
    ("metrics.perplexity_a.flan_t5_small", "flan"),
    ("metrics.perplexity_chat.flan_t5_small", "flan"),
    ("metrics.perplexity_nli.t5_nli_mixture", "nli"),  # single_token_mode, target "1"
])
def test_perplexity_entry_matches_unitxt(models_path, lm_folders, entry, key):
    u_inst, glob = compare(entry, _unitxt_perplexity(entry, lm_folders[key]))
    assert glob["score_name"] == "perplexity"
    if key == "flan":
        assert len({round(u["perplexity"], 6) for u in u_inst}) > 3


def test_perplexity_on_a_decoder_only_model_and_small_batches(models_path, lm_folders):
    gpt2 = lm_folders["gpt2"]
    metric = _unitxt_perplexity("metrics.perplexity_q.flan_t5_small", gpt2)
    metric.batch_size = 2
    u_inst, _ = compare(f"metrics.perplexity_q.flan_t5_small[model={gpt2}, batch_size=2]", metric)
    assert len({round(u["perplexity"], 6) for u in u_inst}) > 3


def test_perplexity_template_fields_are_checked(models_path):
    with pytest.raises(InvalidParameterError, match=r"names \['question'\]"):
        assay.load_metric("metrics.perplexity.flan_t5_small", source_template="{question}")


# ----------------------------------------------------------------------------------------------- the tutorial
def test_the_tutorials_task_with_bert_score_runs_with_only_its_imports_changed(models_path, monkeypatch):
    import re

    import nltk
    from unitxt.artifact import fetch_artifact

    from assay_unitxt import Task  # was: from unitxt.blocks import Task

    # punkt_tab (metrics.rouge's sentence splitter) is not on disk: one splitter for unitxt and assay
    monkeypatch.setattr(nltk, "download", lambda *a, **k: True)
    monkeypatch.setattr(nltk, "sent_tokenize", lambda text, *a, **k: [s for s in re.split(r"(?<=[.!?])\s+", text) if s])

    # unitxt's docs/docs/adding_metric.rst, as written
    task = Task(
            input_fields={"question" : str},
            reference_fields={"answer" : str},
            prediction_type=str,
            metrics=[
                "metrics.rouge",
                "metrics.normalized_sacrebleu",
                "metrics.bert_score.deberta_xlarge_mnli",
                "metrics.bert_score.deberta_large_mnli"
            ],
    )

    data = [{"question": "what sat on the mat?", "answer": ref[0]} for ref in REFERENCES]
    # both BERTScore entries report f1, precision and recall: score_collisions="first" keeps the first's
    res = task.evaluate(PREDICTIONS, data, n_resamples=0, score_collisions="first")
    refs = [[d["answer"]] for d in data]
    expected = {}
    for name in ("metrics.rouge", "metrics.normalized_sacrebleu"):
        metric, _ = fetch_artifact(name)
        _, glob = unitxt_run(metric, PREDICTIONS, refs)
        expected.update({k: v for k, v in _numbers(glob).items() if k not in ("score", "num_of_instances")})
    u_inst, glob = unitxt_run(_unitxt_bert_score(models_path / "microsoft" / "deberta-xlarge-mnli", 40),
                              PREDICTIONS, refs)
    expected.update({k: glob[k] for k in ("f1", "precision", "recall")})
    for key, value in expected.items():
        if "_ci_" not in key:
            assert res.global_scores[key] == pytest.approx(value, rel=1e-9, abs=1e-6), key
    for i, u in enumerate(u_inst):
        assert res[i]["score"]["instance"]["f1"] == pytest.approx(u["f1"], abs=1e-6)
    assert res.global_scores["score_name"] == "rougeL"  # the first metric's main score, as in unitxt


# ----------------------------------------------------------------------------------------------- conformance
@pytest.mark.parametrize("entry", ["metrics.bert_score.deberta_large_mnli", "metrics.sentence_bert.minilm_l12_v2",
                                   "metrics.reward.deberta_v3_large_v2", "metrics.perplexity.flan_t5_small"])
def test_model_entries_keep_assays_invariances(models_path, reward_folders, lm_folders, entry):
    """assay check-plugin's checks, which it skips without the folders: order, chunking, shard-then-merge,
    one instance at a time, pickling (the model is loaded again), and evaluate equal to update / compute."""
    from assay.testing import check_evaluate_matches, check_invariances

    metric = assay.load_metric(entry)
    check_invariances(metric, PREDICTIONS, REFERENCES, atol=1e-6)
    check_evaluate_matches(metric, PREDICTIONS, REFERENCES, atol=1e-6)


def test_model_name_as_a_folder_is_unitxts_own_way(hub, monkeypatch):
    from unitxt.metrics import SentenceBert

    monkeypatch.delenv("ASSAY_HF_MODELS_PATH", raising=False)
    folder = hub / "sentence-transformers" / "all-mpnet-base-v2"
    compare(f"metrics.sentence_bert.mpnet_base_v2[model_name={folder}]",
            SentenceBert(model_name=str(folder), __tags__={}))


def test_without_assay_transformers_a_model_entry_says_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "assay_transformers", None)  # an import of it fails, as when not installed
    with pytest.raises(MissingDependencyError, match=r"assay-transformers.*assay-unitxt\[models\]"):
        assay.load_metric("metrics.bert_score.deberta_large_mnli")


def test_a_model_entry_saved_with_add_to_catalog_loads_back(tmp_path, hub):
    folder = hub / "microsoft" / "deberta-large-mnli"
    metric = assay.load_metric(f"metrics.bert_score.deberta_large_mnli[model={folder}, model_layer=3, score_prefix=x_]")
    assay.add_to_catalog(metric, "metrics.my_bert_score", catalog_path=str(tmp_path))
    back = assay.load_metric("metrics.my_bert_score")
    assert (back.model_name, back.model, back.model_layer, back.score_prefix) == (
        "microsoft/deberta-large-mnli", str(folder.resolve()), 3, "x_")
