"""The ``align_score`` generation metric equals the AlignScore reference and LM-Polygraph 0.7.0's class (issue 28,
item 4), on a tiny random RoBERTa AlignScore model built here (nothing downloaded).

The reference is ``alignscore-speedofmagic`` 0.1.4 (a PyPI repackaging of yuh-zha/AlignScore,
installed ``--no-deps`` by make setup), run live: its ``Inferencer`` loads the model from a
Lightning checkpoint (``torch.load``; the file is written by this test, never a user's) on
a RoBERTa folder named ``roberta-...`` (its model class picks the architecture by name).
assay reads the same weights from a safetensors folder. Two things the reference would
fetch are replaced in the test only, and said so here:

- ``spacy.load("en_core_web_sm")`` in ``Inferencer.__init__`` (a downloaded pipeline, used
  only by its SMART modes, not by ``nli_sp``) returns None;
- NLTK's ``sent_tokenize`` (Punkt data, downloaded) is replaced by assay's splitter
  (:func:`assay_transformers.alignscore.split_sentences`), so both split the same way and
  the comparison is of everything else: chunking, pair encoding, the head, aggregation.
"""

from __future__ import annotations

import importlib
import pickle

import numpy as np
import pytest

from assay.errors import InvalidParameterError
from assay_transformers.alignscore import AlignScoreMetric, context_chunks, split_sentences

LONG = " ".join(["The river is long and the city is big."] * 90)  # 810 words: three chunks of 30 sentences
ANSWERS = ["Paris is the capital of France. It is a big city!", "The cat sat on the mat.", "", LONG,
           "Blue sky. Red sun? Green grass.", "forty two"]
REFS = ["The capital of France is Paris.", "A dog ran. The cat sat.", "nothing here", "The river is long.",
        "", "The answer is 42. It was small."]


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-to-character table (byte-level BPE), for a character-level RoBERTa vocabulary."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """(reference RoBERTa folder, reference checkpoint, assay safetensors folder) of one random AlignScore model."""
    import torch
    from safetensors.torch import save_file
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizer

    root = tmp_path_factory.mktemp("alignscore")
    ref_folder, ours = root / "roberta-tiny", root / "assay-alignscore"
    ref_folder.mkdir()
    ours.mkdir()
    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", "<mask>",
                                         *sorted(set(_bytes_to_unicode().values()))])}
    tok = RobertaTokenizer(vocab=vocab, merges=[], model_max_length=96)  # one token a character
    assert tok("ab. c", "d")["input_ids"] == [0, *(vocab[c] for c in "ab.Ġc"), 2, 2, vocab["d"], 2]
    config = RobertaConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, max_position_embeddings=98, pad_token_id=1, bos_token_id=0,
                           eos_token_id=2, type_vocab_size=1, initializer_range=0.2)
    torch.manual_seed(20261128)
    RobertaModel(config).save_pretrained(str(ref_folder))
    tok.save_pretrained(str(ref_folder))

    align_model = importlib.import_module("alignscore.model")
    model = align_model.BERTAlignModel(model=str(ref_folder), using_pretrained=True)
    with torch.no_grad():  # a head far from uniform, so the max and mean matter
        model.tri_layer.weight.mul_(3.0)
        model.tri_layer.bias.copy_(torch.tensor([-2.0, 0.5, 0.5]))
    state = model.state_dict()
    ckpt = root / "align.ckpt"
    torch.save({"state_dict": state, "pytorch-lightning_version": "2.6.6", "hyper_parameters": {}}, str(ckpt))

    save_file({k: v.detach().clone().contiguous() for k, v in state.items()
               if k.startswith("base_model.") or k.startswith("tri_layer.")}, str(ours / "model.safetensors"))
    config.save_pretrained(str(ours))
    tok.save_pretrained(str(ours))
    return ref_folder, ckpt, ours


@pytest.fixture(scope="module")
def reference(folders):
    """The reference scorer (``alignscore.AlignScore``, nli_sp) on the same weights, spaCy and NLTK replaced."""
    inference = importlib.import_module("alignscore.inference")
    ref_folder, ckpt, _ = folders
    mp = pytest.MonkeyPatch()
    mp.setattr(inference.spacy, "load", lambda name: None)
    mp.setattr(inference, "sent_tokenize", split_sentences)
    from alignscore import AlignScore

    scorer = AlignScore(model=str(ref_folder), batch_size=4, device="cpu", ckpt_path=str(ckpt),
                        evaluation_mode="nli_sp", verbose=False)
    yield scorer
    mp.undo()


def test_split_and_chunks_by_hand():
    assert split_sentences("A b. C d! E? \"F.\" G") == ["A b.", "C d!", "E?", "\"F.\"", "G"]
    assert split_sentences("3.14 is pi") == ["3.14 is pi"]
    assert split_sentences("  ") == []
    # 810 words -> 3 chunks wanted; 90 sentences // 3 = 30 sentences a chunk
    chunks = context_chunks(LONG)
    assert len(chunks) == 3 and all(c.count(".") == 30 for c in chunks)
    assert context_chunks("") == [""]
    assert context_chunks("One. Two. Three.") == ["One. Two. Three."]


def test_equal_to_reference_inferencer(folders, reference):
    _, _, ours = folders
    contexts = [a if a.strip() else "(empty)" for a in ANSWERS]
    claims = [r if r.strip() else "(empty)" for r in REFS]
    expected = np.asarray(reference.score(contexts=contexts, claims=claims), dtype=np.float64)
    for batch_size in (1, 3, 16):
        got = AlignScoreMetric(model=ours, batch_size=batch_size, device="cpu").score(contexts, claims)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert np.ptp(expected) > 0.05  # the texts give different values: the comparison is not of constants


def test_a_claim_longer_than_the_model_cuts_both_texts_as_the_reference(folders, reference):
    # 150 characters, one token each in the test's tokenizer (96 at most): truncating the context alone cannot fit
    # it, so both texts are cut (``longest_first``); the reference does the same for the mini-batch holding the pair
    _, _, ours = folders
    contexts = ["The cat sat on the mat and the dog ran.", LONG]
    claims = ["A " + "very " * 29 + "long claim.", "Short claim."]
    expected = np.asarray(reference.score(contexts=contexts, claims=claims), dtype=np.float64)
    got = AlignScoreMetric(model=ours, device="cpu").score(contexts, claims)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("options", [{}, {"target_is_claims": False},
                                     {"source_as_target": True, "source_ignore_regex": r"Q: (.*)$"}])
def test_equal_to_lm_polygraph_class(folders, reference, options, lpm):
    _, _, ours = folders
    cls = lpm("generation_metrics.alignscore").AlignScore
    theirs = object.__new__(cls)  # its __init__ downloads roberta-large and the checkpoint: give it the same scorer
    theirs.target_is_claims = options.get("target_is_claims", True)
    theirs.batch_size = 4
    theirs.scorer = reference
    theirs.source_as_target = options.get("source_as_target", False)
    theirs.source_ignore_regex = None
    if "source_ignore_regex" in options:
        import re

        theirs.source_ignore_regex = re.compile(options["source_ignore_regex"])
    # an empty input text: LM-Polygraph passes "" to the scorer (which fails); assay scores "(empty)", as for answers
    stats = {"greedy_texts": ANSWERS, "input_texts": [f"Q: {r or 'What is it?'}" for r in REFS]}
    expected = theirs(stats, REFS)
    got = AlignScoreMetric(model=ours, device="cpu", **options)(stats, REFS)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def test_the_manager_runs_it_under_both_names_and_several_references(folders):
    from assay_uncertainty.manager import UEManager

    _, _, ours = folders
    records = [{"answer": a, "reference": r, "log_probs": [-0.2 * (i + 1)]}
               for i, (a, r) in enumerate(zip(ANSWERS, REFS))]
    specs = [f"align_score[model='{ours}', device=cpu]", f"AlignScore[model='{ours}', device=cpu, batch_size=2]"]
    man = UEManager(records, estimators=["msp"], gen_metrics=specs, ue_metrics=["prr"])
    man()
    direct = AlignScoreMetric(model=ours, device="cpu")({"greedy_texts": ANSWERS}, REFS)
    for spec in specs:
        np.testing.assert_allclose(man.gen_metrics[("sequence", spec)], direct, rtol=0, atol=1e-6)
    metric = AlignScoreMetric(model=ours, device="cpu")
    single = [metric({"greedy_texts": [ANSWERS[0]]}, [r])[0] for r in REFS[:3]]
    assert metric({"greedy_texts": [ANSWERS[0]]}, [REFS[:3]])[0] == pytest.approx(max(single), abs=1e-12)
    clone = pickle.loads(pickle.dumps(metric))
    assert clone._loaded is None
    np.testing.assert_allclose(clone({"greedy_texts": ANSWERS}, REFS), metric({"greedy_texts": ANSWERS}, REFS),
                               atol=1e-12)


def test_options_rejected_clearly(tmp_path):
    with pytest.raises(InvalidParameterError, match="ckpt_path.*never loads"):
        AlignScoreMetric(ckpt_path="AlignScore-large.ckpt")
    with pytest.raises(InvalidParameterError, match="local model folder"):
        AlignScoreMetric(model=tmp_path / "missing")
    with pytest.raises(InvalidParameterError, match="lang"):
        AlignScoreMetric(lang="de")
    with pytest.raises(InvalidParameterError, match="only with source_as_target"):
        AlignScoreMetric(source_ignore_regex=r"(.*)")
    with pytest.raises(InvalidParameterError, match="must have a group"):
        AlignScoreMetric(source_as_target=True, source_ignore_regex=r".*")
    with pytest.raises(InvalidParameterError, match="needs a local model folder"):
        AlignScoreMetric()({"greedy_texts": ["a."]}, ["b."])
    with pytest.raises(InvalidParameterError, match="no model.safetensors"):
        AlignScoreMetric(model=tmp_path)({"greedy_texts": ["a."]}, ["b."])


def test_source_regex_mismatch_names_the_input(folders):
    _, _, ours = folders
    metric = AlignScoreMetric(model=ours, source_as_target=True, source_ignore_regex=r"Q: (.*)$", device="cpu")
    with pytest.raises(InvalidParameterError, match="does not match source_ignore_regex"):
        metric({"greedy_texts": ["a."], "input_texts": ["no prefix"]})
