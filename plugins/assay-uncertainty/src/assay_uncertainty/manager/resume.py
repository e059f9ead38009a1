"""The model loop's results kept on disk batch by batch, so a run that was killed resumes (``cache_dir=``).

``UEManager(data, ..., model=..., cache_dir="runs/cache")`` writes, after every batch of the
model loop, what the batch computed into one file, so a run killed by a signal, Ctrl-C or a
crashed machine is resumed by running it again: the examples already computed are read back
and only the others go to the model (the same folder option and approach as the LLM judge's
``cache_dir``, :mod:`assay_transformers.judge_cache`). The final numbers equal an uninterrupted
run's: the values read back are the ones the batches computed, and the examples left are run
in the same batches as before.

**Layout.** One folder per run, ``<cache_dir>/ue-run-<sha256(run)[:24]>/``, named by a hash of
everything that makes the cached values valid (:func:`run_description`): the model backend's
``fingerprint()`` (assay-transformers: a SHA-256 of the model folder's files, or of the weights
of a model given as objects, with the tokenizer and dtype; a black-box model: URL, model name,
endpoint and request options; a backend without one: its ``repr``), ``max_new_tokens``,
``samples_n``, ``generation_params``, the seed, the estimators, generation metrics and extra stat
calculators (their provenance specs with the plugin versions), ``save_stats``,
``ignore_exceptions`` and a digest of every example of the dataset (each record, all fields).
``batch_size`` is not part of it: a run resumed with another batch size reuses the examples
done. The folder holds ``run.json`` (that description) and one ``batch-<first>-<hash>.npz`` per
batch: the statistics the run keeps (the stored-output fields the model gave and
``save_stats``) and the estimator and generation-metric values of its examples, as flat arrays
with lengths (:mod:`assay_uncertainty.manager._columns`, never an object array, no pickle), and
an entry ``meta`` (JSON): the examples' positions and record digests, which estimators or
metrics ``ignore_exceptions`` dropped, the array names, and a SHA-256 of the arrays.

**Atomic.** Each file is written to a temporary sibling, synced and renamed into place
(:func:`assay.jsonio.atomic_output`), so a kill leaves the complete file or none; a temporary
file left by a killed writer is removed (with a warning) when the run starts again.

**Checked.** A run never reuses results it cannot vouch for: a folder of another run (another
model, seed, estimator set, dataset ...) is a different folder, left alone, and a warning names
what differs; a batch file that cannot be read (truncated, damaged, not an ``.npz``), whose
checksum, positions, record digests or arrays do not match, or that repeats examples of another
file is an :class:`~assay.errors.EvaluationError` naming the file and the problem (delete it to
compute its examples again). One writer per run folder at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import EvaluationError, InvalidParameterError
from assay.jsonio import atomic_output, dumps, read_json, to_jsonable, write_json_atomic
from assay_uncertainty.manager._columns import LEAF_KINDS, decode_column, encode_column

__all__ = ["FORMAT", "ResumeCache", "example_digests", "run_description"]

FORMAT = "assay.uncertainty.UEManager.cache"
VERSION = 1
RUN_FILE = "run.json"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(to_jsonable(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def example_digests(data: Mapping[str, Sequence[Any]], n: int) -> list[str]:
    """SHA-256 of each example's record (every field of the dataset, by name), in order."""
    names = sorted(data)
    return [_sha(_canonical([[name, data[name][i]] for name in names])) for i in range(n)]


def run_description(man: Any, backend: Any, digests: Sequence[str]) -> dict[str, Any]:
    """What makes a run's cached values valid (the module docstring); JSON-able."""
    from assay.provenance import signature_of

    fingerprint = getattr(backend, "fingerprint", None)
    model = fingerprint() if callable(fingerprint) else {"repr": repr(backend)}
    components = {"estimators": list(man._estimators), "gen_metrics": list(man._gen),
                  "stat_calculators": list(man._extra_calcs)}
    return to_jsonable({
        "format": FORMAT, "version": VERSION, "model": model, "max_new_tokens": man.max_new_tokens,
        "samples_n": man.samples_n, "generation_params": dict(sorted(man.generation_params.items())),
        "seed": man.seed, "components": signature_of(components).to_string(), "save_stats": list(man.save_stats),
        "ignore_exceptions": man.ignore_exceptions, "n_examples": len(digests),
        "data_sha256": _sha("\n".join(digests)),
    })


def _differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


class ResumeCache:
    """The cache folder of one model run (module docstring).

    :meth:`load` reads the examples done (``{position: (stats, values)}``); :meth:`add` writes
    one batch; ``read``/``written`` count the examples read back and written in this process.
    """

    def __init__(self, cache_dir: str | os.PathLike[str], description: dict[str, Any], digests: Sequence[str]) -> None:
        self.root = Path(cache_dir).expanduser()
        if self.root.exists() and not self.root.is_dir():
            raise InvalidParameterError(f"UEManager: cache_dir {str(self.root)!r} is a file, not a folder.")
        self.description = description
        self.key = _sha(_canonical(description))
        self.folder = self.root / f"ue-run-{self.key[:24]}"
        self.digests = list(digests)
        self.read = self.written = 0

    # ---------------------------------------------------------------- opening
    def _warn_other_runs(self) -> None:
        """When this run has no folder yet: name what differs in the other runs' folders under ``cache_dir``."""
        for other in sorted(self.root.glob("ue-run-*")):
            if other == self.folder or not other.is_dir():
                continue
            try:
                desc = read_json(other / RUN_FILE, what="UEManager cache run description")
                why = ", ".join(_differences(desc, self.description)) if isinstance(desc, dict) else "unreadable"
            except Exception as exc:  # noqa: BLE001 - another run's folder: reported, never used
                why = f"its {RUN_FILE} cannot be read ({exc})"
            warnings.warn(f"UEManager: the cache folder {str(other)!r} holds another model run's results, not used by "
                          f"this run (they differ in: {why}).", UserWarning, stacklevel=5)

    def _open(self) -> None:
        run_file = self.folder / RUN_FILE
        if not self.folder.is_dir():
            if self.root.is_dir():
                self._warn_other_runs()
            self.folder.mkdir(parents=True, exist_ok=True)
        if not run_file.exists():
            write_json_atomic(run_file, self.description)
            return
        desc = read_json(run_file, what="UEManager cache run description")
        if desc != self.description:
            diff = ", ".join(_differences(desc, self.description)) if isinstance(desc, dict) else "everything"
            raise EvaluationError(f"{run_file} does not describe the run its folder is named after (it differs in: "
                                  f"{diff}; the file was edited or damaged); delete the folder to run again.")
        for tmp in self.folder.glob(".batch-*.tmp*"):  # left by a process killed while writing
            warnings.warn(f"UEManager: removing {str(tmp)!r}, a cache file whose write did not finish (its batch is "
                          "computed again).", UserWarning, stacklevel=5)
            tmp.unlink(missing_ok=True)

    # ---------------------------------------------------------------- reading
    def load(self) -> dict[int, tuple[dict[str, Any], dict[tuple[str, str], Any], list[dict[str, str]]]]:
        """The cached examples: ``{position: (kept statistics, {(role, name): value}, dropped)}``, every file checked.

        ``dropped`` lists the estimators / generation metrics ``ignore_exceptions`` dropped
        (``role``, ``name``, ``error``, ``note``) up to that batch.
        """
        self._open()
        done: dict[int, tuple[dict[str, Any], dict[tuple[str, str], Any], list[dict[str, str]]]] = {}
        owner: dict[int, str] = {}
        for path in sorted(self.folder.glob("batch-*.npz")):
            for pos, item in self._read_batch(path).items():
                if pos in done:
                    raise EvaluationError(f"{path}: example {pos} is also in {owner[pos]} (two runs wrote into this "
                                          "folder at once?); delete one of the files.")
                done[pos], owner[pos] = item, path.name
        self.read = len(done)
        return done

    def _fail(self, path: Path, problem: str) -> EvaluationError:
        return EvaluationError(f"UEManager cache file {str(path)!r} {problem}; delete it to compute its examples "
                               "again.")

    def _read_batch(self, path: Path) -> dict[int, tuple[dict[str, Any], dict[tuple[str, str], Any],
                                                         list[dict[str, str]]]]:
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as exc:
            raise self._fail(path, f"cannot be read: it is truncated or damaged ({type(exc).__name__}: "
                                   f"{exc})") from None
        if "meta" not in arrays or arrays["meta"].dtype.kind != "U" or arrays["meta"].ndim != 0:
            raise self._fail(path, "has no 'meta' entry (not a file of this cache)")
        try:
            meta = json.loads(str(arrays.pop("meta")))
        except ValueError as exc:
            raise self._fail(path, f"has a 'meta' entry that is not JSON ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("run") != self.key:
            raise self._fail(path, "belongs to another run or format (its 'meta' names another run)")
        if meta.get("sha256") != _arrays_sha(arrays):
            raise self._fail(path, "does not match its checksum (the arrays were changed or damaged)")
        positions, digests = meta.get("positions"), meta.get("digests")
        n = len(self.digests)
        if (not isinstance(positions, list) or not isinstance(digests, list) or len(positions) != len(digests)
                or not positions or not all(isinstance(p, int) and 0 <= p < n for p in positions)):
            raise self._fail(path, f"lists no valid example positions (0 to {n - 1}) with their digests")
        for p, d in zip(positions, digests):
            if d != self.digests[p]:
                raise self._fail(path, f"holds example {p} of another dataset record (its digest differs)")
        cols = self._decode(path, arrays, meta.get("columns"), len(positions))
        vals = self._decode(path, arrays, meta.get("values"), len(positions))
        dropped = meta.get("dropped", [])
        if not isinstance(dropped, list) or not all(isinstance(d, dict) and all(isinstance(d.get(k), str) for k in (
                "role", "name", "error", "note")) for d in dropped):
            raise self._fail(path, "has a malformed 'dropped' list")
        out = {}
        for i, p in enumerate(positions):
            stats = {name: col[i] for (_, name), col in cols.items()}
            values = {(role, name): col[i] for (role, name), col in vals.items()}
            out[p] = (stats, values, dropped)
        return out

    def _decode(self, path: Path, arrays: dict[str, np.ndarray], entries: Any, count: int
                ) -> dict[tuple[str, str], list[Any]]:
        if not isinstance(entries, list):
            raise self._fail(path, "has no list of its arrays")
        out: dict[tuple[str, str], list[Any]] = {}
        for e in entries:
            if not (isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("key"), str)
                    and isinstance(e.get("depth"), int) and 0 <= e["depth"] <= 16 and e["key"] in arrays):
                raise self._fail(path, f"has a malformed array entry {e!r:.100}")
            leaf = arrays[e["key"]]
            lengths = [arrays.get(f"{e['key']}__lengths{k}") for k in range(e["depth"])]
            if leaf.dtype.kind not in LEAF_KINDS or leaf.ndim != 1 or any(
                    x is None or x.dtype.kind not in "iu" or x.ndim != 1 or (x.size and x.min() < 0) for x in lengths):
                raise self._fail(path, f"has a malformed array {e['key']!r}")
            total = leaf.size
            for lens in reversed(lengths):
                assert lens is not None
                if int(lens.sum()) != total:
                    raise self._fail(path, f"has lengths of array {e['key']!r} that do not add up")
                total = lens.size
            if total != count:
                raise self._fail(path, f"has {total} values of {e['name']!r} for {count} examples")
            out[(str(e.get("role", "")), e["name"])] = decode_column(leaf, [x for x in lengths if x is not None])
        return out

    # ---------------------------------------------------------------- writing
    def add(self, positions: Sequence[int], stats: Mapping[str, Sequence[Any]],
            values: Mapping[tuple[str, str], Sequence[Any]], dropped: Sequence[Mapping[str, str]]) -> Path:
        """Write one batch (its examples' kept statistics and values) atomically; returns the file."""
        arrays: dict[str, np.ndarray] = {}
        entries: dict[str, list[dict[str, Any]]] = {"columns": [], "values": []}
        items = [("columns", ("", name), col) for name, col in stats.items()] + \
                [("values", key, col) for key, col in values.items()]
        for i, (kind, (role, name), column) in enumerate(items):
            enc = encode_column(column)
            if enc is None:
                what = "statistic" if kind == "columns" else role
                raise InvalidParameterError(
                    f"UEManager(cache_dir=...): the {what} {name!r} of the batch starting at example {positions[0]} "
                    "holds values that cannot be stored without pickle (dicts, None or mixed types); run without "
                    "cache_dir, or leave it out of save_stats.")
            key = f"x{i}"
            arrays[key] = enc[0]
            for k, lens in enumerate(enc[1]):
                arrays[f"{key}__lengths{k}"] = lens
            entries[kind].append({"role": role, "name": name, "key": key, "depth": len(enc[1])})
        meta = {"format": FORMAT, "version": VERSION, "run": self.key, "positions": [int(p) for p in positions],
                "digests": [self.digests[p] for p in positions], **entries, "dropped": [dict(d) for d in dropped],
                "sha256": _arrays_sha(arrays)}
        tag = _sha(",".join(map(str, positions)))[:8]
        path = self.folder / f"batch-{positions[0]:08d}-{tag}.npz"
        with atomic_output(path) as tmp, open(tmp, "wb") as fh:  # fsync'ed and renamed by atomic_output
            np.savez(fh, allow_pickle=False, meta=np.array(dumps(to_jsonable(meta), indent=None)), **arrays)
        self.written += len(positions)
        return path


def _arrays_sha(arrays: Mapping[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for key in sorted(arrays):
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}\0{a.dtype.str}\0{list(a.shape)}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()
