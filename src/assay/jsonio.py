"""JSON files assay writes and reads: standard JSON, atomic writes, strict reads.

Every file assay writes for a user to keep (evaluation results, ``UEManager`` saves, the
result files and manifest of ``assay run``) goes through this module, so they all follow
the same three rules.

**Standard JSON, one rule for non-finite floats.** JSON has no NaN or infinity. assay
writes a non-finite float as one of the three strings ``"NaN"``, ``"Infinity"`` and
``"-Infinity"`` (the spellings JavaScript's ``Number()``, Java's ``Double.parseDouble`` and
Python's ``float()`` accept), and the readers turn them back into floats where the format
expects a number (a score, a metric value; see :func:`decode_number` and
:func:`decode_numbers`). Free text (a prediction, an answer) is never converted. The
writer uses ``allow_nan=False``, so a bare ``NaN`` / ``Infinity`` can never slip out.
Files written by older assay versions, where an undefined value was ``null``, read back
as NaN where a number is expected. numpy scalars and arrays become plain numbers and
lists; tuples and sets become lists; mapping keys become strings.

**Atomic writes.** :func:`write_json_atomic`, :func:`write_text_atomic` and
:func:`atomic_output` write to a temporary sibling in the target's folder, flush and
``fsync`` it, replace the target with :func:`os.replace` (atomic on POSIX and Windows) and
``fsync`` the folder. A crash, a kill or a full disk leaves either the complete old file or
the complete new one, never a truncated mix; the temporary file is removed on failure.
The new file keeps the old one's permissions (a new file gets the usual ones, from the umask).

**Strict reads.** :func:`read_json` refuses the non-standard ``NaN`` / ``Infinity``
literals, undecodable UTF-8 and malformed JSON with a :class:`~assay.errors.SaveFormatError`
that names the file, the line and the column.

**JSON Lines.** :func:`parse_jsonl` / :func:`read_jsonl` read one JSON value per line (blank
lines skipped; a line ends at ``\\n`` only, so a raw U+2028 or form feed inside a string
stays in its record) and name the source and the line number of a bad record;
:func:`dumps_jsonl` writes by the rule above. JSON Lines files are mostly *inputs* made by
other tools (predictions, references, model outputs), and Python's ``json.dumps`` writes
``NaN`` / ``Infinity`` literals by default, so the reader accepts those literals as floats
(as ``json.loads`` does); everything assay writes still follows the one rule.

The one NaN / infinity rule, in short: **written** as the strings ``"NaN"``, ``"Infinity"``,
``"-Infinity"``, everywhere (result files, saves, ``--json`` output, JSON Lines); **read**
back as floats where a number is expected; the bare literals are **refused** in files assay
keeps (:func:`read_json`, except ``legacy_constants=True`` for evaluation results written by
old versions) and **accepted** in input data (:func:`parse_jsonl`).

>>> to_jsonable({"a": float("inf"), "b": (1, 2.5)})
{'a': 'Infinity', 'b': [1, 2.5]}
>>> decode_number("-Infinity", where="x")
-inf
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.errors import InvalidParameterError, SaveFormatError

__all__ = [
    "NONFINITE",
    "atomic_output",
    "decode_number",
    "decode_numbers",
    "dumps",
    "dumps_jsonl",
    "fsync_dir",
    "parse_jsonl",
    "read_json",
    "read_jsonl",
    "to_jsonable",
    "write_json_atomic",
    "write_text_atomic",
]

#: how each non-finite float is written (and read back)
NONFINITE: dict[str, float] = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _float(x: float) -> float | str:
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def to_jsonable(x: Any) -> Any:
    """Plain JSON values for ``x`` (recursively), non-finite floats as ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"``.

    numpy scalars and arrays become Python numbers and lists, tuples and sets lists,
    :class:`os.PathLike` a string and mapping keys strings.
    """
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in x]
    np = sys.modules.get("numpy")  # a numpy value exists only once numpy is imported: not imported here
    if np is not None and isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    if np is not None and isinstance(x, np.generic):
        return to_jsonable(x.item())
    if isinstance(x, float):
        return _float(x)
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    return x


def dumps(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as standard JSON text (:func:`to_jsonable`, then ``json.dumps(allow_nan=False)``)."""
    return json.dumps(to_jsonable(data), indent=indent, allow_nan=False, ensure_ascii=False)


def decode_number(value: Any, *, where: str) -> float | int:
    """A number stored by the rule above: a JSON number, one of the three strings, or ``null`` (NaN).

    Raises :class:`~assay.errors.SaveFormatError` naming ``where`` for anything else.
    """
    if value is None:
        return math.nan
    if isinstance(value, str) and value in NONFINITE:
        return NONFINITE[value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise SaveFormatError(f"{where} must be a number (or \"NaN\", \"Infinity\", \"-Infinity\"); got {value!r:.80}.")


def decode_numbers(tree: Any) -> Any:
    """``tree`` with every ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"`` / ``null`` leaf turned into a float.

    For trees that hold numbers (scores, metric values), not free text.
    """
    if isinstance(tree, dict):
        return {k: decode_numbers(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [decode_numbers(v) for v in tree]
    if tree is None:
        return math.nan
    if isinstance(tree, str) and tree in NONFINITE:
        return NONFINITE[tree]
    return tree


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def read_json(path: str | os.PathLike[str], *, what: str = "JSON file", legacy_constants: bool = False) -> Any:
    """Read a JSON file strictly; errors are :class:`~assay.errors.SaveFormatError` naming file, line and column.

    ``NaN`` / ``Infinity`` literals (not JSON) are refused; the three strings of the
    non-finite rule are left as strings (decode them with :func:`decode_number`).
    ``legacy_constants=True`` accepts the literals, as floats, for files older assay
    versions wrote with them (evaluation results). A missing file raises :class:`FileNotFoundError` naming it.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"No such {what}: {str(p)!r}") from None
    except IsADirectoryError:
        raise SaveFormatError(f"{p}: expected a {what}, found a folder.", path=p) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SaveFormatError(f"{p}: not UTF-8 text (byte {exc.start}, line {line}); is it a {what}?",
                              path=p) from None
    try:
        return json.loads(text, parse_constant=float if legacy_constants else _reject_constant)
    except json.JSONDecodeError as exc:
        raise SaveFormatError(f"{p}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.",
                              path=p) from None
    except ValueError as exc:  # a NaN / Infinity literal
        raise SaveFormatError(f"{p}: {exc} (write non-finite numbers as \"NaN\", \"Infinity\", \"-Infinity\").",
                              path=p) from None


def dumps_jsonl(items: Iterable[Any]) -> str:
    """``items`` as JSON Lines text: one compact standard-JSON value per line (the rule above), each ending in ``\\n``.

    >>> dumps_jsonl([{"a": float("nan")}, [1, 2]])
    '{"a": "NaN"}\\n[1, 2]\\n'
    """
    return "".join(dumps(item, indent=None) + "\n" for item in items)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Numbered lines split at ``\\n`` only (``str.splitlines`` would also cut at U+2028, form feed ...)."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        yield lineno, line[:-1] if line.endswith("\r") else line


def parse_jsonl(text: str, *, source: str = "<string>",
                error: Callable[[str, int], Exception] | None = None) -> list[Any]:
    """The values of JSON Lines ``text``, one per non-blank line.

    ``NaN`` / ``Infinity`` / ``-Infinity`` literals are read as floats (input data from
    Python's ``json`` module carries them); see the module docstring.

    Parameters
    ----------
    text : str
        The file's text.
    source : str
        The file name (or ``"<string>"``) for error messages.
    error : callable, optional
        ``error(reason, lineno) -> Exception`` builds the exception a bad line raises (a
        caller's own :class:`~assay.errors.InvalidParameterError` subclass); by default an
        :class:`~assay.errors.InvalidParameterError` reading ``"{source}:{lineno}: {reason}"``.

    Examples
    --------
    >>> parse_jsonl('{"a": 1}\\n\\n[2, NaN]\\n')
    [{'a': 1}, [2, nan]]
    """
    items: list[Any] = []
    for lineno, line in _lines(text):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            reason = f"invalid JSON ({exc.msg}, column {exc.colno})"
            raise (error(reason, lineno) if error is not None
                   else InvalidParameterError(f"{source}:{lineno}: {reason}.")) from None
    return items


def read_jsonl(path: str | os.PathLike[str], *, what: str = "JSON Lines file",
               error: Callable[[str, int], Exception] | None = None) -> list[Any]:
    """Read a JSON Lines file (UTF-8) with :func:`parse_jsonl`; errors name the file and the line.

    A missing file raises :class:`FileNotFoundError` naming it; bytes that are not UTF-8 an
    :class:`~assay.errors.InvalidParameterError` naming the file and the line.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"No such {what}: {str(p)!r}") from None
    except IsADirectoryError:
        raise InvalidParameterError(f"{p}: expected a {what}, found a folder.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        reason = f"not UTF-8 text (byte {exc.start}); is it a {what}?"
        raise (error(reason, line) if error is not None
               else InvalidParameterError(f"{p}:{line}: {reason}")) from None
    return parse_jsonl(text, source=str(p), error=error)


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """``fsync`` a folder so a rename inside it survives a power loss (no-op where unsupported)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # Windows cannot open a folder; its renames are durable enough for us
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):  # a folder fsync not supported here
            raise
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()  # read once, at import: os.umask can only be read by setting it


def _set_mode(tmp: Path, target: Path) -> None:
    """Give the temporary file the mode the target has, or an ordinary new file's (``mkstemp`` makes 0600)."""
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    os.chmod(tmp, mode)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], *, fsync: bool = True) -> Iterator[Path]:
    """Yield a temporary sibling path; on success it replaces ``path``, on any error it is removed.

    For writers that want a file name (``np.savez``, ``savefig``):

    >>> with atomic_output(out / "arrays.npz") as tmp:     # doctest: +SKIP
    ...     np.savez(tmp, x=x)
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # 3 ms to import: only when a file is written

    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp" + target.suffix, dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        _set_mode(tmp, target)
        yield tmp
        if fsync:
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        os.replace(tmp, target)
        if fsync:
            fsync_dir(target.parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str, *, fsync: bool = True) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically: temporary sibling, flush, ``fsync``, ``os.replace``."""
    target = Path(path)
    with atomic_output(target, fsync=False) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        if fsync:
            os.fsync(f.fileno())
    if fsync:
        fsync_dir(target.parent)
    return target


def write_json_atomic(path: str | os.PathLike[str], data: Any, *, indent: int | None = 2, fsync: bool = True) -> Path:
    """Write ``data`` as standard JSON to ``path`` atomically (see the module docstring for the rules).

    The text is built before anything is opened, so a value that cannot be written
    (an object JSON does not know) fails without touching the old file. ``fsync=False``
    skips the syncs (for many small files whose manifest is synced last); the write is
    still atomic against a crash of this process.
    """
    return write_text_atomic(path, dumps(data, indent=indent) + "\n", fsync=fsync)
