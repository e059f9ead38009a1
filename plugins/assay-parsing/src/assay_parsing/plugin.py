"""The assay plugin module of ``assay-parsing`` (entry point ``parsing`` in group ``assay``)."""

from __future__ import annotations

from assay import hookimpl

from assay_parsing.evaluators import CLAS, LAS, UAS, TaggingAccuracy
from assay_parsing.formats import ConlluFormat, ConllxFormat
from assay_parsing import samples


@hookimpl
def assay_register_sentence_evaluators(register):
    examples = samples.evaluator_examples()  # sample inputs of the conformance suite
    register("uas", UAS, description="unlabelled attachment score over syntactic words (CoNLL 2018)",
             examples=examples)
    register("las", LAS, description="labelled attachment score, universal relations (CoNLL 2018)",
             examples=examples)
    register("clas", CLAS, description="content-word LAS F1 as the tally (2*correct, gold + system content words)",
             examples=examples)
    register("tagging_accuracy", TaggingAccuracy, description="UPOS (or XPOS) tagging accuracy over syntactic words",
             examples=examples)


@hookimpl
def assay_register_data_formats(register):
    register("conllu", ConlluFormat, extensions=ConlluFormat.extensions,
             description="CoNLL-U (Universal Dependencies): comments, multiword ranges, empty nodes",
             examples=samples.conllu_examples())
    register("conllx", ConllxFormat, extensions=ConllxFormat.extensions,
             description="CoNLL-X (CoNLL 2006): ten columns, integer IDs", examples=samples.conllx_examples())
