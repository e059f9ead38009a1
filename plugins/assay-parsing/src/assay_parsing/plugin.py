"""The assay plugin module of ``assay-parsing`` (entry point ``parsing`` in group ``assay``)."""

from __future__ import annotations

from assay import hookimpl
from assay_parsing import samples
from assay_parsing.evaluators import CLAS, LAS, UAS, TaggingAccuracy
from assay_parsing.formats import ConlluFormat, ConllxFormat


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


def _run_parse_eval(args):
    from assay_parsing import parse_eval

    return parse_eval.run(args)


def _parse_eval_arguments(parser):
    from assay_parsing import parse_eval

    parse_eval.add_arguments(parser)


@hookimpl
def assay_register_commands(register):
    from assay_parsing import parse_eval

    register("parse-eval", _run_parse_eval, help=parse_eval.HELP, description=parse_eval.DESCRIPTION,
             epilog=parse_eval.EPILOG, add_arguments=_parse_eval_arguments)


def _run_treebank_demo(out_dir):
    from assay_parsing.demo_treebank import run

    run(out_dir)


def _run_spark_demo(out_dir):
    from assay_parsing.demo_spark import run

    run(out_dir)


@hookimpl
def assay_register_demo_sections(register):
    register("treebank", _run_treebank_demo, order=10,
             title="a synthetic CoNLL-U treebank and a noisy parse: UAS, LAS, CLAS, UPOS, sequential = parallel")
    register("spark", _run_spark_demo, order=50,
             title="the treebank evaluation on Apache Spark local[2], in memory and from files (needs assay[spark])")
