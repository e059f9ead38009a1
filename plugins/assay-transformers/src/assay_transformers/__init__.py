"""assay-transformers: Hugging Face models and sentence-embedding models for assay.

Two entry points: :mod:`assay_transformers.plugin` (generation with a Hugging Face model:
whitebox statistics for the UEManager) and :mod:`assay_transformers.embedding_plugin`
(sentence-embedding similarity metrics and semantic estimators).
"""
