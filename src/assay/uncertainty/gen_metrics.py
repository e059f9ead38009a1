"""Generation metrics by name: a live view of the ``generation_metric`` registry.

Generation metrics (the quality of stored model outputs, one value per example) are
registered by plugins with the ``assay_register_generation_metrics`` hook; assay-uncertainty
registers ``accuracy``, ``quality``, ``claim_accuracy`` and ``token_accuracy``. The base
class, :class:`~assay.uncertainty.GenerationMetric`, stays here in the core.
``assay list generation_metric`` lists what is installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["GENERATION_METRICS", "RegisteredGenerationMetrics"]


class RegisteredGenerationMetrics(Mapping[str, Callable[..., Any]]):
    """name -> factory of every generation metric registered under a plain (unambiguous) name.

    Read from the plugin registry on each access, so it always shows what is installed.
    """

    def _registry(self) -> Any:
        from assay.plugins import get_registry

        return get_registry("generation_metric")

    def __getitem__(self, name: str) -> Callable[..., Any]:
        registry = self._registry()
        if not isinstance(name, str) or len(registry.candidates(name)) != 1:
            raise KeyError(name)
        return registry.get(name).factory

    def __iter__(self) -> Iterator[str]:
        return iter([entry.name for entry in self._registry()])

    def __len__(self) -> int:
        return len(list(self._registry()))

    def __repr__(self) -> str:
        return f"<generation metrics: {', '.join(self) or 'none registered'}>"


#: the generation metrics ``UEManager(gen_metrics=[...])`` knows by name (a live registry view)
GENERATION_METRICS: Mapping[str, Callable[..., Any]] = RegisteredGenerationMetrics()
