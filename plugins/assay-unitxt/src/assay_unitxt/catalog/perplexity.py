"""unitxt's ``Perplexity`` (``metrics.perplexity*``): how likely a language model finds a target
text after a source text, on a local model folder loaded by assay-transformers.

For each prediction and each of its references, unitxt fills ``source_template`` and
``target_template`` (``{prediction}``, ``{reference}``) and scores the target given the source
with the model: the geometric mean of the target tokens' probabilities, computed as
``exp(-sum(token losses) / count(label ids > 0))`` per text, in batches of ``batch_size``
(sources and targets padded per batch; a seq2seq model reads the source and is given the target
as labels; a decoder-only model reads source then target and scores the target's tokens;
padding tokens are left out). ``single_token_mode`` tokenizes the target without special tokens.
An instance's ``perplexity`` is the largest value over its references (unitxt's choice, despite
the name it is a probability: higher is better); the global score is the mean, with an interval
for ``perplexity`` (unitxt's ``BulkInstanceMetric`` default). unitxt's list-valued instance score
``reference_scores`` (the value of each reference) is not a score in assay.

The model and tokenizer come from :func:`assay_transformers.loading.load_model` (float32,
``local_files_only=True``, no remote code; the pad token falls back to the end-of-sequence token
as in unitxt). The folder: see :mod:`assay_unitxt.catalog.models`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidParameterError
from assay.validation import check_int
from assay_unitxt.catalog.bert_score import references_of
from assay_unitxt.catalog.model_metric import ModelEntryMetric
from assay_unitxt.catalog.models import SharedModel

__all__ = ["Perplexity", "fill"]

_FIELD = re.compile(r"\{(\w+)}")
_FIELDS = ("prediction", "reference")


def fill(template: str, **values: str) -> str:
    """unitxt's ``Perplexity.Template.apply``: each ``{name}`` replaced by ``values[name]``, nothing else."""
    return _FIELD.sub(lambda m: values[m.group(1)], template)


class Perplexity(ModelEntryMetric):
    """unitxt's ``Perplexity`` on a local folder (module docstring).

    Parameters
    ----------
    model_name : str
        The Hub id of the entry's model (names the folder under ``ASSAY_HF_MODELS_PATH``).
    source_template, target_template : str
        Texts with ``{prediction}`` and ``{reference}`` fields.
    batch_size : int
    single_token_mode : bool
        Tokenize the targets without special tokens.
    model : str or path, optional
        The local folder (else found from ``model_name``).
    device : str or None
        ``"cpu"``, ``"cuda"`` ... (None: CUDA when available, as unitxt).
    entry : str
        The catalog entry's name, for messages.
    """

    main_score = "perplexity"
    ci_scores = ["perplexity"]
    requirements = {"torch": "torch", "transformers": "transformers", "assay_transformers": "assay-transformers"}

    def __init__(self, *, model_name: str, source_template: str, target_template: str, batch_size: int = 32,
                 single_token_mode: bool = False, model: Any = None, device: str | None = None,
                 entry: str = "perplexity", score_prefix: str = "") -> None:
        super().__init__(entry=entry, model_name=model_name, model=model, score_prefix=score_prefix)
        for key, template in (("source_template", source_template), ("target_template", target_template)):
            if not isinstance(template, str):
                raise InvalidParameterError(f"{entry}: {key!r} must be a str; got {type(template).__name__}.")
            unknown = sorted(set(_FIELD.findall(template)) - set(_FIELDS))
            if unknown:
                raise InvalidParameterError(f"{entry}: {key} {template!r} names {unknown}; the fields are "
                                            "{prediction} and {reference}.")
        self.source_template, self.target_template = source_template, target_template
        self.batch_size = check_int(batch_size, "batch_size", low=1, owner=entry)
        if not isinstance(single_token_mode, bool):
            raise InvalidParameterError(f"{entry}: 'single_token_mode' must be True or False; got "
                                        f"{single_token_mode!r}.")
        self.single_token_mode = single_token_mode
        self.device = device
        self._model = SharedModel()

    def language_model(self) -> tuple[Any, Any, str]:
        """``(model, tokenizer, kind)`` from the folder (loaded on first use by assay-transformers)."""
        folder = self.folder.path()

        def load() -> tuple[Any, Any, str]:
            # deferred: an optional plugin, which loads torch and the model
            from assay_transformers.loading import load_model

            model, tokenizer, kind = load_model(folder, device=self.device, dtype="float32")
            if tokenizer.pad_token_id is None:
                tokenizer.pad_token_id = tokenizer.eos_token_id
            return model, tokenizer, kind

        loaded: tuple[Any, Any, str] = self._model.get((folder, self.device), load)
        return loaded

    def scores(self, sources: list[str], targets: list[str]) -> list[float]:
        """The geometric-mean probability of each target given its source (module docstring)."""
        import torch  # deferred: loaded with the model

        model, tokenizer, kind = self.language_model()
        device = next(model.parameters()).device
        out: list[float] = []
        with torch.no_grad():
            for start in range(0, len(sources), self.batch_size):
                src = tokenizer(sources[start:start + self.batch_size], padding=True, return_tensors="pt")
                tgt = tokenizer(targets[start:start + self.batch_size], padding=True, return_tensors="pt",
                                add_special_tokens=not self.single_token_mode)
                if kind == "seq2seq":
                    labels = tgt["input_ids"].to(device).long()
                    logits = model(input_ids=src["input_ids"].to(device).long(),
                                   attention_mask=src["attention_mask"].to(device).long(), labels=labels).logits
                    labels = labels.clone()
                else:
                    ids = torch.cat([src["input_ids"], tgt["input_ids"]], dim=1).to(device).long()
                    mask = torch.cat([src["attention_mask"], tgt["attention_mask"]], dim=1).to(device).long()
                    labels = torch.cat([torch.full_like(src["input_ids"], -100), tgt["input_ids"]], dim=1).to(device)
                    logits = model(input_ids=ids, attention_mask=mask).logits[..., :-1, :]
                    labels = labels[..., 1:]
                labels[labels == tokenizer.pad_token_id] = -100
                loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1),
                                                         ignore_index=-100, reduction="none")
                per_text = loss.view(labels.size(0), -1).sum(dim=1) / (labels > 0).sum(dim=1)
                out.extend((-per_text).exp().tolist())
        return out

    def compute_bulk(self, predictions: Sequence[Any], references: Sequence[Any] | None,
                     task_data: Sequence[Any] | None) -> list[float]:
        refs = references_of(references or [], self.entry)
        if not predictions:
            return []
        pairs = [(p, r) for p, rs in zip(predictions, refs) for r in rs]
        values = self.scores([fill(self.source_template, prediction=p, reference=r) for p, r in pairs],
                             [fill(self.target_template, prediction=p, reference=r) for p, r in pairs])
        out, start = [], 0
        for rs in refs:
            out.append(max(values[start:start + len(rs)]))
            start += len(rs)
        return out
