"""Test helpers of assay-transformers that other plugins' tests reuse.

:mod:`assay_transformers.testing.openai_server`: a real OpenAI-compatible server
(``transformers serve``) on a tiny local model folder; the session fixture ``openai_server``
comes from :mod:`assay_transformers.testing.pytest_plugin` (entry point ``pytest11``).
"""
