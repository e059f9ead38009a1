"""How ``assay`` commands end: one line on stderr, a fixed exit status, no traceback.

Status 2 and ``assay COMMAND: error: ...`` for bad input; 70 and ``internal error`` for a
bug; 130 on Ctrl-C; 141 and silence when stdout is closed early; ``ASSAY_DEBUG=1`` adds
the traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import assay.cli.plugins as plugins_cli
from assay.cli import main
from assay.cli._errors import EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from assay.plugins import get_registry


def _raise(exc):
    def func(args):
        raise exc
    return func


def test_exit_statuses_are_the_documented_ones():
    assert (EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE) == (2, 70, 130, 141)


def test_a_bug_is_one_line_with_status_70(monkeypatch, capsys):
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    monkeypatch.setattr(plugins_cli, "run_list", _raise(ZeroDivisionError("division by zero")))
    assert main(["list", "metric"]) == 70
    err = capsys.readouterr().err
    assert err == ("assay list: internal error: ZeroDivisionError: division by zero "
                   "(set ASSAY_DEBUG=1 for the traceback)\n")


def test_assay_debug_prints_the_traceback(monkeypatch, capsys):
    monkeypatch.setenv("ASSAY_DEBUG", "1")
    monkeypatch.setattr(plugins_cli, "run_list", _raise(ZeroDivisionError("division by zero")))
    assert main(["list", "metric"]) == 70
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "ZeroDivisionError" in err
    assert err.rstrip().splitlines()[-1].startswith("assay list: internal error: ZeroDivisionError")


def test_keyboard_interrupt_is_one_line_with_status_130(monkeypatch, capsys):
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    monkeypatch.setattr(plugins_cli, "run_plugins", _raise(KeyboardInterrupt()))
    assert main(["plugins"]) == 130
    assert capsys.readouterr().err == "assay plugins: interrupted\n"


@pytest.mark.parametrize(("exc", "expected"), [
    (PermissionError(13, "Permission denied", "/x/out.json"), "/x/out.json: permission denied"),
    (IsADirectoryError(21, "Is a directory", "somewhere"), "somewhere: is a directory, expected a file"),
    (NotADirectoryError(20, "Not a directory", "f/sub"), "f/sub: a part of the path is a file, not a directory"),
    (OSError(28, "No space left on device", "big.npz"), "big.npz: No space left on device"),
    (OSError(5, "Input/output error"), "Input/output error"),
])
def test_os_errors_name_the_file(monkeypatch, capsys, exc, expected):
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    monkeypatch.setattr(plugins_cli, "run_list", _raise(exc))
    assert main(["list", "metric"]) == 2
    assert capsys.readouterr().err == f"assay list: error: {expected}\n"


def test_a_file_from_a_flag_is_named_by_the_flag_typed(tmp_path, capsys):
    (tmp_path / "r.jsonl").write_text("1\n")
    for flag in ("-p", "--predictions"):
        assert main(["evaluate", "-m", "accuracy", flag, str(tmp_path), "-r", str(tmp_path / "r.jsonl")]) == 2
        assert capsys.readouterr().err == f"assay evaluate: error: {flag} {tmp_path}: is a directory, expected a file\n"


def test_non_utf8_names_file_and_byte_offset(tmp_path, capsys):
    (tmp_path / "p.jsonl").write_bytes(b"1\n0\n\xe9t\xe9\n")
    (tmp_path / "r.jsonl").write_text("1\n0\n1\n")
    assert main(["evaluate", "-m", "accuracy", "-p", str(tmp_path / "p.jsonl"), "-r", str(tmp_path / "r.jsonl")]) == 2
    # b"1\n0\n" is 4 bytes: the bad byte 0xe9 is at offset 4
    assert capsys.readouterr().err == (f"assay evaluate: error: -p {tmp_path / 'p.jsonl'}: not valid UTF-8 text: "
                                       "invalid continuation byte at byte offset 4 (byte 0xe9)\n")


def test_usage_errors_put_the_error_line_first(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["table", "results", "--digits", "-1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("assay table: error: argument --digits: expected a non-negative integer; got -1\n")
    assert "usage: assay table" in err


def _run_assay(*args, env_extra=None, **kw):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env_extra or {})}
    env.pop("ASSAY_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", "assay", *args], env=env, stderr=subprocess.PIPE, **kw)


@pytest.mark.slow
def test_closed_stdout_exits_quietly_with_141():
    # the reading end is closed before assay writes: every write fails with EPIPE
    proc = _run_assay("list", "metric", stdout=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


@pytest.mark.slow
def test_pipe_into_head_shows_no_traceback(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    script = f"'{sys.executable}' -m assay list metric | head -n 1; echo \"status=${{PIPESTATUS[0]}}\""
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    # the first line of the listing: a registered name (names sort by code point: "AUGRC", an alias, before "accuracy")
    assert len(lines) == 2 and lines[1] in ("status=0", "status=141")
    assert lines[0].split()[0] == min(get_registry("metric").names())
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_sys_exit_inside_a_command_is_an_internal_error(monkeypatch, capsys):
    # no command exits on its own; a plugin calling sys.exit() must not end assay silently
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    monkeypatch.setattr(plugins_cli, "run_list", _raise(SystemExit(0)))
    assert main(["list", "metric"]) == 70
    assert capsys.readouterr().err.startswith("assay list: internal error: SystemExit(0)")


def test_unknown_argument_is_reported_by_the_sub_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["plugins", "--jsn"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("assay plugins: error: unrecognized arguments: --jsn\n")


def test_a_json_syntax_error_names_the_flag_of_the_file(tmp_path, monkeypatch, capsys):
    # the decode error carries the text, not the file: it is matched to the file argument holding it
    import json as json_module

    def read(args):
        return json_module.loads(args.predictions.read_text())

    (tmp_path / "p.jsonl").write_text('{"a": 1,}')
    (tmp_path / "r.jsonl").write_text("1\n")
    monkeypatch.setattr("assay.cli.evaluate.run", read)
    assert main(["evaluate", "-m", "accuracy", "--predictions", str(tmp_path / "p.jsonl"),
                 "-r", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"assay evaluate: error: --predictions {tmp_path / 'p.jsonl'}: invalid JSON: ")
    assert "line 1, column 9" in err


def test_a_temporary_file_beside_the_output_is_named_by_the_output_flag(monkeypatch, capsys):
    # atomic saves write "out.json.tmp123" first: the error still names --output
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    monkeypatch.setattr("assay.cli.evaluate.run", _raise(PermissionError(13, "Permission denied",
                                                                         "res/.out.json.tmp123")))
    assert main(["evaluate", "-m", "accuracy", "-p", "p.jsonl", "--output", "res/out.json"]) == 2
    assert capsys.readouterr().err == "assay evaluate: error: --output res/out.json: permission denied\n"


def test_a_broken_pipe_other_than_stdout_is_not_silent(monkeypatch, capsys):
    # e.g. the pipe to a worker process: stdout is fine, so this is an error to report, not "| head"
    monkeypatch.delenv("ASSAY_DEBUG", raising=False)
    monkeypatch.setattr(plugins_cli, "run_list", _raise(BrokenPipeError(32, "Broken pipe")))
    assert main(["list", "metric"]) == 2
    assert capsys.readouterr().err == "assay list: error: Broken pipe\n"
