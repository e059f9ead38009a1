"""The plugin module named by the entry point. Keep it cheap to import: assay imports it
on the first registry lookup. Import heavy libraries inside the functions that use them."""

from __future__ import annotations

from assay import DataFormat, DataFormatError, hookimpl


class TaggedLines(DataFormat):
    """One sentence per line: ``gold_tags<TAB>predicted_tags``, tags separated by spaces.

    >>> TaggedLines().parse("A B\\tA C\\n")
    [{'gold': ['A', 'B'], 'pred': ['A', 'C']}]
    """

    name = "tagged_lines"
    extensions = (".tags",)

    def parse(self, text, *, source="<string>"):
        items = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            gold, tab, pred = line.partition("\t")
            if not tab:
                raise DataFormatError("expected gold and predicted tags separated by a tab", source=source, line=lineno)
            items.append({"gold": gold.split(), "pred": pred.split()})
        return items


class TagMatch:
    """Sentence evaluator: tags equal to the gold tag, out of the gold tags.

    A picklable instance of a module-level class, so parallel executors can send it to workers.
    ``ignore`` names tags that are not counted (e.g. punctuation).
    """

    def __init__(self, *, ignore: tuple[str, ...] = ()) -> None:
        self.ignore = frozenset(ignore)

    def __call__(self, sent, w_vector):
        pairs = [(g, p) for g, p in zip(sent["gold"], sent["pred"]) if g not in self.ignore]
        return sum(g == p for g, p in pairs), len(pairs)


@hookimpl
def assay_register_data_formats(register):
    register("tagged_lines", TaggedLines, extensions=TaggedLines.extensions,
             description="gold and predicted tags, tab-separated, one sentence per line",
             examples=[{"text": "D N V\tD N N\nN PUNCT V\tN X V\n"}])  # sample inputs of the conformance suite


@hookimpl
def assay_register_sentence_evaluators(register):
    register("tag_match", TagMatch, description="tags equal to the gold tag, out of the gold tags",
             examples=[{"items": [{"gold": ["D", "N", "V"], "pred": ["D", "N", "N"]},
                                  {"gold": ["N", "PUNCT"], "pred": ["N", "X"]}],
                        "overrides": {"ignore": ["PUNCT"]}}])
