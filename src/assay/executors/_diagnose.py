"""Why a process worker could not start: the part that cannot be pickled, a missing main guard (private).

Used by :mod:`assay.executors._processes` to turn a ``PicklingError`` or a
``spawn``/``forkserver`` bootstrapping failure into a message that names the object (the
model, the evaluator, the sentence evaluator) or the line of the script to guard.
"""

from __future__ import annotations

import ast
import multiprocessing
import pickle
import sys
from types import FrameType
from typing import Any

from assay.errors import InvalidParameterError
from assay.executors.base import TaskFunction

__all__ = ["main_guard_error", "unguarded_main_call", "unpicklable_part"]


def _describe(obj: Any) -> str:
    return f"a {type(obj).__module__}.{type(obj).__qualname__} object"


def _pickle_problem(obj: Any) -> BaseException | None:
    try:
        pickle.dumps(obj)
    except Exception as exc:  # noqa: BLE001 - any failure to pickle
        return exc
    return None


def unpicklable_part(fn: TaskFunction, shared: Any) -> tuple[str, BaseException] | None:
    """Which part of ``fn`` / ``shared`` cannot be pickled, named for a person, with the error."""
    names = getattr(fn, "shared_names", None)
    parts: list[tuple[str, Any]] = [(f"the task function {getattr(fn, '__qualname__', fn)!r}", fn)]
    if isinstance(shared, tuple) and names is not None and len(names) == len(shared):
        parts += list(zip(names, shared))
    elif isinstance(shared, tuple):
        parts += [(f"shared[{i}]", part) for i, part in enumerate(shared)]
    else:
        parts.append(("the shared object", shared))
    for name, obj in parts:
        problem = _pickle_problem(obj)
        if problem is None:
            continue
        owner = getattr(obj, "__self__", None)  # a bound method: is it the object it is bound to?
        if owner is not None and not isinstance(owner, type(sys)) and _pickle_problem(owner) is not None:
            name = (f"{name} (the bound method {getattr(obj, '__qualname__', obj)!r}): its object, "
                    f"the evaluator ({_describe(owner)}),")
            problem = _pickle_problem(owner) or problem
        else:
            name = f"{name} ({_describe(obj)})"
        return name, problem
    return None


def _mentions_name(node: ast.If) -> bool:
    """Whether an ``if`` tests ``__name__`` (``if __name__ == "__main__":`` and its variants)."""
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node.test))


def unguarded_main_call() -> tuple[str, int] | None:
    """``(file, line)`` when this call comes from the main script's top level outside a main guard.

    Such a script is re-imported by every ``spawn`` / ``forkserver`` worker, so each worker
    would start the evaluation again (multiprocessing then fails with a bootstrapping
    ``RuntimeError`` in the worker and a ``BrokenPipeError`` or a dead worker here).
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path:
        return None  # interactive, python -c: nothing is re-imported
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            break
        frame = frame.f_back
    if frame is None:
        return None
    line = frame.f_lineno
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    for node in ast.walk(tree):  # lenient: any enclosing `if` that tests __name__ counts as a guard
        if isinstance(node, ast.If) and _mentions_name(node) and node.body:
            end = getattr(node, "end_lineno", None) or node.lineno
            if node.lineno <= line <= end:
                return None
    return path, line


_MAIN_GUARD_ADVICE = ("With start method {method!r} every worker re-imports the main script {path}, and its "
                      "line {line} starts the run at the top level, so each worker would start it again. Put the "
                      "code that runs the evaluation under `if __name__ == '__main__':`"
                      "{fork}.")


def main_guard_error(method: str, where: tuple[str, int]) -> InvalidParameterError:
    fork = " (or use start_method='fork' on Linux)" if "fork" in multiprocessing.get_all_start_methods() else ""
    return InvalidParameterError(_MAIN_GUARD_ADVICE.format(method=method, path=where[0], line=where[1], fork=fork))
