"""Error messages say what is really wrong (issue 27, item 19).

- Files tokenized differently: the message said only that the files must have the same words;
  it now also says that ``assay parse-eval --conll18`` scores them.
- A CoNLL-U file starting with a byte-order mark was rejected as "found 1 column"; the message
  now names the mark.
- A ``.npy`` of random bytes was reported as holding pickled data; it is now "not a .npy file".
  (The ``sync`` option-mismatch message of ``assay.distributed`` is not part of this change.)
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import assay_parsing  # noqa: F401 - parse-eval needs the plugin
from assay import DataFormatError
from assay.cli import main
from assay.core.array_formats import NpyFormat
from assay_parsing.evaluators import TokenizationError
from assay_parsing.stream import iter_pairs

GOLD = "1\tHola\thola\tINTJ\t_\t_\t0\troot\t_\t_\n2\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_\n\n"
SPLIT = ("1\tHo\tho\tINTJ\t_\t_\t0\troot\t_\t_\n2\tla\tla\tX\t_\t_\t1\tdep\t_\t_\n"
         "3\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_\n\n")


def test_a_tokenization_difference_points_to_conll18(tmp_path, capsys):
    gold, system = tmp_path / "g.conllu", tmp_path / "s.conllu"
    gold.write_text(GOLD, encoding="utf-8")
    system.write_text(SPLIT, encoding="utf-8")
    with pytest.raises(TokenizationError, match=r"same words\. To score files tokenized differently, use "
                                                r"`assay parse-eval --conll18`"):
        list(iter_pairs(gold, system))
    assert main(["parse-eval", str(gold), str(system)]) == 2
    assert "assay parse-eval --conll18" in capsys.readouterr().err
    # and --conll18 does score them
    assert main(["parse-eval", "--conll18", str(gold), str(system)]) == 0


def test_a_byte_order_mark_is_named(tmp_path, capsys):
    path = tmp_path / "bom.conllu"
    path.write_bytes(b"\xef\xbb\xbf# sent_id = 1\n" + GOLD.encode())
    with pytest.raises(DataFormatError, match=r"bom\.conllu:1: the line starts with a byte-order mark \(U\+FEFF"):
        list(iter_pairs(path, path))
    plain = tmp_path / "plain.conllu"
    plain.write_text(GOLD, encoding="utf-8")
    assert main(["parse-eval", str(plain), str(path)]) == 2
    err = capsys.readouterr().err
    assert "byte-order mark" in err and "found 1" not in err


def test_a_npy_of_random_bytes_is_not_a_npy_file_rather_than_pickled_data(tmp_path):
    path = tmp_path / "noise.npy"
    path.write_bytes(np.random.default_rng(0).bytes(256))
    with pytest.raises(DataFormatError, match=r"noise\.npy: not a \.npy file: it does not start with numpy's magic") \
            as info:
        NpyFormat().read(path)
    assert "pickle" not in str(info.value)
    with pytest.raises(DataFormatError, match="not a .npy file"):
        NpyFormat().loads(os.urandom(64))
