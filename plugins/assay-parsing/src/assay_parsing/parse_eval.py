"""``assay parse-eval GOLD SYSTEM``: UAS, LAS, CLAS and tagging accuracy of a system parse.

A command of this plugin, added to ``assay`` through the ``assay_register_commands`` hook
(:mod:`assay_parsing.plugin`). The data formats (``conllu``, ``conllx``) and the sentence
evaluators (``uas``, ``las``, ``clas``, ``tagging_accuracy``) are looked up by their
registered names like any plugin object. Both files are streamed: a light pass finds the
sentence boundaries, then the ``(gold, system)`` sentence pairs are read one at a time and
scored by all four evaluators in one pass -- in this process by default, sharded in parallel
with ``--shards`` / ``--workers`` / ``--executor`` / ``--spark`` (each shard opens the files
and reads its own byte ranges) -- so memory does not grow with the files. Each evaluator's
total is logged as the seed toolkit's ``EVALUATOR`` lines; then a table sums up, with the
provenance signature (evaluators, format, versions; :mod:`assay.provenance`) under it. See
``docs/parsing.md``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from assay.cli.commands import (
    add_json,
    add_output,
    add_verbose,
    check_output,
    describe_executor,
    json_mode,
    positive_int,
    print_json,
    spark_log,
)

#: what ``assay --help`` says about the command
HELP = "score a system CoNLL-U / CoNLL-X parse against the gold file (UAS, LAS, CLAS, UPOS)"
DESCRIPTION = ("Score a system dependency parse against the gold file, sentence by sentence, as the "
               "CoNLL 2018 shared task defines UAS, LAS and CLAS (syntactic words only, relations compared on "
               "their universal part), plus UPOS tagging accuracy. Both files must have the same sentences and "
               "words. Runs in this process unless --shards, --workers, --executor or --spark is given.")
EPILOG = "CLAS is an F1; its tally is (2 x correct, gold + system content words). Comes from the assay-parsing plugin."

#: (registered sentence evaluator, label in the table)
METRICS: tuple[tuple[str, str], ...] = (
    ("uas", "UAS"),
    ("las", "LAS"),
    ("clas", "CLAS (F1)"),
    ("tagging_accuracy", "UPOS accuracy"),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``assay parse-eval`` (the ``add_arguments`` of its command registration)."""
    p.add_argument("gold", type=Path, metavar="GOLD", help="gold-standard file")
    p.add_argument("system", type=Path, metavar="SYSTEM", help="system output with the same words")
    p.add_argument("--format", choices=("conllu", "conllx"), default=None,
                   help="file format (default: from the gold file's extension; .conllx/.conll are CoNLL-X, "
                   "anything else CoNLL-U)")
    p.add_argument("--shards", type=positive_int, default=None, metavar="N", help="evaluate in N shards, in parallel")
    p.add_argument("--workers", type=positive_int, default=None, metavar="N",
                   help="parallel workers (default: the CPU count)")
    p.add_argument("--executor", default=None, metavar="NAME",
                   help="registered executor for the parallel run (default: processes; see 'assay list executor')")
    p.add_argument("--spark", default=None, metavar="MASTER",
                   help="run on Apache Spark with this master URL, e.g. local[2] (needs assay[spark])")
    p.add_argument("--conll18", action="store_true",
                   help="every score of the CoNLL 2018 evaluation script (Tokens, Sentences, Words, UPOS, XPOS, "
                   "UFeats, AllTags, Lemmas, UAS, LAS, CLAS, MLAS, BLEX: precision, recall, F1, aligned accuracy) "
                   "in its report layout; the system may tokenize and split sentences differently (words are "
                   "aligned through their characters, as the script does); shards are cut where both files "
                   "start a sentence at the same character")
    add_verbose(p)
    add_output(p, "file", "the scores as JSON (what --json prints)")
    add_json(p, "the scores (one object per evaluator: value, correct, total)")


def run(args: argparse.Namespace) -> int:
    check_output(args)
    if args.conll18:
        return run_conll18(args)
    pool = open_pairs(args.gold, args.system, format=args.format)
    parallel = any(v is not None for v in (args.shards, args.workers, args.executor, args.spark))
    executor = None
    if parallel:
        executor = make_executor(args.executor, spark=args.spark, workers=args.workers)
    try:
        with json_mode(args), spark_log(args):  # with --json, the headers go to stderr with the EVALUATOR lines
            results = evaluate_stream(pool, executor=executor, num_shards=args.shards)
    finally:
        if executor is not None:
            executor.close()
    document = {"scores": results_to_list(results), "signature": str(signature(args.gold, args.format))}
    if args.output is not None:
        from assay.jsonio import dumps, write_text_atomic

        write_text_atomic(args.output, dumps(document) + "\n")
    if args.json:
        print_json(document)
        return 0
    print(format_table(results))
    print(f"signature: {signature(args.gold, args.format)}")  # provenance (issue 16)
    if args.output is not None:
        print(f"scores written to {args.output}")
    return 0


def results_to_list(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One object per evaluator: its registered name, label, value (NaN when total is 0), correct, total."""
    names = {label: name for name, label in METRICS}
    return [{"metric": names.get(label, label), "label": label,
             "value": r.correct_num / r.gold_set_size if r.gold_set_size else float("nan"),
             "correct": r.correct_num, "total": r.gold_set_size, "sentences": r.sentence_num}
            for label, r in results.items()]


def signature(gold: Path, format: str | None = None, metrics: Sequence[tuple[str, str]] = METRICS) -> Any:
    """The provenance :class:`~assay.provenance.Signature` of a parse-eval run: evaluators, format, versions."""
    from assay.plugins import load_data_format, load_sentence_evaluator
    from assay.provenance import signature_of

    if format is None:
        format = "conllx" if gold.suffix.lower() in (".conllx", ".conll") else "conllu"
    return signature_of({"evaluators": [(name, load_sentence_evaluator(name)) for name, _ in metrics],
                         "format": [(format, load_data_format(format))]})


# --------------------------------------------------------------------------- helpers (also used by the demo)
def _require_parsing_plugin() -> None:
    from assay.errors import MissingDependencyError
    from assay.plugins import get_registry

    if "uas" not in get_registry("sentence_evaluator") or "conllu" not in get_registry("data_format"):
        raise MissingDependencyError("assay-parsing", purpose="parsing evaluation (formats conllu/conllx and "
                                     "the uas, las, clas, tagging_accuracy evaluators)")


def read_pairs(gold: Path, system: Path, *, format: str | None = None) -> list[tuple[Any, Any]]:
    """Read both files with a registered data format and pair their sentences in order.

    Word-level differences are reported by the evaluators (naming the sentence and line);
    a different number of sentences is reported here, with the first sentence that differs.
    """
    from assay.errors import InvalidParameterError
    from assay.plugins import load_data_format

    _require_parsing_plugin()
    if format is None:
        format = "conllx" if gold.suffix.lower() in (".conllx", ".conll") else "conllu"
    fmt = load_data_format(format)
    gold_sents, system_sents = fmt.read(gold), fmt.read(system)
    if len(gold_sents) != len(system_sents):
        first = next((i for i, (g, s) in enumerate(zip(gold_sents, system_sents)) if g.forms() != s.forms()),
                     min(len(gold_sents), len(system_sents)))
        where = (f"; the first sentence whose words differ is {gold_sents[first].describe()}"
                 if first < len(gold_sents) else "")
        raise InvalidParameterError(
            f"The gold file {str(gold)!r} has {len(gold_sents)} sentences and the system file {str(system)!r} "
            f"has {len(system_sents)}{where}. Gold and system must have the same sentences and words.")
    return list(zip(gold_sents, system_sents))


def open_pairs(gold: Path, system: Path, *, format: str | None = None) -> Any:
    """Index both files and return a lazy pool of their sentence pairs (``assay_parsing.PairPool``).

    Nothing is parsed yet: the files are read sentence by sentence when the pool is
    evaluated (each shard reads its own byte ranges), so memory stays bounded whatever
    the file size. A different number of sentences is reported here, as :func:`read_pairs`
    does. The registered format provides the pool (its ``open_pairs`` method); a format
    without one is read whole, as :func:`read_pairs` does.
    """
    from assay import DataPool
    from assay.plugins import load_data_format

    _require_parsing_plugin()
    if format is None:
        format = "conllx" if gold.suffix.lower() in (".conllx", ".conll") else "conllu"
    opener = getattr(load_data_format(format), "open_pairs", None)
    if opener is None:
        return DataPool(read_pairs(gold, system, format=format))
    return opener(gold, system)


def evaluate_stream(pool: Any, *, executor: Any = None, num_shards: int | None = None,
                    metrics: Sequence[tuple[str, str]] = METRICS, announce: str = "") -> dict[str, Any]:
    """Like :func:`evaluate_pairs`, but each shard is read once and scored by all evaluators together.

    ``pool`` is a pool or sequence of ``(gold, system)`` pairs; with a lazy
    :func:`open_pairs` pool the files are parsed once, one sentence pair at a time, each
    shard reading its own byte ranges -- except on a Spark cluster (a master that is not
    ``local...``), whose executors may not see the files: there each shard carries its bytes.
    Sequentially (``executor`` None) the pool is one shard unless ``num_shards`` (or the
    pool's) says otherwise; in parallel, ``num_shards`` or the pool's, else four per worker.
    A ``num_shards`` above the number of sentence pairs is clamped to it, with a note on stderr.
    The header lines, ``EVALUATOR`` lines, warnings and numbers are those of
    :func:`evaluate_pairs`.
    """
    import warnings

    from assay import DataPool
    from assay.core.log import log_labels, log_result
    from assay.core.result import EvaluationResult, UndefinedMetricWarning
    from assay.plugins import load_sentence_evaluator
    from assay_parsing import column_tallies

    _require_parsing_plugin()
    pool = pool if isinstance(pool, DataPool) else DataPool(pool)
    if num_shards is not None and num_shards > max(len(pool), 1):
        # one shard per sentence pair at most: a million shards of 50 sentences were a million empty tasks
        print(f"parse-eval: {num_shards} shards requested for {len(pool)} sentence pairs; using "
              f"{max(len(pool), 1)}.", file=sys.stderr, flush=True)
        num_shards = max(len(pool), 1)
    evaluators = tuple((name, load_sentence_evaluator(name)) for name, _ in metrics)
    # without a shard count, shards small enough to be counted column by column (tally_shard)
    by_size = column_tallies.shard_count(pool) if num_shards is None and not pool.num_shards else None
    if executor is None:
        count = num_shards or (by_size if by_size != 1 else None)  # None: no check_int (which imports numpy)
        # the shards one after the other, as the serial executor runs them without a progress bar (whose module,
        # assay.executors.builtin, imports multiprocessing, pickle and subprocess for the other executors)
        parts = [tally_shard(shard, evaluators) for shard in pool.shards(count)]
        mode = "sequential"
    else:
        # only here: assay.core.evaluator imports the resampling engine (numpy), which a sequential run never needs
        from assay.core.evaluator import SHARDS_PER_WORKER

        workers = max(1, int(getattr(executor, "workers", 1) or 1))
        shards = pool.shards(num_shards or pool.num_shards or max(SHARDS_PER_WORKER * workers, by_size or 1))
        if _remote_workers(executor):  # they may not see the files: ship each shard's bytes instead
            shards = [shard.with_bytes() if hasattr(shard, "with_bytes") else shard for shard in shards]
        parts = executor.run(tally_shard, shards, evaluators, desc="parse-eval")
        mode = f"parallel, {describe_executor(executor)}"
    results: dict[str, Any] = {}
    for k, (name, label) in enumerate(metrics):
        print(f"{label}{announce} ({mode}):", flush=True)
        result = EvaluationResult.from_shards([part[k] for part in parts])
        if result.gold_set_size == 0:
            what = "the data pool is empty" if result.sentence_num == 0 else "no item has a gold count"
            warnings.warn(f"{name}: {what}, so accuracy is undefined (NaN).", UndefinedMetricWarning, stacklevel=2)
        line, attachment = log_labels(evaluators[k][1])  # uas: the seed's lines; las, clas, tagging: their own
        log_result(result, label=line, attachment_label=attachment)
        results[label] = result
        sys.stderr.flush()
    return results


def _remote_workers(executor: Any) -> bool:
    """Whether ``executor`` runs on other machines: a Spark executor whose master is not ``local...``."""
    if not any(c.__name__ == "SparkExecutor" for c in type(executor).__mro__):
        return False
    context = getattr(executor, "_context", None)
    master = getattr(context, "master", None) or getattr(executor, "master", None) or "local"
    return not str(master).startswith("local")


def tally_shard(shard: Any, evaluators: Sequence[tuple[str, Any]]) -> tuple[Any, ...]:
    """Score every item of ``shard`` with each ``(name, sentence_evaluator)`` in one pass.

    Returns one :class:`assay.EvaluationResult` per evaluator, in order. Items are read as
    they are scored (an ``assay_parsing.PairShard`` streams them), so memory holds one sentence pair.
    A failing evaluator or an invalid tally raises :class:`assay.EvaluationError` naming the
    evaluator, the shard and the item, as :func:`assay.core.evaluator.evaluate_shard` does.
    The task function of :func:`evaluate_stream` (module level, so workers can unpickle it).

    A file shard scored only by the built-in evaluators is counted column by column
    (:func:`assay_parsing.column_tallies.shard_tallies`: the same sums, no sentence objects);
    any other shard or evaluator, or a shard that reader does not vouch for, is scored pair by pair.
    """
    from assay.core.result import EvaluationResult
    from assay.errors import EvaluationError
    from assay_parsing.column_tallies import shard_tallies

    tallies = shard_tallies(shard, evaluators)
    if tallies is not None:
        return tuple(EvaluationResult(c, g, len(shard)) for c, g in tallies)
    correct = [0] * len(evaluators)
    gold = [0] * len(evaluators)
    offset = -1
    for offset, sent in enumerate(shard.items()):
        for k, (name, evaluator) in enumerate(evaluators):
            try:
                value = evaluator(sent, None)
            except Exception as exc:
                raise EvaluationError(
                    f"{name} raised {type(exc).__name__} on {shard.describe(offset)} (shard {shard.index}): {exc}",
                    shard=shard.index, item=shard.pool_index(offset)) from exc
            if not (type(value) is tuple and len(value) == 2 and type(value[0]) is int and type(value[1]) is int
                    and 0 <= value[0] <= value[1]):
                raise EvaluationError(
                    f"{name} returned {value!r} for {shard.describe(offset)} (shard {shard.index}); expected two "
                    "non-negative ints (correct_num, gold_set_size) with correct_num <= gold_set_size.",
                    shard=shard.index, item=shard.pool_index(offset))
            correct[k] += value[0]
            gold[k] += value[1]
    return tuple(EvaluationResult(c, g, offset + 1) for c, g in zip(correct, gold))


def make_executor(name: str | None = None, *, spark: str | None = None, workers: int | None = None) -> Any:
    """Create the executor for a parallel run (one object reused for every evaluator)."""
    from assay.errors import InvalidParameterError, MissingDependencyError
    from assay.plugins import get_registry, load_executor

    options: dict[str, Any] = {} if workers is None else {"workers": workers}
    if spark is not None:
        if name not in (None, "spark"):
            raise InvalidParameterError(f"Give either --spark or --executor, not both (got --executor {name!r}).")
        if "spark" not in get_registry("executor"):
            raise MissingDependencyError("pyspark", extra="spark", purpose="--spark (the 'spark' executor)")
        return load_executor("spark", master=spark, **options)
    return load_executor(name or "processes", **options)


def evaluate_pairs(pairs: Sequence[Any], *, executor: Any = None, num_shards: int | None = None,
                   metrics: Sequence[tuple[str, str]] = METRICS, announce: str = "") -> dict[str, Any]:
    """Run each registered evaluator over ``pairs``; sequentially when ``executor`` is None.

    Returns ``{label: EvaluationResult}``. Before each run a header line goes to stdout,
    and the run logs its ``EVALUATOR`` lines (stderr by default).
    """
    from assay import DataPool, EvaluatorBase
    from assay.plugins import load_sentence_evaluator

    _require_parsing_plugin()
    pool = DataPool(pairs)
    ev = EvaluatorBase()
    results: dict[str, Any] = {}
    for name, label in metrics:
        mode = "sequential" if executor is None else f"parallel, {describe_executor(executor)}"
        print(f"{label}{announce} ({mode}):", flush=True)
        sentence_evaluator = load_sentence_evaluator(name)
        if executor is None:
            results[label] = ev.sequentialEvaluate(pool, None, sentence_evaluator=sentence_evaluator)
        else:
            results[label] = ev.parallelEvaluate(pool, None, sentence_evaluator=sentence_evaluator,
                                                 executor=executor, num_shards=num_shards)
        sys.stderr.flush()
    return results


def results_grid(results: dict[str, Any]) -> Any:
    """The results as an :class:`assay.render.Grid`: metric, value, correct, total (value n/a when total is 0)."""
    from assay.render import Grid

    rows = [(label, f"{r.correct_num / r.gold_set_size:.4%}" if r.gold_set_size else "n/a",
             str(r.correct_num), str(r.gold_set_size)) for label, r in results.items()]
    notes = (("CLAS counts are (2 x correct, gold + system content words): the ratio is the F1.",)
             if any(label.startswith("CLAS") for label in results) else ())
    return Grid(header=("metric", "value", "correct", "total"), rows=rows, align="lrrr", notes=notes)


def format_table(results: dict[str, Any]) -> str:
    """The results as a fixed-width text table (:func:`results_grid` drawn by :func:`assay.render.render_grid`)."""
    from assay.render import render_grid

    return render_grid(results_grid(results), "text")


# --------------------------------------------------------------------------- --conll18
@attrs.frozen
class PartGroup:
    """A task of a sharded ``--conll18`` run: consecutive parts whose tokenizations differ, to align word by word.

    Each part is ``(gold sentences, system sentences)`` between two sentence starts both files share.
    """

    index: int
    parts: tuple[tuple[list[Any], list[Any]], ...]


def conll18_task(task: PartGroup, shared: Any) -> dict[str, Any]:
    """Executor task: the CoNLL 2018 tallies of one group of parts (``shared`` is unused)."""
    from assay_parsing import conll18

    return conll18.evaluate_parts(task.parts)


#: the gold words the parts tokenized otherwise must hold for the default executor (``--workers`` /
#: ``--shards`` without ``--executor``) to align them in parallel: below, they are aligned in this
#: process (about 0.4 s of work there, against the ~0.15 s of loading every plugin for the executor
#: and starting its workers), and a line on stderr says so
PARALLEL_ALIGN_WORDS = 50_000


class _LazyExecutor:
    """The executor of a sharded ``--conll18`` run: only the parts tokenized otherwise need one.

    An executor given (``--executor``, ``--spark``) runs them, however few; the default one
    (``make``) is made only when they hold at least :data:`PARALLEL_ALIGN_WORDS` gold words.
    ``note`` says what was done instead of a parallel run, for the command to print.
    """

    def __init__(self, executor: Any = None, make: Any = None, num_shards: int | None = None) -> None:
        self.executor, self.make, self.num_shards = executor, make, num_shards
        self.note: str | None = ("both files have the same sentences and tokens, so every word aligns with its "
                                 "counterpart: counted in this process, no parallel work to do")

    def run_parts(self, parts: list[tuple[list[Any], list[Any]]]) -> list[dict[str, Any]]:
        from assay_parsing import conll18

        if self.executor is None:
            words = sum(len(s.words) for gold, _ in parts for s in gold)
            if words < PARALLEL_ALIGN_WORDS:
                self.note = (f"{len(parts)} parts are tokenized otherwise ({words} gold words): aligned in this "
                             f"process, fewer than the {PARALLEL_ALIGN_WORDS} words that pay for parallel workers")
                return [conll18.evaluate_parts(parts)]
            self.executor = self.make()
        self.note = None
        groups = self.num_shards or max(1, getattr(self.executor, "workers", 1) or 1) * 4
        size = -(-len(parts) // groups)
        tasks = [PartGroup(i, tuple(parts[k:k + size])) for i, k in enumerate(range(0, len(parts), size))]
        return list(self.executor.run(conll18_task, tasks, None, desc="conll18"))

    def close(self) -> None:
        if self.executor is not None:
            self.executor.close()


def _conll_format(spec: str) -> Any:
    """The data format of ``spec``: assay-parsing's own class for a plain ``conllu`` / ``conllx`` (as the
    registry would make it, without loading the other plugins), else the registered format."""
    from assay_parsing.formats import ConlluFormat, ConllxFormat

    own = {"conllu": ConlluFormat, "conllx": ConllxFormat}.get(spec)
    if own is not None:
        return own()
    from assay.plugins import load_data_format

    return load_data_format(spec)


def evaluate_conll18(gold_path: Path, system_path: Path, *, format: str | None = None, executor: Any = None,
                     num_shards: int | None = None, make_executor: Any = None) -> dict[str, Any]:
    """Every CoNLL 2018 score of a file pair (:mod:`assay_parsing.conll18`), in this process or sharded.

    Both files are read whole, column by column (:func:`assay_parsing.columns.read_columns`; a
    file it does not vouch for is read by the format's reader, which names the error's place).
    Where both files have the same sentences and tokens, every word aligns with its counterpart
    and the scores are counted over whole columns in this process; the parts between two
    sentence starts both files share whose tokenizations differ are aligned word by word -- in
    this process, or in parallel with ``executor`` (or the one ``make_executor()`` makes, only
    when they hold at least :data:`PARALLEL_ALIGN_WORDS` gold words), in ``num_shards`` groups of
    consecutive parts (default: four per worker). The tallies add up, so the counts equal the
    sequential ones.
    """
    return _evaluate_conll18(gold_path, system_path, format=format,
                             runner=_LazyExecutor(executor, make_executor, num_shards)
                             if executor is not None or make_executor is not None else None)


def _evaluate_conll18(gold_path: Path, system_path: Path, *, format: str | None,
                      runner: _LazyExecutor | None) -> dict[str, Any]:
    from assay_parsing import conll18
    from assay_parsing.columns import Columns, read_columns
    from assay_parsing.formats import _ConllFormat

    spec = format or ("conllx" if Path(gold_path).suffix.lower() in (".conllx", ".conll") else "conllu")
    fmt = _conll_format(spec)
    where = f"{gold_path} and {system_path}"
    if not isinstance(fmt, _ConllFormat):  # a registered format of another kind: its sentences
        return conll18.evaluate(conll18.load_sentences(fmt.read(gold_path)),
                                conll18.load_sentences(fmt.read(system_path)), where=where)

    def read(path: Path, like: Columns | None = None) -> Columns:
        columns = read_columns(path, multiword=fmt.multiword, check_tree=fmt.check_tree, like=like)
        return columns if columns is not None else Columns.from_sentences(fmt.read(path), str(path))

    gold = read(gold_path)
    system = read(system_path, like=gold)  # the lines equal to the gold file's are not split again
    scores = conll18.evaluate_columns(gold, system, where=where,
                                      run_parts=runner.run_parts if runner is not None else None)
    if scores is None:  # the texts differ, or a FORM is only spaces: the sentences' evaluation names the place
        scores = conll18.evaluate(conll18.load_sentences(fmt.read(gold_path)),
                                  conll18.load_sentences(fmt.read(system_path)), where=where)
    return scores


def conll18_to_list(scores: dict[str, Any]) -> list[dict[str, Any]]:
    """One object per score: precision, recall, f1, aligned_accuracy (None where the script prints none) and counts."""
    return [{"metric": name, "precision": s.precision, "recall": s.recall, "f1": s.f1,
             "aligned_accuracy": s.aligned_accuracy, "gold": s.gold, "system": s.system, "correct": s.correct,
             "aligned": s.aligned} for name, s in scores.items()]


def run_conll18(args: argparse.Namespace) -> int:
    from assay.provenance import signature_of
    from assay_parsing import conll18

    parallel = any(v is not None for v in (args.shards, args.workers, args.executor, args.spark))
    runner = None
    if parallel:
        if args.executor is not None or args.spark is not None:  # named: made (and checked) before reading
            runner = _LazyExecutor(make_executor(args.executor, spark=args.spark, workers=args.workers),
                                   num_shards=args.shards)
        else:  # the default processes executor: made only when there are parts to align
            runner = _LazyExecutor(make=lambda: make_executor(None, workers=args.workers), num_shards=args.shards)
    try:
        with spark_log(args):
            scores = _evaluate_conll18(args.gold, args.system, format=args.format, runner=runner)
    finally:
        if runner is not None:
            runner.close()
    if runner is not None and runner.note is not None:
        print(f"parse-eval: {runner.note}.", file=sys.stderr)
    sig = signature_of({"evaluation": [("conll18", conll18.evaluate)]})
    document = {"scores": conll18_to_list(scores), "signature": str(sig)}
    if args.output is not None:
        from assay.jsonio import dumps, write_text_atomic

        write_text_atomic(args.output, dumps(document) + "\n")
    if args.json:
        print_json(document)
        return 0
    print(conll18.format_official(scores))
    print(f"signature: {sig}")
    if args.output is not None:
        print(f"scores written to {args.output}")
    return 0
