"""Registrations of ``assay-transformers``' generation half (entry point ``assay.transformers``)."""

from __future__ import annotations
