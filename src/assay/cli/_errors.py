"""How every ``assay`` command ends: one line on stderr and a fixed exit status, never a traceback.

:func:`run_command` calls a sub-command's ``func`` and turns whatever it raises into
``assay COMMAND: error: <file or flag>: <what is wrong>``:

- 0: success;
- 2: bad input (a file, a flag, a name): ``assay COMMAND: error: ...``; argparse usage
  errors too (the error line first, then the usage);
- 70: a bug in assay or a plugin (``EX_SOFTWARE`` of ``sysexits.h``), or ``sys.exit()``
  called inside a command: ``assay COMMAND: internal error: TYPE: MESSAGE (set
  ASSAY_DEBUG=1 for the traceback)``;
- 130: Ctrl-C: ``assay COMMAND: interrupted``;
- 141 (128 + SIGPIPE): stdout closed early (``assay list metric | head``): nothing is
  printed, and stdout is pointed at the null device so the exit flush cannot fail.

Bad input is an :class:`~assay.errors.AssayError`, an :class:`OSError` (missing file,
directory where a file is expected and the reverse, permission denied), a
:class:`UnicodeDecodeError`, or a JSON or YAML syntax error. Status 70 is ``EX_SOFTWARE``
of ``sysexits.h``: anything else is a bug to report. With ``ASSAY_DEBUG=1`` in the
environment the traceback is printed before the line (the status stays the same).

Where a bad file came from a flag (``--output out/x.json``), the message names the flag.
Where a library error names a Python parameter (``The 'num_shards' parameter of ... must
be ...``) that a flag of the command set, the message names the flag as typed instead
(``--shards must be ...``): see :func:`flag_for_parameters`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
from pathlib import Path, PurePath
from types import TracebackType
from typing import Any

from assay.errors import AssayError

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_USAGE", "PARAMETER_ALIASES",
           "decode_reason", "describe", "flag_for_parameters", "os_reason", "run_command"]

EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool killed by a closed pipe


# --------------------------------------------------------------------------- reasons
def os_reason(exc: OSError) -> str:
    if isinstance(exc, IsADirectoryError):
        return "is a directory, expected a file"
    if isinstance(exc, NotADirectoryError):
        return "a part of the path is a file, not a directory"
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, FileExistsError):
        is_file = isinstance(exc.filename, (str, bytes)) and os.path.isfile(exc.filename)
        return "already exists and is not a directory" if is_file else "already exists"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or type(exc).__name__


def decode_reason(exc: UnicodeDecodeError) -> str:
    bad = exc.object[exc.start:exc.start + 1] if isinstance(exc.object, (bytes, bytearray)) else b""
    byte = f" (byte 0x{bad[0]:02x})" if bad else ""
    return f"not valid UTF-8 text: {exc.reason} at byte offset {exc.start}{byte}"


# --------------------------------------------------------------------------- parameters -> flags
#: flag ``dest`` -> the Python parameter names its value is passed as, where they differ
PARAMETER_ALIASES: dict[str, tuple[str, ...]] = {
    "shards": ("num_shards",),
    "metric": ("metrics",),
    "sections": ("section",),
    "output": ("out_dir", "output_dir"),
}

# "The 'num_shards' parameter of parallelEvaluate must ..." / "The 'x' parameter must ..." / "'x' must ..."
_PARAMETER = re.compile(r"\b[Tt]he '(?P<a>\w+)' parameter(?: of (?:the )?[\w.\-]+(?: executor)?)?"
                        r"|'(?P<b>\w+)' (?=must\b)")


def flag_for_parameters(message: str, parser: argparse.ArgumentParser | None, argv: list[str]) -> str:
    """``message`` with each Python parameter that a flag of ``parser`` sets replaced by the flag as typed.

    ``The 'num_shards' parameter of parallelEvaluate must be >= 1`` becomes ``--shards must be
    >= 1`` for a command with a ``--shards`` flag; names no flag sets are left as they are.
    """
    if parser is None:
        return message
    flags: dict[str, str] = {}
    given: set[str] = set()  # names whose flag was typed (a hidden alias such as --metrics wins then)
    for action in getattr(parser, "_actions", []):
        if not action.option_strings or action.dest in ("help", "version"):
            continue
        typed = _typed_flag(action.option_strings, argv)
        was_typed = any(arg == typed or arg.startswith(typed + "=") for arg in argv)
        for name in (action.dest, *PARAMETER_ALIASES.get(action.dest, ())):
            if name not in flags or (was_typed and name not in given):
                flags[name] = typed
                if was_typed:
                    given.add(name)

    def swap(match: re.Match[str]) -> str:
        name = match.group("a") or match.group("b")
        if name not in flags:
            return match.group(0)
        # at the start of the message: "<flag>: must be ..." (the "<file or flag>: ..." form)
        return flags[name] + (":" if match.start() == 0 else "") + (" " if match.group("b") else "")

    return _PARAMETER.sub(swap, message)


# --------------------------------------------------------------------------- naming the file or flag
def _typed_flag(option_strings: list[str], argv: list[str]) -> str:
    """The spelling of a flag the user typed (``-o`` or ``--output``); the long one if unknown."""
    for arg in reversed(argv):
        flag = arg.split("=", 1)[0] if arg.startswith("--") else arg[:2]
        if flag in option_strings:
            return flag
    return max(option_strings, key=len) if option_strings else ""


def _flag_sources(parser: argparse.ArgumentParser | None, args: argparse.Namespace,
                  argv: list[str]) -> list[tuple[str, Path]]:
    """(label, path) for every ``type=Path`` argument: label ``--output`` for a flag, "" for a positional."""
    if parser is None:
        return []
    out = []
    for action in getattr(parser, "_actions", []):
        values = getattr(args, action.dest, None)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, PurePath) and str(value):
                out.append((_typed_flag(action.option_strings, argv), Path(value)))
    return out


def _same_or_under(name: Path, root: Path) -> str:
    """"same", "under" or ""."""
    for a, b in ((name, root), (name.absolute(), root.absolute())):
        if a == b:
            return "same"
        if b in a.parents:
            return "under"
    return ""


def _where(filename: Any, parser: argparse.ArgumentParser | None, args: argparse.Namespace,
           argv: list[str]) -> str:
    """``--output out/x.json`` when the file came from a flag, else the file name."""
    if isinstance(filename, bytes):
        filename = os.fsdecode(filename)
    if not filename:
        return ""
    name = Path(str(filename))
    sources = [(label, path) for label, path in _flag_sources(parser, args, argv) if label]
    for label, path in sources:
        if _same_or_under(name, path) == "same":
            return f"{label} {filename}"
    for label, path in sources:  # a temporary file written beside the output (atomic saves)
        if name.parent == path.parent and path.name and path.name in name.name:
            return f"{label} {path}"
    for label, path in sources:
        if _same_or_under(name, path) == "under":
            return f"{filename} (in {label} {path})"
        if _same_or_under(path, name) == "under":
            return f"{label} {path}: {filename}"
    return str(filename)


def _file_in_traceback(tb: TracebackType | None) -> str:
    """The file being read where the exception was raised: the innermost frame holding a
    path or an open file (``Path.read_text``'s ``self``, ``json.loads(p.read_text())``'s ``p``)."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            name = getattr(value, "name", None) if isinstance(value, io.IOBase) else None
            if isinstance(name, str) and not name.startswith("<"):
                return name
        for value in frame.f_locals.values():
            if isinstance(value, PurePath):
                return str(value)
    return ""


def _file_holding(content: Any, parser: argparse.ArgumentParser | None, args: argparse.Namespace,
                  argv: list[str]) -> str:
    """The file argument whose content is ``content`` (the text a JSON / YAML error carries, the bytes
    a decode error carries), named by its flag: ``--config plot.yaml``; else ""."""
    if isinstance(content, str):
        content = content.rstrip("\0").encode("utf-8", "surrogateescape")
    if not isinstance(content, (bytes, bytearray)) or not content:
        return ""
    for label, path in _flag_sources(parser, args, argv):
        try:
            if path.is_file() and path.stat().st_size == len(content) and path.read_bytes() == content:
                return f"{label} {path}" if label else str(path)
        except OSError:  # an unreadable candidate is not the file that failed: try the next flag;
            continue     # with none left, the message says "a file" (the error itself is still reported)
    return ""


def _decoded_file(exc: BaseException, content: Any, parser: argparse.ArgumentParser | None,
                  args: argparse.Namespace, argv: list[str], mark_name: str = "") -> str:
    """Where a decode or syntax error came from: a file argument with that content, else the file
    named by the error, else the file being read where it was raised."""
    found = _file_holding(content, parser, args, argv)
    if found:
        return found
    name = mark_name if mark_name and not mark_name.startswith("<") else _file_in_traceback(exc.__traceback__)
    return _where(name, parser, args, argv)


def describe(exc: BaseException, parser: argparse.ArgumentParser | None = None,
             args: argparse.Namespace | None = None, argv: list[str] | None = None) -> str | None:
    """The message for an expected error (bad input), or None for a bug."""
    args = args if args is not None else argparse.Namespace()
    argv = list(argv or [])
    if isinstance(exc, AssayError):
        message = " ".join(str(exc).split("\n")) or type(exc).__name__
        message = flag_for_parameters(message, parser, argv)
        for label, path in _flag_sources(parser, args, argv):  # "plot.yaml: ..." from --config: name the flag
            if label and message.startswith(f"{path}:"):
                return f"{label} {message}"
        return message
    if isinstance(exc, OSError) and exc.filename is not None:
        where = _where(exc.filename, parser, args, argv)
        if exc.filename2 is not None:
            where += f" -> {exc.filename2}"
        return f"{where}: {os_reason(exc)}"
    if isinstance(exc, UnicodeDecodeError):
        where = _decoded_file(exc, exc.object, parser, args, argv) or "a file"
        return f"{where}: {decode_reason(exc)}"
    if isinstance(exc, json.JSONDecodeError):
        where = _decoded_file(exc, exc.doc, parser, args, argv) or "a JSON file"
        return f"{where}: invalid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
    yaml_error = _yaml_error_type()
    if yaml_error is not None and isinstance(exc, yaml_error):
        mark = getattr(exc, "problem_mark", None)
        where = _decoded_file(exc, getattr(mark, "buffer", None), parser, args, argv,
                              mark_name=getattr(mark, "name", "") or "") or "a YAML file"
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        return f"{where}: invalid YAML: {problem}{at}"
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}"
    return None


def _yaml_error_type() -> type | None:
    yaml = sys.modules.get("yaml")  # only loaded if a command used it
    return getattr(yaml, "YAMLError", None)


# --------------------------------------------------------------------------- running a command
def _debug() -> bool:
    return os.environ.get("ASSAY_DEBUG", "").strip() not in ("", "0")


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reading end is gone (``poll`` reports an error on it)."""
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at the null device so the final flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # stdout is not a real file (tests): nothing will flush it at exit


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None,
                argv: list[str] | None = None) -> int:
    """Run ``args.func(args)``; return its exit status, reporting any exception in one line.

    ``parser`` (the sub-command's) and ``argv`` let messages name the flag a bad file came from.
    """
    command = f"assay {args.command}"
    args._flags = {action.dest: _typed_flag(action.option_strings, list(argv or []))
                   for action in getattr(parser, "_actions", []) if action.option_strings}
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError as exc:
        if not _stdout_closed():  # another pipe (a worker's): an error like any other
            return _report(exc, command, parser, args, argv)
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        if _debug():
            import traceback

            traceback.print_exc()
        print(f"{command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # no command exits on its own: this is a plugin or a library calling sys.exit()
        if _debug():
            import traceback

            traceback.print_exc()
        print(f"{command}: internal error: SystemExit({exc.code!r}) raised inside the command "
              "(set ASSAY_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:  # noqa: BLE001 - this is the one place that reports everything
        return _report(exc, command, parser, args, argv)


def _report(exc: Exception, command: str, parser: argparse.ArgumentParser | None, args: argparse.Namespace,
            argv: list[str] | None) -> int:
    """Print the one line for ``exc`` (after its traceback with ``ASSAY_DEBUG=1``); return the status."""
    if _debug():
        import traceback

        traceback.print_exception(exc)
    message = describe(exc, parser, args, argv)
    if message is not None:
        print(f"{command}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    text = " ".join(str(exc).split())
    print(f"{command}: internal error: {type(exc).__name__}: {text} (set ASSAY_DEBUG=1 for the traceback)",
          file=sys.stderr)
    return EXIT_INTERNAL
