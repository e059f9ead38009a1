"""assay_parsing.conll18 against the official CoNLL 2018 scorer (``udtools.udeval``, a test dependency).

Real data from ``/work/shared/data/ud``: a UDPipe 2 parse of Czech PUD with its own tokenization
and sentence split, and French GSD with re-tokenized sentences; plus the generated treebanks of
conftest.py and small hand-built cases whose alignment is worked out in the comments.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import udtools.udeval as udeval  # the official UD scorer, from the test extra

from assay_parsing import conll18
from assay_parsing.formats import ConlluFormat

UD = Path("/work/shared/data/ud")
PAIRS = [("cs_pud-gold", "cs_pud-udpipe"), ("fr_gsd-gold", "fr_gsd-sys-retok"), ("fr_gsd-gold", "fr_gsd-sys-mid")]
FMT = ConlluFormat(check_tree=False)


def _unzip(tmp_path: Path, name: str) -> Path:
    out = tmp_path / f"{name}.conllu"
    out.write_bytes(gzip.decompress((UD / f"{name}.conllu.gz").read_bytes()))
    return out


def _official(gold: Path, system: Path) -> dict:
    return udeval.evaluate(udeval.load_conllu_file(str(gold)), udeval.load_conllu_file(str(system)))


def _assert_equal(ours: dict, official: dict) -> None:
    for name in conll18.METRICS:
        o, r = ours[name], official[name]
        assert (o.gold, o.system, o.correct) == (r.gold_total, r.system_total, r.correct), name
        if r.aligned_total is not None:
            assert o.aligned == r.aligned_total, name
        assert (o.precision, o.recall, o.f1) == pytest.approx((r.precision, r.recall, r.f1), abs=0, rel=1e-15), name


@pytest.mark.parametrize("gold_name, system_name", PAIRS)
def test_real_parses_equal_the_official_script(tmp_path, gold_name, system_name):
    gold, system = _unzip(tmp_path, gold_name), _unzip(tmp_path, system_name)
    g, s = FMT.read(gold), FMT.read(system)
    whole = conll18.evaluate(conll18.load_sentences(g), conll18.load_sentences(s))
    _assert_equal(whole, _official(gold, system))
    # the segments between common sentence starts add up to the whole, to the count
    cuts = conll18.aligned_cuts(g, s)
    assert cuts[0] == (0, 0) and len(cuts) > 100
    assert conll18.evaluate_segments(g, s, cuts) == whole
    groups = conll18.split_cuts(cuts, 3)
    assert len(groups) == 3 and [c for grp in groups for c in grp] == cuts
    ends = [grp[0] for grp in groups[1:]] + [(len(g), len(s))]
    parts = [conll18.evaluate_segments(g, s, grp, end) for grp, end in zip(groups, ends)]
    assert {k: sum((p[k] for p in parts[1:]), parts[0][k]) for k in conll18.METRICS} == whole


def test_czech_pud_prints_the_published_numbers(tmp_path):
    gold, system = _unzip(tmp_path, "cs_pud-gold"), _unzip(tmp_path, "cs_pud-udpipe")
    scores = conll18.evaluate(conll18.load_sentences(FMT.read(gold)), conll18.load_sentences(FMT.read(system)))
    published = {}
    for line in (UD / "cs_pud-eval.txt").read_text(encoding="utf-8").splitlines()[2:]:
        cells = [c.strip() for c in line.split("|")]
        published[cells[0]] = [float(c) for c in cells[1:] if c]
    for name in conll18.METRICS:
        s = scores[name]
        ours = [s.precision, s.recall, s.f1] + ([s.aligned_accuracy] if s.aligned is not None else [])
        assert [round(100 * v, 2) for v in ours] == published[name], name
    published_lines = (UD / "cs_pud-eval.txt").read_text(encoding="utf-8").splitlines()
    assert conll18.format_official(scores).splitlines() == [line.rstrip() for line in published_lines[:15]]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_treebanks_equal_the_official_script(tmp_path, seed, make_treebank):
    gold_text, system_text = make_treebank(seed, 120)
    (tmp_path / "g.conllu").write_text(gold_text, encoding="utf-8")
    (tmp_path / "s.conllu").write_text(system_text, encoding="utf-8")
    ours = conll18.evaluate(conll18.load_sentences(FMT.read(tmp_path / "g.conllu")),
                            conll18.load_sentences(FMT.read(tmp_path / "s.conllu")))
    _assert_equal(ours, _official(tmp_path / "g.conllu", tmp_path / "s.conllu"))


GOLD_MWT = """# text = vámonos al mar
1-2\tvámonos\t_\t_\t_\t_\t_\t_\t_\t_
1\tvamos\tir\tVERB\t_\t_\t0\troot\t_\t_
2\tnos\tnosotros\tPRON\t_\t_\t1\tobj\t_\t_
3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_
3\ta\ta\tADP\t_\t_\t5\tcase\t_\t_
4\tel\tel\tDET\t_\t_\t5\tdet\t_\t_
5\tmar\tmar\tNOUN\t_\t_\t1\tobl\t_\t_

"""


def test_multiword_tokens_align_by_common_subsequence():
    # the system does not split "al" (one word "al") and splits "vámonos" as "vamos" + "nos":
    # the LCS aligns vamos, nos (forms equal) and nothing of "al"; "mar" aligns by span.
    system = """1-2\tvámonos\t_\t_\t_\t_\t_\t_\t_\t_
1\tvamos\tir\tVERB\t_\t_\t0\troot\t_\t_
2\tnos\tnosotros\tPRON\t_\t_\t1\tobj\t_\t_
3\tal\ta\tADP\t_\t_\t4\tcase\t_\t_
4\tmar\tmar\tNOUN\t_\t_\t1\tobl\t_\t_

"""
    g = conll18.load_sentences(FMT.parse(GOLD_MWT))
    s = conll18.load_sentences(FMT.parse(system))
    scores = conll18.evaluate(g, s)
    assert (scores["Words"].gold, scores["Words"].system, scores["Words"].correct) == (5, 4, 3)
    assert (scores["Tokens"].gold, scores["Tokens"].system, scores["Tokens"].correct) == (3, 3, 3)
    # UAS: vamos (root) right, nos -> vamos right, mar -> vamos right: 3 of 3 aligned
    assert (scores["UAS"].correct, scores["UAS"].aligned) == (3, 3)
    # MLAS: mar's functional children differ (gold: a, el; system: al, not aligned): wrong
    assert scores["MLAS"].correct == scores["CLAS"].correct - 1


def test_different_text_is_an_error_naming_the_place():
    other = GOLD_MWT.replace("\tmar\tmar\t", "\tmor\tmar\t")
    with pytest.raises(conll18.AlignmentError, match=r"character 10 .*gold sentence 1, system sentence 1.*'ar'.*'or'"):
        conll18.evaluate(conll18.load_sentences(FMT.parse(GOLD_MWT)), conll18.load_sentences(FMT.parse(other)))


# --------------------------------------------------------------------------- assay parse-eval --conll18
def _cli_scores(capsys, *argv):
    import json

    from assay.cli import main

    assert main(["parse-eval", "--conll18", "--json", *map(str, argv)]) == 0
    return {row["metric"]: row for row in json.loads(capsys.readouterr().out)["scores"]}


@pytest.mark.parametrize("extra", [[], ["--shards", "3", "--executor", "threads"],
                                   ["--shards", "8", "--workers", "2"]])
def test_cli_equals_the_official_script_sequential_and_sharded(tmp_path, capsys, extra):
    gold, system = _unzip(tmp_path, "cs_pud-gold"), _unzip(tmp_path, "cs_pud-udpipe")
    official = _official(gold, system)
    ours = _cli_scores(capsys, *extra, gold, system)
    assert list(ours) == list(conll18.METRICS)
    for name in conll18.METRICS:
        r, o = official[name], ours[name]
        assert (o["gold"], o["system"], o["correct"]) == (r.gold_total, r.system_total, r.correct), name
        assert (o["precision"], o["recall"], o["f1"]) == (r.precision, r.recall, r.f1), name


def test_cli_prints_the_report_layout(tmp_path, capsys):
    from assay.cli import main

    gold, system = _unzip(tmp_path, "cs_pud-gold"), _unzip(tmp_path, "cs_pud-udpipe")
    assert main(["parse-eval", "--conll18", str(gold), str(system)]) == 0
    out = capsys.readouterr().out.splitlines()
    published = (UD / "cs_pud-eval.txt").read_text(encoding="utf-8").splitlines()
    assert out[:15] == [line.rstrip() for line in published[:15]]
    assert out[15].startswith("signature: evaluation:conll18|")


def test_cli_different_text_exits_2_naming_the_character(tmp_path, capsys):
    from assay.cli import main

    (tmp_path / "g.conllu").write_text(GOLD_MWT, encoding="utf-8")
    (tmp_path / "s.conllu").write_text(GOLD_MWT.replace("\tmar\tmar\t", "\tmor\tmar\t"), encoding="utf-8")
    assert main(["parse-eval", "--conll18", str(tmp_path / "g.conllu"), str(tmp_path / "s.conllu")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay parse-eval: error: ") and "differ at character 10" in err
