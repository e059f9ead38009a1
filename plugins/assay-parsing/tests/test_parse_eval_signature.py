"""``assay parse-eval`` prints its provenance signature under the table: evaluators, format, versions."""

from __future__ import annotations

import importlib.metadata as metadata

import pytest

import assay
import assay_parsing  # noqa: F401 - parse-eval needs the plugin (installed by make test)
from assay.cli import main

SENTENCE = "".join("\t".join(cols) + "\n" for cols in (
    ("1", "Hola", "hola", "INTJ", "_", "_", "0", "root", "_", "_"),
    ("2", "!", "!", "PUNCT", "_", "_", "1", "punct", "_", "_"))) + "\n"


@pytest.mark.parametrize(("suffix", "fmt"), [(".conllu", "conllu"), (".conllx", "conllx")])
def test_signature_under_the_table(tmp_path, capsys, suffix, fmt):
    gold = tmp_path / f"gold{suffix}"
    gold.write_text(SENTENCE, encoding="utf-8")
    assert main(["parse-eval", str(gold), str(gold)]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = (f"signature: evaluators:uas,las,clas,tagging_accuracy|format:{fmt}|assay:{assay.__version__}|"
                f"plugins:assay-parsing={metadata.version('assay-parsing')}")
    assert lines[-1] == expected
    assert lines[-2].startswith("CLAS counts are")  # right under the table
