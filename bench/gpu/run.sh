#!/usr/bin/env bash
# difftx's Vulkan backend on an NVIDIA GPU (H100 / H200; docs/BENCHMARKS.md "GPU"), in two halves:
#
#   bench/gpu/run.sh pack             here, on the Debian development machine: builds the release
#                                     binaries and packs into .gpu/ (git-ignored, carried to the GPU
#                                     machine, ~40 MB) the bundle (difftx, difftx_tests and every
#                                     shared library they load, glibc and the Vulkan loader included),
#                                     llama.cpp's Vulkan peer (bench/gpu/llama_peer.sh) and the
#                                     tokenizer the GGUF files need
#   bench/gpu/run.sh run [STAGE...]   there, from the repository root: unpacks .gpu/ and runs the
#                                     stages (default: all but quick, in this order), printing JSON
#                                     lines (also into $OUT/gpu.jsonl when OUT is set):
#       quick    for a lease too short for the rest (15 minutes of device time, start-up included):
#                in one command, the tensor-core GEMM's conformance tests and two oracle fixtures,
#                llama.cpp's F16 Llama against difftx's F16 Llama and DiffLlama engines, and the
#                kernel bench's Llama F16 lines
#       check    the Vulkan conformance tests on the GPU, with cooperative matrices (the only place
#                that path runs) and without; the oracle logits through `logits --device vulkan`
#                (F32/BF16 fixtures within 2e-2 of the float64 logits, argmax at >= 95% of positions;
#                quantized weights within 0.1 of the CPU's logits)
#       kernels  `difftx bench vulkan` at the 1.2B Llama shape and its DiffLlama, V2 and GDA twins:
#                the copy rate, GEMV GB/s against it, GEMM and attention TFLOPS
#       peers    random-weight models of those shapes; llama.cpp's Vulkan build (Llama shape:
#                prefill, decode, 16 streams) and transformers on CUDA with SDPA (Llama, DiffLlama)
#       engine   difftx itself, `bench infer` and `bench serve` with --device vulkan, against the
#                peers and the bars
#       profile  the device's time per shader (DIFFTX_VULKAN_PROFILE=1) of a prefill (GPU_PROMPT
#                tokens, 1 new) and of a decode (16 tokens, GPU_NEW new) on the first config and
#                type, the decode again with the old first submit (256 commands), into
#                $OUT/profile-*.txt, with the driver's statistics of each pipeline (registers,
#                spills: DIFFTX_VULKAN_PIPELINE_STATS=1) where it reports them; then prefill and decode unprofiled with the stream's tracked
#                barriers and with a barrier before every command (DIFFTX_VULKAN_BARRIERS=all)
#
# The GPU machine (/work/.library/device/README.md): another OS image, no Debian packages, nothing
# fetchable, 64 MiB carried in all. Through the device tool, with a short lease:
#   run(command="bash bench/gpu/run.sh run quick", carry=[".gpu"], timeout_s=480)
# and with time for more:
#   run(command="bash bench/gpu/run.sh run check kernels", carry=[".gpu"], timeout_s=600)
#   run(command="bash bench/gpu/run.sh run peers engine", carry=[".gpu"], timeout_s=600)
# Each stage fits well inside one 10-minute command; `check kernels` then `peers engine`. The tool
# brings back at most 8 files of $OUT (one run writes up to 7: gpu.jsonl, two failing conformance
# logs, four profiles); a wrapper that adds its own should pack them into one archive.
#
# Sizes (environment, for trying the harness on a small model and lavapipe here, e.g.
# GPU_CONFIGS=/tmp/tiny.json GPU_PROMPT=16 GPU_NEW=4 GPU_STREAMS=4 GGML_VK_VISIBLE_DEVICES=0):
# GPU_CONFIGS (space-separated config files), GPU_PROMPT (512), GPU_NEW (128), GPU_STREAMS (16),
# GPU_TYPES (f16,q8_0,q4_0), GPU_ROUNDS (3: best of).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
mode="${1:-}"
[ $# -gt 0 ] && shift

pack() {
  cmake --build --preset release -j2 --target difftx difftx_tests > /dev/null
  bench/gpu/llama_peer.sh "$root/.cache/llama_vulkan" > /dev/null
  local stage="$root/.cache/gpu-stage"
  rm -rf "$stage" .gpu && mkdir -p "$stage/bundle/bin" "$stage/bundle/lib" "$stage/bundle/data" .gpu
  cp build/release/difftx build/release/difftx_tests "$stage/bundle/bin/"
  # Every library the binaries load, glibc and its loader too (run() uses the machine's own
  # glibc where it is new enough, else these); the Vulkan loader, which difftx opens at run time.
  local libs
  libs="$( (ldd build/release/difftx; ldd build/release/difftx_tests) | awk '/=>/ {print $3} /ld-linux/ {print $1}')"
  for lib in $(sort -u <<< "$libs"); do
    cp -L "$lib" "$stage/bundle/lib/"
  done
  cp -L /usr/lib/x86_64-linux-gnu/libvulkan.so.1 "$stage/bundle/lib/"
  cp data/hf/llama3/tokenizer.json data/hf/llama3/tokenizer_config.json "$stage/bundle/data/"
  tar -C "$stage" -cJf .gpu/bundle.tar.xz bundle
  tar -C "$root/.cache" -cJf .gpu/llama_vulkan.tar.xz llama_vulkan
  du -ch .gpu/* | tail -1
  ls -la .gpu
}

# ---- On the GPU machine.

tag() {  # the JSON line on stdin with the fields KEY=VALUE added
  python3 -c 'import json, sys
row = json.loads(sys.stdin.readline())
row.update(a.split("=", 1) for a in sys.argv[1:])
print(json.dumps(row))' "$@"
}

emit() {  # a JSON line to stdout and to $OUT/gpu.jsonl
  echo "$1"
  [ -n "${OUT:-}" ] && echo "$1" >> "$OUT/gpu.jsonl"
  return 0
}

unpack() {
  work=/tmp/difftx-gpu
  # Unpacked once per pack: another bundle (its checksum, whatever the clocks of the two machines)
  # replaces the unpacked one; the models and caches stay.
  local packed
  packed="$(cat .gpu/*.tar.xz | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$work/unpacked" 2> /dev/null)" != "$packed" ]; then
    rm -rf "$work/bundle" "$work/llama_vulkan"
    mkdir -p "$work"
    tar -C "$work" -xJf .gpu/bundle.tar.xz
    tar -C "$work" -xJf .gpu/llama_vulkan.tar.xz
    echo "$packed" > "$work/unpacked"
  fi
  bundle="$work/bundle"
  export DIFFTX_VULKAN_LOADER="$bundle/lib/libvulkan.so.1" DIFFTX_CACHE_DIR="$work/cache"
  # The NVIDIA driver's Vulkan ICD where the loader does not find one by itself.
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ] && ! ls /usr/share/vulkan/icd.d/*nvidia* > /dev/null 2>&1; then
    export VK_DRIVER_FILES="$icd"
  fi
  # The carried libraries without glibc, for the machine's own glibc when it is new enough (an
  # older libc.so.6 under a newer loader crashes); else the whole carried set through its own loader.
  # Only difftx's processes see them, never the machine's python3 or coreutils.
  mkdir -p "$work/libs"
  local lib
  for lib in "$bundle"/lib/*; do
    case "$(basename "$lib")" in
      libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) ;;
      *) ln -sf "$lib" "$work/libs/" ;;
    esac
  done
  run_with=(env "LD_LIBRARY_PATH=$work/libs")
  if ! "${run_with[@]}" "$bundle/bin/difftx" --version > /dev/null 2>&1; then
    run_with=("$bundle/lib/ld-linux-x86-64.so.2" --library-path "$bundle/lib")
  fi
  difftx=("${run_with[@]}" "$bundle/bin/difftx")
  tests=("${run_with[@]}" "$bundle/bin/difftx_tests")
  mkdir -p "$work/models" "$work/cache"
  "${difftx[@]}" --version >&2
}

# gtest's JSON report as one line: passed, failed, skipped.
conformance() {
  local label="$1" filter="$2" report="$work/conformance-$1.json"
  shift 2
  local rc=0
  env "$@" "${tests[@]}" --gtest_filter="$filter" --gtest_output="json:$report" > "$work/conformance-$label.log" 2>&1 \
    || rc=$?
  # A failing run's log comes back with the results.
  [ "$rc" -ne 0 ] && [ -n "${OUT:-}" ] && tail -c 200000 "$work/conformance-$label.log" > "$OUT/conformance-$label.log"
  emit "$(python3 - "$report" "$label" "$rc" <<'PY'
import json, sys
report, label, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    r = json.load(open(report))
except (OSError, ValueError):
    print(json.dumps({"op": "conformance", "run": label, "error": "no report", "exit": rc})); sys.exit()
cases = [t for s in r["testsuites"] for t in s["testsuite"]]
failed = [t["name"] for t in cases if t.get("failures")]
skipped = [t["name"] for t in cases if t.get("result") == "SKIPPED"]
print(json.dumps({"op": "conformance", "run": label, "tests": len(cases), "failed": failed,
                  "skipped": len(skipped), "exit": rc}))
PY
)"
}

# Fixtures' logits through `logits --device vulkan` against their float64 oracle.
oracle_fixtures() {
  for dir in "$@"; do
    python3 - "$dir" "$work" "${difftx[@]}" <<'PY'
import json, subprocess, sys, numpy as np
fixture, work, difftx = sys.argv[1], sys.argv[2], sys.argv[3:]
tokens = np.load(fixture + "/tokens.npy")
want = np.load(fixture + "/logits.npy")
worst, agree, total = 0.0, 0, 0
for b in range(tokens.shape[0]):
    out = f"{work}/logits.npy"
    subprocess.run(difftx + ["logits", "--device", "vulkan", "--model", fixture, "--tokens",
                             " ".join(map(str, tokens[b])), "--out", out], check=True, capture_output=True)
    got = np.load(out)
    worst = max(worst, float(np.abs(got - want[b]).max()))
    agree += int((got.argmax(-1) == want[b].argmax(-1)).sum())
    total += got.shape[0]
print(json.dumps({"op": "oracle_logits", "fixture": fixture.split("/")[-1], "max_abs_error": worst,
                  "argmax_agreement": agree / total, "pass": worst <= 2e-2 and agree / total >= 0.95}))
PY
  done | while read -r line; do emit "$line"; done
}

stage_check() {
  conformance coopmat 'Vulkan*:*vulkan*'
  conformance plain 'VulkanTest.*:*vulkan*' DIFFTX_VULKAN_COOPMAT=0
  # F32/BF16/F16 fixtures against the float64 oracle; then quantized copies, GPU against CPU.
  oracle_fixtures tests/fixtures/hf/llama_* tests/fixtures/hf/diffllama_* tests/fixtures/hf/motif_*
  # A random model whose widths take every block type (Q4_K: multiples of 256).
  local small="$work/models/oracle-src"
  if [ ! -f "$small/config.json" ]; then
    printf '%s' '{"model_type": "difftx", "attention": "diff", "vocab_size": 1024, "hidden_size": 256,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
      "intermediate_size": 512, "max_position_embeddings": 256}' > "$work/oracle-config.json"
    "${difftx[@]}" init --config "$work/oracle-config.json" --out "$small" > /dev/null
  fi
  for dtype in q8_0 q4_0 q4_k; do
    local dir="$work/models/oracle-$dtype"
    [ -d "$dir" ] || "${difftx[@]}" convert --model "$small" --dtype "$dtype" --out "$dir" > /dev/null
    python3 - "$dir" "$dtype" "$work" "${difftx[@]}" <<'PY'
import json, subprocess, sys, numpy as np
model, dtype, work, difftx = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ids = " ".join(str(i) for i in range(1, 33))
for device in ("cpu", "vulkan"):
    subprocess.run(difftx + ["logits", "--device", device, "--model", model, "--tokens", ids, "--out",
                             f"{work}/{device}.npy"], check=True, capture_output=True)
err = float(np.abs(np.load(f"{work}/vulkan.npy") - np.load(f"{work}/cpu.npy")).max())
print(json.dumps({"op": "quantized_logits", "dtype": dtype, "max_abs_vs_cpu": err, "pass": err <= 0.1}))
PY
  done | while read -r line; do emit "$line"; done
}

default_configs="configs/hf/llama-1b.json configs/hf/diffllama-1b.json configs/hf/diff2-1b.json configs/hf/gda-1b.json"
read -r -a configs <<< "${GPU_CONFIGS:-$default_configs}"
prompt="${GPU_PROMPT:-512}" new="${GPU_NEW:-128}" streams="${GPU_STREAMS:-16}" types="${GPU_TYPES:-f16,q8_0,q4_0}"
rounds="${GPU_ROUNDS:-3}"

stage_kernels() {
  for config in "${configs[@]}"; do
    "${difftx[@]}" bench vulkan --config "$config" --types "$types" --rows 1 --prompt "$prompt" --context 48,128,1024,4096 \
        --rounds "$rounds" --json \
      | while read -r line; do emit "$(tag "config=$config" <<< "$line")"; done
  done
  "${difftx[@]}" bench vulkan --config "${configs[0]}" --types f16 --rows "$streams" --prompt "$prompt" \
      --rounds "$rounds" --json \
    | grep decode_attention | while read -r line; do emit "$line"; done
  # Decode attention with the CPU device's smallest chunk (128 positions, one thread a key) against
  # the GPU's (32: 2026-12-01, not yet timed on a GPU), each config's one row.
  for config in "${configs[@]}"; do
    DIFFTX_VULKAN_DECODE_CHUNK=128 "${difftx[@]}" bench vulkan --config "$config" --types f16 --rows 1 \
        --prompt "$prompt" --context 48,128,1024,4096 --rounds "$rounds" --json \
      | grep decode_attention | while read -r line; do emit "$(tag "config=$config" "decode_chunk=128" <<< "$line")"; done
  done
  # The prefill GEMM without split-K (2026-12-01, not yet timed on a GPU): Llama's matrices.
  DIFFTX_VULKAN_GEMM_SLICES=1 "${difftx[@]}" bench vulkan --config "${configs[0]}" --types "$types" --rows 1 \
      --prompt "$prompt" --rounds "$rounds" --json \
    | grep '"op":"matmul' | while read -r line; do emit "$(tag "config=${configs[0]}" "gemm_slices=1" <<< "$line")"; done
}

# A model directory per (config, format, dtype), made here from random weights.
model() {  # model CONFIG FORMAT DTYPE -> path
  local name dir
  name="$(basename "$1" .json)-$2-$3"
  dir="$work/models/$name"
  if [ ! -e "$dir/config.json" ] && [ ! -e "$dir/model.gguf" ]; then
    local src="$work/models/$(basename "$1" .json)-src"
    if [ ! -f "$src/config.json" ]; then
      "${difftx[@]}" init --config "$1" --out "$src" --dtype bf16 > /dev/null
      cp "$bundle/data/tokenizer.json" "$bundle/data/tokenizer_config.json" "$src/"
    fi
    "${difftx[@]}" convert --model "$src" --to "$2" --dtype "$3" --out "$dir" > /dev/null
    [ "$2" = hf ] && cp "$bundle/data/tokenizer.json" "$bundle/data/tokenizer_config.json" "$dir/"
  fi
  echo "$dir"
}

# Model FLOPs per token without attention (docs/SPEC.md §4: 2 x the parameters a token multiplies,
# the LM head included), for the fraction of the fp16 peak.
flops_per_token() {
  python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
D, F, L, V = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["vocab_size"]
H, Hkv, d = c["num_attention_heads"], c["num_key_value_heads"], c.get("head_dim", D // c["num_attention_heads"])
kind = c.get("attention", "diff" if c.get("model_type") == "diffllama" else "baseline")
q, kv, o = (2 * H * d, 4 * Hkv * d, 2 * H * d) if kind in ("diff", "diff_grouped") else (H * d, 2 * Hkv * d, H * d)
if kind == "diff2":
    q, kv, o = 2 * H * d + H, 2 * Hkv * d, H * d
print(2 * (L * (D * (q + kv) + o * D + 3 * D * F) + V * D))
PY
}

# Nominal dense fp16 tensor peak of the GPU (TFLOPS, from NVIDIA's datasheets), by name.
fp16_peak() {
  case "$1" in
    *H200*) echo 989.4 ;;
    *H100*PCIe*) echo 756.0 ;;
    *H100*) echo 989.4 ;;
    *) echo 0 ;;
  esac
}

# llama.cpp's Vulkan build on the Llama shape (it has no DIFF architecture) in one type: prefill and
# decode, then 16 streams.
llama_cpp_peer() {
  local llama="${configs[0]}" gguf
  gguf="$(model "$llama" gguf "$1")/model.gguf"
  for run in "time $prompt $new $rounds" "streams $prompt $new $streams"; do
    # shellcheck disable=SC2086
    emit "$("$work/llama_vulkan/llama_peer" "$gguf" $run | tag "dtype=$1" "config=$llama")"
  done
}

stage_peers() {
  for dtype in ${types//,/ }; do llama_cpp_peer "$dtype"; done
  [ "${GPU_TRANSFORMERS:-1}" = 0 ] && return
  if ! python3 -c 'import torch, transformers; assert torch.cuda.is_available()' 2> /dev/null; then
    emit '{"op":"transformers","skipped":"no torch with CUDA and transformers here"}'
    return
  fi
  for config in "${configs[@]:0:2}"; do  # Llama and DiffLlama: the architectures transformers has
    local hf
    hf="$(model "$config" hf bf16)"
    emit "$(python3 bench/gpu/transformers_peer.py --model "$hf" --prompt "$prompt" --new "$new" --streams "$streams" \
            --repeats "$rounds" --flops-per-token "$(flops_per_token "$config")" | tag "config=$config")"
  done
}

# The device's name, copy rate and fp16 peak (device_name, device_copy, device_peak), from the
# kernel bench's first two lines.
device_rates() {
  "${difftx[@]}" bench vulkan --copy-only --rounds "$rounds" --json > "$work/device.jsonl"
  device_name="$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["name"])' "$work/device.jsonl")"
  device_copy="$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[1])["copy_gbs"])' "$work/device.jsonl")"
  device_peak="$(fp16_peak "$device_name")"
}

# difftx's engine on one config and type: `bench infer` (prefill and decode, with the fractions of
# the copy rate and the fp16 peak), then `bench serve` at 1 and GPU_STREAMS streams.
engine_model() {
  local config="$1" dtype="$2" dir
  dir="$(model "$config" difftx "$dtype")"
  "${difftx[@]}" bench infer --device vulkan --model "$dir" --prompt "$prompt" --new "$new" --json \
    | grep '"infer_model"' | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
copy, peak, flops = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
r.update({"config": sys.argv[4], "dtype": sys.argv[5], "copy_gbs": copy,
      "of_copy": round(r["decode_tok_s"] * r["weight_gb"] / copy, 3),
      "of_fp16_peak": round(r["prefill_tok_s"] * flops / (peak * 1e12), 3) if peak else None})
print(json.dumps(r))' "$device_copy" "$device_peak" "$(flops_per_token "$config")" "$config" "$dtype" \
    | while read -r line; do emit "$line"; done \
    || echo "run.sh: bench infer failed on $dir" >&2
  "${difftx[@]}" bench serve --device vulkan --model "$dir" --concurrency "1,$streams" --prompt "$prompt" \
      --new "$new" --json \
    | while read -r line; do emit "$(tag "config=$config" "dtype=$dtype" <<< "$line")"; done \
    || echo "run.sh: bench serve failed on $dir" >&2
}

stage_engine() {
  device_rates
  for config in "${configs[@]}"; do
    for dtype in ${types//,/ }; do engine_model "$config" "$dtype"; done
  done
}

# What a short lease can see in one command (well under 10 minutes): the tensor-core GEMM's tests
# and two oracle fixtures through it (the staging of 2026-12-02 is untested on a GPU), the
# Llama and DiffLlama F16 engines against llama.cpp's F16 peer, and the kernel bench's Llama
# GEMMs and decode attention.
stage_quick() {
  conformance coopmat-matmul '*ConformanceMatmul*vulkan*:VulkanTest.Matmul*:VulkanTest.Gemm*:VulkanTest.EachRow*:VulkanTest.Cooperative*'
  oracle_fixtures tests/fixtures/hf/llama_gqa4_f16_llama3_sharded tests/fixtures/hf/diffllama_gqa2_bf16_untied_linear_sharded
  local saved_rounds="$rounds"
  rounds=1
  device_rates
  llama_cpp_peer f16
  engine_model "${configs[0]}" f16
  [ ${#configs[@]} -gt 1 ] && engine_model "${configs[1]}" f16
  "${difftx[@]}" bench vulkan --config "${configs[0]}" --types f16 --rows 1 --prompt "$prompt" --context 128,1024 \
      --rounds 1 --json \
    | while read -r line; do emit "$(tag "config=${configs[0]}" <<< "$line")"; done
  rounds="$saved_rounds"
}

stage_profile() {
  local config="${configs[0]}" dtype="${types%%,*}" dir name
  dir="$(model "$config" difftx "$dtype")"
  name="$(basename "$config" .json)-$dtype"
  # decode-submit256: the stream's first submit after a wait at 256 commands, as before
  # 2026-11-29 (at 16 since), to see what the device's idling while a step is recorded costs.
  for run in "prefill $prompt 1 16" "decode 16 $new 16" "decode-submit256 16 $new 256"; do
    read -r label p n first <<< "$run"
    # The bench line (its wall-clock rates) beside the device's times: together they say whether
    # a step waits on the device or on the host.
    DIFFTX_VULKAN_FIRST_SUBMIT="$first" DIFFTX_VULKAN_PROFILE=1 DIFFTX_VULKAN_PIPELINE_STATS=1 \
      "${difftx[@]}" bench infer --device vulkan --model "$dir" --prompt "$p" --new "$n" \
        > "$work/profile.txt" 2>&1 || true
    if [ -n "${OUT:-}" ]; then cp "$work/profile.txt" "$OUT/profile-$name-$label.txt"; fi
    grep -E -A 12 'op=infer_model|vulkan profile' "$work/profile.txt" >&2 || true
    grep -E 'vulkan pipeline (paged_attention|matmul_gemv1_|matmul_coopmat_)' "$work/profile.txt" >&2 || true
  done
  # Profiling puts a barrier before every command (each one's time apart); unprofiled, the stream
  # leaves independent commands free to overlap. Both ways, unprofiled, in one run:
  : > "$work/barriers.txt"
  for barriers in tracked all; do
    DIFFTX_VULKAN_BARRIERS="$barriers" "${difftx[@]}" bench infer --device vulkan --model "$dir" --prompt "$prompt" \
        --new "$new" 2>&1 | grep op=infer_model | sed "s/^/barriers=$barriers  /" >> "$work/barriers.txt" || true
  done
  # And decode attention's chunks as a CPU device has them (128 positions) against the GPU's (32).
  DIFFTX_VULKAN_DECODE_CHUNK=128 "${difftx[@]}" bench infer --device vulkan --model "$dir" --prompt "$prompt" \
      --new "$new" 2>&1 | grep op=infer_model | sed "s/^/decode_chunk=128  /" >> "$work/barriers.txt" || true
  if [ -n "${OUT:-}" ]; then cp "$work/barriers.txt" "$OUT/profile-$name-barriers.txt"; fi
  cat "$work/barriers.txt" >&2
}

case "$mode" in
  pack) pack ;;
  run)
    if [ ! -f .gpu/bundle.tar.xz ]; then
      echo "run.sh: .gpu/bundle.tar.xz is missing: run 'bench/gpu/run.sh pack' here first and carry .gpu" >&2
      exit 1
    fi
    unpack
    stages=("$@")
    [ ${#stages[@]} -eq 0 ] && stages=(check kernels peers engine profile)
    for s in "${stages[@]}"; do
      case "$s" in
        quick | check | kernels | peers | engine | profile) "stage_$s" ;;
        *) echo "run.sh: unknown stage '$s' (quick, check, kernels, peers, engine, profile)" >&2; exit 2 ;;
      esac
    done
    ;;
  *) echo "usage: bench/gpu/run.sh pack | run [quick] [check] [kernels] [peers] [engine] [profile]" >&2; exit 2 ;;
esac
