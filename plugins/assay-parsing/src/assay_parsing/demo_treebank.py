"""Demo section ``treebank``: a synthetic treebank, a noisy parser's output, and their scores.

1. Generate (deterministically, ``random.Random(seed)``) a gold treebank in CoNLL-U:
   valid trees with mostly short dependencies, UPOS tags, relations with subtypes
   (``nsubj:pass``, ``obl:tmod``, ``acl:relcl`` ...), multiword tokens (a preposition fused
   with the following determiner, like Spanish *del* = *de* + *el*) and a few empty nodes.
2. Derive a system output with realistic errors: attachment errors that grow with the
   dependency length (re-attachments keep the output a tree), label confusions between
   similar relations (more frequent when the head is wrong; some change only the subtype,
   which CoNLL 2018 LAS ignores), and tag confusions (NOUN/PROPN, AUX/VERB, ADP/SCONJ ...).
3. Read both files back through the registered ``conllu`` data format, evaluate UAS, LAS,
   CLAS and UPOS accuracy sequentially and sharded over local processes, check that both
   give identical tallies, and print the ``EVALUATOR`` lines and a table.
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path

UPOS_WEIGHTS = {
    "NOUN": 20, "VERB": 11, "ADP": 10, "DET": 10, "PUNCT": 9, "ADJ": 7, "PRON": 7, "PROPN": 5,
    "ADV": 5, "AUX": 5, "CCONJ": 3, "NUM": 3, "SCONJ": 2,
}
#: relations a dependent with this UPOS takes, with weights
DEPRELS = {
    "NOUN": {"nsubj": 6, "obj": 6, "obl": 4, "nmod": 4, "conj": 2, "nsubj:pass": 1, "obl:tmod": 1, "compound": 1},
    "PROPN": {"nsubj": 4, "obj": 2, "flat:name": 2, "nmod:poss": 1, "appos": 1},
    "VERB": {"advcl": 2, "ccomp": 2, "xcomp": 2, "conj": 2, "acl:relcl": 2, "parataxis": 1},
    "ADJ": {"amod": 8, "xcomp": 1, "conj": 1},
    "ADV": {"advmod": 1},
    "PRON": {"nsubj": 6, "obj": 4, "nmod:poss": 2, "expl": 1},
    "DET": {"det": 9, "det:poss": 1},
    "ADP": {"case": 1},
    "AUX": {"aux": 3, "cop": 2, "aux:pass": 1},
    "CCONJ": {"cc": 1},
    "SCONJ": {"mark": 1},
    "NUM": {"nummod": 1},
    "PUNCT": {"punct": 1},
}
#: words with these tags take no dependents
FUNCTION_TAGS = {"ADP", "DET", "AUX", "CCONJ", "SCONJ", "PUNCT"}
#: what a parser confuses a relation with (first entries change only the subtype)
LABEL_CONFUSIONS = {
    "nsubj": ["obj", "nsubj:pass"], "nsubj:pass": ["nsubj", "obj"], "obj": ["nsubj", "obl", "iobj"],
    "obl": ["nmod", "obj", "obl:tmod"], "obl:tmod": ["obl", "nmod"], "nmod": ["obl", "nmod:poss"],
    "nmod:poss": ["nmod", "det:poss"], "amod": ["nmod", "acl"], "advcl": ["ccomp", "xcomp", "conj"],
    "ccomp": ["xcomp", "advcl"], "xcomp": ["ccomp", "obj"], "conj": ["parataxis", "appos"],
    "acl:relcl": ["acl", "advcl"], "aux": ["cop", "aux:pass"], "aux:pass": ["aux"], "cop": ["aux"],
    "det": ["det:poss", "nmod:poss"], "det:poss": ["det"], "case": ["mark"], "mark": ["case", "advmod"],
    "advmod": ["obl", "amod"], "nummod": ["amod", "nmod"], "compound": ["nmod", "amod"],
    "flat:name": ["compound", "appos"], "appos": ["conj", "flat:name"], "expl": ["nsubj"],
    "parataxis": ["conj"], "cc": ["advmod"], "punct": ["punct"],
}
TAG_CONFUSIONS = {
    "NOUN": ["PROPN", "ADJ"], "PROPN": ["NOUN"], "ADJ": ["VERB", "NOUN"], "VERB": ["AUX", "ADJ"],
    "AUX": ["VERB"], "ADP": ["SCONJ", "ADV"], "SCONJ": ["ADP"], "DET": ["PRON"], "PRON": ["DET"],
    "ADV": ["ADJ"], "NUM": ["NOUN"], "CCONJ": ["SCONJ"],
}
SYLLABLES = ["ka", "lo", "mi", "ne", "ta", "ru", "so", "vi", "de", "an", "el", "or", "us", "pa", "gi"]


def _vocabulary(rng: random.Random) -> dict[str, list[str]]:
    """A small invented lexicon per UPOS (function words short, content words longer)."""
    vocab: dict[str, list[str]] = {}
    for tag in UPOS_WEIGHTS:
        short = tag in FUNCTION_TAGS
        words = {"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 1 if short else 3)))
                 for _ in range(8 if short else 60)}
        vocab[tag] = sorted(words)
    vocab["PROPN"] = [w.capitalize() for w in vocab["PROPN"]]
    vocab["NUM"] = [str(n) for n in range(1, 40)]
    vocab["PUNCT"] = [","]
    return vocab


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _in_subtree(heads: list[int], top: int, node: int) -> bool:
    """Whether ``node`` is ``top`` or below it (``heads[i]`` is the head of word i; index 0 unused)."""
    while node != 0:
        if node == top:
            return True
        node = heads[node]
    return False


def gold_sentence(rng: random.Random, vocab: dict[str, list[str]]) -> dict[str, list]:
    """One gold sentence: forms, tags, heads and relations (index 0 is a dummy root)."""
    n = max(3, min(60, int(rng.gammavariate(4.0, 5.0))))
    tags = ["ROOT"] + [_pick(rng, UPOS_WEIGHTS) for _ in range(n)]
    tags[n] = "PUNCT"                                   # sentence-final punctuation
    root = rng.randint(max(1, n // 4), max(1, (3 * n) // 4))
    tags[root] = "VERB"
    heads = [0] * (n + 1)
    attached = [root]
    order = [w for w in range(1, n + 1) if w != root]
    rng.shuffle(order)
    for w in order:                                     # attach to a nearby content word
        hosts = [h for h in attached if tags[h] not in FUNCTION_TAGS]
        heads[w] = rng.choices(hosts, weights=[1.0 / abs(h - w) ** 2 for h in hosts])[0]
        attached.append(w)
    heads[n] = root
    rels = ["_"] + [("root" if w == root else _pick(rng, DEPRELS[tags[w]])) for w in range(1, n + 1)]
    forms = ["_"] + [("." if w == n else rng.choice(vocab[tags[w]])) for w in range(1, n + 1)]
    return {"forms": forms, "tags": tags, "heads": heads, "rels": rels}


def system_analysis(rng: random.Random, gold: dict[str, list]) -> dict[str, list]:
    """The parser's output for a gold sentence: the same words with realistic errors."""
    n = len(gold["forms"]) - 1
    heads = list(gold["heads"])
    rels = list(gold["rels"])
    tags = list(gold["tags"])
    for w in range(1, n + 1):
        wrong_head = False
        if heads[w] != 0:
            distance = abs(w - gold["heads"][w])
            if rng.random() < 0.03 + 0.35 * (1.0 - math.exp(-(distance - 1) / 6.0)):
                options = [c for c in range(1, n + 1) if c != gold["heads"][w] and not _in_subtree(heads, w, c)]
                if options:
                    heads[w] = rng.choices(options, weights=[1.0 / abs(c - w) ** 1.5 for c in options])[0]
                    wrong_head = True
        if rels[w] != "root" and rng.random() < (0.25 if wrong_head else 0.05):
            rels[w] = rng.choice(LABEL_CONFUSIONS.get(rels[w], ["dep"]))
        if tags[w] in TAG_CONFUSIONS and rng.random() < 0.03:
            tags[w] = rng.choice(TAG_CONFUSIONS[tags[w]])
    return {"forms": gold["forms"], "tags": tags, "heads": heads, "rels": rels}


def conllu_lines(k: int, analysis: dict[str, list], fused: set[int], empty_after: int | None) -> list[str]:
    """CoNLL-U lines of one sentence; ``fused`` words start a two-word multiword token."""
    forms, tags, heads, rels = analysis["forms"], analysis["tags"], analysis["heads"], analysis["rels"]
    n = len(forms) - 1
    tokens, w = [], 1
    while w <= n:
        tokens.append(forms[w] + forms[w + 1] if w in fused else forms[w])
        w += 2 if w in fused else 1
    lines = [f"# sent_id = synth-{k + 1}", f"# text = {' '.join(tokens)}"]
    for w in range(1, n + 1):
        if w in fused:
            lines.append(f"{w}-{w + 1}\t{forms[w] + forms[w + 1]}\t_\t_\t_\t_\t_\t_\t_\t_")
        lines.append(f"{w}\t{forms[w]}\t{forms[w].lower()}\t{tags[w]}\t_\t_\t{heads[w]}\t{rels[w]}\t_\t_")
        if w == empty_after:
            root = heads.index(0, 1)
            lines.append(f"{w}.1\t{forms[root]}\t{forms[root].lower()}\tVERB\t_\t_\t_\t_\t{root}:conj\t_")
    return lines + [""]


def generate(out_dir: Path, *, sentences: int, seed: int) -> tuple[Path, Path, dict[str, int]]:
    """Write ``gold.conllu`` and ``system.conllu`` under ``out_dir``; return their paths and counts."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    gold_lines: list[str] = []
    system_lines: list[str] = []
    counts = {"sentences": sentences, "words": 0, "multiword tokens": 0, "empty nodes": 0}
    for k in range(sentences):
        gold = gold_sentence(rng, vocab)
        system = system_analysis(rng, gold)
        n = len(gold["forms"]) - 1
        fused: set[int] = set()
        for w in range(1, n):                            # ADP + DET -> one token, half of the time
            if gold["tags"][w] == "ADP" and gold["tags"][w + 1] == "DET" and w - 1 not in fused \
                    and rng.random() < 0.5:
                fused.add(w)
        empty_after = rng.randint(1, n) if rng.random() < 0.02 else None
        if empty_after is not None and (empty_after in fused or empty_after - 1 in fused):
            empty_after = None                          # keep empty nodes outside multiword tokens
        gold_lines += conllu_lines(k, gold, fused, empty_after)
        system_lines += conllu_lines(k, system, fused, empty_after)
        counts["words"] += n
        counts["multiword tokens"] += len(fused)
        counts["empty nodes"] += empty_after is not None
    out_dir.mkdir(parents=True, exist_ok=True)
    gold_path, system_path = out_dir / "gold.conllu", out_dir / "system.conllu"
    gold_path.write_text("\n".join(gold_lines) + "\n", encoding="utf-8")
    system_path.write_text("\n".join(system_lines) + "\n", encoding="utf-8")
    return gold_path, system_path, counts


def run(out_dir: Path, *, sentences: int = 3000, seed: int = 20261121, workers: int | None = None,
        num_shards: int = 8) -> None:
    """Generate the treebank and the system output, evaluate both ways, and print the results."""
    from assay.errors import EvaluationError
    from assay_parsing.parse_eval import evaluate_pairs, format_table, make_executor, read_pairs

    start = time.perf_counter()
    gold_path, system_path, counts = generate(Path(out_dir), sentences=sentences, seed=seed)
    print(f"Generated {', '.join(f'{v} {k}' for k, v in counts.items())} (seed {seed}) "
          f"in {time.perf_counter() - start:.2f} s:\n  {gold_path}\n  {system_path}")

    pairs = read_pairs(gold_path, system_path, format="conllu")
    print("\n-- sequential evaluation (this process) --", flush=True)
    sequential = evaluate_pairs(pairs)
    print(f"\n-- parallel evaluation ({num_shards} shards over local processes) --", flush=True)
    with make_executor("processes", workers=workers) as executor:
        parallel = evaluate_pairs(pairs, executor=executor, num_shards=num_shards)

    for label, seq in sequential.items():
        par = parallel[label]
        if (seq.correct_num, seq.gold_set_size, seq.sentence_num) != \
                (par.correct_num, par.gold_set_size, par.sentence_num):
            raise EvaluationError(f"{label}: the parallel run gave {par!r}, the sequential run {seq!r}.")
    print("\nSequential and parallel tallies are identical for every evaluator.\n")
    print(format_table(sequential))
