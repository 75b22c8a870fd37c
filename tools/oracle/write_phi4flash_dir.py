"""Write a small Phi-4-mini-flash model directory with random weights that the engine's commands run.

A Phi4FlashForCausalLM directory (config.json, model.safetensors in F32) of 8 layers at hidden 32,
8 heads over 4 key/value heads (pair-GQA), a window of 4 and vocabulary 288, its weights drawn by
phi4flash_model.init_parameters, with the test tokenizer of tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer
(276 byte-level BPE tokens, <|endoftext|>, <|im_start|>, <|im_end|>) and a ChatML template placed
beside it: what tests/scripts/hybrid_cli.sh and python/tests/test_hybrid.py generate with. numpy only.
Usage: /usr/bin/python3 tools/oracle/write_phi4flash_dir.py OUT_DIR
"""

import json
import os
import shutil
import sys

import numpy as np

import phi4flash_model as M
from hf_checkpoint import write_json, write_weights

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKENIZER = os.path.join(REPO_ROOT, "tests", "fixtures", "hf", "motif_r1_mha_tied_f32_tokenizer", "tokenizer.json")
CONFIG = {"architectures": ["Phi4FlashForCausalLM"], "model_type": "phi4flash", "vocab_size": 288,
          "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 8, "num_attention_heads": 8,
          "num_key_value_heads": 4, "sliding_window": 4, "mamba_d_state": 8, "max_position_embeddings": 512}
TEMPLATE = ("{%- for message in messages -%}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
            "{%- endfor -%}{%- if add_generation_prompt -%}<|im_start|>assistant\n{%- endif -%}")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_json(os.path.join(out, "config.json"), CONFIG)
    cfg = M.Phi4FlashConfig.from_dict(CONFIG)
    write_weights(out, M.init_parameters(cfg, np.random.default_rng(3)), "F32", 1)
    shutil.copy(TOKENIZER, os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": "<|im_end|>", "bos_token": None, "chat_template": TEMPLATE}, f)


if __name__ == "__main__":
    main()
