"""Data pools: ordered, sized collections of items, cut into contiguous shards.

>>> from assay import DataPool
>>> pool = DataPool(list("abcdefg"), num_shards=3)
>>> [list(s.items()) for s in pool.shards()]
[['a', 'b', 'c'], ['d', 'e'], ['f', 'g']]
>>> pool.get_sent_num(), pool.has_next_data(), pool.get_next_data()
(7, True, 'a')

Three kinds of pool, one interface:

- ``DataPool(items, num_shards=4)`` over any sized sequence (kept by reference).
- ``DataPool.from_file(path, format=None)`` reads one file through a registered data
  format (guessed from the file name when not given; JSON Lines is built in).
- ``DataPool.from_paths("data/*.conllu", format="conllu")`` is lazy: it holds file
  names only, and each shard (a group of whole files) is read where the shard runs --
  in a worker process, or on a Spark executor.

Shards are contiguous, in pool order, and cover every item exactly once. For in-memory
pools their sizes differ by at most one item; asking for more shards than items gives
empty shards (which evaluate to zero tallies).
"""

from __future__ import annotations

import glob as _glob
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.core.formats import DataFormat
from assay.errors import InvalidParameterError
from assay.plugins import get_registry, load_data_format

__all__ = ["DataPool", "PathPool", "PathShard", "Shard", "split_evenly"]

_GLOB_CHARS = frozenset("*?[")


def _check_num_shards(num_shards: Any, *, allow_none: bool = True) -> int | None:
    if num_shards is None and allow_none:
        return None
    if isinstance(num_shards, bool) or not isinstance(num_shards, int) or num_shards < 1:
        raise InvalidParameterError(
            f"The 'num_shards' parameter must be a positive int{' or None' if allow_none else ''}. "
            f"Got {num_shards!r} instead."
        )
    return num_shards


def split_evenly(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ``(start, stop)`` ranges covering ``range(n)``, sizes differing by at most one.

    >>> split_evenly(7, 3)
    [(0, 3), (3, 5), (5, 7)]
    >>> split_evenly(2, 4)
    [(0, 1), (1, 2), (2, 2), (2, 2)]
    """
    base, extra = divmod(n, parts)
    bounds = []
    start = 0
    for i in range(parts):
        stop = start + base + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


# --------------------------------------------------------------------------- shards
class Shard:
    """A contiguous slice ``[start, stop)`` of an in-memory pool.

    A shard iterates over its items in pool order (``for sent in shard``, ``list(shard)``,
    ``len(shard)``, as the SFU toolkit's shards do); ``items()`` returns them as a
    sequence; ``pool_index(offset)`` maps a position inside
    the shard to the index in the pool. Pickling a shard pickles only its own items,
    never the whole pool (a ``processes`` worker started by ``fork`` does not pickle it
    at all: it inherits the pool).
    """

    __slots__ = ("_base", "_source", "index", "start", "stop")

    def __init__(self, index: int, start: int, stop: int, source: Sequence[Any], base: int = 0) -> None:
        self.index = index
        self.start = start
        self.stop = stop
        self._source = source  # source[0] is pool item ``base``
        self._base = base

    def __len__(self) -> int:
        return self.stop - self.start

    def __iter__(self) -> Iterator[Any]:
        """The shard's items, in pool order (``for sent in shard``, ``list(shard)``)."""
        return iter(self.items())

    def items(self) -> Sequence[Any]:
        """The shard's items, in pool order."""
        lo, hi = self.start - self._base, self.stop - self._base
        if lo == 0 and hi == len(self._source):
            return self._source
        try:
            return self._source[lo:hi]
        except (TypeError, KeyError):  # a sequence without slicing
            return [self._source[i] for i in range(lo, hi)]

    def pool_index(self, offset: int) -> int | None:
        """The pool index of the shard's ``offset``-th item."""
        return self.start + offset

    def describe(self, offset: int) -> str:
        """Where the shard's ``offset``-th item is, for error messages."""
        return f"item {self.start + offset}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Shard, (self.index, self.start, self.stop, list(self.items()), self.start))

    def __repr__(self) -> str:
        if not len(self):
            return f"Shard(index={self.index}, empty)"
        return f"Shard(index={self.index}, items {self.start}..{self.stop - 1})"


class PathShard:
    """A shard of a :class:`PathPool`: whole files, read where the shard runs.

    Attributes
    ----------
    index : int
        The shard number.
    paths : tuple of str
        The files, in pool order (an item never straddles two shards).
    format : str
        The registered name of the data format (``load_data_format(format)``); empty when
        the pool was given an unregistered :class:`~assay.DataFormat` instance.
    data_format : DataFormat
        The format object itself (picklable), used by :meth:`parse` and :meth:`items`.
    first_file : int or None
        The index in the pool of the shard's first file (its files are the pool's files
        ``first_file, first_file + 1, ...``): the Poisson bootstrap keys item weights by
        (file, position in the file). None when unknown.

    A Spark executor reads ``paths`` with ``binaryFiles``, decodes them strictly and turns each file's text
    into items with :meth:`parse`; a local worker calls :meth:`items`.
    """

    __slots__ = ("_bounds", "data_format", "first_file", "format", "index", "paths")

    start = None  # pool offsets are unknown until the files before this shard are read

    def __init__(self, index: int, paths: tuple[str, ...], format: str, data_format: DataFormat,
                 first_file: int | None = None) -> None:
        self.index = index
        self.paths = tuple(paths)
        self.format = format
        self.data_format = data_format
        self.first_file = first_file
        self._bounds: list[tuple[int, str]] = []

    def __len__(self) -> int:
        return len(self.items())

    def __iter__(self) -> Iterator[Any]:
        """The items of the shard's files, in order (the files are read once per iteration)."""
        return iter(self.items())

    def parse(self, text: str, *, source: str) -> list[Any]:
        """Items of one file's ``text`` (``source`` names the file in error messages)."""
        return self.data_format.parse(text, source=source)

    def items(self) -> list[Any]:
        """Read and parse the shard's files (in order) and return their items."""
        items: list[Any] = []
        bounds: list[tuple[int, str]] = []
        for path in self.paths:
            bounds.append((len(items), path))
            items.extend(self.data_format.read(path))
        self._bounds = bounds
        return items

    def pool_index(self, offset: int) -> int | None:
        return None

    def describe(self, offset: int) -> str:
        for start, path in reversed(self._bounds):
            if offset >= start:
                return f"item {offset - start} of file {path!r} (item {offset} of the shard)"
        return f"item {offset} of the shard"

    def __reduce__(self) -> tuple[Any, ...]:
        return (PathShard, (self.index, self.paths, self.format, self.data_format, self.first_file))

    def __repr__(self) -> str:
        return f"PathShard(index={self.index}, files={len(self.paths)}, format={self.format!r})"


# --------------------------------------------------------------------------- pools
class DataPool:
    """An ordered, sized collection of items with a shard count.

    Parameters
    ----------
    items : sequence
        Any sized sequence (list, tuple, numpy array, ...). Kept by reference, not copied;
        do not change it while an evaluation runs.
    num_shards : int, optional
        How many shards :meth:`shards` cuts by default. ``None`` lets the evaluator decide
        (one shard sequentially, one per worker in parallel).

    Examples
    --------
    >>> pool = DataPool(range(10), num_shards=4)
    >>> [len(s) for s in pool.shards()]
    [3, 3, 2, 2]
    >>> [len(s) for s in pool.shards(12)][:3], len(pool.shards(12))
    ([1, 1, 1], 12)
    """

    def __init__(self, items: Sequence[Any], num_shards: int | None = None, *,
                 source: str | None = None, format: str | None = None) -> None:
        sequence = hasattr(items, "__len__") and hasattr(items, "__getitem__")
        if isinstance(items, (str, bytes, Mapping)) or not sequence:
            if isinstance(items, (str, bytes, os.PathLike)):
                hint = " (to read a file, use DataPool.from_file(path))"
            elif isinstance(items, Mapping):
                hint = " (a mapping is not a sequence: pass list(mapping.values()))"
            elif isinstance(items, Iterable):
                hint = " (wrap an iterator or generator in list(...))"
            else:
                hint = ""
            raise InvalidParameterError(
                f"The 'items' parameter of DataPool must be a sized sequence (list, tuple, array ...). "
                f"Got {type(items).__name__} instead{hint}."
            )
        self._items: Sequence[Any] = items
        self.num_shards = _check_num_shards(num_shards)
        #: The file the items came from (``from_file``), else None.
        self.source = source
        #: The registered data-format name the items were read with, else None.
        self.format = format
        self._cursor = 0

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_file(cls, path: str | os.PathLike[str], format: Any = None, num_shards: int | None = None) -> DataPool:
        """Read one file through a registered data format.

        Parameters
        ----------
        path : str or path-like
            The file (UTF-8).
        format : str or DataFormat, optional
            A registered format name (``"jsonl"``, ``"conllu"``, ``"conllu[...]"``) or a
            :class:`~assay.DataFormat` instance. Default: guessed from the file name
            through the ``extensions`` each format registered.
        num_shards : int, optional
            As for :class:`DataPool`.

        Examples
        --------
        >>> import tempfile, os
        >>> d = tempfile.mkdtemp(); p = os.path.join(d, "s.jsonl")
        >>> _ = open(p, "w").write('{"w": 1}\\n{"w": 2}\\n')
        >>> DataPool.from_file(p).get_sent_num()
        2
        """
        name, data_format = _resolve_format(format, [os.fspath(path)])
        items = data_format.read(path)
        return cls(items, num_shards, source=os.fspath(path), format=name or None)

    @classmethod
    def from_paths(cls, paths_or_glob: Any, *, format: Any = None, num_shards: int | None = None) -> PathPool:
        """A lazy pool over whole files: nothing is read until a shard runs.

        Parameters
        ----------
        paths_or_glob : str, path-like or iterable of them
            A glob pattern (``"data/**/*.conllu"``, sorted), a folder (its files, sorted),
            one file, or an explicit list of paths (kept in the given order). Non-local
            URIs (``hdfs://...``) are kept as given, for executors that can read them.
        format : str or DataFormat, optional
            As for :meth:`from_file`; guessed from the file names when not given.
        num_shards : int, optional
            Shards are groups of whole files (so an item never straddles two shards),
            contiguous, with file counts differing by at most one.
        """
        paths = _expand_paths(paths_or_glob)
        name, data_format = _resolve_format(format, paths)
        return PathPool(paths, name, data_format, num_shards)

    # ------------------------------------------------------------ sequence protocol
    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __repr__(self) -> str:
        where = f", source={self.source!r}" if self.source else ""
        return f"DataPool({len(self)} items, num_shards={self.num_shards}{where})"

    @property
    def items(self) -> Sequence[Any]:
        """The items, in pool order."""
        return self._items

    # ------------------------------------------------------------ sharding
    def shards(self, num_shards: int | None = None) -> list[Shard]:
        """Cut the pool into ``num_shards`` contiguous shards (default: the pool's, else 1)."""
        n = _check_num_shards(num_shards) or self.num_shards or 1
        return [Shard(i, start, stop, self._items) for i, (start, stop) in enumerate(split_evenly(len(self), n))]

    # ------------------------------------------------------------ the seed's cursor
    def has_next_data(self) -> bool:
        """True while :meth:`get_next_data` has an item to return."""
        return self._cursor < self.get_sent_num()

    def get_next_data(self) -> Any:
        """The item at the cursor; advances the cursor (``IndexError`` past the end)."""
        if not self.has_next_data():
            raise IndexError(f"get_next_data() past the end of the pool ({self.get_sent_num()} items); "
                             "check has_next_data() or call reset_index().")
        item = self._items_for_cursor()[self._cursor]
        self._cursor += 1
        return item

    def reset_index(self) -> None:
        """Move the cursor back to the first item."""
        self._cursor = 0

    def get_sent_num(self) -> int:
        """The number of items (sentences) in the pool."""
        return len(self)

    def _items_for_cursor(self) -> Sequence[Any]:
        return self._items


class PathPool(DataPool):
    """A lazy :class:`DataPool` over whole files (see :meth:`DataPool.from_paths`).

    ``paths`` and ``format`` say what a shard must read; ``len()``, iteration and the
    cursor methods read every file (once, then cached) in this process.
    """

    def __init__(self, paths: Sequence[str], format: str, data_format: Any, num_shards: int | None = None) -> None:
        self.paths: tuple[str, ...] = tuple(paths)
        self.data_format = data_format
        self._loaded: list[Any] | None = None
        super().__init__((), num_shards, source=None, format=format)

    def _load(self) -> list[Any]:
        if self._loaded is None:
            items: list[Any] = []
            for path in self.paths:
                items.extend(self.data_format.read(path))
            self._loaded = items
        return self._loaded

    @property
    def items(self) -> Sequence[Any]:
        return self._load()

    def __len__(self) -> int:
        return len(self._load())

    def __getitem__(self, index: Any) -> Any:
        return self._load()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._load())

    def _items_for_cursor(self) -> Sequence[Any]:
        return self._load()

    def __repr__(self) -> str:
        return f"PathPool({len(self.paths)} files, format={self.format!r}, num_shards={self.num_shards})"

    def shards(self, num_shards: int | None = None) -> list[PathShard]:  # type: ignore[override]
        """Groups of whole files, contiguous, file counts differing by at most one (default: 1 shard)."""
        n = _check_num_shards(num_shards) or self.num_shards or 1
        return [PathShard(i, self.paths[start:stop], self.format or "", self.data_format, start)
                for i, (start, stop) in enumerate(split_evenly(len(self.paths), n))]


# --------------------------------------------------------------------------- helpers
def _is_uri(path: str) -> bool:
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.isalnum() and scheme.lower() != "file"


def _expand_paths(paths_or_glob: Any) -> list[str]:
    if isinstance(paths_or_glob, (str, os.PathLike)):
        text = os.fspath(paths_or_glob)
        if _is_uri(text):
            paths = [text]
        elif _GLOB_CHARS & set(text):
            paths = sorted(_glob.glob(text, recursive=True))
            paths = [p for p in paths if os.path.isfile(p)]
        elif os.path.isdir(text):
            paths = sorted(str(p) for p in Path(text).iterdir() if p.is_file() and not p.name.startswith("."))
        elif os.path.isfile(text):
            paths = [text]
        else:
            raise FileNotFoundError(f"The 'paths_or_glob' parameter names no file, folder or matching glob: {text!r}.")
        if not paths:
            raise InvalidParameterError(f"The 'paths_or_glob' parameter matched no file: {text!r}.")
        return paths
    if isinstance(paths_or_glob, Iterable) and not isinstance(paths_or_glob, bytes):
        paths = []
        for p in paths_or_glob:
            if not isinstance(p, (str, os.PathLike)):
                raise InvalidParameterError(
                    f"The 'paths_or_glob' parameter must hold paths. Got {type(p).__name__} {p!r} instead."
                )
            paths.append(os.fspath(p))
        if not paths:
            raise InvalidParameterError("The 'paths_or_glob' parameter is an empty list of paths.")
        return paths
    raise InvalidParameterError(
        "The 'paths_or_glob' parameter must be a glob pattern, a folder, a file or a list of paths. "
        f"Got {type(paths_or_glob).__name__} instead."
    )


def _resolve_format(format: Any, paths: Sequence[str]) -> tuple[str, Any]:
    """``(registered name or "", DataFormat instance)`` for ``format``, guessed from ``paths`` when None."""
    if format is None:
        registry = get_registry("data_format")
        guessed: set[str] = set()
        for path in paths:
            name = _guess_format(path, registry)
            if name is None:
                known = ", ".join(f"{e.name} ({', '.join(e.metadata.get('extensions', ())) or 'no extension'})"
                                  for e in registry)
                raise InvalidParameterError(
                    f"Cannot guess the 'format' of {path!r} from its name; pass format=... "
                    f"(registered formats: {known or 'none'})."
                )
            guessed.add(name)
        if len(guessed) > 1:
            raise InvalidParameterError(
                f"The files mix data formats ({', '.join(sorted(guessed))}); pass format=... explicitly."
            )
        format = guessed.pop()
    if isinstance(format, str):
        return format, load_data_format(format)
    if callable(getattr(format, "read", None)) and callable(getattr(format, "parse", None)):
        return getattr(format, "name", "") or "", format
    raise InvalidParameterError(
        f"The 'format' parameter must be a registered data-format name or a DataFormat. Got {format!r} instead."
    )


def _guess_format(path: str, registry: Any) -> str | None:
    name = path.rstrip("/").rsplit("/", 1)[-1].lower()
    best: tuple[int, str] | None = None
    for entry in registry:
        for ext in entry.metadata.get("extensions", ()) or ():
            ext = ext.lower()
            if name.endswith(ext) and (best is None or len(ext) > best[0]):
                best = (len(ext), entry.name)
    return best[1] if best else None
