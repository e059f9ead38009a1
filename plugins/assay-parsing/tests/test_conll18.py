"""assay_parsing.conll18 against the official CoNLL 2018 scorer (``udtools.udeval``, a test dependency).

Real data from ``/work/shared/data/ud``: a UDPipe 2 parse of Czech PUD with its own tokenization
and sentence split, and French GSD with re-tokenized sentences; plus the generated treebanks of
conftest.py and small hand-built cases whose alignment is worked out in the comments.
"""

from __future__ import annotations

import gzip
import random
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
                                   ["--shards", "8", "--workers", "2"], ["--workers", "2"]])
def test_cli_equals_the_official_script_sequential_and_sharded(tmp_path, capsys, monkeypatch, extra):
    from assay_parsing import parse_eval

    gold, system = _unzip(tmp_path, "cs_pud-gold"), _unzip(tmp_path, "cs_pud-udpipe")
    official = _official(gold, system)
    if extra[-2:] == ["--workers", "2"] and "--shards" in extra:  # the processes executor, however few words
        monkeypatch.setattr(parse_eval, "PARALLEL_ALIGN_WORDS", 0)
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


# --------------------------------------------------------------------------- whole columns (the --conll18 path)
FUNCTIONAL = ["aux", "aux:pass", "cop", "mark", "det", "det:poss", "clf", "case", "cc"]
CONTENT = ["nsubj", "obj", "obl", "obl:tmod", "nmod", "amod", "advmod", "conj", "compound:prt", "flat:name", "xcomp",
           "acl:relcl", "dep", "fixed"]
OTHER = ["punct", "unknownrel"]
FEATURES = ["Number=Sing", "Number=Plur", "Case=Nom", "Case=Acc", "Tense=Past", "Person=3", "Typo=Yes", "Style=Coll",
            "NumForm=Digit"]
SYLLABLES = ["ka", "Lo", "mi", "to", "ra", "ve", "su", "nd", "e", "a", "Ø", "ß", "é"]


class _W:
    """A word of the generator: its columns, and its head as another _W (None for the root)."""

    def __init__(self, form, lemma, upos, xpos, feats, head, deprel):
        self.form, self.lemma, self.upos, self.xpos, self.feats = form, lemma, upos, xpos, feats
        self.head, self.deprel = head, deprel

    def copy(self):
        return _W(self.form, self.lemma, self.upos, self.xpos, self.feats, self.head, self.deprel)


def _ancestors(w):
    out = []
    while w.head is not None:
        w = w.head
        out.append(w)
    return out


def _gold_sentence(rng):
    n = rng.randint(1, 18)
    order = list(range(n))
    rng.shuffle(order)
    words = [None] * n
    for i, k in enumerate(order):
        form = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))
        feats = rng.sample(FEATURES, rng.randint(0, 3))
        words[k] = _W(form, "_" if rng.random() < 0.1 else form.lower(),
                      rng.choice(["NOUN", "VERB", "DET", "ADP", "AUX"]), rng.choice(["NN", "VB", "DT", "IN"]),
                      "|".join(feats) or "_", None,
                      "root" if i == 0 else rng.choice(FUNCTIONAL + CONTENT + OTHER))
        if i:
            words[k].head = words[rng.choice(order[:i])]
    mwts, i = [], 0
    while i < n - 1:
        if rng.random() < 0.1:
            mwts.append([i, i + 2, words[i].form + words[i + 1].form])
            i += 2
        else:
            i += 1
    return words, mwts


def _system_sentence(rng, words, mwts, retok):
    """A copy of a gold sentence with analysis errors and, with probability ``retok``, another tokenization."""
    by_id = {id(w): w.copy() for w in words}
    out = [by_id[id(w)] for w in words]
    for w in out:
        w.head = by_id[id(w.head)] if w.head is not None else None
    mwts = [list(m) for m in mwts]
    for w in out:
        r = rng.random()
        if w.head is not None and r < 0.15:
            w.head = rng.choice([c for c in out if c is not w and w not in _ancestors(c)])
        elif r < 0.25 and w.head is not None:
            w.deprel = rng.choice(FUNCTIONAL + CONTENT + OTHER)
        elif r < 0.3:
            w.upos = "X"
        elif r < 0.35:
            w.xpos = "XX"
        elif r < 0.42 and w.feats != "_":
            w.feats = "|".join(reversed(w.feats.split("|")))  # the same features in another order
        elif r < 0.47:
            w.feats = "Style=Formal" if w.feats == "_" else w.feats + "|Style=Formal"  # not a universal feature
        elif r < 0.52:
            w.feats = "Number=Dual"
        elif r < 0.58:
            w.lemma = "other"
    in_mwt = {i for start, stop, _ in mwts for i in range(start, stop)}
    if rng.random() < retok:
        op = rng.choice(["split", "merge", "unmwt", "mwt", "mwtforms"])
        free = [i for i in range(len(out)) if i not in in_mwt]
        if op == "split" and any(len(out[i].form) > 1 for i in free):
            i = rng.choice([i for i in free if len(out[i].form) > 1])
            w = out[i]
            k = rng.randint(1, len(w.form) - 1)
            tail = _W(w.form[k:], "_", "X", "_", "_", w, "dep")
            w.form = w.form[:k]
            out.insert(i + 1, tail)
            for m in mwts:
                if m[0] > i:
                    m[0], m[1] = m[0] + 1, m[1] + 1
        elif op == "merge" and any(i + 1 in free for i in free):
            i = rng.choice([i for i in free if i + 1 in free])
            a, b = out[i], out[i + 1]
            keep = b if b in _ancestors(a) else a
            a.form, a.head, a.deprel = a.form + b.form, keep.head, keep.deprel
            for w in out:
                if w.head is b:
                    w.head = a
            if a.head is a:
                a.head = None
            del out[i + 1]
            for m in mwts:
                if m[0] > i:
                    m[0], m[1] = m[0] - 1, m[1] - 1
        elif op == "unmwt" and mwts:  # the multiword token as one word
            m = rng.choice(mwts)
            start, stop, text = m
            top = next(w for w in out[start:stop] if not any(a in out[start:stop] for a in _ancestors(w)))
            one = top
            one.form = text
            for w in out:
                if w.head in out[start:stop]:
                    w.head = one
            if one.head is one:
                one.head = None
            out[start:stop] = [one]
            mwts.remove(m)
            for m2 in mwts:
                if m2[0] > start:
                    m2[0], m2[1] = m2[0] - (stop - start - 1), m2[1] - (stop - start - 1)
        elif op == "mwt" and free:  # one word as a multiword token of two words
            i = rng.choice(free)
            w = out[i]
            extra = _W(w.form.upper(), "_", "PRON", "_", "_", w, "obj")
            out.insert(i + 1, extra)
            for m in mwts:
                if m[0] > i:
                    m[0], m[1] = m[0] + 1, m[1] + 1
            mwts.append([i, i + 2, w.form])
            mwts.sort()
        elif op == "mwtforms" and mwts:  # the words of a multiword token, spelled otherwise
            start, stop, _ = rng.choice(mwts)
            for w in out[start:stop]:
                w.form = w.form.upper() if rng.random() < 0.5 else w.form + "x"
    return out, mwts


def _write(sentences):
    lines = []
    for k, (words, mwts) in enumerate(sentences):
        lines.append(f"# sent_id = {k}")
        index = {id(w): i + 1 for i, w in enumerate(words)}
        starts = {m[0]: m for m in mwts}
        for i, w in enumerate(words):
            if i in starts:
                lines.append(f"{i + 1}-{starts[i][1]}\t{starts[i][2]}" + "\t_" * 8)
            head = index[id(w.head)] if w.head is not None else 0
            lines.append(f"{i + 1}\t{w.form}\t{w.lemma}\t{w.upos}\t{w.xpos}\t{w.feats}\t{head}\t{w.deprel}\t_\t_")
            if i == 0 and k % 7 == 3:
                lines.append("1.1\tnull\t_\t_\t_\t_\t_\t_\t1:dep\t_")
        lines.append("")
    return "\n".join(lines) + "\n"


def _merge(a, b):
    """Two sentences as one: b's root attaches to a's root."""
    (wa, ma), (wb, mb) = a, b
    root = next(w for w in wa if w.head is None)
    for w in wb:
        if w.head is None:
            w.head, w.deprel = root, "parataxis"
    return wa + wb, ma + [[s + len(wa), e + len(wa), t] for s, e, t in mb]


def make_pair(seed, n, retok=0.0):
    """Gold and system texts of the same characters; the system re-tokenizes about ``retok`` of the sentences
    and merges about ``retok / 2`` of them with the next."""
    rng = random.Random(seed)
    gold = [_gold_sentence(rng) for _ in range(n)]
    system = [_system_sentence(rng, w, m, retok) for w, m in gold]
    merged = []
    for sentence in system:
        if merged and rng.random() < retok / 2:
            merged[-1] = _merge(merged[-1], sentence)
        else:
            merged.append(sentence)
    return _write(gold), _write(merged)


def _columns_scores(tmp_path, gold_text, system_text, run_parts=None):
    from assay_parsing.columns import read_columns

    (tmp_path / "g.conllu").write_text(gold_text, encoding="utf-8")
    (tmp_path / "s.conllu").write_text(system_text, encoding="utf-8")
    g, s = read_columns(tmp_path / "g.conllu"), read_columns(tmp_path / "s.conllu")
    assert g is not None and s is not None
    scores = conll18.evaluate_columns(g, s, run_parts=run_parts)
    # the system read like the gold file (its lines equal to the gold's not split again; counted at the others)
    like = read_columns(tmp_path / "s.conllu", like=g)
    assert like == s and conll18.evaluate_columns(g, like) == scores
    return scores


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("retok", [0.0, 0.3])
def test_columns_equal_the_official_script(tmp_path, seed, retok):
    # retok 0: the same tokens everywhere, counted over whole columns; 0.3: about a third of the sentences
    # tokenized or split otherwise, aligned word by word, the rest counted over columns
    gold_text, system_text = make_pair(seed, 150, retok)
    calls = []

    def run_parts(parts):
        calls.append(len(parts))
        return [conll18.evaluate_parts(parts)]

    ours = _columns_scores(tmp_path, gold_text, system_text, run_parts)
    _assert_equal(ours, _official(tmp_path / "g.conllu", tmp_path / "s.conllu"))
    reference = conll18.evaluate(conll18.load_sentences(FMT.parse(gold_text)),
                                 conll18.load_sentences(FMT.parse(system_text)))
    assert ours == reference
    if retok:
        assert calls and 20 < calls[0] < 100  # only the parts tokenized otherwise are aligned word by word
        assert ours["Words"].correct < min(ours["Words"].gold, ours["Words"].system)
    else:
        assert calls == []  # nothing to align
        assert ours["Words"].correct == ours["Words"].gold == ours["Words"].system
    assert 0 < ours["MLAS"].correct < ours["CLAS"].correct < ours["CLAS"].gold
    assert ours["UFeats"].correct < ours["UFeats"].aligned and ours["Lemmas"].correct < ours["Lemmas"].aligned


def test_columns_one_sentence_tokenized_otherwise(tmp_path, to_conllu):
    # three sentences; the system splits "vámonos" of the middle one into two words (no multiword token):
    # the first and last are counted over columns, the middle one is the only part aligned word by word
    first = ["1 Hola hola INTJ _ _ 0 root _ _", ""]
    last = ["1 Sí sí ADV _ Polarity=Pos 0 root _ _", "2 . . PUNCT _ _ 1 punct _ _", ""]
    gold = to_conllu(*first, *GOLD_MWT.replace("\t", " ").splitlines()[1:], *last)
    system = to_conllu(*first, "1 vámo ir VERB _ _ 0 root _ _", "2 nos nosotros PRON _ _ 1 obj _ _",
                       "3-4 al _ _ _ _ _ _ _ _", "3 a a ADP _ _ 5 case _ _", "4 el el DET _ _ 5 det _ _",
                       "5 mar mar NOUN _ _ 1 obl _ _", "", *last)
    calls = []

    def run_parts(parts):
        calls.append([(len(g), len(s), [len(x.words) for x in g], [len(x.words) for x in s]) for g, s in parts])
        return [conll18.evaluate_parts(parts)]

    ours = _columns_scores(tmp_path, gold, system, run_parts)
    assert calls == [[(1, 1, [5], [5])]]
    _assert_equal(ours, _official(tmp_path / "g.conllu", tmp_path / "s.conllu"))
    assert (ours["Tokens"].gold, ours["Tokens"].system, ours["Tokens"].correct) == (6, 7, 5)
    # words: Hola, Sí, "." and mar by span; nos (vamos/vámo differ) by the common subsequence; a, el in "al"
    assert (ours["Words"].gold, ours["Words"].system, ours["Words"].correct) == (8, 8, 7)


def test_cli_the_english_benchmark_pair_prints_the_official_report(tmp_path, capsys):
    # the pair of bench/bench_parse_eval.py: the same tokens in both files, every row of the report equal
    from assay.cli import main

    gold, system = _unzip(tmp_path, "en_ewt-gold"), _unzip(tmp_path, "en_ewt-sys-mid")
    results = _official(gold, system)
    assert main(["parse-eval", "--conll18", str(gold), str(system)]) == 0
    out = capsys.readouterr().out.splitlines()
    printed = udeval.build_evaluation_table(results, True, False, False).splitlines()  # what 'udeval -v' prints
    assert out[:15] == [line.rstrip() for line in printed[:15]]  # every row but ELAS and EULAS
    assert "LAS        |     81.55 |     81.55 |     81.55 |     81.55" in out
    ours = _cli_scores(capsys, gold, system)
    for name in conll18.METRICS:
        r, o = results[name], ours[name]
        assert (o["gold"], o["system"], o["correct"]) == (r.gold_total, r.system_total, r.correct), name


def test_cli_workers_with_nothing_to_align_say_so(tmp_path, capsys):
    from assay.cli import main

    gold, system = _unzip(tmp_path, "fr_gsd-gold"), _unzip(tmp_path, "fr_gsd-sys-mid")
    assert main(["parse-eval", "--conll18", "--workers", "2", str(gold), str(system)]) == 0
    captured = capsys.readouterr()
    assert "no parallel work to do" in captured.err
    retok = _unzip(tmp_path, "fr_gsd-sys-retok")  # 25 sentences tokenized otherwise: too few words for workers
    assert main(["parse-eval", "--conll18", "--workers", "2", str(gold), str(retok)]) == 0
    err = capsys.readouterr().err
    assert "parts are tokenized otherwise" in err and "aligned in this process" in err


def test_cli_workers_align_the_parts_tokenized_otherwise_in_parallel(tmp_path, capsys, monkeypatch):
    from assay.cli import main
    from assay_parsing import conll18 as module
    from assay_parsing import parse_eval

    monkeypatch.setattr(parse_eval, "PARALLEL_ALIGN_WORDS", 100)
    ran = []
    task = parse_eval.conll18_task

    def spy(group, shared):
        ran.append(len(group.parts))
        return task(group, shared)

    monkeypatch.setattr(parse_eval, "conll18_task", spy)
    gold, system = _unzip(tmp_path, "fr_gsd-gold"), _unzip(tmp_path, "fr_gsd-sys-retok")
    assert main(["parse-eval", "--conll18", "--json", "--workers", "2", "--shards", "4", "--executor", "threads",
                 str(gold), str(system)]) == 0
    captured = capsys.readouterr()
    assert "parse-eval:" not in captured.err  # run in parallel: nothing to say
    assert len(ran) == 4 and sum(ran) == 25  # the 25 re-tokenized sentences, in 4 groups
    import json

    ours = {row["metric"]: row for row in json.loads(captured.out)["scores"]}
    official = _official(gold, system)
    for name in module.METRICS:
        assert (ours[name]["gold"], ours[name]["system"], ours[name]["correct"]) == \
            (official[name].gold_total, official[name].system_total, official[name].correct), name


def test_columns_forms_with_spaces_align_through_their_characters(tmp_path, to_conllu):
    # "New York" and "10 000" (a no-break space) are one word each in gold, two in the system: the spaces are
    # not characters of the text, so the texts are equal and the other words align; checked against udeval
    gold = to_conllu("1 Hi hi INTJ _ _ 0 root _ _", "", "1 New_York New_York PROPN _ _ 2 nsubj _ _",
                     "2 has have VERB _ _ 0 root _ _", "3 10\u00a0000 10000 NUM _ _ 4 nummod _ _",
                     "4 fans fan NOUN _ _ 2 obj _ _", "").replace("New_York", "New York")
    system = to_conllu("1 Hi hi INTJ _ _ 0 root _ _", "", "1 New new PROPN _ _ 3 nsubj _ _",
                       "2 York York PROPN _ _ 1 flat _ _", "3 has have VERB _ _ 0 root _ _",
                       "4 10 10 NUM _ _ 6 nummod _ _", "5 000 000 NUM _ _ 4 flat _ _", "6 fans fan NOUN _ _ 3 obj _ _",
                       "")
    ours = _columns_scores(tmp_path, gold, system)
    _assert_equal(ours, _official(tmp_path / "g.conllu", tmp_path / "s.conllu"))
    assert (ours["Words"].gold, ours["Words"].system, ours["Words"].correct) == (5, 7, 3)  # Hi, has, fans
    same = _columns_scores(tmp_path, gold, gold)  # alike: counted over columns, the spaces checked
    assert same["LAS"].correct == same["LAS"].gold == 5


def test_cli_a_form_of_spaces_only_is_the_readers_error(tmp_path, capsys, to_conllu):
    from assay.cli import main

    text = to_conllu("# sent_id = one", "1 a a X _ _ 0 root _ _", "2 SPACE SPACE X _ _ 1 dep _ _", "")
    text = text.replace("\tSPACE\t", "\t\u3000\t", 1)
    (tmp_path / "g.conllu").write_text(text, encoding="utf-8")
    (tmp_path / "s.conllu").write_text(text, encoding="utf-8")
    assert main(["parse-eval", "--conll18", str(tmp_path / "g.conllu"), str(tmp_path / "s.conllu")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay parse-eval: error: ") and "sentence 'one' at " in err and "g.conllu:1" in err
    assert "a FORM is empty once its spaces are removed" in err
