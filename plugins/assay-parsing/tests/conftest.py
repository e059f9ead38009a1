"""Shared fixtures: a small realistic gold / system pair written by hand (see test_evaluators for the counts)."""

from __future__ import annotations

import random

import pytest

T = "\t"


def conllu(*rows: str) -> str:
    """Join rows written with single spaces between columns into CoNLL-U lines (tabs)."""
    return "".join((row if row.startswith("#") or not row else T.join(row.split(" "))) + "\n" for row in rows)


GOLD = conllu(
    "# sent_id = s1",
    "# text = Ella vendió del pan ayer.",
    "1 Ella ella PRON _ _ 2 nsubj _ _",
    "2 vendió vender VERB _ _ 0 root _ _",
    "3-4 del _ _ _ _ _ _ _ _",
    "3 de de ADP _ _ 5 case _ _",
    "4 el el DET _ _ 5 det _ _",
    "5 pan pan NOUN _ _ 2 obj _ _",
    "5.1 vendió vender VERB _ _ _ _ 2:conj _",
    "6 ayer ayer ADV _ _ 2 obl:tmod _ SpaceAfter=No",
    "7 . . PUNCT _ _ 2 punct _ _",
    "",
    "# sent_id = s2",
    "1 The the DET DT _ 2 det _ _",
    "2 dog dog NOUN NN _ 3 nsubj _ _",
    "3 barks bark VERB VBZ _ 0 root _ _",
    "",
)

SYSTEM = conllu(
    "# sent_id = s1",
    "# text = Ella vendió del pan ayer.",
    "1 Ella ella PRON _ _ 2 nsubj:pass _ _",
    "2 vendió vender VERB _ _ 0 root _ _",
    "3-4 del _ _ _ _ _ _ _ _",
    "3 de de ADP _ _ 5 case _ _",
    "4 el el PRON _ _ 2 det _ _",
    "5 pan pan NOUN _ _ 2 nmod _ _",
    "5.1 vendió vender VERB _ _ _ _ 2:conj _",
    "6 ayer ayer ADV _ _ 5 obl _ SpaceAfter=No",
    "7 . . PUNCT _ _ 2 punct _ _",
    "",
    "# sent_id = s2",
    "1 The the DET NN _ 2 nmod:poss _ _",
    "2 dog dog NOUN NN _ 3 nsubj _ _",
    "3 barks bark VERB VBZ _ 0 root _ _",
    "",
)


@pytest.fixture
def gold_text() -> str:
    return GOLD


@pytest.fixture
def system_text() -> str:
    return SYSTEM


@pytest.fixture
def to_conllu():
    """``to_conllu("1 a _ ...", "")`` -> CoNLL-U text (rows with single spaces become tab-separated)."""
    return conllu


RELS = ["nsubj", "nsubj:pass", "obj", "iobj", "obl", "obl:tmod", "nmod", "nmod:poss", "amod", "advmod", "det",
        "det:poss", "case", "cc", "cc:preconj", "aux", "aux:pass", "cop", "mark", "punct", "conj", "compound:prt",
        "acl:relcl", "flat:name", "xcomp", "ccomp", "advcl", "dep", "clf", "discourse", "vocative", "fixed",
        "orphan", "expl:pv", "nummod", "unknownrel"]
UPOS = ["NOUN", "VERB", "ADJ", "ADV", "ADP", "DET", "PRON", "AUX", "CCONJ", "PUNCT", "PROPN", "NUM"]
SYLLABLES = ["ka", "lo", "mi", "to", "ra", "ve", "su", "nd", "e", "a", "Ø", "ß"]


def _descendants_or_self(heads: dict[int, int], word: int, candidate: int) -> bool:
    node = candidate
    while node != 0:
        if node == word:
            return True
        node = heads[node]
    return False


def _write(rng: random.Random, n_sentences: int) -> tuple[str, str]:
    """Random gold and system CoNLL-U texts: same words, different trees, labels and tags."""
    gold_out: list[str] = []
    system_out: list[str] = []
    for k in range(n_sentences):
        n = rng.randint(1, 25)
        order = list(range(1, n + 1))
        rng.shuffle(order)
        heads = {order[0]: 0}
        for i, w in enumerate(order[1:], start=1):
            heads[w] = rng.choice(order[:i])
        rels = {w: ("root" if heads[w] == 0 else rng.choice(RELS)) for w in order}
        upos = {w: rng.choice(UPOS) for w in order}
        forms = {w: "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))) for w in order}
        # system: re-attach some words (never creating a cycle or a second root), relabel, retag
        sys_heads = dict(heads)
        for w in range(1, n + 1):
            if sys_heads[w] != 0 and rng.random() < 0.25:
                options = [c for c in range(1, n + 1) if not _descendants_or_self(sys_heads, w, c)]
                sys_heads[w] = rng.choice(options)
        sys_rels = {w: (rng.choice(RELS + ["nsubj", "obl"]) if rels[w] != "root" and rng.random() < 0.2 else rels[w])
                    for w in rels}
        sys_upos = {w: (rng.choice(UPOS) if rng.random() < 0.1 else upos[w]) for w in upos}
        ranges = {}
        w = 1
        while w < n:
            if rng.random() < 0.12:
                ranges[w] = w + 1
                w += 2
            else:
                w += 1
        empty_after = {w for w in range(1, n + 1) if w not in ranges and w - 1 not in ranges and rng.random() < 0.05}
        for out, hd, rl, up in ((gold_out, heads, rels, upos), (system_out, sys_heads, sys_rels, sys_upos)):
            out.append(f"# sent_id = {k}")
            for w in range(1, n + 1):
                if w in ranges:
                    out.append(f"{w}-{ranges[w]}\t{forms[w]}{forms[w + 1]}\t_\t_\t_\t_\t_\t_\t_\t_")
                out.append(f"{w}\t{forms[w]}\t_\t{up[w]}\t_\t_\t{hd[w]}\t{rl[w]}\t_\t_")
                if w in empty_after:
                    out.append(f"{w}.1\t{forms[w]}\t_\t_\t_\t_\t_\t_\t{w}:orphan\t_")
            out.append("")
    return "\n".join(gold_out) + "\n", "\n".join(system_out) + "\n"




@pytest.fixture
def make_treebank():
    """``make_treebank(seed, n_sentences) -> (gold_text, system_text)``, deterministic per seed."""
    return lambda seed, n_sentences: _write(random.Random(seed), n_sentences)
