"""Load a Hugging Face model and its tokenizer from a local folder, never from the network.

``load_model(path, type=..., device=..., dtype=..., **load_args)`` calls
``from_pretrained(path, local_files_only=True)`` for the tokenizer and the model; a
path that is not a folder holding a model is an :class:`~assay.errors.InvalidParameterError`
that says so (no download is ever attempted, whatever ``HF_HUB_OFFLINE`` says).

A model folder's own Python (``auto_map`` in its ``config.json``) runs only with
``trust_remote_code=True``, a keyword of its own (``assay ue --trust-remote-code`` on the
command line); otherwise ``trust_remote_code=False`` is passed to every ``from_pretrained``,
so such a folder is an error rather than code that runs.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

from assay.errors import InvalidParameterError

__all__ = ["MODEL_TYPES", "folder_digest", "load_model", "model_folder_option", "model_type_of"]

#: the model types: decoder-only (``AutoModelForCausalLM``) and encoder-decoder (``AutoModelForSeq2SeqLM``)
MODEL_TYPES = ("causal", "seq2seq")

_DTYPES = ("float32", "float16", "bfloat16", "float64")


def model_type_of(model: Any) -> str:
    """``"seq2seq"`` for an encoder-decoder model (``config.is_encoder_decoder``), else ``"causal"``."""
    return "seq2seq" if getattr(getattr(model, "config", None), "is_encoder_decoder", False) else "causal"


def model_folder_option(model: Any, owner: str) -> str | None:
    """A metric's ``model`` option: None, or the resolved path of a local folder (else an error; no download)."""
    if model is None:
        return None
    if not isinstance(model, (str, os.PathLike)) or not Path(model).expanduser().is_dir():
        raise InvalidParameterError(f"The 'model' parameter of {owner} must be a local model folder; got "
                                    f"{model!r:.80} (no such folder). Nothing is downloaded.")
    return str(Path(model).expanduser().resolve())


def _check_folder(path: str | os.PathLike[str]) -> Path:
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise InvalidParameterError(
            f"The model {str(path)!r} is not on disk: no such folder. assay-transformers loads models from a local "
            "folder only (local_files_only=True, no download); save the model there first "
            "(model.save_pretrained(folder); tokenizer.save_pretrained(folder)), or pass a loaded "
            "(model, tokenizer) pair.")
    if not (folder / "config.json").is_file():
        raise InvalidParameterError(
            f"The model folder {str(folder)!r} holds no config.json, so it is not a saved Hugging Face model "
            "(expected the files written by save_pretrained).")
    return folder


def _check_device(torch: Any, device: str | None) -> str:
    """``device`` when this machine has it (None: CUDA when available, else CPU); else an error naming it."""
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"The model 'device' {device!r} is not a torch device ({' '.join(str(exc).split())}); use 'cpu', "
            "'cuda' or 'cuda:N'.") from None
    if parsed.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise InvalidParameterError(
                f"The model 'device' {device!r} is not on this machine: CUDA is not available here (no GPU, no "
                "driver, or a torch built without CUDA); use device: cpu, or leave it out (CUDA when available).")
        if parsed.index is not None and parsed.index >= count:
            raise InvalidParameterError(
                f"The model 'device' {device!r} is not on this machine: it has {count} CUDA device(s), "
                f"cuda:0 to cuda:{count - 1}.")
    elif parsed.type == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise InvalidParameterError(f"The model 'device' {device!r} is not on this machine: MPS is not available here.")
    return device


def _check_weights(folder: Path) -> None:
    """Each ``*.safetensors`` file in ``folder`` has a readable header whose tensors fit in the file.

    safetensors checks this when it opens a file (the header's length, its JSON, and that the
    data it describes is all there); its own error names neither the file nor the model, so
    it is re-raised naming both. An all-zero file declares a header of length 0; a truncated
    one ends before the data its header describes.
    """
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return
    from safetensors import safe_open  # deferred, as torch (a dependency of transformers, declared too)

    for file in files:
        try:
            with safe_open(str(file), framework="pt") as handle:
                handle.keys()
        except Exception as exc:  # noqa: BLE001 - SafetensorError (a Rust error type) or an OSError reading it
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise InvalidParameterError(
                f"The model weights {str(file)!r} are damaged or incomplete ({reason}; {file.stat().st_size} "
                "bytes): save the model again (model.save_pretrained(folder)).") from None


def load_model(path: str | os.PathLike[str], *, type: str | None = None, device: str | None = None,
               dtype: str | None = "float32", trust_remote_code: bool = False,
               **load_args: Any) -> tuple[Any, Any, str]:
    """Load ``(model, tokenizer, type)`` from the folder ``path`` (offline, in eval mode).

    Parameters
    ----------
    path : folder written by ``save_pretrained`` (``config.json``, weights, tokenizer files)
    type : {"causal", "seq2seq"} or None
        None reads ``is_encoder_decoder`` from the folder's config.
    device : ``"cpu"``, ``"cuda"``, ``"cuda:1"`` ... (None: CUDA when available, else CPU)
    dtype : {"float32", "float16", "bfloat16", "float64"} or None (the checkpoint's own)
    trust_remote_code : bool, default False
        Run the folder's own Python (``auto_map``) for its config, tokenizer and model; the
        only way to opt in (``assay ue --trust-remote-code``); a config file cannot.
    **load_args : passed to the model's ``from_pretrained`` (``revision`` and friends;
        ``local_files_only`` is always True)
    """
    folder = _check_folder(path)
    if type is not None and type not in MODEL_TYPES:
        raise InvalidParameterError(f"The model 'type' must be one of {', '.join(MODEL_TYPES)}; got {type!r}.")
    if dtype is not None and dtype not in _DTYPES:
        raise InvalidParameterError(f"The model 'dtype' must be one of {', '.join(_DTYPES)} or None; got {dtype!r}.")
    import torch  # deferred: torch and transformers are heavy, imported only when a model is loaded
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    if not isinstance(trust_remote_code, bool):
        raise InvalidParameterError(f"'trust_remote_code' must be True or False; got {trust_remote_code!r}.")
    device = _check_device(torch, device)
    _check_weights(folder)

    load_args = {k: v for k, v in load_args.items() if k != "local_files_only"}
    load_args["trust_remote_code"] = trust_remote_code
    try:
        config = AutoConfig.from_pretrained(folder, local_files_only=True, trust_remote_code=trust_remote_code)
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as exc:
        raise InvalidParameterError(f"Cannot load the model folder {str(folder)!r}: {exc}") from None
    kind = type or ("seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal")
    auto = AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM
    if dtype is not None:
        load_args["dtype"] = getattr(torch, dtype)
    try:
        model = auto.from_pretrained(folder, local_files_only=True, **load_args)
    except (OSError, ValueError) as exc:
        raise InvalidParameterError(f"Cannot load the {kind} model in {str(folder)!r}: {exc}") from None
    model.to(device)  # type: ignore[arg-type]  # transformers' stubs type .to() for modules, not device strings
    model.eval()
    return model, tokenizer, kind


_DIGESTS: dict[tuple[Any, ...], str] = {}
_DIGESTS_LOCK = threading.Lock()


def folder_digest(folder: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of every regular file under ``folder``: relative paths and contents, in sorted order.

    Files are read in 1 MiB blocks; the result is kept for the process, keyed by the
    files' paths, sizes and modification times (a changed file is hashed again).
    Hidden files and folders (``.cache``, ``.git``) are left out.
    """
    root = Path(folder).resolve()
    files = sorted(p for p in root.rglob("*")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    key = (str(root), tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files))
    with _DIGESTS_LOCK:
        if key in _DIGESTS:
            return _DIGESTS[key]
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(root).as_posix().encode("utf-8") + b"\0")
        h.update(str(p.stat().st_size).encode("ascii") + b"\0")
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    digest = h.hexdigest()
    with _DIGESTS_LOCK:
        _DIGESTS[key] = digest
    return digest
