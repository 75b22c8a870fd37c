"""difftx from Python: load Differential Transformer models, score text, generate, look at
attention maps, run the paper's analyses and train, over difftx's C++ library.

    import difftx
    model = difftx.load("runs/x/checkpoints/step_00000200")
    ids = model.tokenizer.encode("The Congress")
    logits = model.logits(ids)                       # float32 [T, vocab]
    print(model.generate("The Congress", max_new_tokens=20, temperature=0))
    row = difftx.attention_map(model, ids, layer=0, head=0)

Errors from the library are difftx.Error (and its subclasses) with the library's message.
"""
from ._difftx import (
    EngineFull,
    Error,
    Model,
    Stream,
    Tokenizer,
    TrainingDiverged,
    attention,
    attention_map,
    convert,
    eval,
    load,
    mqar,
    niah,
    outliers,
    prepare,
    quant,
    train,
)

__all__ = [
    "EngineFull", "Error", "Model", "Stream", "Tokenizer", "TrainingDiverged", "attention", "attention_map",
    "convert", "eval", "load", "mqar", "niah", "outliers", "prepare", "quant", "train",
]
