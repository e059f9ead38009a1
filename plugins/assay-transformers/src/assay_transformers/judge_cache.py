"""The judgements a judge model has made, kept on disk as they are made, so an interrupted run resumes.

One JSON Lines file per judge identity, ``<cache_dir>/judge-<sha256(identity)[:24]>.jsonl``;
each line one judgement::

    {"key": "<sha256 of identity, settings and prompt>", "model": "<identity>", "settings": {...},
     "prompt": "...", "answer": "..."}

The score is not stored: it is parsed from the answer every time, so another parser needs
no new judging. **Appends are atomic per line**: each line is written by one ``write`` on a
file opened with ``O_APPEND`` and the file is ``fsync``-ed after every batch; a process
killed in the middle of a write leaves at most a torn last line (no newline at its end),
which the next reader drops with a warning and truncates away, so the judgements before it
are kept and the lost one is made again. A complete line that is not valid JSON, lacks a
field, or whose key is not the hash of its own prompt (an edited file) is an
:class:`~assay.errors.EvaluationError` naming the file and the line. No pickle.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any

from assay.errors import EvaluationError

__all__ = ["JudgementCache", "judgement_key"]


def judgement_key(identity: str, settings: dict[str, Any], prompt: str) -> str:
    """SHA-256 (hex) of the judge's identity, its generation settings (sorted JSON) and the prompt."""
    text = json.dumps([identity, settings, prompt], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class JudgementCache:
    """The saved answers of one judge (``identity`` + ``settings``) under ``cache_dir``.

    :meth:`get` returns a saved answer or None; :meth:`add` appends a batch of new
    judgements and syncs the file. The file is read once, on first use.
    """

    def __init__(self, cache_dir: str | os.PathLike[str], identity: str, settings: dict[str, Any]) -> None:
        self.folder = Path(cache_dir).expanduser()
        self.identity = identity
        self.settings = dict(settings)
        self.path = self.folder / f"judge-{hashlib.sha256(identity.encode('utf-8')).hexdigest()[:24]}.jsonl"
        self._answers: dict[str, str] | None = None
        self._lock = threading.Lock()

    def key(self, prompt: str) -> str:
        return judgement_key(self.identity, self.settings, prompt)

    def _load(self) -> dict[str, str]:
        if self._answers is not None:
            return self._answers
        answers: dict[str, str] = {}
        if self.path.is_file():
            data = self.path.read_bytes()
            end = data.rfind(b"\n") + 1
            if end < len(data):  # a write cut short by a kill: drop it (the judgement is made again)
                warnings.warn(f"The judgement cache {str(self.path)!r} ends with an incomplete line ({len(data) - end} "
                              "bytes, from a run that was killed while writing); it is removed and that judgement "
                              "is made again.", UserWarning, stacklevel=4)
                with self.path.open("r+b") as fh:
                    fh.truncate(end)
                data = data[:end]
            for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                record = self._check(line, number)
                answers[record["key"]] = record["answer"]
        self._answers = answers
        return answers

    def _check(self, line: str, number: int) -> dict[str, Any]:
        where = f"line {number} of the judgement cache {str(self.path)!r}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise EvaluationError(f"{where} is not valid JSON ({exc}); delete the file to judge again.") from None
        if not isinstance(record, dict) or not all(isinstance(record.get(k), str)
                                                   for k in ("key", "model", "prompt", "answer")):
            raise EvaluationError(f"{where} is not an object with the strings key, model, prompt and answer; delete "
                                  "the file to judge again.")
        if record["model"] != self.identity:
            raise EvaluationError(f"{where} holds a judgement of {record['model']!r}, not of {self.identity!r}; "
                                  "delete the file to judge again.")
        if not isinstance(record.get("settings"), dict):
            raise EvaluationError(f"{where} has no 'settings' object; delete the file to judge again.")
        if judgement_key(record["model"], record["settings"], record["prompt"]) != record["key"]:
            raise EvaluationError(f"{where}: its key is not the hash of its model, settings and prompt (the file "
                                  "was edited); delete the file to judge again.")
        return record

    def get(self, prompt: str) -> str | None:
        with self._lock:
            return self._load().get(self.key(prompt))

    def __len__(self) -> int:
        with self._lock:
            return len(self._load())

    def add(self, prompts: list[str], answers: list[str]) -> None:
        """Append these judgements (one ``write`` per line, ``O_APPEND``) and ``fsync`` the file."""
        with self._lock:
            known = self._load()
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                for prompt, answer in zip(prompts, answers):
                    key = self.key(prompt)
                    line = json.dumps({"key": key, "model": self.identity, "settings": self.settings,
                                       "prompt": prompt, "answer": answer}, ensure_ascii=False) + "\n"
                    data = line.encode("utf-8")
                    while data:  # one write() in practice; a short write continues where it stopped
                        data = data[os.write(fd, data):]
                    known[key] = answer
                os.fsync(fd)
            finally:
                os.close(fd)
