"""Commands, demo sections and generation metrics come from plugins (issue 12, "clean floors").

Each test builds its own :class:`PluginSystem` (built-ins plus throwaway plugin modules, or the
installed entry points) so the process-wide one is left alone.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest

from assay import hookimpl
from assay.cli import main
from assay.errors import InvalidParameterError, UnknownNameError
from assay.plugins import PluginSystem, get_plugin_system, use_plugin_system
from assay.uncertainty import GenerationMetric


def plugin(name: str, **hooks) -> types.ModuleType:
    """A throwaway plugin module with the given ``@hookimpl`` functions."""
    module = types.ModuleType(name)
    for hook_name, fn in hooks.items():
        fn.__name__ = hook_name
        setattr(module, hook_name, hookimpl(fn))
    return module


def system_with(*modules: types.ModuleType) -> PluginSystem:
    system = PluginSystem(entry_points=False)
    for module in modules:
        system.register_plugin(module)
    return system


# --------------------------------------------------------------------------- commands
def _hello_arguments(parser):
    from assay.cli.commands import add_json, add_output

    parser.add_argument("who")
    parser.add_argument("--times", type=int, default=1)
    add_output(parser, "file", "the greeting as JSON")
    add_json(parser, "the greeting")


def _hello(args):
    from assay.cli.commands import check_output, print_json

    check_output(args)
    if args.times < 1:
        raise InvalidParameterError(f"The 'times' parameter must be >= 1. Got {args.times} instead.")
    text = " ".join(["hello"] * args.times) + f", {args.who}"
    if args.output is not None:
        args.output.write_text(json.dumps({"greeting": text}))
    if args.json:
        print_json({"greeting": text})
    else:
        print(text)
    return 0


def _hello_plugin(name="hello_plugin", command="hello"):
    return plugin(name, assay_register_commands=lambda register: register(
        command, _hello, help="say hello to someone", add_arguments=_hello_arguments))


def test_a_plugin_command_runs_with_the_cli_conventions(tmp_path, capsys):
    with use_plugin_system(system_with(_hello_plugin())):
        assert main(["hello", "you", "--times", "2"]) == 0
        assert capsys.readouterr().out == "hello hello, you\n"
        assert main(["hello", "you", "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == {"greeting": "hello, you"}
        # bad input: exit 2, one line naming the flag (not the Python parameter)
        assert main(["hello", "you", "--times", "0"]) == 2
        assert capsys.readouterr().err == "assay hello: error: --times: must be >= 1. Got 0 instead.\n"
        # -o FILE that is a folder: the shared check, naming the flag
        assert main(["hello", "you", "-o", str(tmp_path)]) == 2
        assert capsys.readouterr().err.startswith(f"assay hello: error: -o {tmp_path}: is a directory")
        # an argparse usage error reads like a built-in command's
        with pytest.raises(SystemExit) as exit_info:
            main(["hello"])
        assert exit_info.value.code == 2
        assert capsys.readouterr().err.startswith("assay hello: error: the following arguments are required: who")


def test_a_plugin_command_is_listed_by_help_and_by_assay_list(capsys):
    with use_plugin_system(system_with(_hello_plugin())):
        with pytest.raises(SystemExit):
            main(["--help"])
        out = capsys.readouterr().out
        assert "hello" in out and "say hello to someone" in out
        assert main(["list", "command"]) == 0
        assert "say hello to someone" in capsys.readouterr().out


def test_a_plugin_command_named_like_a_core_command_is_reported_not_fatal(capsys):
    with use_plugin_system(system_with(_hello_plugin("takes_demo", command="demo"))):
        with pytest.raises(SystemExit) as exit_info:
            main(["--help"])
        assert exit_info.value.code == 0
        err = capsys.readouterr().err
        assert "the command 'demo' registered by plugin 'takes_demo'" in err and "assay's own commands" in err
        with pytest.raises(SystemExit):  # 'demo' is still assay's own
            main(["demo", "--help"])
        assert capsys.readouterr().out.startswith("usage: assay demo [-h] [-o FOLDER] [--section NAME]")


def test_two_plugins_with_one_command_name_add_neither_and_say_so(capsys):
    with use_plugin_system(system_with(_hello_plugin("first"), _hello_plugin("second"))):
        with pytest.raises(SystemExit) as exit_info:  # not added: argparse does not know it
            main(["hello", "you"])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert "invalid choice: 'hello'" in err
        assert "the command 'hello' is registered by 2 plugins, 'first', 'second'" in err
        assert main(["plugins"]) == 0
        assert "clash: command 'hello' is also registered by" in capsys.readouterr().out


def test_a_broken_add_arguments_drops_that_command_only(capsys):
    def broken(parser):
        raise RuntimeError("boom in add_arguments")

    bad = plugin("bad_cmd", assay_register_commands=lambda register: register(
        "broken", _hello, help="never added", add_arguments=broken))
    with use_plugin_system(system_with(bad, _hello_plugin())):
        with pytest.raises(SystemExit) as exit_info:
            main(["--help"])
        assert exit_info.value.code == 0
        captured = capsys.readouterr()
        assert "hello" in captured.out and "never added" not in captured.out
        assert ("the command 'broken' of plugin 'bad_cmd' is not added: its add_arguments raised RuntimeError: "
                "boom in add_arguments") in captured.err
        assert main(["hello", "x"]) == 0


def test_a_plugin_system_that_fails_to_load_leaves_the_core_commands(monkeypatch, capsys):
    class Broken(PluginSystem):
        def registry(self, kind):
            raise RuntimeError("entry points unreadable")

    with use_plugin_system(Broken(entry_points=False)), pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    captured = capsys.readouterr()
    assert "compare" in captured.out
    assert "plugin commands are not available: RuntimeError: entry points unreadable" in captured.err


def test_a_command_hook_that_raises_fails_its_plugin_only(capsys):
    def raises(register):
        raise ValueError("hook broken")

    system = PluginSystem(entry_points=False)
    with pytest.raises(Exception, match="hook broken"):
        system.register_plugin(plugin("raising_cmd", assay_register_commands=raises))
    system.register_plugin(_hello_plugin())
    with use_plugin_system(system):
        assert main(["hello", "x"]) == 0


def test_parse_eval_is_registered_by_assay_parsing():
    entry = get_plugin_system().registry("command").get("parse-eval")
    assert entry.distribution == "assay-parsing"
    assert callable(entry.metadata["add_arguments"])


# --------------------------------------------------------------------------- demo sections
def test_demo_sections_run_in_order_then_name(tmp_path, capsys):
    ran = []

    def hook(register):
        register("zeta", lambda out: ran.append(("zeta", out.name)), title="z", order=1)
        register("alpha", lambda out: ran.append(("alpha", out.name)), title="a", order=1)
        register("first", lambda out: ran.append(("first", out.name)), title="f", order=0)
        register("last", lambda out: ran.append(("last", out.name)), title="no order given")

    with use_plugin_system(system_with(plugin("sections", assay_register_demo_sections=hook))):
        from assay.demo import DEFAULT_ORDER, sections

        got = sections()
        assert list(got) == ["first", "alpha", "zeta", "metrics", "last"]  # assay's metrics has order 20
        assert got["last"].order == DEFAULT_ORDER
        assert main(["demo", "-o", str(tmp_path), "--section", "zeta", "--section", "first"]) == 0
        assert ran == [("zeta", "zeta"), ("first", "first")]  # as asked, with a folder each
        assert "=== assay demo: zeta ===" in capsys.readouterr().out
        assert main(["demo", "--section", "zetta"]) == 2
        err = capsys.readouterr().err
        assert "unknown demo section" in err and "first, alpha, zeta, metrics, last" in err


def test_a_section_with_a_bad_order_is_an_error_naming_it():
    def hook(register):
        register("odd", lambda out: None, order="soon")

    with use_plugin_system(system_with(plugin("odd_order", assay_register_demo_sections=hook))):
        from assay.demo import sections

        with pytest.raises(InvalidParameterError, match="Demo section 'odd' of plugin 'odd_order' has order='soon'"):
            sections()


def test_the_installed_plugins_give_the_demo_sections_in_order():
    from assay.demo import sections

    # the five of issue 12 in their old order, assay-transformers' section (order 35) after uncertainty and
    # assay-segmentation's ValUES section (order 41) after its own; assay-report's section (order 1000) last,
    # as it reports on the others' output
    assert list(sections()) == ["treebank", "metrics", "uncertainty", "transformers", "segmentation", "values",
                                "spark", "report"]


# --------------------------------------------------------------------------- generation metrics
#: the generation metrics the first-party plugins register: stored labels (assay-uncertainty), texts against
#: references (rouge, bleu: assay-uncertainty; sbert, bert_score: assay-transformers) with LM-Polygraph's names
GENERATION_METRIC_NAMES = ["AlignScore", "BLEUMetric", "BertScoreMetric", "RougeMetric", "SbertMetric", "accuracy",
                           "align_score", "bert_score", "bleu", "claim_accuracy", "quality", "rouge", "sbert",
                           "token_accuracy"]


def test_list_generation_metric_shows_the_plugin_names(capsys):
    assert main(["list", "generation_metric"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == GENERATION_METRIC_NAMES
    assert main(["list", "generation_metric", "accuracy"]) == 0
    assert "assay-uncertainty" in capsys.readouterr().out


def test_uemanager_resolves_generation_metrics_through_the_registry():
    from assay.uncertainty import GenerationMetric, UEManager

    class Length(GenerationMetric):
        """The answer's length as the quality (a throwaway metric)."""

        name, level = "answer_length", "sequence"

        def __call__(self, stats):
            return np.array([float(len(a)) for a in stats["answer"]])

    def hook(register):
        register("answer_length", Length)

    records = [{"answer": "a" * k, "log_probs": [-0.1 * k], "correct": int(k % 2)} for k in range(1, 9)]
    system = PluginSystem()  # the installed plugins (msp, prr) plus this one
    system.register_plugin(plugin("length_metric", assay_register_generation_metrics=hook))
    with use_plugin_system(system):
        man = UEManager(records, estimators=["msp"], gen_metrics=["answer_length", "accuracy"], ue_metrics=["prr"])
        man()
    np.testing.assert_array_equal(man.gen_metrics[("sequence", "answer_length")], np.arange(1.0, 9.0))
    np.testing.assert_array_equal(man.gen_metrics[("sequence", "accuracy")], [k % 2 for k in range(1, 9)])


def test_an_unknown_generation_metric_lists_the_registered_ones_with_a_close_match():
    from assay.uncertainty import UEManager

    with pytest.raises(UnknownNameError) as info:
        UEManager([{"log_probs": [-0.1], "correct": 1}], estimators=["msp"], gen_metrics=["acuracy"],
                  ue_metrics=["prr"])
    message = str(info.value)
    assert message.startswith("Unknown generation metric 'acuracy'. Did you mean 'accuracy'")
    assert f"Registered: {', '.join(GENERATION_METRIC_NAMES)} (assay list generation_metric)" in message


def test_generation_metrics_view_follows_the_registry():
    from assay.uncertainty import GENERATION_METRICS

    assert sorted(GENERATION_METRICS) == GENERATION_METRIC_NAMES
    assert GENERATION_METRICS["accuracy"].__module__ == "assay_uncertainty.gen_metrics"
    assert "nope" not in GENERATION_METRICS
    with use_plugin_system(PluginSystem(entry_points=False)):
        assert len(GENERATION_METRICS) == 0 and "none registered" in repr(GENERATION_METRICS)


def test_load_generation_metric_takes_overrides_from_the_name():
    import assay

    metric = assay.load_generation_metric("quality")
    assert metric.level == "sequence"
    np.testing.assert_array_equal(metric({"quality": [0.25, 0.5]}), [0.25, 0.5])
    with pytest.raises(UnknownNameError, match="Did you mean: quality"):
        assay.load_generation_metric("qualty")


def test_core_keeps_only_the_base_class():
    import assay.uncertainty.gen_metrics as core_gen

    assert not hasattr(core_gen, "Accuracy") and not hasattr(core_gen, "normalize_text")
    assert Path(core_gen.__file__).parent.name == "uncertainty"


# --------------------------------------------------------------------------- assay check-plugin on the new kinds
class ZeroQuality(GenerationMetric):
    """Quality 0 for every example (module level, so it pickles)."""

    name, level = "good_gen", "sequence"

    def __call__(self, stats):
        return np.zeros(len(stats.get("correct", [0])))


def test_check_plugin_checks_commands_sections_and_generation_metrics():
    from assay.testing.conformance import check_entries

    def bad_arguments(parser):
        parser.add_argument("--x")
        parser.add_argument("--x")  # argparse: conflicting option string

    def hooks_commands(register):
        register("good-cmd", _hello, help="fine", add_arguments=_hello_arguments)
        register("bad-cmd", _hello, help="clashing flags", add_arguments=bad_arguments)

    def hooks_sections(register):
        register("titled", lambda out: None, title="a section", order=5)
        register("untitled", lambda out: None)

    def hooks_gen(register):
        register("good_gen", ZeroQuality)
        register("not_a_metric", dict)

    system = system_with(plugin("check_me", assay_register_commands=hooks_commands,
                                assay_register_demo_sections=hooks_sections,
                                assay_register_generation_metrics=hooks_gen))
    entries = [system.registry(kind).get(name) for kind, name in (
        ("command", "good-cmd"), ("command", "bad-cmd"), ("demo_section", "titled"), ("demo_section", "untitled"),
        ("generation_metric", "good_gen"), ("generation_metric", "not_a_metric"))]
    failed = {(r.name, r.check): r.reason for r in check_entries(entries, system) if r.status == "FAIL"}
    assert set(failed) == {("bad-cmd", "arguments"), ("untitled", "declaration"), ("not_a_metric", "instantiate")}
    assert "conflicting option string" in failed[("bad-cmd", "arguments")]
    assert "title=" in failed[("untitled", "declaration")]
    assert "not an assay.uncertainty.GenerationMetric" in failed[("not_a_metric", "instantiate")]


def test_list_one_command_or_section_says_how_to_run_it(capsys):
    assert main(["list", "command", "parse-eval"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("command parse-eval  [parsing, distribution assay-parsing]")
    assert out.rstrip().endswith("Run: assay parse-eval --help") and "Options" not in out
    assert main(["list", "demo_section", "segmentation", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["run"] == "assay demo --section segmentation" and data["distribution"] == "assay-segmentation"


def test_only_a_command_line_that_may_name_a_plugin_command_loads_the_plugins(capsys):
    system = PluginSystem()
    with use_plugin_system(system):
        for argv in (["--version"], ["evaluate", "--help"], ["compare", "--help"]):
            with pytest.raises(SystemExit):
                main(argv)
            assert not system.loaded, argv  # assay's own commands: the plugins load only when the command needs them
        with pytest.raises(SystemExit):
            main(["--help"])
        assert system.loaded
    assert "parse-eval" in capsys.readouterr().out


def test_ctrl_c_while_the_plugin_commands_load_ends_with_130(capsys):
    class Interrupted(PluginSystem):
        def registry(self, kind):
            raise KeyboardInterrupt

    with use_plugin_system(Interrupted(entry_points=False)):
        assert main(["parse-eval", "g", "s"]) == 130
    assert capsys.readouterr().err == "assay: interrupted\n"
