"""The local model folder of a unitxt catalog entry that runs a Hugging Face model: never a download.

unitxt's model entries (``metrics.bert_score.*``, ``metrics.sentence_bert.*``,
``metrics.reward.*``, the ``metrics.perplexity*`` families) name a model on the Hugging Face
Hub (``model_name="microsoft/deberta-xlarge-mnli"``) that unitxt downloads at run time. assay
reads the model from a local folder, found in this order:

1. the entry's ``model`` option, a folder:
   ``metrics.bert_score.deberta_xlarge_mnli[model=/models/deberta-xlarge-mnli]``;
2. the entry's ``model_name`` when it is a folder on disk (unitxt's own way to run a local
   model: ``from_pretrained`` reads a path);
3. the folder named by the Hub id under a folder of :data:`MODELS_PATH_ENV`
   (``ASSAY_HF_MODELS_PATH``, several separated by ``os.pathsep``, searched in order):
   ``$ASSAY_HF_MODELS_PATH/microsoft/deberta-xlarge-mnli``, the layout of unitxt's
   ``UNITXT_HF_OFFLINE_MODELS_PATH``. With it, catalog names run as written, also inside
   ``Task(metrics=[...])`` and the pipelines built on them.

A ``model`` that is not a folder is an error when the metric is built. Otherwise the folder is
looked up when the metric first needs its model (the variable may be set after loading), and a
missing one is a :class:`ModelFolderNotFoundError` (a
:class:`~assay.errors.MissingDependencyError`: the model is a dependency to put on disk) naming the
entry, the Hub id, the folders searched and both ways to give the folder. Nothing is ever fetched:
only the resolved folder is read (assay's loads pass ``local_files_only=True``; bert-score is given
the folder's path), and no model folder's own code runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay.errors import InvalidParameterError, MissingDependencyError

__all__ = ["MODELS_PATH_ENV", "ModelFolder", "ModelFolderNotFoundError", "SharedModel"]

#: the environment variable naming folders that hold model folders under their Hub ids
MODELS_PATH_ENV = "ASSAY_HF_MODELS_PATH"


class ModelFolderNotFoundError(MissingDependencyError):
    """A model entry's model is not in a local folder; the message names the entry, the Hub id and what to do."""

    def __init__(self, message: str, *, hub_id: str) -> None:
        Exception.__init__(self, message)
        self.package = hub_id
        self.hint = f"hf download {hub_id} --local-dir DIR/{hub_id}, then {MODELS_PATH_ENV}=DIR"


def _is_model_folder(path: Path) -> bool:
    return path.is_dir() and ((path / "config.json").is_file() or (path / "modules.json").is_file())


class ModelFolder:
    """Where the model of catalog entry ``entry`` (Hub id ``hub_id``) is on disk (module docstring).

    ``model``: the entry's ``model`` option (a folder), or None.
    """

    def __init__(self, entry: str, hub_id: str, model: Any = None) -> None:
        self.entry = entry
        if not isinstance(hub_id, str) or not hub_id:
            raise InvalidParameterError(f"{entry}: 'model_name' must be a Hugging Face model id or a folder; "
                                        f"got {hub_id!r}.")
        self.hub_id = hub_id
        if model is not None:
            if not isinstance(model, (str, os.PathLike)) or not Path(model).expanduser().is_dir():
                raise InvalidParameterError(
                    f"{entry}: the 'model' option must be a local folder holding the model {hub_id!r} "
                    f"(saved with save_pretrained); got {model!r:.100}, which is not a folder. Nothing is downloaded.")
            model = str(Path(model).expanduser().resolve())
        self.model = model

    def candidates(self) -> list[Path]:
        """The folders searched, in order (the ``model`` option alone when given)."""
        if self.model is not None:
            return [Path(self.model)]
        out = [Path(self.hub_id).expanduser()] if Path(self.hub_id).expanduser().is_dir() else []
        for root in os.environ.get(MODELS_PATH_ENV, "").split(os.pathsep):
            if root.strip():
                out.append(Path(root.strip()).expanduser() / self.hub_id)
        return out

    def path(self) -> str:
        """The model's folder; a :class:`ModelFolderNotFoundError` naming the entry and the Hub id if there is none."""
        searched = self.candidates()
        for folder in searched:
            if _is_model_folder(folder):
                return str(folder.resolve())
        where = (f"{MODELS_PATH_ENV} was searched: {', '.join(str(p) for p in searched)} (no folder holding a "
                 "config.json)" if searched else f"{MODELS_PATH_ENV} is not set")
        raise ModelFolderNotFoundError(
            f"{self.entry} needs the Hugging Face model {self.hub_id!r} in a local folder, and assay never downloads "
            f"it; {where}. Give the folder as {self.entry}[model=/path/to/folder], or put it at "
            f"$ASSAY_HF_MODELS_PATH/{self.hub_id} (where there is network: "
            f"`hf download {self.hub_id} --local-dir DIR/{self.hub_id}`, then set {MODELS_PATH_ENV}=DIR).",
            hub_id=self.hub_id)

    def __repr__(self) -> str:
        return f"ModelFolder({self.entry!r}, {self.hub_id!r}, model={self.model!r})"


class SharedModel:
    """A model loaded on first use by ``load()`` and shared by every copy of the metric holding it.

    ``copy.deepcopy`` (``Metric.clone``) returns the same holder, so clones reuse the loaded
    model; pickling drops the model (it is loaded again where the metric is used).
    """

    def __init__(self) -> None:
        self.value: Any = None
        self.key: Any = None

    def get(self, key: Any, load: Any) -> Any:
        """The model loaded by ``load()`` for ``key`` (loaded again when ``key`` changes)."""
        if self.value is None or self.key != key:
            self.value, self.key = load(), key
        return self.value

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedModel:
        return self

    def __getstate__(self) -> dict[str, Any]:
        return {"value": None, "key": None}
