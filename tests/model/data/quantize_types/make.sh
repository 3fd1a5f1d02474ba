#!/bin/sh
# Writes the listings of this folder: which type llama-quantize (--dry-run, no imatrix) gives each
# tensor of three synthesized F16 models. Run from the repository root with a built nanoserve and
# llama.cpp's llama-quantize: tests/model/data/quantize_types/make.sh BUILD/nanoserve LLAMA_QUANTIZE
set -eu
nanoserve=$1 quantize=$2 out=tests/model/data/quantize_types tmp=$(mktemp -d)
synth() { name=$1; shift; "$nanoserve" synth --type F16 --out "$tmp/$name.gguf" "$@" >/dev/null; }
synth gqa4 --arch qwen3 --dims layers=16,heads=8,kv_heads=2,embd=256,ff=512
synth odd --arch qwen3 --dims layers=8,embd=320,heads=5,kv_heads=5,head_dim=64,ff=640,tied=0
synth moe --preset qwen3-30b-a3b --dims layers=4,embd=256,vocab=1024,heads=8,kv_heads=2,head_dim=64
list() {  # model, file type, header
  { echo "# $3"
    "$quantize" --dry-run "$tmp/$1.gguf" "$2" 2>&1 | awk '
      /^\[ *[0-9]+\/ *[0-9]+\]/ {
        line = $0; sub(/^\[[^]]*\] */, "", line); split(line, f, / +/); name = f[1]; sub(/^.*- \[ */, ""); split($0, d, /[], ]+/);
        dims = d[1] "," d[2]; if (d[3] > 1) dims = dims "," d[3];
        type = $0; if (type ~ /\(/) { sub(/^.*\(/, "", type); sub(/\).*$/, "", type) } else { sub(/^.*type = */, "", type); sub(/,.*$/, "", type) }
        print name, dims, toupper(type) }'
  } > "$out/$1-$2.txt"
}
list gqa4 IQ4_NL "layers=16 gqa=4 tied=1 experts=0"
list gqa4 IQ4_XS "layers=16 gqa=4 tied=1 experts=0"
list odd IQ4_NL "layers=8 gqa=1 tied=0 experts=0"
list odd IQ4_XS "layers=8 gqa=1 tied=0 experts=0"
list moe IQ4_XS "layers=4 gqa=4 tied=0 experts=128"
list moe MXFP4_MOE "layers=4 gqa=4 tied=0 experts=128"
rm -r "$tmp"
