"""Registrations of ``assay-transformers``' embedding half (entry point ``assay.transformers-embeddings``)."""

from __future__ import annotations
