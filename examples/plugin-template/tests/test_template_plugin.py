"""The template plugin's own tests: copy them with the template."""

from __future__ import annotations

import assay_template.plugin
import pytest

import assay
from assay import DataFormatError, DataPool, EvaluatorBase
from assay.plugins import PluginSystem, use_plugin_system
from assay.testing.suite import conformance_test


@pytest.fixture
def system():
    system = PluginSystem(entry_points=False)
    system.register_plugin(assay_template.plugin)
    with use_plugin_system(system):
        yield system


def test_tag_match_by_name(system):
    evaluate = assay.load_sentence_evaluator("tag_match[ignore=[PUNCT]]")
    assert evaluate({"gold": ["N", "PUNCT"], "pred": ["V", "X"]}, None) == (0, 1)


def test_format_and_evaluator_end_to_end(system, tmp_path):
    path = tmp_path / "run.tags"
    # 2 of 3, 2 of 3, 0 of 1: 4 of 7 (with PUNCT ignored, the second is 2 of 2: 4 of 6)
    path.write_text("D N V\tD N N\nN PUNCT V\tN X V\nV\tN\n")
    pool = DataPool.from_file(path, num_shards=2)  # format found from the .tags extension

    class Tags(EvaluatorBase):
        pass

    result = Tags().parallelEvaluate(pool, None, "tag_match", executor="threads[workers=2]")
    assert (result.correct_num, result.gold_set_size) == (4, 7)
    ignoring = assay.load_sentence_evaluator("tag_match", ignore=["PUNCT"])
    assert Tags().sequentialEvaluate(pool, None, ignoring).gold_set_size == 6


def test_malformed_line_names_the_line(system):
    with pytest.raises(DataFormatError, match=r"x\.tags:2: expected gold and predicted tags"):
        assay.load_data_format("tagged_lines").parse("A\tA\nno tab here\n", source="x.tags")


# assay's common suite, one test per registered name (test_template_conforms[sentence_evaluator:tag_match] ...):
# the invariances of each kind (docs/plugins.md, "The common suite"), on the examples the plugin declares.
_system = PluginSystem(entry_points=False)
_system.register_plugin(assay_template.plugin, "template")
test_template_conforms = conformance_test("template", system=_system)
