"""Data files as UTF-8 text lines, read in bounded chunks (the readers of the CoNLL formats and the streams).

Its own module, below :mod:`assay_parsing.formats` and :mod:`assay_parsing.stream`, which
both read files this way: the formats open pair streams and the streams read with the
formats' readers, so the shared reading lives here and neither imports the other for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from assay import DataFormatError

__all__ = ["CHUNK_BYTES", "MAX_LINE_BYTES", "check_line_length", "decode_utf8", "iter_lines", "open_data_file",
           "read_lines"]

#: Bytes read at a time by the streaming readers (cut at a line end, so never inside a character).
CHUNK_BYTES = 1 << 20
#: The longest line the streaming readers accept (bytes, newline excluded): a CoNLL line is a few hundred
#: bytes, a ``# text`` comment a few thousand; a longer one is an error naming the file and the line
#: (a 2 GiB line would otherwise be gathered chunk by chunk, copying it again for every chunk).
MAX_LINE_BYTES = 16 << 20


def iter_lines(path: str | os.PathLike[str], *, start: int = 0, stop: int | None = None,
               first_line: int = 1, chunk_bytes: int | None = None) -> Iterator[str]:
    """The lines of ``path`` (UTF-8, split on ``\\n`` as ``text.split("\\n")`` does), read in chunks.

    Reads bytes ``[start, stop)`` (to the end when ``stop`` is None), ``chunk_bytes`` at a time
    cut at a line end, so memory stays bounded by a chunk plus the longest line. Invalid
    UTF-8 raises :class:`assay.DataFormatError` naming the file, the line and the byte offset.
    ``first_line`` is the line number at ``start`` (used in that message); ``chunk_bytes``
    defaults to :data:`CHUNK_BYTES`.
    """
    source = os.fspath(path)
    with open_data_file(source) as f:
        f.seek(start)
        yield from read_lines(f, source=source, offset=start, size=None if stop is None else max(0, stop - start),
                              first_line=first_line, chunk_bytes=chunk_bytes)


def read_lines(f: Any, *, source: str, offset: int = 0, size: int | None = None, first_line: int = 1,
               chunk_bytes: int | None = None) -> Iterator[str]:
    """The lines of the next ``size`` bytes (all when None) of the binary file object ``f``, in chunks.

    What :func:`iter_lines` reads with; ``offset`` (the position of ``f`` in the file named
    ``source``) and ``first_line`` are for error messages.
    """
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    remaining, lineno, tail = size, first_line, b""
    while True:
        want = chunk_bytes if remaining is None else min(chunk_bytes, remaining)
        block = f.read(want) if want else b""
        if remaining is not None:
            remaining -= len(block)
        if not block:  # the last line: what follows the last newline, maybe empty, as split() gives
            yield decode_utf8(tail, source, lineno, offset)
            return
        data = check_line_length(tail + block, source, lineno)
        cut = data.rfind(b"\n") + 1
        if not cut:
            tail = data
            continue
        text = decode_utf8(data[:cut - 1], source, lineno, offset)
        lines = text.split("\n")
        yield from lines
        lineno += len(lines)
        offset += cut
        tail = data[cut:]


def check_line_length(data: bytes, source: str, lineno: int) -> bytes:
    """``data`` (read from the start of line ``lineno``); a DataFormatError naming the file and the line when
    that first line is longer than :data:`MAX_LINE_BYTES` (the only line of ``data`` that can be: the
    others began inside the last chunk read)."""
    if len(data) > MAX_LINE_BYTES and data.find(b"\n", 0, MAX_LINE_BYTES + 1) < 0:
        raise DataFormatError(f"line {lineno} is longer than {MAX_LINE_BYTES:,} bytes without a line end (a CoNLL "
                              "line is a few hundred); is this a CoNLL-U / CoNLL-X file?", source=source, line=lineno)
    return data


def open_data_file(source: str) -> Any:
    """``open(source, "rb")``; a missing file is a ``FileNotFoundError``, any other failure a DataFormatError."""
    try:
        return open(source, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"No such data file: {source!r}") from None
    except OSError as exc:  # a folder, no permission, ...
        raise DataFormatError(f"cannot be read ({exc.strerror or exc})", source=source) from None


def decode_utf8(data: bytes, source: str, lineno: int, offset: int) -> str:
    """``data`` decoded as UTF-8; invalid bytes raise :class:`assay.DataFormatError` naming the file, line and byte.

    ``lineno`` is the line number and ``offset`` the byte offset in ``source`` where ``data`` starts.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = lineno + data.count(b"\n", 0, exc.start)
        gzipped = offset == 0 and data[:2] == b"\x1f\x8b"
        hint = "; the file looks gzip-compressed: decompress it first" if gzipped else ""
        raise DataFormatError(f"not valid UTF-8 ({exc.reason} at byte {offset + exc.start}){hint}",
                              source=source, line=line) from None
