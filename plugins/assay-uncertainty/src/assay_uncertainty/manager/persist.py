"""All-or-nothing saves of a :class:`~assay_uncertainty.manager.ue_manager.UEManager`, and checked loads.

A save is a folder holding ``manager.json`` and ``arrays.npz``:

- ``arrays.npz`` holds the estimations and generation-metric values (``a<i>``; ragged
  token / claim values flat, with ``a<i>__lengths``) and the statistics (``s<j>``: the
  leaves, with ``s<j>__lengths<k>`` for each nesting level), never an object array.
- ``manager.json`` holds the names, levels, metric values (non-finite ones by the rule of
  :mod:`assay.jsonio`), the resampling settings (``resampling``: ``n_resamples``,
  ``confidence_level``, ``seed``) and the intervals (``intervals``: one record per key of
  ``metrics`` that has one, with ``low``, ``high`` and an optional ``note``; both absent in
  older saves, which load with no intervals and ``n_resamples`` 0), notes, the provenance
  ``signature`` (:mod:`assay.provenance`; absent in older saves, which still load), and a
  manifest: ``format``, ``version``, the name, dtype and shape of every array, the size
  and ``sha256`` of ``arrays.npz``, and ``content_sha256``, a digest of the JSON document
  itself.
- **Fitted estimators** (format version 3): an estimator with a fitted state (the density
  estimators of :mod:`assay_uncertainty.estimators_density`: ``fitted_state()``,
  ``fitted_options()``, ``load_fitted_state()``) adds a record to ``fitted`` (the
  estimator's key in ``estimators``, its registered ``factory`` name, its ``options`` and
  ``{field: array key}``) and its arrays (``f<i>_<k>``, float64) to ``arrays.npz``. A load
  builds the estimator again by its registered name and options and restores the state,
  so :meth:`UEManager.estimate` scores new statistics without the training data. A save
  without fitted estimators is still written as version 2, which older assay versions read.

**All or nothing.** The new save is written completely into a temporary sibling folder
(``.<name>.tmp-<pid>-<random>``, each file synced), other files already in the folder
(a table, plots) are carried over as hard links, then the folders are swapped: the old
folder is renamed to ``.<name>.old``, the new one to ``<name>``, and the old one removed.
A crash at any point leaves the complete old save or the complete new one: a load after
a crash between the two renames reads ``.<name>.old``; the next save first finishes or
rolls back what a crashed one left (``.old`` without ``<name>``: renamed back; ``.old``
beside ``<name>``: removed; temporary folders of dead processes: removed). One writer
per folder at a time.

**Checked loads.** :func:`load_manager` verifies every field it reads, the checksum of the
arrays, their dtypes and shapes against the manifest and against each other, and the
digest; anything wrong raises :class:`~assay.errors.SaveFormatError` naming the file and
the field. Loading never executes code (JSON, and ``np.load(allow_pickle=False)``).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidParameterError, SaveFormatError
from assay.jsonio import decode_number, dumps, fsync_dir, read_json, to_jsonable
from assay.provenance import Signature, signature_of
from assay_uncertainty.manager._columns import LEAF_KINDS, decode_column, encode_column

__all__ = ["FORMAT", "FORMAT_VERSION", "load_manager", "manager_signature", "save_manager", "saved_folder"]

FORMAT = "assay.uncertainty.UEManager"
#: version 2 adds the manifest, the digest and the statistics; version 3 the fitted estimators' state
#: (written only when there is one); versions 1 and 2 still load
FORMAT_VERSION = 3
JSON_NAME, NPZ_NAME = "manager.json", "arrays.npz"
KINDS = ("estimation", "gen_metric")


def _step(name: str) -> None:
    """A named point inside :func:`save_manager` (the fault-injection tests patch it)."""


# ---------------------------------------------------------------- folder swap
def _old(final: Path) -> Path:
    return final.parent / f".{final.name}.old"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def recover(final: Path) -> None:
    """Finish or roll back what a crashed save of ``final`` left behind (see the module docstring)."""
    old = _old(final)
    if old.is_dir():
        if final.exists():
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(old, final)
            fsync_dir(final.parent)
    for tmp in final.parent.glob(f".{final.name}.tmp-*"):
        pid = tmp.name[len(f".{final.name}.tmp-"):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or not _alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


def saved_folder(path: str | os.PathLike[str]) -> Path:
    """The folder a load reads: ``path``, or its ``.old`` sibling after a crash between the two renames."""
    final = Path(path)
    if final.is_dir():
        return final
    if _old(final).is_dir():
        return _old(final)
    raise FileNotFoundError(f"No saved UEManager in {str(final)!r} (no such folder).")


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _carry_over(final: Path, tmp: Path) -> None:
    """Hard-link (or copy) the entries of ``final`` that are not part of the save into ``tmp``."""
    for entry in final.iterdir():
        if entry.name in (JSON_NAME, NPZ_NAME):
            continue
        dst = tmp / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry), dst)
        elif entry.is_dir():
            shutil.copytree(entry, dst, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(entry), str(dst))


def swap_in(final: Path, write: Callable[[Path], None]) -> Path:
    """Write a folder with ``write(tmp)`` into a temporary sibling, then swap it into place at ``final``."""
    if final.is_symlink():
        final = Path(os.path.realpath(final))  # save where the link points; the link stays
    if final.exists() and not final.is_dir():
        raise InvalidParameterError(f"Cannot save into {str(final)!r}: it is a file, not a folder.")
    final.parent.mkdir(parents=True, exist_ok=True)
    recover(final)
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    old = _old(final)
    moved = False
    try:
        tmp.mkdir()
        if final.is_dir():
            shutil.copymode(final, tmp)
        _step("tmp-created")
        write(tmp)
        if final.is_dir():
            _carry_over(final, tmp)
        fsync_dir(tmp)
        _step("tmp-complete")
        if final.is_dir():
            os.rename(final, old)
            moved = True
            _step("old-moved")
        os.rename(tmp, final)
        moved = False
        fsync_dir(final.parent)
        _step("new-moved")
    except BaseException:
        if moved and not final.exists():
            os.rename(old, final)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)
    _step("old-removed")
    return final


# ---------------------------------------------------------------- save
def _digest(doc: dict[str, Any]) -> str:
    body = {k: v for k, v in doc.items() if k != "content_sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_manager(man: Any, path: str | os.PathLike[str]) -> Path:
    """Save ``man`` into the folder ``path``, all or nothing (see the module docstring)."""
    arrays: dict[str, np.ndarray] = {}
    index: list[dict[str, Any]] = []
    for kind, table in (("estimation", man.estimations), ("gen_metric", man.gen_metrics)):
        for (level, name), values in table.items():
            key = f"a{len(index)}"
            if level == "sequence":
                arrays[key] = np.asarray(values, dtype=np.float64)
            else:
                arrays[key] = np.concatenate(values).astype(np.float64) if len(values) else np.zeros(0)
                arrays[key + "__lengths"] = np.array([np.size(v) for v in values], dtype=np.int64)
            index.append({"kind": kind, "level": level, "name": name, "key": key})
    stats: list[dict[str, Any]] = []
    skipped: list[str] = []
    for name, column in man.stats.items():
        enc = encode_column(column)
        if enc is None:
            skipped.append(name)
            continue
        key = f"s{len(stats)}"
        arrays[key] = enc[0]
        for k, lens in enumerate(enc[1]):
            arrays[f"{key}__lengths{k}"] = lens
        stats.append({"name": name, "key": key, "depth": len(enc[1])})
    fitted = _fitted_records(man, arrays)
    if skipped:
        warnings.warn(f"UEManager.save: statistics {skipped} hold values that cannot be stored without pickle "
                      "(dicts, None or mixed types); they are not saved.", RuntimeWarning, stacklevel=3)
    for key, arr in arrays.items():
        assert arr.dtype.kind in LEAF_KINDS, (key, arr.dtype)  # never an object array (pickle)

    def write(tmp: Path) -> None:
        with open(tmp / NPZ_NAME, "wb") as f:
            np.savez(f, allow_pickle=False, **arrays)
            f.flush()
            os.fsync(f.fileno())
        _step("npz-written")
        doc = {
            "format": FORMAT,
            "version": FORMAT_VERSION if fitted else 2,
            "n_examples": man.n_examples,
            "nan_policy": man.nan_policy,
            "estimators": list(man.estimator_names),
            "gen_metrics": list(man.gen_metric_names),
            "ue_metrics": list(man.ue_metric_names),
            "arrays": index,
            "stats": stats,
            "stats_not_saved": skipped,
            "metrics": [{"level": k[0], "estimator": k[1], "gen_metric": k[2], "ue_metric": k[3], "value": v}
                        for k, v in man.metrics.items()],
            "resampling": {"n_resamples": man.n_resamples, "confidence_level": man.confidence_level,
                           "seed": man.seed},
            "intervals": [{"level": k[0], "estimator": k[1], "gen_metric": k[2], "ue_metric": k[3], "low": lo,
                           "high": hi, **({"note": man.interval_notes[k]} if k in man.interval_notes else {})}
                          for k, (lo, hi) in man.intervals.items()],
            "dropped": [{"level": k[0], "estimator": k[1], "gen_metric": k[2], "count": v}
                        for k, v in man.dropped.items()],
            "notes": list(man.notes),
            **({"fitted": fitted} if fitted else {}),
            "signature": manager_signature(man).to_string(),  # provenance (issue 16); optional when loading
            "npz": {"file": NPZ_NAME, "size": (tmp / NPZ_NAME).stat().st_size, "sha256": _sha256(tmp / NPZ_NAME),
                    "arrays": {k: {"dtype": a.dtype.str, "shape": list(a.shape)} for k, a in arrays.items()}},
        }
        doc = to_jsonable(doc)
        doc["content_sha256"] = _digest(doc)
        with open(tmp / JSON_NAME, "w", encoding="utf-8") as f:
            f.write(dumps(doc, indent=2) + "\n")
            f.flush()
            os.fsync(f.fileno())
        _step("json-written")

    return swap_in(Path(path), write)


def _fitted_records(man: Any, arrays: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """The fitted state of each estimator that has one: records for ``fitted``, arrays added to ``arrays``."""
    records: list[dict[str, Any]] = []
    for label, est in getattr(man, "_estimators", []):
        get = getattr(est, "fitted_state", None)
        state = get() if callable(get) else None
        if state is None:
            continue
        i = len(records)
        keys = {}
        for k, (field, value) in enumerate(state.items()):
            keys[field] = f"f{i}_{k}"
            arrays[keys[field]] = np.asarray(value, dtype=np.float64)
        records.append({"estimator": label, "factory": est.name, "options": dict(est.fitted_options()),
                        "arrays": keys})
    return records


def _fitted_arrays(records: list[dict[str, Any]], arrays: dict[str, np.ndarray], used: set[str], chk: _Checker,
                   npz: _Checker) -> list[dict[str, np.ndarray]]:
    """The arrays of each fitted state, each an unused float array of ``arrays.npz``."""
    states = []
    for i, rec in enumerate(records):
        state = {}
        for field, key in rec["arrays"].items():
            where = f"fitted[{i}].arrays.{field}"
            chk.need(isinstance(key, str), where, "the key of an array", key)
            arr = _take(chk, arrays, used, key, where)
            npz.need(arr.dtype.kind == "f", key, "a float array", arr.dtype)
            state[field] = arr
        states.append(state)
    return states


def _load_fitted(man: Any, records: list[dict[str, Any]], states: list[dict[str, np.ndarray]], chk: _Checker) -> None:
    """Build each fitted estimator again by its registered name and options and restore its state."""
    from assay.errors import AssayError
    from assay.plugins import load

    for i, (rec, state) in enumerate(zip(records, states)):
        where = f"fitted[{i}]"
        chk.need(rec["estimator"] in man.estimator_names, f"{where}.estimator",
                 "one of the names listed in 'estimators'", rec["estimator"])
        chk.need(rec["estimator"] not in dict(man._estimators), f"{where}.estimator", "listed once",
                 rec["estimator"])
        try:
            est = load("estimator", rec["factory"], **rec["options"])
            est.load_fitted_state(state)
        except AssayError as exc:
            raise chk.fail(where, f"cannot be restored as estimator {rec['factory']!r} with options "
                                  f"{rec['options']}: {exc}") from None
        man._estimators.append((rec["estimator"], est))


# ---------------------------------------------------------------- provenance
def manager_signature(man: Any) -> Signature:
    """The provenance signature of a manager (:mod:`assay.provenance`): its estimators,
    generation metrics and UE metrics with their options and conventions, and versions.

    Names without an object (a loaded manager's) are taken as spelled; the versions a
    loaded manager was saved with are kept (``UEManager.load`` reads them).
    """
    before = getattr(man, "_loaded_signature", None)
    components = {}
    for kind, names, loaded in (("estimators", man.estimator_names, getattr(man, "_estimators", [])),
                                ("gen_metrics", man.gen_metric_names, getattr(man, "_gen", [])),
                                ("ue_metrics", man.ue_metric_names, getattr(man, "_ue", []))):
        objects = dict(loaded)
        saved = before.component(kind) if isinstance(before, Signature) else ()
        # a loaded manager has names only: its saved specs (same order) keep the options and conventions
        components[kind] = [(name, objects[name]) if name in objects else saved[i] if i < len(saved) else name
                            for i, name in enumerate(names)]
    n_resamples = getattr(man, "n_resamples", 0)
    on = dict(resampling="bootstrap", ci_method="percentile", n_resamples=n_resamples,
              confidence_level=man.confidence_level, seed=man.seed) if n_resamples else {}
    sig = signature_of(components, **on)
    return sig.with_versions(before) if isinstance(before, Signature) else sig


def _read_signature(doc: dict[str, Any], chk: _Checker) -> Signature | None:
    """``signature`` of ``manager.json``: absent in older saves (None); when present, a valid signature string."""
    if "signature" not in doc:
        return None
    text = chk.get(doc, "signature", "signature", str, "a signature string")
    try:
        return Signature.from_string(text)
    except InvalidParameterError as exc:
        raise chk.fail("signature", f"is not a valid signature: {exc}") from None


# ---------------------------------------------------------------- load
class _Checker:
    """Field checks that raise :class:`SaveFormatError` naming the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field: str, message: str) -> SaveFormatError:
        return SaveFormatError(f"{self.path}: field {field!r} {message}", path=self.path, field=field)

    def need(self, cond: bool, field: str, expected: str, got: Any) -> None:
        if not cond:
            raise self.fail(field, f"must be {expected}; got {got!r:.100}.")

    def get(self, obj: dict[str, Any], key: str, field: str, types: type | tuple[type, ...], expected: str) -> Any:
        if key not in obj:
            raise self.fail(field, "is missing.")
        value = obj[key]
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in _tuple(types))
        self.need(ok, field, expected, value)
        return value

    def str_list(self, obj: dict[str, Any], key: str, field: str) -> list[str]:
        value = self.get(obj, key, field, list, "a list of names")
        for i, v in enumerate(value):
            self.need(isinstance(v, str), f"{field}[{i}]", "a string", v)
        return value

    def records(self, obj: dict[str, Any], key: str, fields: dict[str, Any]) -> list[dict[str, Any]]:
        value = self.get(obj, key, key, list, "a list of objects")
        for i, rec in enumerate(value):
            self.need(isinstance(rec, dict), f"{key}[{i}]", "an object", rec)
            for name, types in fields.items():
                self.get(rec, name, f"{key}[{i}].{name}", types, _describe(types))
        return value


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _describe(types: Any) -> str:
    names = {str: "a string", int: "an integer", dict: "an object", list: "a list"}
    return " or ".join(names.get(t, t.__name__) for t in _tuple(types))


def _read_npz(path: Path, chk: _Checker, manifest: dict[str, Any] | None) -> dict[str, np.ndarray]:
    npz = _Checker(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise SaveFormatError(f"{path}: missing (the save is incomplete).", path=path, field=None) from None
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as exc:
        raise SaveFormatError(f"{path}: not a readable .npz without pickled objects ({type(exc).__name__}: {exc}).",
                              path=path) from None
    if manifest is not None:
        want = manifest["arrays"]
        chk.need(set(want) == set(arrays), "npz.arrays", f"the arrays in {NPZ_NAME} {sorted(arrays)}",
                 sorted(want))
        for key, arr in arrays.items():
            spec = want[key]
            chk.need(isinstance(spec, dict), f"npz.arrays.{key}", "an object", spec)
            ok = spec.get("dtype") == arr.dtype.str and spec.get("shape") == list(arr.shape)
            chk.need(ok, f"npz.arrays.{key}", f"dtype {arr.dtype.str!r} and shape {list(arr.shape)} "
                     f"(as in {NPZ_NAME})", spec)
    for key, arr in arrays.items():
        if arr.dtype.kind not in LEAF_KINDS:
            raise npz.fail(key, f"has dtype {arr.dtype}, not a number or string array.")
    return arrays


def _lengths(npz: _Checker, arrays: dict[str, np.ndarray], key: str, count: int, total: int) -> np.ndarray:
    if key not in arrays:
        raise npz.fail(key, "is missing.")
    lens = arrays[key]
    npz.need(lens.dtype.kind in "iu" and lens.shape == (count,), key, f"{count} integer lengths",
             f"{lens.dtype} of shape {lens.shape}")
    if count and lens.min() < 0:
        raise npz.fail(key, f"holds a negative length ({int(lens.min())}).")
    npz.need(int(lens.sum()) == total, key, f"lengths summing to {total}", f"sum {int(lens.sum())}")
    return lens


def _read_doc(jpath: Path, zpath: Path, chk: _Checker) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``manager.json``, its header checked; for version 2 also the size and checksum of ``arrays.npz``."""
    doc = read_json(jpath, what="UEManager save")
    chk.need(isinstance(doc, dict), "<top level>", "a JSON object", type(doc).__name__)
    chk.need(doc.get("format") == FORMAT, "format", repr(FORMAT), doc.get("format"))
    version = chk.get(doc, "version", "version", int, "an integer")
    if version > FORMAT_VERSION:
        raise chk.fail("version", f"is {version}: written by a newer assay (this one reads versions 1 to "
                                  f"{FORMAT_VERSION}); upgrade assay to load it.")
    chk.need(version >= 1, "version", "1 or more", version)
    n = chk.get(doc, "n_examples", "n_examples", int, "an integer")
    chk.need(n >= 0, "n_examples", "0 or more", n)
    nan_policy = chk.get(doc, "nan_policy", "nan_policy", str, "a string")
    chk.need(nan_policy in ("drop", "raise"), "nan_policy", "'drop' or 'raise'", nan_policy)
    if version == 1:
        return doc, None
    manifest = chk.get(doc, "npz", "npz", dict, "an object")
    size = chk.get(manifest, "size", "npz.size", int, "an integer")
    digest = chk.get(manifest, "sha256", "npz.sha256", str, "a string")
    chk.get(manifest, "arrays", "npz.arrays", dict, "an object")
    chk.get(doc, "content_sha256", "content_sha256", str, "a string")
    if not zpath.exists():
        raise SaveFormatError(f"{zpath}: missing (the save is incomplete).", path=zpath)
    if zpath.stat().st_size != size:
        raise chk.fail("npz.size", f"is {size} but {zpath} has {zpath.stat().st_size} bytes: the arrays were "
                                   "changed, damaged, or come from another save.")
    if _sha256(zpath) != digest:
        raise chk.fail("npz.sha256", f"does not match {zpath}: the arrays were changed, damaged, or come from "
                                     "another save.")
    return doc, manifest


def _take(chk: _Checker, arrays: dict[str, np.ndarray], used: set[str], key: str, field: str) -> np.ndarray:
    chk.need(key in arrays and key not in used, field, f"an unused array of {NPZ_NAME}", key)
    used.add(key)
    return arrays[key]


def _load_values(man: Any, index: list[dict[str, Any]], arrays: dict[str, np.ndarray], used: set[str],
                 chk: _Checker, npz: _Checker) -> None:
    """Estimations and generation-metric values, checked against ``n_examples`` and their lengths."""
    from assay.uncertainty.base import LEVELS

    n = man.n_examples
    for i, entry in enumerate(index):
        where = f"arrays[{i}]"
        kind, level, name, key = entry["kind"], entry["level"], entry["name"], entry["key"]
        chk.need(kind in KINDS, f"{where}.kind", " or ".join(map(repr, KINDS)), kind)
        chk.need(level in LEVELS, f"{where}.level", "one of " + ", ".join(map(repr, LEVELS)), level)
        listed = "estimators" if kind == "estimation" else "gen_metrics"
        chk.need(name in getattr(man, "estimator_names" if kind == "estimation" else "gen_metric_names"),
                 f"{where}.name", f"one of the names listed in {listed!r}", name)
        arr = _take(chk, arrays, used, key, f"{where}.key")
        table = man.estimations if kind == "estimation" else man.gen_metrics
        chk.need((level, name) not in table, f"{where}.name", "listed once per level", name)
        npz.need(arr.dtype.kind == "f" and arr.ndim == 1, key, "a 1-D float array", f"{arr.dtype} {arr.shape}")
        if level == "sequence":
            if arr.shape != (n,):
                raise chk.fail("n_examples", f"is {n} but {npz.path} array {key!r} ({kind} {name!r}) has "
                                             f"{arr.shape[0]} values.")
            table[(level, name)] = arr.astype(np.float64)
        else:
            lens_key = key + "__lengths"
            if lens_key in arrays and arrays[lens_key].shape != (n,):
                raise chk.fail("n_examples", f"is {n} but {npz.path} array {lens_key!r} has "
                                             f"{arrays[lens_key].shape} lengths.")
            lens = _lengths(npz, arrays, lens_key, n, arr.size)
            used.add(lens_key)
            table[(level, name)] = np.split(arr.astype(np.float64), np.cumsum(lens)[:-1]) if n else []
        if kind == "estimation":
            if man.levels.get(name, level) != level:
                raise chk.fail(f"{where}.level", f"gives estimator {name!r} a second level ({level!r}).")
            man.levels[name] = level


def _load_stats(man: Any, stats: list[dict[str, Any]], arrays: dict[str, np.ndarray], used: set[str],
                chk: _Checker, npz: _Checker) -> None:
    """The statistics: leaves and lengths, checked level by level down to ``n_examples``."""
    for j, entry in enumerate(stats):
        where, key, depth, name = f"stats[{j}]", entry["key"], entry["depth"], entry["name"]
        leaf = _take(chk, arrays, used, key, f"{where}.key")
        chk.need(0 <= depth <= 16, f"{where}.depth", "between 0 and 16", depth)
        chk.need(name not in man.stats, f"{where}.name", "listed once", name)
        npz.need(leaf.ndim == 1, key, "a 1-D array", leaf.shape)
        total = leaf.size
        lengths: list[np.ndarray] = []
        for k in reversed(range(depth)):
            lens_key = f"{key}__lengths{k}"
            count = arrays[lens_key].size if lens_key in arrays else 0
            lengths.insert(0, _lengths(npz, arrays, lens_key, count, total))
            used.add(lens_key)
            total = count
        if total != man.n_examples:
            raise chk.fail("n_examples", f"is {man.n_examples} but statistic {name!r} ({npz.path} array {key!r}) "
                                         f"has {total} values.")
        man.stats[name] = decode_column(leaf, lengths)


def _load_metrics(man: Any, metrics: list[dict[str, Any]], dropped: list[dict[str, Any]], chk: _Checker) -> None:
    for i, m in enumerate(metrics):
        key = (m["level"], m["estimator"], m["gen_metric"], m["ue_metric"])
        chk.need(key[:2] in man.estimations, f"metrics[{i}].estimator",
                 f"an estimator with saved values at level {key[0]!r}", key[1])
        chk.need((key[0], key[2]) in man.gen_metrics, f"metrics[{i}].gen_metric",
                 f"a generation metric with saved values at level {key[0]!r}", key[2])
        chk.need(key not in man.metrics, f"metrics[{i}]", "listed once", key)
        if "value" not in m:
            raise chk.fail(f"metrics[{i}].value", "is missing.")
        try:
            man.metrics[key] = float(decode_number(m["value"], where="value"))
        except SaveFormatError:
            raise chk.fail(f"metrics[{i}].value", "must be a number (or \"NaN\", \"Infinity\", \"-Infinity\"); "
                                                  f"got {m['value']!r:.80}.") from None
    for i, d in enumerate(dropped):
        chk.need(d["count"] >= 0, f"dropped[{i}].count", "0 or more", d["count"])
        chk.need((d["level"], d["estimator"]) in man.estimations, f"dropped[{i}].estimator",
                 f"an estimator with saved values at level {d['level']!r}", d["estimator"])
        man.dropped[(d["level"], d["estimator"], d["gen_metric"])] = d["count"]


def _load_intervals(man: Any, doc: dict[str, Any], chk: _Checker) -> None:
    """``resampling`` and ``intervals`` (optional: older saves have neither); each interval is a saved score's."""
    from assay.validation import check_int, check_number, check_seed

    if "resampling" in doc:
        res = chk.get(doc, "resampling", "resampling", dict, "an object")
        for field, check in (("n_resamples", lambda v: check_int(v, "n_resamples", low=0)),
                           ("confidence_level", lambda v: check_number(v, "confidence_level", low=0, high=1,
                                                                       closed="neither")),
                           ("seed", lambda v: check_seed(v, "seed", allow_none=False))):
            if field not in res:
                raise chk.fail(f"resampling.{field}", "is missing.")
            try:
                setattr(man, field, check(res[field]))
            except InvalidParameterError as exc:
                raise chk.fail(f"resampling.{field}", f"is invalid: {exc}") from None
    if "intervals" not in doc:
        return
    records = chk.records(doc, "intervals", {"level": str, "estimator": str, "gen_metric": str, "ue_metric": str})
    for i, rec in enumerate(records):
        key = (rec["level"], rec["estimator"], rec["gen_metric"], rec["ue_metric"])
        chk.need(key in man.metrics, f"intervals[{i}]", "the key of a saved score (in 'metrics')", key)
        chk.need(key not in man.intervals, f"intervals[{i}]", "listed once", key)
        bounds = []
        for end in ("low", "high"):
            if end not in rec:
                raise chk.fail(f"intervals[{i}].{end}", "is missing.")
            try:
                bounds.append(float(decode_number(rec[end], where=end)))
            except SaveFormatError:
                raise chk.fail(f"intervals[{i}].{end}", "must be a number (or \"NaN\", \"Infinity\", "
                                                        f"\"-Infinity\"); got {rec[end]!r:.80}.") from None
        man.intervals[key] = (bounds[0], bounds[1])
        if "note" in rec:
            man.interval_notes[key] = chk.get(rec, "note", f"intervals[{i}].note", str, "a string")
    chk.need(not man.intervals or man.n_resamples > 0, "resampling.n_resamples",
             "at least 1 when intervals are saved", man.n_resamples)


def load_manager(cls: type, path: str | os.PathLike[str]) -> Any:
    """Load and verify a folder written by :func:`save_manager` (or by format version 1)."""
    folder = saved_folder(path)
    jpath, zpath = folder / JSON_NAME, folder / NPZ_NAME
    if not jpath.exists() and zpath.exists():
        raise SaveFormatError(f"{jpath}: missing beside {NPZ_NAME} (the save is incomplete).", path=jpath)
    if not jpath.exists():
        raise FileNotFoundError(f"No saved UEManager in {str(folder)!r} ({JSON_NAME} is missing).")
    chk, npz = _Checker(jpath), _Checker(zpath)
    doc, manifest = _read_doc(jpath, zpath, chk)
    v2 = manifest is not None
    names = {k: chk.str_list(doc, k, k) for k in ("estimators", "gen_metrics", "ue_metrics")}
    index = chk.records(doc, "arrays", {"kind": str, "level": str, "name": str, "key": str})
    metrics = chk.records(doc, "metrics", {"level": str, "estimator": str, "gen_metric": str, "ue_metric": str})
    dropped = chk.records(doc, "dropped", {"level": str, "estimator": str, "gen_metric": str, "count": int}) \
        if v2 or "dropped" in doc else []
    notes = chk.str_list(doc, "notes", "notes") if v2 or "notes" in doc else []
    stats = chk.records(doc, "stats", {"name": str, "key": str, "depth": int}) if v2 else []
    fitted = chk.records(doc, "fitted", {"estimator": str, "factory": str, "options": dict, "arrays": dict}) \
        if "fitted" in doc else []
    arrays = _read_npz(zpath, chk, manifest)

    man = cls(nan_policy=doc["nan_policy"])
    man.n_examples = doc["n_examples"]
    man.estimator_names, man.gen_metric_names, man.ue_metric_names = (
        names["estimators"], names["gen_metrics"], names["ue_metrics"])
    used: set[str] = set()
    _load_values(man, index, arrays, used, chk, npz)
    _load_stats(man, stats, arrays, used, chk, npz)
    states = _fitted_arrays(fitted, arrays, used, chk, npz)
    extra = sorted(set(arrays) - used)
    if extra:
        raise npz.fail(extra[0], f"is not listed in {jpath}.")
    _load_metrics(man, metrics, dropped, chk)
    _load_intervals(man, doc, chk)
    man.notes = list(notes)
    man._loaded_signature = _read_signature(doc, chk)
    if v2 and _digest(doc) != doc["content_sha256"]:
        raise chk.fail("content_sha256", "does not match the content: the file was edited, damaged, or mixed with "
                                         "another save.")
    _load_fitted(man, fitted, states, chk)  # after the digest: only a verified document builds estimators
    return man
