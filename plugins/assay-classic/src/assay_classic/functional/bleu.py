"""Corpus BLEU from additive per-segment statistics, through sacreBLEU's public API.

sacreBLEU does the tokenization (13a by default) and the n-gram matching:
``BLEU().sentence_score(hypothesis, references)`` gives each segment's statistics
(``sys_len``, ``ref_len``, ``counts``, ``totals``). Corpus BLEU is a function of their sums,
so a segment's statistics are its additive tally, and ``BLEU.compute_bleu`` turns any sum
(a shard, the corpus, a bootstrap resample) into the score. No tokenizer is written here.

Statistics row layout (length ``2 + 2 * max_ngram_order``)::

    [sys_len, ref_len, correct_1 .. correct_N, total_1 .. total_N]

which is sacreBLEU's own segment-statistics layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.deferred import np
from assay.errors import InvalidParameterError
from assay_classic._deps import require

__all__ = ["SMOOTH_METHODS", "bleu_from_stats", "bleu_scorer", "bleu_segment_stats", "corpus_bleu"]

SMOOTH_METHODS = ("none", "floor", "add-k", "exp")


def bleu_scorer(
    *, tokenize: str | None = None, lowercase: bool = False, max_ngram_order: int = 4
) -> Any:
    """A sacreBLEU ``BLEU`` object used only to extract segment statistics.

    ``effective_order=True`` here only keeps sacreBLEU from warning about sentence-level
    scores; it does not change the statistics.
    """
    metrics = require("sacrebleu.metrics")
    try:
        return metrics.BLEU(
            tokenize=tokenize, lowercase=lowercase, max_ngram_order=max_ngram_order, effective_order=True
        )
    except (KeyError, AttributeError, AssertionError, RuntimeError) as exc:
        raise InvalidParameterError(
            f"The 'tokenize' parameter of bleu is not a sacreBLEU tokenizer: {tokenize!r} ({exc}).") from None


def bleu_segment_stats(
    hypotheses: Sequence[str], references: Sequence[Sequence[str] | str], scorer: Any
) -> np.ndarray:
    """Per-segment statistics ``(n, 2 + 2 * order)`` as int64, one row per hypothesis.

    ``references[i]`` is the reference string of segment ``i`` or a list of its references
    (several references: sacreBLEU's closest reference length and clipped counts).
    """
    if len(hypotheses) != len(references):
        raise InvalidParameterError(
            f"bleu needs one reference entry per hypothesis; got {len(hypotheses)} hypotheses "
            f"and {len(references)} references."
        )
    order = scorer.max_ngram_order
    out = np.empty((len(hypotheses), 2 + 2 * order), dtype=np.int64)
    for i, (hyp, refs) in enumerate(zip(hypotheses, references)):
        refs = [refs] if isinstance(refs, str) else list(refs)
        if not refs or not all(isinstance(r, str) for r in refs):
            raise InvalidParameterError(
                f"bleu references of instance {i} must be a string or a non-empty list of strings; got {refs!r}."
            )
        if not isinstance(hyp, str):
            raise InvalidParameterError(f"bleu predictions must be strings; instance {i} is {type(hyp).__name__}.")
        score = scorer.sentence_score(hyp, refs)
        out[i, 0] = score.sys_len
        out[i, 1] = score.ref_len
        out[i, 2 : 2 + order] = score.counts
        out[i, 2 + order :] = score.totals
    return out


def _compute_bleu() -> Any:
    """``sacrebleu.metrics.BLEU.compute_bleu``, looked up once."""
    global _COMPUTE_BLEU
    if _COMPUTE_BLEU is None:
        _COMPUTE_BLEU = require("sacrebleu.metrics").BLEU.compute_bleu
    return _COMPUTE_BLEU


_COMPUTE_BLEU: Any = None


def bleu_from_stats(
    stats: Any,
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_ngram_order: int = 4,
) -> dict[str, float]:
    r"""Corpus BLEU (0-100, sacreBLEU's scale) and its parts from summed statistics.

    .. math::

        BLEU = BP \cdot \exp\Big(\frac1N \sum_{n=1}^N \log p_n\Big), \quad
        BP = \min\big(1, e^{1 - r/c}\big)

    with :math:`p_n` the clipped n-gram precisions (smoothed by ``smooth_method``: sacreBLEU's
    ``exp`` by default), :math:`c` the hypothesis length and :math:`r` the effective
    reference length, all corpus sums. Computed by ``sacrebleu.metrics.BLEU.compute_bleu``.
    """
    if smooth_method not in SMOOTH_METHODS:
        raise InvalidParameterError(
            f"The 'smooth_method' parameter of bleu must be one of {SMOOTH_METHODS}. Got {smooth_method!r} instead."
        )
    row = np.asarray(stats).reshape(-1)
    order = max_ngram_order
    if row.size != 2 + 2 * order:
        raise InvalidParameterError(f"bleu statistics must have {2 + 2 * order} entries; got {row.size}.")
    values = [int(v) for v in row.tolist()]
    score = _compute_bleu()(
        correct=values[2 : 2 + order],
        total=values[2 + order :],
        sys_len=values[0],
        ref_len=values[1],
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        effective_order=effective_order,
        max_ngram_order=order,
    )
    return {"bleu": float(score.score), "bleu_bp": float(score.bp)}


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str] | str],
    *,
    tokenize: str | None = None,
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_ngram_order: int = 4,
) -> float:
    """Corpus BLEU of hypotheses against per-segment references, equal to ``sacrebleu.corpus_bleu``.

    Note the reference layout: ``references[i]`` holds the references of segment ``i``
    (sacreBLEU's ``corpus_score`` takes reference *streams*, the transpose).
    """
    scorer = bleu_scorer(tokenize=tokenize, lowercase=lowercase, max_ngram_order=max_ngram_order)
    stats = bleu_segment_stats(hypotheses, references, scorer).sum(axis=0)
    return bleu_from_stats(
        stats,
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        effective_order=effective_order,
        max_ngram_order=max_ngram_order,
    )["bleu"]
