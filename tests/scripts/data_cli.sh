#!/usr/bin/env bash
# End-to-end runs of `difftx tokenize` and `difftx prepare`: round trips, a prepared dataset
# usable as a tokenizer, and bad input that must fail with a clear message (never a crash).
# Usage: data_cli.sh DIFFTX_BINARY REPO_ROOT
set -euo pipefail
difftx="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_error "text in the message" command...: the command must exit 1 and print the text.
expect_error() {
  local want="$1"; shift
  local rc=0
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] || fail "expected exit 1 from '$*', got $rc: $(cat "$tmp/err")"
  grep -qF -- "$want" "$tmp/err" || fail "'$*' did not say '$want': $(cat "$tmp/err")"
}

# A corpus of a few documents, and a vocabulary trained on it.
mkdir -p "$tmp/corpus"
for i in 1 2 3 4 5 6; do
  printf 'Document %s. Call me Ishmael; the whale, the whale! 1234 %s\n\nNaïve café — ünïcödé %s.\n' \
    "$i" "$(printf 'x%.0s' $(seq 1 $i))" "$i" > "$tmp/corpus/doc$i.txt"
done
printf '{"text": "jsonl document one"}\n{"text": "jsonl document two"}\n' > "$tmp/extra.jsonl"
"$difftx" prepare --corpus "$tmp/corpus" "$tmp/extra.jsonl" --vocab-size 300 --out "$tmp/ds" \
  --val-fraction 0.2 --quiet >"$tmp/prepare.out"
for f in metadata.json tokenizer.tiktoken tokenizer.tiktoken.json train_0000.bin val_0000.bin; do
  [ -s "$tmp/ds/$f" ] || fail "prepare did not write $f"
done
grep -q "vocabulary 300" "$tmp/prepare.out" || fail "prepare summary: $(cat "$tmp/prepare.out")"

# The prepared directory is a tokenizer: text -> ids -> the same text.
cat "$tmp"/corpus/*.txt > "$tmp/all.txt"
"$difftx" tokenize --tokenizer "$tmp/ds" < "$tmp/all.txt" > "$tmp/ids"
"$difftx" tokenize --tokenizer "$tmp/ds" --decode < "$tmp/ids" > "$tmp/back.txt"
cmp -s "$tmp/all.txt" "$tmp/back.txt" || fail "decode(encode(text)) != text with the trained tokenizer"

# Special tokens are text unless allowed.
printf 'a<|endoftext|>b' | "$difftx" tokenize --tokenizer "$tmp/ds" | grep -qw 299 && fail "special token encoded by default"
printf 'a<|endoftext|>b' | "$difftx" tokenize --tokenizer "$tmp/ds" --allow-special | grep -qw 299 || fail "--allow-special ignored"

# Bad input: clear errors, exit 1.
printf 'ok \xff bad' > "$tmp/bad.txt"
expect_error "invalid UTF-8 at byte offset 3" "$difftx" tokenize --tokenizer "$tmp/ds" < "$tmp/bad.txt"
echo "12 abc 7" > "$tmp/badids"
expect_error "'abc' at position 1 is not a token id" "$difftx" tokenize --tokenizer "$tmp/ds" --decode < "$tmp/badids"
echo "12 300" > "$tmp/badids"
expect_error "id 300 at position 1 is not a token" "$difftx" tokenize --tokenizer "$tmp/ds" --decode < "$tmp/badids"
printf 'PK\003\004\000\000binary' > "$tmp/corpus.zip.txt"
expect_error "binary file? NUL byte at byte offset 4" "$difftx" prepare --corpus "$tmp/corpus.zip.txt" --vocab-size 300 --out "$tmp/x" --quiet
: > "$tmp/empty.txt"
expect_error "empty corpus" "$difftx" prepare --corpus "$tmp/empty.txt" --vocab-size 300 --out "$tmp/x" --quiet
expect_error "exclude each other" "$difftx" prepare --corpus "$tmp/corpus" --vocab-size 300 --tokenizer r50k_base --out "$tmp/x"
expect_error "give --out DIR" "$difftx" prepare --corpus "$tmp/corpus" --vocab-size 300
expect_error "unknown option --vocab" "$difftx" prepare --corpus "$tmp/corpus" --vocab 300 --out "$tmp/x"
expect_error "no tokenizer in this directory (tokenizer.tiktoken with" "$difftx" tokenize --tokenizer "$tmp/corpus" < "$tmp/all.txt"

# The published encodings, when scripts/setup has fetched them.
data="${DIFFTX_DATA:-$2/data}"
if [ -f "$data/tokenizers/cl100k_base.tiktoken" ]; then
  [ "$(printf 'hello world' | "$difftx" tokenize --tokenizer cl100k_base)" = "15339 1917" ] || fail "cl100k_base 'hello world'"
  [ "$(echo '15339 1917' | "$difftx" tokenize --tokenizer cl100k_base --decode)" = "hello world" ] || fail "cl100k_base decode"
else
  echo "SKIPPED the cl100k_base checks: $data/tokenizers is missing (run scripts/setup)"
fi
# Whole books as documents: --max-document-bytes cuts them into passages at paragraph ends, so
# that validation (whole documents) takes a share of a single long file too.
for i in $(seq 1 200); do printf 'Paragraph %s of the one long book, with a few words in it.\n\n' "$i"; done > "$tmp/book.txt"
expect_error "needs at least 2 documents" "$difftx" prepare --corpus "$tmp/book.txt" --tokenizer "$tmp/ds" \
  --out "$tmp/book1" --quiet
"$difftx" prepare --corpus "$tmp/book.txt" --tokenizer "$tmp/ds" --max-document-bytes 1000 --out "$tmp/book2" --quiet \
  >/dev/null
grep -q '"max_document_bytes": 1000' "$tmp/book2/metadata.json" || fail "metadata lacks max_document_bytes"
grep -q '"documents": 13$' "$tmp/book2/metadata.json" || fail "12,000 bytes in passages of 1000 should be 13 documents"
expect_error "--max-document-bytes must be 0 or at least 4" "$difftx" prepare --corpus "$tmp/book.txt" \
  --tokenizer "$tmp/ds" --max-document-bytes 3 --out "$tmp/book3"
expect_error "--max-document-bytes" "$difftx" prepare --corpus "$tmp/book.txt" --tokenizer "$tmp/ds" \
  --max-document-bytes -5 --out "$tmp/book3"
expect_error "--default and --books exclude each other" "$difftx" prepare --default --books
expect_error "--books brings its own corpus" "$difftx" prepare --books --corpus "$tmp/book.txt"
echo "data_cli: all checks passed"
