"""Data formats: how a file's text becomes pool items. JSON Lines is built in.

A data format is registered through ``assay_register_data_formats`` (this module is
itself a built-in plugin) and is used by :meth:`assay.DataPool.from_file` and, on Spark,
on the executors that read the files. Subclass :class:`DataFormat` and implement
:meth:`DataFormat.parse`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay.errors import InvalidParameterError
from assay.jsonio import dumps_jsonl, parse_jsonl
from assay.plugins.hookspecs import Register, hookimpl

__all__ = ["DataFormat", "DataFormatError", "JsonLinesFormat"]


class DataFormatError(InvalidParameterError):
    """Malformed input; the message names the source and the line."""

    def __init__(self, message: str, *, source: str, line: int | None = None) -> None:
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line

    def __reduce__(self) -> tuple[Any, ...]:  # keep source / line across process boundaries (Spark, processes)
        message = str(self).split(": ", 1)[1] if ": " in str(self) else str(self)
        return (_rebuild_format_error, (type(self), message, self.source, self.line))


def _rebuild_format_error(cls: type[DataFormatError], message: str, source: str, line: int | None) -> DataFormatError:
    return cls(message, source=source, line=line)


class DataFormat:
    """Base class of data formats.

    Subclasses set ``name`` and ``extensions`` and implement :meth:`parse`. Items are
    whatever the format's sentence evaluators expect (dicts for JSON Lines, sentence
    objects for CoNLL-U). ``parse`` must accept any whole file's text, so that a file
    can be parsed where it is read (a Spark executor) and an item never straddles two
    files.
    """

    name: str = ""
    extensions: tuple[str, ...] = ()
    #: True for formats whose files are bytes, not text (:class:`assay.core.array_formats.ArrayFormat`)
    binary: bool = False

    def parse(self, text: str, *, source: str = "<string>") -> list[Any]:
        """Parse a whole document's text into a list of items."""
        raise NotImplementedError(f"{type(self).__name__} must implement parse(text, source=...)")

    def decode(self, data: bytes, *, source: str = "<bytes>") -> str:
        """A file's bytes as text: strict UTF-8, so a bad byte is an error naming ``source`` and the offset."""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataFormatError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", source=source) from None

    def loads(self, data: bytes, *, source: str = "<bytes>") -> list[Any]:
        """Items of one file's bytes: :meth:`decode` then :meth:`parse` (binary formats override this)."""
        return self.parse(self.decode(data, source=source), source=source)

    def read(self, path: str | os.PathLike[str]) -> list[Any]:
        """Read one file and return its items (:meth:`loads` of its bytes)."""
        p = Path(path)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(f"No such data file: {str(p)!r}") from None
        return self.loads(data, source=str(p))

    def dumps(self, items: list[Any]) -> str:
        """Serialise items back to this format's text (optional)."""
        raise NotImplementedError(f"{type(self).__name__} cannot write its items")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class JsonLinesFormat(DataFormat):
    """JSON Lines: one JSON value per line; blank lines are skipped.

    >>> JsonLinesFormat().parse('{"a": 1}\\n\\n[2, 3]\\n')
    [{'a': 1}, [2, 3]]
    """

    name = "jsonl"
    extensions = (".jsonl", ".ndjson")

    def parse(self, text: str, *, source: str = "<string>") -> list[Any]:
        return parse_jsonl(text, source=source,
                           error=lambda reason, line: DataFormatError(reason, source=source, line=line))

    def dumps(self, items: list[Any]) -> str:
        return dumps_jsonl(items)


@hookimpl
def assay_register_data_formats(register: Register) -> None:
    register("jsonl", JsonLinesFormat, extensions=JsonLinesFormat.extensions,
             description="JSON Lines: one JSON value per line",
             examples=[{"text": '{"id": 1, "text": "ça va", "tags": ["a", "b"]}\n[1, 2.5, null]\n"plain"\n'}])
