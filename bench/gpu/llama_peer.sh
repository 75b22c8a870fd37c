#!/usr/bin/env bash
# Builds bench/gpu/llama_peer.c, the C driver of llama.cpp's Vulkan build, into DIR (default
# .cache/llama_vulkan) beside the prebuilt libraries it loads: npm @node-llama-cpp/linux-x64-vulkan's
# libllama / libggml / libggml-vulkan and one CPU backend (haswell), compiled against the llama.h of
# the same release (the llama.cpp source node-llama-cpp ships as a git bundle). Installs the npm
# package first if need be (bench/llama_cpp/setup). About 50 MB; bench/gpu/run.sh carries it.
#   bench/gpu/llama_peer.sh [DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="${1:-$root/.cache/llama_vulkan}"
modules="$root/.cache/llama_cpp/node_modules"
[ -d "$modules/@node-llama-cpp/linux-x64-vulkan" ] || "$root/bench/llama_cpp/setup"
bins="$modules/@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan"
[ -f "$bins/libggml-vulkan.so" ] || { echo "llama_peer.sh: $bins has no libggml-vulkan.so" >&2; exit 1; }
release="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tag"])' \
  "$modules/node-llama-cpp/llama/llama.cpp.info.json")"
src="$root/.cache/llama.cpp-$release"
if [ ! -f "$src/include/llama.h" ]; then
  rm -rf "$src"
  git clone -q "$modules/node-llama-cpp/llama/gitRelease.bundle" "$src" 2>/dev/null
fi
mkdir -p "$dest"
for lib in libllama.vulkan."$release".so libggml.vulkan."$release".so libggml-base.so libggml-vulkan.so \
           libggml-cpu-haswell.so libllama-common.so; do
  [ -f "$bins/$lib" ] && cp "$bins/$lib" "$dest/"
done
cc -O2 -std=gnu11 -Wall -I"$src/include" -I"$src/ggml/include" "$root/bench/gpu/llama_peer.c" -o "$dest/llama_peer" \
  -L"$dest" -l:libllama.vulkan."$release".so -l:libggml.vulkan."$release".so -l:libggml-base.so \
  -Wl,-rpath,'$ORIGIN'
echo "llama_peer.sh: $dest/llama_peer (llama.cpp $release)"
