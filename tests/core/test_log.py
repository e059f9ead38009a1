"""The EVALUATOR log lines, exactly as the seed toolkit printed them."""

from __future__ import annotations

import contextlib
import logging
import re
import time

import pytest

import assay.core.log as log_module
from assay import DataPool, EvaluationResult, EvaluatorBase, logger
from assay.core.log import DefaultHandler, default_handler, log_result
from assay.core.result import UndefinedMetricWarning

STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"


class Pairs(EvaluatorBase):
    def sentence_evaluator(self, sent, w_vector):
        return sent


class Sized:
    def __len__(self) -> int:
        return 668751


@contextlib.contextmanager
def bare_logging():
    """Logging as in a program that configured nothing: no root handlers (pytest adds its own per test)."""
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers.clear()
    try:
        yield
    finally:
        root.handlers[:] = saved


def stderr_of(capsys, action) -> str:
    """What a user without any logging configuration sees on stderr while ``action()`` runs."""
    capsys.readouterr()
    with bare_logging():
        action()
    return capsys.readouterr().err


def test_logger_is_evaluator_with_one_default_handler():
    assert logger is logging.getLogger("EVALUATOR")
    assert logger.level == logging.INFO
    assert [h for h in logger.handlers if isinstance(h, DefaultHandler)] == [default_handler]
    assert log_module._install() is default_handler  # installing again adds nothing
    assert len([h for h in logger.handlers if isinstance(h, DefaultHandler)]) == 1


def test_the_seed_format_to_the_millisecond():
    created = time.mktime((2026, 11, 21, 10, 0, 0, 0, 0, -1))
    record = logging.LogRecord("EVALUATOR", logging.INFO, __file__, 1,
                               "Unlabelled accuracy: %.12f (%d, %d)", (26659 / 32853, 26659, 32853), None)
    record.created, record.msecs = created, 0.0
    assert default_handler.format(record) == \
        "2026-11-21 10:00:00,000 EVALUATOR [INFO]: Unlabelled accuracy: 0.811463184488 (26659, 32853)"


def test_the_three_lines_of_the_issue(capsys):
    err = stderr_of(capsys, lambda: log_result(EvaluationResult(26659, 32853, 1346, feature_count=668751)))
    lines = err.splitlines()
    assert len(lines) == 3
    expected = [
        "EVALUATOR [INFO]: Feature count: 668751",
        "EVALUATOR [INFO]: Unlabelled accuracy: 0.811463184488 (26659, 32853)",
        "EVALUATOR [INFO]: Unlabelled attachment accuracy: 0.818883593088 (28005, 34199)",
    ]
    for line, tail in zip(lines, expected):
        assert re.fullmatch(f"{STAMP} {re.escape(tail)}", line), line


def test_an_evaluation_logs_once_per_run_without_duplicates(capsys):
    pool = DataPool([(1, 2), (2, 2)], num_shards=2)
    ev = Pairs()

    def twice():
        ev.sequentialEvaluate(pool, Sized())
        ev.parallelEvaluate(pool, Sized(), workers=2)

    lines = stderr_of(capsys, twice).splitlines()
    assert [line.split(": ", 1)[1] for line in lines] == [
        "Feature count: 668751",
        "Unlabelled accuracy: 0.750000000000 (3, 4)",
        "Unlabelled attachment accuracy: 0.833333333333 (5, 6)",
    ] * 2


def test_no_feature_count_line_for_a_model_without_length(capsys):
    err = stderr_of(capsys, lambda: Pairs().sequentialEvaluate(DataPool([(1, 1)]), object()))
    assert "Feature count" not in err and "Unlabelled accuracy: 1.000000000000 (1, 1)" in err


def test_caplog_sees_the_records(caplog):
    caplog.set_level(logging.INFO, logger="EVALUATOR")
    Pairs().parallelEvaluate(DataPool([(0, 3)]), Sized(), executor="serial")
    assert [r.getMessage() for r in caplog.records if r.name == "EVALUATOR"] == [
        "Feature count: 668751",
        "Unlabelled accuracy: 0.000000000000 (0, 3)",
        "Unlabelled attachment accuracy: 0.250000000000 (1, 4)",
    ]


def test_default_handler_stands_aside_when_the_application_configured_logging(capsys):
    app_lines: list[str] = []

    class AppHandler(logging.Handler):
        def emit(self, record):
            app_lines.append(record.getMessage())

    capsys.readouterr()
    with bare_logging():
        logging.getLogger().addHandler(AppHandler())
        log_result(EvaluationResult(1, 2, 1))
    assert capsys.readouterr().err == ""  # not printed twice
    assert app_lines == ["Unlabelled accuracy: 0.500000000000 (1, 2)",
                         "Unlabelled attachment accuracy: 0.666666666667 (2, 3)"]


def test_empty_pool_logs_nan(capsys):
    with pytest.warns(UndefinedMetricWarning, match="data pool is empty"):
        err = stderr_of(capsys, lambda: Pairs().sequentialEvaluate(DataPool([]), None))
    assert "Unlabelled accuracy: nan (0, 0)" in err
    assert "Unlabelled attachment accuracy: nan (0, 0)" in err


# ------------------------------------------------------------------ the label follows the evaluator
class ExactMatch(EvaluatorBase):
    log_label = "Exact match"

    def sentence_evaluator(self, sent, w_vector):
        return sent


class Attaching(EvaluatorBase):
    log_label = "Head accuracy"
    attachment_label = "Head attachment accuracy"

    def sentence_evaluator(self, sent, w_vector):
        return sent


class CountsF1:
    """A sentence evaluator object declaring its own label, given explicitly."""

    log_label = "My F1"

    def __call__(self, sent, w_vector):
        return sent


def labelled_messages(caplog, run):
    caplog.set_level(logging.INFO, logger="EVALUATOR")
    caplog.clear()
    run()
    return [r.getMessage() for r in caplog.records if r.name == "EVALUATOR"]


def test_a_custom_evaluator_declares_its_label(caplog):
    pool = DataPool([(1, 2), (2, 2)], num_shards=2)  # 3 / 4; the seed's second line: (3 + 2) / (4 + 2)
    assert labelled_messages(caplog, lambda: ExactMatch().sequentialEvaluate(pool, None)) == [
        "Exact match: 0.750000000000 (3, 4)"]
    assert labelled_messages(caplog, lambda: Attaching().parallelEvaluate(pool, None, executor="threads")) == [
        "Head accuracy: 0.750000000000 (3, 4)", "Head attachment accuracy: 0.833333333333 (5, 6)"]
    # an explicit sentence evaluator's label wins over the evaluator's; a plain function falls back to it
    assert labelled_messages(caplog, lambda: ExactMatch().sequentialEvaluate(pool, None, CountsF1())) == [
        "My F1: 0.750000000000 (3, 4)"]
    assert labelled_messages(caplog, lambda: ExactMatch().sequentialEvaluate(pool, None, lambda s, w: s)) == [
        "Exact match: 0.750000000000 (3, 4)"]
    # an evaluator that declares nothing keeps the seed's lines exactly
    assert labelled_messages(caplog, lambda: Pairs().sequentialEvaluate(pool, None)) == [
        "Unlabelled accuracy: 0.750000000000 (3, 4)", "Unlabelled attachment accuracy: 0.833333333333 (5, 6)"]


def test_a_bad_label_names_the_attribute():
    from assay.core.log import log_labels
    from assay.errors import InvalidParameterError

    class Bad:
        log_label = 3

    with pytest.raises(InvalidParameterError, match=r"'log_label' of Bad must be a non-empty str"):
        log_labels(Bad())
