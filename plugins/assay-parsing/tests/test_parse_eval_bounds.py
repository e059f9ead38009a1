"""parse-eval's shard count is clamped to the data, and a line is bounded (issue 27, item 12).

Before, ``parse-eval --shards 1000000`` on 50 sentences built a million (empty) shards and ran
for minutes at 1.1 GB; a system file whose first line was a 2 GiB comment was gathered chunk by
chunk, copying the line again for every 1 MiB read, and never finished. Now the pool gives at
most one shard per sentence (the CLI says so on stderr), and a line longer than
``MAX_LINE_BYTES`` (16 MiB) is an error naming the file and the line.
"""

from __future__ import annotations

import re

import pytest

import assay_parsing  # noqa: F401 - parse-eval needs the plugin
from assay import DataFormatError
from assay.cli import main
from assay_parsing.formats import MAX_LINE_BYTES, iter_lines
from assay_parsing.stream import index_sentences, open_pairs


def sentence(i: int) -> str:
    return f"# sent_id = s{i}\n1\tHola\thola\tINTJ\t_\t_\t0\troot\t_\t_\n2\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_\n\n"


@pytest.fixture
def fifty(tmp_path):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    text = "".join(sentence(i) for i in range(50))
    gold.write_text(text, encoding="utf-8")
    system.write_text(text, encoding="utf-8")
    return gold, system


def test_a_pool_gives_at_most_one_shard_per_sentence(fifty):
    pool = open_pairs(*fifty)
    assert len(pool) == 50
    shards = pool.shards(10_000)
    assert len(shards) == 50
    assert sum(len(list(s.items())) for s in shards) == 50
    assert len(pool.shards(7)) == 7


def test_parse_eval_with_a_million_shards_uses_one_per_sentence_and_says_so(fifty, capsys):
    assert main(["parse-eval", str(fifty[0]), str(fifty[1]), "--executor", "threads", "--shards", "1000000"]) == 0
    captured = capsys.readouterr()
    assert "parse-eval: 1000000 shards requested for 50 sentence pairs; using 50." in captured.err
    assert re.search(r"^UAS +100\.0+% +100 +100$", captured.out, re.MULTILINE), captured.out


@pytest.mark.parametrize("reader", ["iter_lines", "index_sentences", "parse-eval"])
def test_a_first_line_longer_than_the_limit_is_an_error_naming_file_and_line(fifty, tmp_path, capsys, reader):
    long = tmp_path / "long.conllu"
    with open(long, "wb") as f:
        f.write(b"# " + b"x" * (MAX_LINE_BYTES + 10) + b"\n")
        f.write(fifty[0].read_bytes())
    where = r"long\.conllu:1: line 1 is longer than 16,777,216 bytes"
    if reader == "iter_lines":
        with pytest.raises(DataFormatError, match=where):
            list(iter_lines(long))
    elif reader == "index_sentences":
        with pytest.raises(DataFormatError, match=where):
            index_sentences(long)
    else:
        assert main(["parse-eval", str(fifty[0]), str(long)]) == 2
        assert re.search(where, capsys.readouterr().err)


def test_a_long_line_after_others_names_its_line(tmp_path):
    path = tmp_path / "late.conllu"
    with open(path, "wb") as f:
        f.write(sentence(0).encode() + b"# " + b"y" * (MAX_LINE_BYTES + 1) + b"\n")
    with pytest.raises(DataFormatError, match=r"late\.conllu:5: line 5 is longer"):
        list(iter_lines(path))
