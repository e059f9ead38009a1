"""The exceptions assay raises, in one small hierarchy.

Every error assay raises on purpose is an :class:`AssayError`. The subclasses that
stand for bad input also derive from the builtin a caller would expect
(``ValueError``, ``TypeError``, ``LookupError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "AmbiguousNameError",
    "AssayError",
    "ConfigError",
    "DuplicateRegistrationError",
    "EvaluationError",
    "EvaluationTimeoutError",
    "InvalidParameterError",
    "MissingDependencyError",
    "MissingResultError",
    "PluginLoadError",
    "PluginWarning",
    "ResultFileError",
    "SaveFormatError",
    "SignatureMismatchError",
    "UndefinedMetricWarning",
    "UnknownNameError",
    "WorkerDiedError",
]


class AssayError(Exception):
    """Base class of every error assay raises on purpose."""


class PluginLoadError(AssayError):
    """A plugin could not be imported or registered (fatal only with ``ASSAY_STRICT_PLUGINS=1``)."""


class DuplicateRegistrationError(PluginLoadError):
    """Two plugins registered the same name for the same kind."""


class AmbiguousNameError(DuplicateRegistrationError, LookupError):
    """A name looked up in a registry was registered by more than one plugin.

    The message names every plugin (and distribution) that registered it and the qualified
    spellings (``"distribution:name"``) that pick one.
    """


class InvalidParameterError(AssayError, ValueError, TypeError):
    """A parameter has the wrong type or value; the message names it, the expectation and the value."""

    #: the position in the whole data of the instance at fault, when there is one (sharded runs read it)
    item: int | None = None


class ConfigError(InvalidParameterError):
    """A config file is invalid; the message names the file, the key path and the expectation."""


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined on valid but degenerate data (no examples, one class, a zero
    denominator): the value is NaN, or the documented ``zero_division`` value.

    The warning class of undefined values (``assay.validation.undefined_metric`` issues it). A
    ``UserWarning``, as scikit-learn's ``UndefinedMetricWarning``: the filters that hide
    numpy's ``RuntimeWarning`` inside a computation do not hide it.
    """


class PluginWarning(UserWarning):
    """A plugin that loaded replaced public functions or attributes of assay (monkeypatching).

    Results computed through them are the plugin's, not assay's, so the Python API says so
    when such a plugin loads, as the ``assay`` command does with its one stderr line (which
    it prints instead of this warning). ``ASSAY_STRICT_PLUGINS=1`` refuses such a plugin.
    """


class UnknownNameError(AssayError, LookupError):
    """A name asked for from a registry is not registered; the message lists close matches."""


class MissingDependencyError(AssayError, ImportError):
    """An optional dependency is missing; the message carries the ``pip install`` hint."""

    def __init__(self, package: str, *, extra: str | None = None, purpose: str = "") -> None:
        hint = f"pip install 'assay[{extra}]'" if extra else f"pip install {package}"
        what = f" for {purpose}" if purpose else ""
        super().__init__(f"{package} is required{what} but is not installed; install it with: {hint}")
        self.package = package
        self.hint = hint


class SaveFormatError(AssayError, ValueError):
    """A saved file is damaged, tampered with, mixed with another save or of an unknown format version.

    The message names the file and the field; ``path`` and ``field`` carry them.
    """

    def __init__(self, message: str, *, path: object = None, field: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.field = field

    def __reduce__(self):
        return (_rebuild_save_format_error, (type(self), self.args[0], self.path, self.field))


def _rebuild_save_format_error(cls: type, message: str, path: object, field: str | None) -> SaveFormatError:
    return cls(message, path=path, field=field)


class ResultFileError(SaveFormatError):
    """A result file is unreadable or not what its manifest lists; the message names the file."""


class MissingResultError(ResultFileError, FileNotFoundError):
    """A result file (or the manifest) that should exist does not; the message names it."""


class SignatureMismatchError(AssayError, ValueError):
    """Two results were computed differently (their signatures differ in a way that changes the numbers).

    ``differences`` holds the :class:`assay.provenance.Difference` objects; the message lists them.
    """

    def __init__(self, message: str, *, differences: Iterable[object] = ()) -> None:
        super().__init__(message)
        self.differences = tuple(differences)


class EvaluationError(AssayError):
    """A sentence evaluator failed, or returned something that is not a valid tally.

    ``shard`` and ``item`` locate the failure (``item`` is the index in the pool).
    """

    def __init__(self, message: str, *, shard: int | None = None, item: int | None = None) -> None:
        super().__init__(message)
        self.shard = shard
        self.item = item

    def __reduce__(self):  # keep shard / item when the error crosses a process boundary
        return (_rebuild_evaluation_error, (type(self), self.args[0], self.shard, self.item))


class WorkerDiedError(EvaluationError):
    """A worker process ended without returning its shard's tally (killed, out of memory)."""


class EvaluationTimeoutError(EvaluationError, TimeoutError):
    """A shard ran longer than the executor's ``timeout``; the message names the shard(s) and the bound."""


def _rebuild_evaluation_error(cls: type, message: str, shard: int | None, item: int | None) -> EvaluationError:
    return cls(message, shard=shard, item=item)
