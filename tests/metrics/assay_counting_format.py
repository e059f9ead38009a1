"""A JSON Lines data format that logs every file it reads (picklable by reference, for worker processes)."""

from __future__ import annotations

import os

from assay.core.formats import JsonLinesFormat


class CountingJsonLines(JsonLinesFormat):
    """Appends one line ``<pid> <path>`` to ``log`` for every :meth:`read`, in any process."""

    name = "counting_jsonl"

    def __init__(self, log: str) -> None:
        self.log = log

    def read(self, path):
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {os.fspath(path)}\n")
        return super().read(path)
