"""The ``EVALUATOR`` logger and the seed toolkit's result lines.

After every evaluation assay logs, at INFO on the logger named ``EVALUATOR``::

    2026-11-21 10:00:00,000 EVALUATOR [INFO]: Feature count: 668751
    2026-11-21 10:00:00,000 EVALUATOR [INFO]: Unlabelled accuracy: 0.811463184488 (26659, 32853)
    2026-11-21 10:00:00,000 EVALUATOR [INFO]: Unlabelled attachment accuracy: 0.818883593088 (28005, 34199)

(``Feature count`` only when the model has a length.)

The label follows the evaluator
-------------------------------
The two result lines are the seed's for any evaluator that declares nothing. An
evaluator (the :class:`~assay.EvaluatorBase` subclass, or the sentence evaluator given
to ``...Evaluate``: a callable object, a function, a registered name) declares its own
with the attributes ``log_label`` (the first line's label) and ``attachment_label`` (the
second line's, the seed's ``(correct + sentences) / (gold + sentences)``; absent or
``None``: no second line). A sentence evaluator given explicitly wins over the
``EvaluatorBase`` subclass's declaration. The parsing plugin's ``uas`` keeps the seed's
lines exactly; ``las`` prints ``Labelled accuracy`` / ``Labelled attachment accuracy``,
``clas`` ``CLAS F1`` and ``tagging_accuracy`` ``Tagging accuracy`` (one line each)::

    class ExactMatch(EvaluatorBase):
        log_label = "Exact match"        # one line: "Exact match: 0.75 (3, 4)"

How the lines reach the console
-------------------------------
Importing this module attaches one :class:`DefaultHandler` to ``EVALUATOR`` (never a
second one) and sets the logger's level to INFO if nobody has set it. The handler
writes to ``sys.stderr`` (looked up at each line, so redirections work) in the seed's
format :data:`LOG_FORMAT`.

It **stands aside** as soon as the application configures logging itself: when the
root logger has a handler and ``EVALUATOR`` propagates to it, the default handler
writes nothing and the application's handlers get the record (with their own
format), so lines never appear twice, whichever of ``import assay`` and
``logging.basicConfig()`` came first. To silence the lines use
``logging.getLogger("EVALUATOR").setLevel(logging.WARNING)``; to drop assay's handler
entirely, ``logger.removeHandler(assay.core.log.default_handler)``.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any, TextIO

from assay.core.result import EvaluationResult, ratio
from assay.errors import InvalidParameterError

if TYPE_CHECKING:  # pragma: no cover
    _StreamHandler = logging.StreamHandler[TextIO]
else:  # logging.StreamHandler is subscriptable at run time only from Python 3.11
    _StreamHandler = logging.StreamHandler

__all__ = ["ATTACHMENT_LABEL", "LOG_FORMAT", "LOGGER_NAME", "LOG_LABEL", "DefaultHandler", "default_handler",
           "log_labels", "log_result", "logger"]

LOGGER_NAME = "EVALUATOR"
#: The seed toolkit's line format (``logging``'s default asctime: ``2026-11-21 10:00:00,000``).
LOG_FORMAT = "%(asctime)s %(name)s [%(levelname)s]: %(message)s"

#: The seed toolkit's labels of the result lines (evaluators that declare no ``log_label``).
LOG_LABEL = "Unlabelled accuracy"
ATTACHMENT_LABEL = "Unlabelled attachment accuracy"

logger = logging.getLogger(LOGGER_NAME)


class DefaultHandler(_StreamHandler):
    """assay's console handler for ``EVALUATOR``: stderr, seed format, quiet once the app configures logging."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)  # not StreamHandler.__init__: ``stream`` is a property
        self.setFormatter(logging.Formatter(LOG_FORMAT))

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:  # StreamHandler.setStream; the target stays sys.stderr
        pass

    def emit(self, record: logging.LogRecord) -> None:
        if _application_handles(logging.getLogger(record.name)):
            return
        super().emit(record)


def _application_handles(log: logging.Logger) -> bool:
    """True when a propagated-to ancestor logger has a handler of its own (the app configured logging)."""
    current: logging.Logger | None = log
    while current is not None and current.propagate:
        current = current.parent
        if current is not None and current.handlers:
            return True
    return False


def _install() -> DefaultHandler:
    for handler in logger.handlers:
        if isinstance(handler, DefaultHandler) or type(handler).__name__ == "DefaultHandler":
            return handler  # type: ignore[return-value]  # e.g. after importlib.reload
    handler = DefaultHandler()
    logger.addHandler(handler)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    return handler


#: The handler assay attached to ``EVALUATOR`` (remove it to take full control).
default_handler = _install()


def log_labels(*evaluators: Any) -> tuple[str, str | None]:
    """The labels ``(log_label, attachment_label)`` of the first of ``evaluators`` that declares ``log_label``.

    Each may be an object, a function or a bound method (then its object is asked too).
    ``attachment_label`` is ``None`` (no second line) unless that same object declares it.
    None declares a label: the seed's ``("Unlabelled accuracy", "Unlabelled attachment
    accuracy")``.

    >>> class Exact:
    ...     log_label = "Exact match"
    >>> log_labels(print, Exact())
    ('Exact match', None)
    >>> log_labels(print)
    ('Unlabelled accuracy', 'Unlabelled attachment accuracy')
    """
    for ev in evaluators:
        for owner in (ev, getattr(ev, "__self__", None)):
            label = getattr(owner, "log_label", None) if owner is not None else None
            if label is None:
                continue
            attachment = getattr(owner, "attachment_label", None)
            for what, value in (("log_label", label), ("attachment_label", attachment)):
                if value is not None and (not isinstance(value, str) or not value):
                    raise InvalidParameterError(
                        f"The {what!r} of {type(owner).__name__} must be a non-empty str (or None); "
                        f"got {value!r:.60} ({type(value).__name__}).")
            return label, attachment
    return LOG_LABEL, ATTACHMENT_LABEL


def log_result(result: EvaluationResult, *, log: logging.Logger | None = None, label: str = LOG_LABEL,
               attachment_label: str | None = ATTACHMENT_LABEL) -> None:
    """Log ``result`` as the seed toolkit did (12 decimals; NaN printed as ``nan``).

    ``label`` names the first line and ``attachment_label`` the second (``None``: no
    second line); both default to the seed's (see :func:`log_labels`).

    >>> from assay import EvaluationResult
    >>> import logging, sys
    >>> h = logging.StreamHandler(sys.stdout); h.setFormatter(logging.Formatter("%(message)s"))
    >>> demo = logging.getLogger("assay-doctest"); demo.propagate = False; demo.addHandler(h)
    >>> demo.setLevel(logging.INFO)
    >>> log_result(EvaluationResult(26659, 32853, 1346, feature_count=668751), log=demo)
    Feature count: 668751
    Unlabelled accuracy: 0.811463184488 (26659, 32853)
    Unlabelled attachment accuracy: 0.818883593088 (28005, 34199)
    >>> log_result(EvaluationResult(6, 9, 1), log=demo, label="CLAS F1", attachment_label=None)
    CLAS F1: 0.666666666667 (6, 9)
    """
    log = logger if log is None else log
    correct, gold, sentences = result.correct_num, result.gold_set_size, result.sentence_num
    if result.feature_count is not None:
        log.info("Feature count: %d", result.feature_count)
    log.info("%s: %.12f (%d, %d)", label, ratio(correct, gold), correct, gold)
    if attachment_label is not None:
        log.info("%s: %.12f (%d, %d)", attachment_label,
                 ratio(correct + sentences, gold + sentences), correct + sentences, gold + sentences)
