"""``assay parse-eval``: the table, the EVALUATOR lines, sequential = sharded, and clear errors.

The sample below is scored by hand (syntactic words only; the range 2-3 and the empty node
4.1 do not count):

    s1  word  gold          system         UAS LAS  content g/s  CLAS  UPOS
        Yo    2 nsubj       2 nsubj        +   +    y / y        +     +
        fue   0 root        0 root         +   +    y / y        +     +
        a     5 case        5 case         +   +    n / n              +
        la    5 det         4 det          -   -    n / n              PRON
        playa 2 obl:arg     2 obj          +   -    y / y        -     +
        .     2 punct       2 punct        +   +    n / n              +
    s2  Hola  0 root        0 root         +   +    y / y        +     +
        !     1 punct       1 discourse    +   -    n / y              +

    UAS 7/8, LAS 5/8, CLAS c=3 g=4 s=5 -> (6, 9), UPOS 7/8
"""

from __future__ import annotations

import logging

import pytest

import assay_parsing  # noqa: F401 - parse-eval needs the plugin (installed by make test)
from assay.cli import main
from assay.core.result import UndefinedMetricWarning


def rows(*lines: str) -> str:
    return "".join((line if line.startswith("#") or not line else "\t".join(line.split(" "))) + "\n"
                   for line in lines)


GOLD = rows(
    "# sent_id = s1",
    "1 Yo yo PRON _ _ 2 nsubj _ _",
    "2-3 fuea _ _ _ _ _ _ _ _",
    "2 fue ser VERB _ _ 0 root _ _",
    "3 a a ADP _ _ 5 case _ _",
    "4 la el DET _ _ 5 det _ _",
    "4.1 fue ser VERB _ _ _ _ 2:conj _",
    "5 playa playa NOUN _ _ 2 obl:arg _ _",
    "6 . . PUNCT _ _ 2 punct _ _",
    "",
    "# sent_id = s2",
    "1 Hola hola INTJ _ _ 0 root _ _",
    "2 ! ! PUNCT _ _ 1 punct _ _",
    "",
)
SYSTEM = (GOLD.replace("4\tla\tel\tDET\t_\t_\t5\tdet", "4\tla\tel\tPRON\t_\t_\t2\tdet")
          .replace("5\tplaya\tplaya\tNOUN\t_\t_\t2\tobl:arg", "5\tplaya\tplaya\tNOUN\t_\t_\t2\tobj")
          .replace("2\t!\t!\tPUNCT\t_\t_\t1\tpunct", "2\t!\t!\tPUNCT\t_\t_\t1\tdiscourse"))
EXPECTED = {"UAS": (7, 8), "LAS": (5, 8), "CLAS (F1)": (6, 9), "UPOS accuracy": (7, 8)}


@pytest.fixture
def files(tmp_path):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(GOLD, encoding="utf-8")
    system.write_text(SYSTEM, encoding="utf-8")
    assert SYSTEM.count("\n") == GOLD.count("\n") and SYSTEM != GOLD
    return gold, system


def table(out: str) -> dict[str, tuple[float, int, int]]:
    found = {}
    for line in out.splitlines():
        for label in EXPECTED:
            if line.startswith(label + "  "):
                value, correct, total = line[len(label):].split()
                found[label] = (float(value.rstrip("%").replace("n/a", "nan")), int(correct), int(total))
    return found


@pytest.mark.parametrize("extra", [[], ["--shards", "2", "--workers", "2"], ["--executor", "threads", "--shards", "3"]])
def test_table_and_log_lines(files, capsys, caplog, extra):
    caplog.set_level(logging.INFO, logger="EVALUATOR")
    assert main(["parse-eval", str(files[0]), str(files[1]), *extra]) == 0
    out = capsys.readouterr().out
    got = table(out)
    assert {k: v[1:] for k, v in got.items()} == EXPECTED
    for label, (correct, total) in EXPECTED.items():
        assert got[label][0] == pytest.approx(100 * correct / total, abs=5e-5)
    mode = "sequential" if not extra else "parallel"
    assert f"UAS ({mode}" in out
    messages = [r.getMessage() for r in caplog.records if r.name == "EVALUATOR"]
    # the label follows the evaluator: uas keeps the seed's two lines, las its own two, clas and tagging one line
    assert messages == [
        "Unlabelled accuracy: 0.875000000000 (7, 8)", "Unlabelled attachment accuracy: 0.900000000000 (9, 10)",
        "Labelled accuracy: 0.625000000000 (5, 8)", "Labelled attachment accuracy: 0.700000000000 (7, 10)",
        "CLAS F1: 0.666666666667 (6, 9)",
        "Tagging accuracy: 0.875000000000 (7, 8)",
    ]


def test_conllx_by_extension(tmp_path, capsys):
    text = rows("1 Der der ART ART _ 2 NK _ _", "2 Hund Hund NN NN _ 0 ROOT _ _",
                "3 bellt bellen VV VV _ 0 ROOT _ _", "")
    gold, system = tmp_path / "g.conll", tmp_path / "s.conllx"
    gold.write_text(text, encoding="utf-8")
    system.write_text(text.replace("2\tNK", "3\tNK"), encoding="utf-8")  # CoNLL-X: two roots allowed
    # NK and ROOT are not UD relations, so there is no content word: CLAS is undefined (NaN + warning)
    with pytest.warns(UndefinedMetricWarning, match="no item has a gold count"):
        assert main(["parse-eval", str(gold), str(system)]) == 0
    out = capsys.readouterr().out
    got = table(out)
    assert got["UAS"][1:] == (2, 3) and got["UPOS accuracy"][1:] == (3, 3)
    # the row (spacing is assay.render's): label, value n/a, correct 0, total 0
    assert ["CLAS", "(F1)", "n/a", "0", "0"] in [line.split() for line in out.splitlines()]


def test_different_words_name_sentence_and_line(files, capsys):
    files[1].write_text(SYSTEM.replace("\tplaya\tplaya\t", "\tplayas\tplaya\t"), encoding="utf-8")
    assert main(["parse-eval", str(files[0]), str(files[1])]) == 2
    err = capsys.readouterr().err
    assert "assay parse-eval: error:" in err
    assert "word 5 is 'playa' in gold and 'playas' in system (system line 8)" in err
    assert "sentence 's1' at " in err and "gold.conllu:1" in err


def test_different_sentence_counts(files, capsys):
    files[1].write_text(SYSTEM.split("\n\n")[0] + "\n\n", encoding="utf-8")
    assert main(["parse-eval", str(files[0]), str(files[1])]) == 2
    err = capsys.readouterr().err
    assert "has 2 sentences and the system file" in err
    assert "has 1; the first sentence whose words differ is sentence 's2' at " in err and "gold.conllu:11." in err


def test_malformed_file_names_file_and_line(files, capsys):
    files[1].write_text(SYSTEM.replace("2\tpunct\t_\t_\n\n# sent_id = s2", "2\tpunct\t_\n\n# sent_id = s2"),
                        encoding="utf-8")
    assert main(["parse-eval", str(files[0]), str(files[1])]) == 2
    assert "system.conllu:9: expected 10 tab-separated columns" in capsys.readouterr().err


def test_spark_without_the_spark_executor_says_what_to_install(files, capsys, monkeypatch):
    import assay.plugins as plugins

    real = plugins.get_registry

    class NoSpark:
        def __init__(self, registry):
            self.registry = registry

        def __contains__(self, name):
            return name != "spark" and name in self.registry

    monkeypatch.setattr(plugins, "get_registry", lambda kind: NoSpark(real(kind)) if kind == "executor" else real(kind))
    assert main(["parse-eval", str(files[0]), str(files[1]), "--spark", "local[2]"]) == 2
    assert "pip install 'assay[spark]'" in capsys.readouterr().err


def test_spark_and_executor_together_is_an_error(files, capsys):
    assert main(["parse-eval", str(files[0]), str(files[1]), "--spark", "local[2]", "--executor", "threads"]) == 2
    assert "either --spark or --executor" in capsys.readouterr().err


# --------------------------------------------------------------------------- streaming (issue 11)
def many(text: str, n: int) -> str:
    """``text`` (whole sentences) repeated ``n`` times."""
    return text * n


@pytest.mark.parametrize("extra", [[], ["--shards", "4", "--workers", "2"], ["--executor", "threads", "--shards", "3"]])
def test_streamed_numbers_scale_with_repeats(tmp_path, capsys, extra):
    # 25 copies of the hand-scored sample: every count is 25x the hand count, sequential or sharded.
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(many(GOLD, 25), encoding="utf-8")
    system.write_text(many(SYSTEM, 25), encoding="utf-8")
    assert main(["parse-eval", str(gold), str(system), *extra]) == 0
    got = table(capsys.readouterr().out)
    assert {k: v[1:] for k, v in got.items()} == {k: (25 * c, 25 * t) for k, (c, t) in EXPECTED.items()}


@pytest.mark.parametrize("extra", [[], ["--shards", "4", "--workers", "2"], ["--executor", "threads", "--shards", "5"]])
def test_malformed_line_in_a_later_shard_names_file_and_absolute_line(tmp_path, capsys, extra):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(many(GOLD, 20), encoding="utf-8")
    lines = many(SYSTEM, 20).split("\n")
    per_copy = GOLD.count("\n")
    bad = 17 * per_copy + 5  # the line "4 la el PRON ..." of the 18th copy (0-based index)
    assert lines[bad].startswith("4\tla\t")
    lines[bad] = lines[bad].replace("\t2\tdet", "\tx\tdet")
    system.write_text("\n".join(lines), encoding="utf-8")
    assert main(["parse-eval", str(gold), str(system), *extra]) == 2
    err = capsys.readouterr().err
    assert f"assay parse-eval: error: {system}:{bad + 1}: HEAD must be a non-negative integer, got 'x'" in err


def test_invalid_utf8_names_file_line_and_byte(files, capsys):
    data = files[1].read_bytes()
    at = data.index(b"playa")
    files[1].write_bytes(data[:at] + b"\xc3(" + data[at + 2:])
    assert main(["parse-eval", str(files[0]), str(files[1]), "--shards", "2", "--executor", "threads"]) == 2
    err = capsys.readouterr().err
    assert f"assay parse-eval: error: {files[1]}:8: not valid UTF-8 (invalid continuation byte at byte {at})" in err


def test_unreadable_inputs_are_clean_errors(files, tmp_path, capsys):
    assert main(["parse-eval", str(files[0]), str(tmp_path / "nope.conllu")]) == 2
    assert "assay parse-eval: error: No such data file" in capsys.readouterr().err
    assert main(["parse-eval", str(files[0]), str(tmp_path)]) == 2
    assert f"assay parse-eval: error: {tmp_path}: cannot be read" in capsys.readouterr().err


def test_comment_inside_a_sentence_names_the_line(files, capsys):
    files[0].write_text(GOLD.replace("3\ta\ta\tADP", "# oops\n3\ta\ta\tADP"), encoding="utf-8")
    files[1].write_text(SYSTEM.replace("3\ta\ta\tADP", "# oops\n3\ta\ta\tADP"), encoding="utf-8")
    assert main(["parse-eval", str(files[0]), str(files[1]), "--shards", "2", "--workers", "2"]) == 2
    assert f"{files[0]}:5: comment line inside a sentence" in capsys.readouterr().err


def test_gzipped_input_says_so(files, tmp_path, capsys):
    import gzip

    packed = tmp_path / "gold.conllu.gz"
    packed.write_bytes(gzip.compress(GOLD.encode("utf-8")))
    assert main(["parse-eval", str(packed), str(files[1])]) == 2
    err = capsys.readouterr().err
    assert f"assay parse-eval: error: {packed}:1: not valid UTF-8" in err and "looks gzip-compressed" in err


def test_a_format_without_streaming_is_read_whole(files, capsys, monkeypatch):
    import assay.plugins as plugins

    real = plugins.load_data_format

    class WholeOnly:  # a data format with read() only, no open_pairs()
        def __init__(self, fmt):
            self.read = fmt.read

    monkeypatch.setattr(plugins, "load_data_format", lambda name: WholeOnly(real(name)))
    assert main(["parse-eval", str(files[0]), str(files[1]), "--shards", "2", "--executor", "threads"]) == 0
    got = table(capsys.readouterr().out)
    assert {k: v[1:] for k, v in got.items()} == EXPECTED
