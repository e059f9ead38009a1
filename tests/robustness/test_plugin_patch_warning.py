"""A plugin that replaces a public assay function is announced by the Python API too (issue 27, item 9).

The plugin doubles ``assay.core.evaluator.evaluate_shard``'s tally: ``sequentialEvaluate`` on
five items of which each is correct then counts 10 instead of 5. The ``assay`` command said
so in its one stderr line; the Python API said nothing. Now loading such a plugin issues an
``assay.errors.PluginWarning`` naming the plugin and the function (and the command still
prints its one line, without the warning beside it).
"""

from __future__ import annotations

import types
import warnings

import pytest

import assay.core.evaluator as evaluator
from assay import hookimpl
from assay.core.evaluator import EvaluatorBase
from assay.core.pool import DataPool
from assay.errors import PluginWarning
from assay.plugins import PluginSystem, problems_summary, use_plugin_system, warns_about_plugin_problems

PATCHER = """
import assay.core.evaluator as evaluator
from assay import hookimpl

@hookimpl
def assay_register_metrics(register):
    original = evaluator.evaluate_shard

    def doubled(shard, shared):
        result = original(shard, shared)
        return result + result

    evaluator.evaluate_shard = doubled
"""


def _patcher() -> types.ModuleType:
    module = types.ModuleType("rb_shard_patcher")
    exec(PATCHER, module.__dict__)  # the test's own plugin source
    return module


def _one_each(sentence, w_vector):
    return 1, 1


@pytest.fixture
def restore_evaluate_shard(monkeypatch):
    monkeypatch.setattr(evaluator, "evaluate_shard", evaluator.evaluate_shard)  # put back after the test


def test_python_api_warns_when_a_plugin_replaces_evaluate_shard(restore_evaluate_shard):
    items = list(range(5))
    before = EvaluatorBase().sequentialEvaluate(DataPool(items), None, sentence_evaluator=_one_each)
    assert (before.correct_num, before.gold_set_size) == (5, 5)
    system = PluginSystem(entry_points=False)
    with pytest.warns(PluginWarning) as caught:
        system.register_plugin(_patcher(), name="rb_shard_patcher")
    message = str(caught[0].message)
    assert "Plugin 'rb_shard_patcher' replaced assay's assay.core.evaluator.evaluate_shard" in message
    assert "ASSAY_STRICT_PLUGINS=1" in message
    after = EvaluatorBase().sequentialEvaluate(DataPool(items), None, sentence_evaluator=_one_each)
    assert (after.correct_num, after.gold_set_size) == (10, 10)  # what the warning is about


def test_a_plugin_that_replaces_nothing_gives_no_warning():
    module = types.ModuleType("rb_quiet")

    @hookimpl
    def assay_register_metrics(register):
        register("rb_quiet_metric", dict)

    module.assay_register_metrics = assay_register_metrics
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)
        PluginSystem(entry_points=False).register_plugin(module, name="rb_quiet")


def test_the_command_prints_its_line_and_not_the_warning(restore_evaluate_shard, capsys):
    system = PluginSystem(entry_points=False)

    @warns_about_plugin_problems
    def command():
        system.register_plugin(_patcher(), name="rb_shard_patcher")
        return 0

    with use_plugin_system(system), warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert command() == 0
        line = problems_summary()
    assert not [w for w in shown if issubclass(w.category, PluginWarning)]
    assert line is not None and "1 plugin replaced assay functions (rb_shard_patcher)" in line
    assert capsys.readouterr().err.strip() == line
