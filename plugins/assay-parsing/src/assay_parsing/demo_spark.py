"""Demo section ``spark``: the treebank evaluation on Apache Spark (``local[2]``), in memory and from files.

1. Generate the synthetic treebank and system output of the ``treebank`` section (smaller).
2. Evaluate UAS, LAS, CLAS and UPOS accuracy sequentially and with the ``spark`` executor
   (one Spark partition per shard, the evaluator broadcast once) and check the tallies agree.
3. ``hadoop=True``: split the gold treebank into CoNLL-U part files and let Spark read and
   parse them on the executors (``DataPool.from_paths``); the driver never loads a gold
   sentence. The "model" is the system output, looked up by ``sent_id`` and broadcast
   once. UAS and LAS must equal those of step 2.

Needs pyspark (``pip install 'assay[spark]'``) and Java 17+; without pyspark the section
says so and ends.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


class SystemOutput:
    """A "parser" that answers with the system analysis of each gold sentence (by ``sent_id``)."""

    def __init__(self, analyses: dict[str, Any]) -> None:
        self.analyses = analyses

    def parse(self, sentence: Any) -> Any:
        return self.analyses[sentence.sent_id]

    def __len__(self) -> int:
        return len(self.analyses)


def split_conllu(path: Path, out_dir: Path, parts: int) -> list[Path]:
    """Write ``path``'s sentences into ``parts`` files of consecutive whole sentences."""
    blocks = [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    out_dir.mkdir(parents=True, exist_ok=True)
    size, extra = divmod(len(blocks), parts)
    files, start = [], 0
    for i in range(parts):
        stop = start + size + (i < extra)
        file = out_dir / f"part-{i:03d}.conllu"
        file.write_text("\n\n".join(blocks[start:stop]) + "\n\n", encoding="utf-8")
        files.append(file)
        start = stop
    return files


def run(out_dir: Path, *, sentences: int = 1500, seed: int = 20261121, master: str = "local[2]",
        num_shards: int = 4, files: int = 6) -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("pyspark is not installed, so there is nothing to show here: pip install 'assay[spark]'.")
        return
    from assay import DataPool, EvaluatorBase
    from assay.errors import EvaluationError
    from assay.plugins import load_data_format
    from assay_parsing.demo_treebank import generate
    from assay_parsing.parse_eval import evaluate_pairs, format_table, make_executor, read_pairs

    out_dir = Path(out_dir)
    gold_path, system_path, counts = generate(out_dir, sentences=sentences, seed=seed)
    print(f"Generated {counts['sentences']} sentences, {counts['words']} words (seed {seed}).")
    pairs = read_pairs(gold_path, system_path, format="conllu")

    print("\n-- sequential evaluation --", flush=True)
    sequential = evaluate_pairs(pairs)

    start = time.perf_counter()
    with make_executor(spark=master) as executor:
        sc = executor.context
        print(f"\nSpark {sc.version} on {sc.master} started in {time.perf_counter() - start:.1f} s", flush=True)
        print(f"\n-- Spark: {num_shards} shards, one partition each --", flush=True)
        start = time.perf_counter()
        on_spark = evaluate_pairs(pairs, executor=executor, num_shards=num_shards)
        took = time.perf_counter() - start
        for label, seq in sequential.items():
            got = on_spark[label]
            if (got.correct_num, got.gold_set_size, got.sentence_num) != \
                    (seq.correct_num, seq.gold_set_size, seq.sentence_num):
                raise EvaluationError(f"{label}: Spark gave {got!r}, the sequential run {seq!r}.")
        print(f"\nSpark and sequential tallies are identical for every evaluator ({took:.1f} s on Spark).\n")
        print(format_table(on_spark))

        parts = split_conllu(gold_path, out_dir / "gold-parts", files)
        system = {s.sent_id: s for s in load_data_format("conllu").read(system_path)}
        pool = DataPool.from_paths(str(out_dir / "gold-parts" / "*.conllu"), format="conllu",
                                   num_shards=num_shards)
        print(f"\n-- Spark, hadoop=True: {len(parts)} gold files read and parsed on the executors, "
              f"{num_shards} shards of whole files --", flush=True)
        ev = EvaluatorBase()
        for name, label in (("uas", "UAS"), ("las", "LAS")):
            r = ev.parallelEvaluate(pool, SystemOutput(system), name, sc, True)
            seq = sequential[label]
            if (r.correct_num, r.gold_set_size) != (seq.correct_num, seq.gold_set_size):
                raise EvaluationError(f"{label} from files on Spark gave {r!r}, the sequential run {seq!r}.")
            print(f"{label}: {r.correct_num} / {r.gold_set_size}, shards of "
                  f"{', '.join(str(s.sentence_num) for s in r.shards)} sentences: same as sequential.")
