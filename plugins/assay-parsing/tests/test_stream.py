"""Streaming reads (``iter_read``, ``index_sentences``, ``PairPool``): the same sentences, numbers and errors as
whole-file reads, with memory that does not grow with the file.

The reference is the whole-file path: ``text.split("\\n")`` for lines, ``ConlluFormat().parse(text)`` for
sentences and ``read_pairs`` + one evaluator call per pair for the counts (itself checked against the official
CoNLL 2018 scorer in test_official_script.py). The real treebanks of ``/work/shared/data/ud`` are used where
that folder exists (generated treebanks always are).
"""

from __future__ import annotations

import gc
import gzip
import tracemalloc
import weakref
from pathlib import Path

import pytest

import assay_parsing.formats as formats_module
import assay_parsing.lines as lines_module
from assay import DataFormatError, InvalidParameterError
from assay.errors import AssayError
from assay_parsing import (
    CLAS,
    LAS,
    UAS,
    ConlluFormat,
    ConllxFormat,
    PairPool,
    Sentence,
    SentencePair,
    TaggingAccuracy,
    TokenizationError,
    index_sentences,
    iter_pairs,
    open_pairs,
    read_pairs,
)
from assay_parsing.formats import iter_lines
from assay_parsing.parse_eval import tally_shard

UD = Path("/work/shared/data/ud")
UD_PAIRS = [(g, s) for g, s in [("fr_gsd-gold", "fr_gsd-sys-mid"), ("cs_pud-gold-matched", "cs_pud-udpipe-matched")]
            if (UD / f"{g}.conllu.gz").exists() and (UD / f"{s}.conllu.gz").exists()]
EVALUATORS = (("uas", UAS()), ("las", LAS()), ("clas", CLAS()), ("tagging_accuracy", TaggingAccuracy()))


def whole_file_counts(gold, system):
    """The pre-streaming computation: both files parsed whole, each evaluator summed over the pairs."""
    pairs = read_pairs(gold, system)
    counts = []
    for _, evaluator in EVALUATORS:
        correct = total = 0
        for pair in pairs:
            c, t = evaluator(pair, None)
            correct, total = correct + c, total + t
        counts.append((correct, total))
    return pairs, counts


def stream_counts(pool, num_shards):
    parts = [tally_shard(shard, EVALUATORS) for shard in pool.shards(num_shards)]
    assert sum(len(shard) for shard in pool.shards(num_shards)) == len(pool)
    return [(sum(p[k].correct_num for p in parts), sum(p[k].gold_set_size for p in parts))
            for k in range(len(EVALUATORS))]


@pytest.fixture(params=["generated"] + [f"ud:{g}" for g, _ in UD_PAIRS])
def treebank(request, tmp_path, make_treebank):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    if request.param == "generated":
        gold_text, system_text = make_treebank(7, 300)
        gold.write_text(gold_text, encoding="utf-8")
        system.write_text(system_text, encoding="utf-8")
    else:
        g = request.param[3:]
        s = dict(UD_PAIRS)[g]
        gold.write_bytes(gzip.decompress((UD / f"{g}.conllu.gz").read_bytes()))
        system.write_bytes(gzip.decompress((UD / f"{s}.conllu.gz").read_bytes()))
    return gold, system


@pytest.mark.slow
def test_streaming_equals_whole_file_sequential_and_sharded(treebank):
    gold, system = treebank
    pairs, expected = whole_file_counts(gold, system)
    assert all(total > 0 for _, total in expected)
    pool = open_pairs(gold, system)
    assert isinstance(pool, PairPool) and len(pool) == len(pairs)
    assert list(pool) == pairs  # same sentences, same source lines
    for num_shards in (1, 7):
        assert stream_counts(pool, num_shards) == expected, num_shards
    assert pool[len(pool) // 2] == pairs[len(pairs) // 2] and pool[-1] == pairs[-1]
    assert pool[3:6] == pairs[3:6]


@pytest.mark.slow
def test_cli_streaming_sequential_and_two_workers_equal_whole_file(treebank, capsys):
    from assay.cli import main

    gold, system = treebank
    _, expected = whole_file_counts(gold, system)
    for extra in ([], ["--workers", "2", "--shards", "5"]):
        assert main(["parse-eval", str(gold), str(system), *extra]) == 0
        out = capsys.readouterr().out
        rows = [line.split()[-2:] for line in out.splitlines()
                if line.startswith(("UAS  ", "LAS  ", "CLAS (F1)  ", "UPOS accuracy  "))]
        assert [(int(c), int(t)) for c, t in rows] == expected, extra


TEXTS = [
    "",
    "\n",
    "a\tb\n\nc",
    "x\r\ny\r\n\r\n\r\nz\n",
    "é\u3000\n\n\u00a0\nñandú\n",
    "no newline at the end",
    "\n\n\nthree blanks first\n\n",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_iter_lines_equals_split(tmp_path, text, chunk):
    path = tmp_path / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    assert list(iter_lines(path, chunk_bytes=chunk)) == text.split("\n")


def test_index_and_iter_read_on_awkward_layouts(tmp_path, monkeypatch):
    # CRLF, several blank lines, whitespace-only "blank" lines (U+3000, U+00A0, \x1c), comments, no final newline
    word = "1\tw\t_\tX\t_\t_\t0\troot\t_\t_"
    text = "\n".join([
        "", "", "# sent_id = a", word, "2\tv\t_\tX\t_\t_\t1\tdep\t_\t_", "\u3000", "\u00a0\t",
        "# c", word + "\r", "\r", "\x1c", word, "", "", word,
    ])
    path = tmp_path / "awkward.conllu"
    path.write_bytes(text.encode("utf-8"))
    expected = ConlluFormat().parse(text, source=str(path))
    assert [s.line for s in expected] == [3, 8, 12, 15]
    data = path.read_bytes()
    for chunk in (1, 5, 64, None):
        monkeypatch.setattr(lines_module, "CHUNK_BYTES", chunk or (1 << 20))
        index = index_sentences(path)
        assert list(index.lines) == [3, 8, 12, 15]
        assert [data.count(b"\n", 0, start) + 1 for start in index.starts] == [3, 8, 12, 15]
        assert index.size == len(data)
        assert list(ConlluFormat().iter_read(path)) == expected
        for i in range(len(index)):  # every single sentence, read from its byte range
            start, stop, line = index.span(i, i + 1)
            assert list(ConlluFormat().iter_read(path, start=start, stop=stop, first_line=line)) == [expected[i]]


def _starts_by_definition(data: bytes) -> tuple[list[int], list[int]]:
    """Sentence starts by the definition (a non-blank line after a blank one or the file start; blank: empty or
    whitespace), from the decoded text's lines: (byte offsets, line numbers)."""
    offsets, numbers, offset, inside = [], [], 0, False
    for number, line in enumerate(data.decode("utf-8").split("\n"), start=1):
        blank = not line or line.isspace()
        if not blank and not inside:
            offsets.append(offset)
            numbers.append(number)
        inside = not blank
        offset += len(line.encode("utf-8")) + 1
    return offsets, numbers


@pytest.mark.parametrize("seed", range(4))
def test_index_equals_the_definition_on_random_layouts(tmp_path, seed):
    import random

    rng = random.Random(seed)
    pieces = ["1\tw\n", "# c\n", "\n", "\n\n", "12\tv\n", " \n", "\t\n", "\u3000\n", "x\n", "#\n", "\x1c\n"]
    path = tmp_path / "layout.conllu"
    for trial in range(300):
        kinds = pieces if trial % 2 else pieces[:5]  # half of them only empty, digit and '#' lines (the regex way)
        data = "".join(rng.choice(kinds) for _ in range(rng.randint(0, 40))).encode("utf-8")
        if trial % 3 == 0:
            data = data.rstrip(b"\n")
        path.write_bytes(data)
        expected = _starts_by_definition(data)
        for chunk in (1, 2, 3, 5, 8, 64, 1 << 20):
            index = index_sentences(path, chunk_bytes=chunk)
            assert (list(index.starts), list(index.lines)) == expected, (data, chunk)
            assert index.size == len(data)


@pytest.mark.parametrize("name", sorted(p.name for p in UD.glob("*.conllu.gz")))
def test_index_equals_the_definition_on_real_files(tmp_path, name):
    data = gzip.decompress((UD / name).read_bytes())
    path = tmp_path / name[:-3]
    path.write_bytes(data)
    index = index_sentences(path)
    assert (list(index.starts), list(index.lines)) == _starts_by_definition(data)
    assert len(index) == len(ConlluFormat().read(path))


def test_read_is_the_streamed_list(tmp_path, make_treebank):
    gold_text, _ = make_treebank(3, 80)
    path = tmp_path / "g.conllu"
    path.write_text(gold_text, encoding="utf-8")
    assert ConlluFormat().read(path) == ConlluFormat().parse(gold_text, source=str(path))
    conllx = "1\tDer\tder\tART\tART\t_\t2\tNK\t_\t_\n2\tHund\tHund\tNN\tNN\t_\t0\tROOT\t_\t_\n"
    (tmp_path / "x.conllx").write_text(conllx, encoding="utf-8")
    assert ConllxFormat().read(tmp_path / "x.conllx") == ConllxFormat().parse(conllx, source=str(tmp_path / "x.conllx"))


# --------------------------------------------------------------------------- memory
def _big_pair(tmp_path, make_treebank, repeats):
    gold_text, system_text = make_treebank(11, 100)
    gold, system = tmp_path / "big-gold.conllu", tmp_path / "big-system.conllu"
    gold.write_text(gold_text * repeats, encoding="utf-8")
    system.write_text(system_text * repeats, encoding="utf-8")
    return gold, system, 100 * repeats


def test_reader_holds_a_few_sentences_at_a_time(tmp_path, make_treebank, monkeypatch):
    gold, system, n = _big_pair(tmp_path, make_treebank, 10)
    live: weakref.WeakSet[Sentence] = weakref.WeakSet()
    real_finish = formats_module._Builder.finish

    def finish(self, lineno):
        sentence = real_finish(self, lineno)
        live.add(sentence)
        return sentence

    monkeypatch.setattr(formats_module._Builder, "finish", finish)
    monkeypatch.setattr(lines_module, "CHUNK_BYTES", 4096)
    pool = open_pairs(gold, system)
    most = seen = 0
    for shard in pool.shards(3):
        for pair in shard.items():
            seen += 1
            most = max(most, len(live))
            del pair
    assert seen == n == len(pool)
    assert most <= 4  # the current pair (and at most one sentence being handed over per file)
    gc.collect()
    assert len(live) == 0


@pytest.mark.slow
def test_tracemalloc_peak_does_not_grow_with_the_file(tmp_path, make_treebank, monkeypatch):
    # Reading only: the evaluators' temporaries land in CPython's tuple free lists, which tracemalloc counts.
    monkeypatch.setattr(lines_module, "CHUNK_BYTES", 4096)
    peaks, sizes = [], []
    for repeats in (2, 6):
        gold, system, n = _big_pair(tmp_path, make_treebank, repeats)
        pool = open_pairs(gold, system)
        tracemalloc.start()
        try:
            assert sum(1 for _ in pool) == n
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        sizes.append(gold.stat().st_size + system.stat().st_size)
    # Parsed whole, these files take about 15x their size in Sentence objects; streamed, a few chunks and lines.
    assert peaks[1] < sizes[1] / 4, (peaks, sizes)
    assert peaks[1] < 1.5 * peaks[0], (peaks, sizes)  # 3x the data, about the same peak


# --------------------------------------------------------------------------- errors name the file and the line
def test_errors_in_a_later_shard_name_the_absolute_line(tmp_path, make_treebank):
    gold_text, system_text = make_treebank(5, 60)
    lines = system_text.split("\n")
    target = next(i for i in range(len(lines) * 3 // 4, len(lines)) if lines[i][:1].isdigit())
    lines[target] = lines[target].rsplit("\t", 1)[0]  # 9 columns
    gold, system = tmp_path / "g.conllu", tmp_path / "s.conllu"
    gold.write_text(gold_text, encoding="utf-8")
    system.write_text("\n".join(lines), encoding="utf-8")
    pool = open_pairs(gold, system)
    for num_shards, shipped in ((1, False), (4, False), (4, True)):
        with pytest.raises(DataFormatError) as info:
            for shard in pool.shards(num_shards):
                tally_shard(shard.with_bytes() if shipped else shard, EVALUATORS)
        assert info.value.source == str(system) and info.value.line == target + 1
        assert f"{system}:{target + 1}: expected 10 tab-separated columns" in str(info.value)


def test_invalid_utf8_names_file_line_and_byte(tmp_path, make_treebank):
    gold_text, _ = make_treebank(5, 30)
    data = gold_text.encode("utf-8")
    at = data.index(b"\n", len(data) // 2) + 3  # inside a line in the middle of the file
    path = tmp_path / "bad.conllu"
    path.write_bytes(data[:at] + b"\xff" + data[at + 1:])
    line = data.count(b"\n", 0, at) + 1
    for read in (lambda: ConlluFormat().read(path), lambda: list(ConlluFormat().iter_read(path)),
                 lambda: list(open_pairs(path, path))):
        with pytest.raises(DataFormatError, match=rf"bad\.conllu:{line}: not valid UTF-8 \(invalid start byte at "
                                                  rf"byte {at}\)"):
            read()


def test_different_counts_name_both_files_and_the_first_difference(tmp_path, make_treebank):
    gold_text, system_text = make_treebank(2, 20)
    gold, system = tmp_path / "g.conllu", tmp_path / "s.conllu"
    gold.write_text(gold_text, encoding="utf-8")
    system.write_text(system_text.split("\n\n", 1)[1], encoding="utf-8")  # drop the first sentence
    first = ConlluFormat().read(gold)[0]
    with pytest.raises(InvalidParameterError) as info:
        open_pairs(gold, system)
    message = str(info.value)
    assert f"{str(gold)!r} has 20 sentences and the system file {str(system)!r} has 19" in message
    assert f"the first sentence whose words differ is {first.describe()}" in message
    with pytest.raises(TokenizationError, match="the gold file has 20 sentences and the system file 19"
                                                "|Different tokenization"):
        list(iter_pairs(gold, system))


def test_iter_pairs_equals_read_pairs_and_checks_words(tmp_path, make_treebank):
    gold_text, system_text = make_treebank(4, 40)
    gold, system = tmp_path / "g.conllu", tmp_path / "s.conllu"
    gold.write_text(gold_text, encoding="utf-8")
    system.write_text(system_text, encoding="utf-8")
    assert list(iter_pairs(gold, system)) == read_pairs(gold, system)
    system.write_text(system_text + system_text.split("\n\n", 1)[0] + "\n\n", encoding="utf-8")
    with pytest.raises(TokenizationError, match=r"gold file has 40 sentences and the system file 41; the first "
                                                r"unmatched one is sentence .* at .*s\.conllu:"):
        list(iter_pairs(gold, system))


def test_file_changed_after_indexing_is_reported(tmp_path, make_treebank):
    gold_text, system_text = make_treebank(6, 10)
    gold, system = tmp_path / "g.conllu", tmp_path / "s.conllu"
    gold.write_text(gold_text, encoding="utf-8")
    system.write_text(system_text, encoding="utf-8")
    pool = open_pairs(gold, system)
    system.write_text(system_text.split("\n\n", 1)[0] + "\n\n", encoding="utf-8")  # truncated meanwhile
    with pytest.raises(InvalidParameterError, match=r"system file .* ended after 1 sentences.*changed"):
        list(pool)


def test_unreadable_paths_are_assay_errors_naming_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such data file"):
        open_pairs(tmp_path / "missing.conllu", tmp_path / "missing.conllu")
    with pytest.raises(AssayError, match=rf"{tmp_path.name}: cannot be read"):
        open_pairs(tmp_path, tmp_path)


def test_shards_pickle_small(tmp_path, make_treebank):
    import pickle

    gold, system, _ = _big_pair(tmp_path, make_treebank, 2)
    pool = open_pairs(gold, system)
    shards = pool.shards(3)
    assert all(len(pickle.dumps(shard)) < 2000 for shard in shards)
    assert [p for shard in shards for p in pickle.loads(pickle.dumps(shard)).items()] == list(pool)
    assert all(isinstance(p, SentencePair) for p in pool[:2])


def test_shards_with_bytes_need_no_files(tmp_path, make_treebank):
    import pickle

    gold, system, _ = _big_pair(tmp_path, make_treebank, 1)
    pool = open_pairs(gold, system)
    expected = list(pool)
    shipped = [pickle.dumps(shard.with_bytes()) for shard in pool.shards(3)]
    gold.unlink()
    system.unlink()
    assert [p for data in shipped for p in pickle.loads(data).items()] == expected


def test_parse_eval_ships_bytes_to_a_spark_cluster(tmp_path, make_treebank, capsys):
    import pickle

    from assay_parsing.parse_eval import evaluate_stream
    from assay_parsing.parse_eval import open_pairs as cli_open_pairs

    class SparkExecutor:  # stands in for assay's: a cluster master, tasks pickled, files not visible
        master, workers = "spark://cluster:7077", 2

        def run(self, fn, tasks, shared, desc=None):
            shipped = [pickle.dumps(task) for task in tasks]
            gold.rename(gold.with_suffix(".hidden"))
            try:
                return [fn(pickle.loads(task), shared) for task in shipped]
            finally:
                gold.with_suffix(".hidden").rename(gold)

    gold, system, _ = _big_pair(tmp_path, make_treebank, 1)
    _, expected = whole_file_counts(gold, system)
    results = evaluate_stream(cli_open_pairs(gold, system), executor=SparkExecutor(), num_shards=3)
    assert [(r.correct_num, r.gold_set_size) for r in results.values()] == expected
    assert "(parallel, " in capsys.readouterr().out


class EveryThirdToRoot:
    """A toy parser: the gold head, except that every third word is attached to the root."""

    def parse(self, sentence):
        return [0 if w.id % 3 == 0 else w.head for w in sentence.words]


def test_sentence_pool_equals_from_file_and_evaluates_the_same(tmp_path, make_treebank):
    from assay import DataPool, EvaluatorBase

    gold_text, _ = make_treebank(9, 120)
    path = tmp_path / "g.conllu"
    path.write_text(gold_text, encoding="utf-8")
    whole = DataPool.from_file(path, format="conllu")
    lazy = __import__("assay_parsing").open_sentences(path)
    assert len(lazy) == len(whole) == 120 and list(lazy) == list(whole.items)
    assert lazy[7] == whole[7] and lazy[-2:] == list(whole.items[-2:])
    assert [s for shard in lazy.shards(4) for s in shard.items()] == list(whole.items)
    # expected UAS by hand from the definition: words whose id is not a multiple of 3, plus those whose gold head is 0
    words = [w for s in whole.items for w in s.words]
    expected = (sum(1 for w in words if w.id % 3 or w.head == 0), len(words))
    model = EveryThirdToRoot()
    ev = EvaluatorBase()
    for run in (lambda pool: ev.sequentialEvaluate(pool, model, "uas"),
                lambda pool: ev.parallelEvaluate(pool, model, "uas", executor="threads[workers=2]", num_shards=3)):
        for pool in (whole, lazy):
            r = run(pool)
            assert (r.correct_num, r.gold_set_size, r.sentence_num) == (*expected, 120)


def test_range_shards_iterate_over_their_items(tmp_path, make_treebank):
    from assay_parsing import open_sentences

    gold_text, system_text = make_treebank(4, 7)
    gold, system = tmp_path / "g.conllu", tmp_path / "s.conllu"
    gold.write_text(gold_text, encoding="utf-8")
    system.write_text(system_text, encoding="utf-8")
    whole = ConlluFormat().parse(gold_text, source=str(gold))  # the reference: the whole file parsed at once
    sentence_shards = open_sentences(gold).shards(3)
    assert [len(s) for s in sentence_shards] == [3, 2, 2]
    assert [list(s) for s in sentence_shards] == [whole[0:3], whole[3:5], whole[5:7]]
    pair_shards = open_pairs(gold, system).shards(2)
    pairs = [pair for shard in pair_shards for pair in shard]  # for sent in shard
    assert [p.gold for p in pairs] == whole and len(pair_shards[0]) == 4
    assert all(isinstance(p, SentencePair) for p in list(pair_shards[1]))
