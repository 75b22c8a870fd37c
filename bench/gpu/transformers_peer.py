#!/usr/bin/env python3
"""transformers on CUDA (SDPA attention) as the second GPU peer of bench/gpu/run.sh: a Hugging Face
model directory (LlamaForCausalLM or DiffLlamaForCausalLM, written by `difftx init --to hf` from the
same config as the other engines' models) in bfloat16 on the GPU. Times, best of --repeats after a
warm-up, synchronising CUDA around each measurement:
  prefill: one forward over a --prompt-token prompt (tokens/s, and TFLOPS from --flops-per-token);
  decode:  --new greedy steps with the KV cache after the prompt (tokens/s);
  streams: --streams prompts decoded together, one token each per step (aggregate tokens/s).
One JSON line on stdout.

usage: python3 bench/gpu/transformers_peer.py --model DIR [--prompt 512] [--new 128] [--streams 16]
                                              [--repeats 3] [--flops-per-token F]
"""

import argparse
import json
import time

import torch
from transformers import AutoModelForCausalLM


def timed(fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start, out


def decode(model, ids, steps):
    """Greedy decoding of `steps` tokens after the prompt rows `ids` [B, T], with the KV cache."""
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
        past, token = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            out = model(input_ids=token, past_key_values=past, use_cache=True)
            past, token = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--new", type=int, default=128)
    parser.add_argument("--streams", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--flops-per-token", type=float, default=0.0)
    args = parser.parse_args()
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16, attn_implementation="sdpa")
    model = model.to("cuda").eval()
    vocab = model.config.vocab_size
    generator = torch.Generator().manual_seed(4)
    prompt = torch.randint(100, vocab - 300, (1, args.prompt), generator=generator).to("cuda")
    prompts = torch.randint(100, vocab - 300, (args.streams, args.prompt), generator=generator).to("cuda")
    with torch.no_grad():
        model(input_ids=prompt[:, :16])  # warm-up: kernels chosen, memory allocated
        prefill = min(timed(lambda: model(input_ids=prompt))[0] for _ in range(args.repeats))
    steps = decode(model, prompt[:, :16], 4)  # warm-up
    one = min(decode(model, prompt, args.new) for _ in range(args.repeats))
    many = min(decode(model, prompts, args.new) for _ in range(max(1, args.repeats - 1)))
    del steps
    row = {"engine": "transformers", "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "attention": "sdpa", "dtype": "bfloat16", "prompt": args.prompt, "decode": args.new,
           "prefill_tok_s": round(args.prompt / prefill, 1), "decode_tok_s": round(args.new / one, 2),
           "streams": args.streams, "aggregate_decode_tok_s": round(args.streams * args.new / many, 1)}
    if args.flops_per_token > 0:
        row["prefill_tflops"] = round(args.flops_per_token * args.prompt / prefill / 1e12, 2)
    print(json.dumps(row))


if __name__ == "__main__":
    main()
