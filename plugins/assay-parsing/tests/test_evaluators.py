"""UAS, LAS, CLAS and tagging accuracy on hand-derived sentences.

The counts for the conftest sample, derived by hand word by word:

sentence s1 (7 syntactic words; the range 3-4 'del' and empty node 5.1 do not count)

    word    gold head/rel  system head/rel  UAS LAS  gold content  system content  CLAS ok  UPOS
    Ella    2 nsubj        2 nsubj:pass     yes yes  yes           yes             yes      =
    vendió  0 root         0 root           yes yes  yes           yes             yes      =
    de      5 case         5 case           yes yes  no            no              -        =
    el      5 det          2 det            no  no   no            no              -        DET/PRON
    pan     2 obj          2 nmod           yes no   yes           yes             no       =
    ayer    2 obl:tmod     5 obl            no  no   yes           yes             no       =
    .       2 punct        2 punct          yes yes  no            no              -        =

    UAS 5/7, LAS 4/7, CLAS c=2 g=4 s=4 -> (4, 8), UPOS 6/7

sentence s2 (3 words): The 2 det -> 2 nmod:poss (content in system only), dog and barks right

    UAS 3/3, LAS 2/3, CLAS c=2 g=2 s=3 -> (4, 5), UPOS 3/3, XPOS 2/3 (DT/NN)

totals: UAS 8/10, LAS 6/10, CLAS (8, 13) = F1 of P 4/7 and R 4/6, UPOS 9/10.
"""

from __future__ import annotations

import pickle

import pytest

import assay
from assay.errors import InvalidParameterError
from assay.plugins import PluginSystem, use_plugin_system
from assay_parsing import (
    CLAS,
    LAS,
    UAS,
    ConlluFormat,
    SentencePair,
    TaggingAccuracy,
    TokenizationError,
    pair_sentences,
    plugin,
)


@pytest.fixture
def pairs(gold_text, system_text):
    gold = ConlluFormat().parse(gold_text, source="gold.conllu")
    system = ConlluFormat().parse(system_text, source="system.conllu")
    return pair_sentences(gold, system)


def tallies(evaluator, items):
    return [evaluator(item, None) for item in items]


def test_uas_las(pairs):
    assert tallies(UAS(), pairs) == [(5, 7), (3, 3)]
    assert tallies(LAS(), pairs) == [(4, 7), (2, 3)]


def test_las_with_subtypes_compares_whole_relations(pairs):
    # s1: Ella nsubj vs nsubj:pass now differs -> 3/7; s2 unchanged (The is wrong anyway)
    assert tallies(LAS(subtypes=True), pairs) == [(3, 7), (2, 3)]


def test_clas_is_an_additive_f1_tally(pairs):
    per_sentence = tallies(CLAS(), pairs)
    assert per_sentence == [(4, 8), (4, 5)]
    correct, total = map(sum, zip(*per_sentence))
    precision, recall = 4 / 7, 4 / 6
    assert correct / total == pytest.approx(2 * precision * recall / (precision + recall), abs=1e-15)


def test_tagging_accuracy(pairs):
    assert tallies(TaggingAccuracy(), pairs) == [(6, 7), (3, 3)]
    # xpos is '_' everywhere in s1 (7/7); s2 has DT vs NN on 'The'
    assert tallies(TaggingAccuracy(tag="xpos"), pairs) == [(7, 7), (2, 3)]


def test_plain_tuples_work_like_sentence_pairs(pairs):
    assert UAS()(tuple(pairs[0]), None) == (5, 7)


def test_perfect_system_and_sentence_without_content_words(to_conllu):
    (gold,) = ConlluFormat().parse(to_conllu("1 the _ DET _ _ 2 det _ _", "2 . _ PUNCT _ _ 0 punct _ _", ""),
                                   source="g")
    pair = SentencePair(gold, gold)
    assert UAS()(pair, None) == (2, 2) and LAS()(pair, None) == (2, 2)
    assert CLAS()(pair, None) == (0, 0)  # no content word: contributes nothing to the corpus F1


class HeadModel:
    """A model whose parse returns one prediction per word (seed style)."""

    def __init__(self, predictions):
        self.predictions = predictions

    def parse(self, sentence):
        return self.predictions[sentence.sent_id]


def test_gold_sentence_with_a_model(pairs):
    gold_s1, system_s1 = pairs[0]
    labelled = [(w.head, w.deprel) for w in system_s1.words]
    model = HeadModel({"s1": labelled})
    assert UAS()(gold_s1, model) == (5, 7)
    assert LAS()(gold_s1, model) == (4, 7)
    assert CLAS()(gold_s1, model) == (4, 8)
    assert UAS()(gold_s1, HeadModel({"s1": [w.head for w in system_s1.words]})) == (5, 7)
    assert TaggingAccuracy()(gold_s1, HeadModel({"s1": [w.upos for w in system_s1.words]})) == (6, 7)
    # a model may also return a whole Sentence
    assert LAS()(gold_s1, HeadModel({"s1": system_s1})) == (4, 7)


def test_model_errors_are_clear(pairs):
    gold = pairs[0].gold
    with pytest.raises(TokenizationError, match=r"returned 2 predictions for sentence 's1' at gold\.conllu:1, "
                                                r"which has 7 words"):
        UAS()(gold, HeadModel({"s1": [1, 0]}))
    with pytest.raises(InvalidParameterError, match=r"prediction 1 should be a \(head, deprel\) pair, got 2"):
        LAS()(gold, HeadModel({"s1": [2, 0, 5, 5, 2, 2, 2]}))
    with pytest.raises(InvalidParameterError, match=r"'w_vector' must have a parse\(sentence\) method, got NoneType"):
        UAS()(gold, None)
    with pytest.raises(InvalidParameterError, match=r"got dict"):
        UAS()({"heads": [1]}, None)


def test_different_words_name_sentence_and_line(gold_text, system_text):
    gold = ConlluFormat().parse(gold_text, source="gold.conllu")
    system = ConlluFormat().parse(system_text.replace("\tpan\tpan\t", "\tpanes\tpan\t"), source="sys.conllu")
    message = (r"Different tokenization in sentence 's1' at gold\.conllu:1 \(system sentence 's1' at "
               r"sys\.conllu:1\): word 5 is 'pan' in gold and 'panes' in system \(system line 8\)")
    with pytest.raises(TokenizationError, match=message):
        pair_sentences(gold, system)
    with pytest.raises(TokenizationError, match=message):
        UAS()((gold[0], system[0]), None)


def test_different_multiword_tokens_or_lengths_or_sentence_counts(gold_text, system_text, to_conllu):
    gold = ConlluFormat().parse(gold_text, source="g")
    no_range = ConlluFormat().parse(system_text.replace("3-4\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n", ""), source="s")
    with pytest.raises(TokenizationError, match=r"multiword token '3-4' 'del' in gold, none in system"):
        pair_sentences(gold, no_range)
    shorter = ConlluFormat().parse(to_conllu("1 Ella _ _ _ _ 0 root _ _", ""), source="s")
    with pytest.raises(TokenizationError, match=r"7 words in gold, 1 in system"):
        check = LAS()
        check((gold[0], shorter[0]), None)
    with pytest.raises(TokenizationError, match=r"gold file has 2 sentences and the system file 1; the first "
                                                r"unmatched one is sentence 's2' at g:13"):
        pair_sentences(gold, ConlluFormat().parse(system_text, source="s")[:1])


def test_tag_option_is_checked():
    with pytest.raises(InvalidParameterError, match=r"'tag' parameter of tagging_accuracy must be one of .* "
                                                    r"Got 'lemma' instead"):
        TaggingAccuracy(tag="lemma")


def test_evaluators_pickle(pairs):
    for ev in (UAS(), LAS(subtypes=True), CLAS(), TaggingAccuracy(tag="xpos")):
        again = pickle.loads(pickle.dumps(ev))
        assert tallies(again, pairs) == tallies(ev, pairs)


def test_registered_names_and_overrides(pairs):
    ps = PluginSystem(entry_points=False)
    ps.register_plugin(plugin)
    with use_plugin_system(ps):
        assert assay.load_sentence_evaluator("uas")(pairs[0], None) == (5, 7)
        assert assay.load_sentence_evaluator("las[subtypes=true]")(pairs[0], None) == (3, 7)
        assert assay.load_sentence_evaluator("clas")(pairs[1], None) == (4, 5)
        assert assay.load_sentence_evaluator("tagging_accuracy[tag=xpos]")(pairs[1], None) == (2, 3)
        fmt = assay.load_data_format("conllx[check_tree=true]")
        assert fmt.check_tree is True and fmt.name == "conllx"
        assert assay.get_registry("data_format").get("conllu").metadata["extensions"] == (".conllu",)
        with pytest.raises(InvalidParameterError, match="Unknown override 'subtype'"):
            assay.load_sentence_evaluator("las[subtype=true]")
