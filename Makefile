# The two set-up commands of the README: `make serve` and `make test`. Everything else
# here is a helper they call, or a developer tool (fuzz, bench).
.PHONY: serve test deps build build-asan test-release test-asan test-arm64 test-node fuzz-gguf bench-tokenizer bench \
        bench-quick charts clean

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_ARM64 ?= build-arm64
BUILD_FUZZ ?= build-fuzz
JOBS       ?= $(shell nproc)
FUZZ_SECONDS ?= 60
NPM_STAMP  := node_modules/.package-lock.json
# The benchmark suite (never part of `make test`): rows, charts and the README's results.
SUITE_DIR  ?= results/suite
TOKENIZERS ?= ../shared/tokenizers
BENCH_ARGS ?=

serve: build
	./$(BUILD)/nanoserve serve $(ARGS)

test: deps test-release test-asan test-arm64 test-node

deps:
	@./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(BUILD_ASAN) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNANOSERVE_SANITIZE=ON -DNANOSERVE_BENCH=OFF
	cmake --build $(BUILD_ASAN) -j $(JOBS)

test-release: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(BUILD_ASAN) --output-on-failure -j $(JOBS)

# On x86-64: cross-built for Arm64 (NEON), the CPU-dependent rooms' tests under qemu-user.
test-arm64: deps
	./scripts/test-arm64.sh $(BUILD_ARM64) $(JOBS)

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

# Node tests (real client conformance) run when there are any.
test-node: build
	@if [ -d tests/node ]; then $(MAKE) --no-print-directory $(NPM_STAMP) && node --test tests/node/; \
	else echo "test-node: no node tests yet"; fi

# libFuzzer on the GGUF reader (clang); corpus seeded with the golden models' headers.
fuzz-gguf: deps
	CC=clang CXX=clang++ cmake -S . -B $(BUILD_FUZZ) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DNANOSERVE_FUZZ=ON -DNANOSERVE_TESTS=OFF -DNANOSERVE_BENCH=OFF
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_gguf fuzz_gguf_seeds
	./scripts/fuzz-gguf.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

bench-tokenizer: build $(NPM_STAMP)
	./scripts/bench-tokenizer.sh $(BUILD)

# The whole suite (an hour or more on 2 cores), or the smaller sweep (about 15 minutes),
# then `charts`. Synthesized models are cached under ~/.cache/nanoserve/bench.
bench: build
	./$(BUILD)/nanoserve bench suite --tokenizers $(TOKENIZERS) --out $(SUITE_DIR) $(BENCH_ARGS)
	$(MAKE) --no-print-directory charts

bench-quick: build
	./$(BUILD)/nanoserve bench suite --quick --tokenizers $(TOKENIZERS) --out $(SUITE_DIR) $(BENCH_ARGS)
	$(MAKE) --no-print-directory charts

# PNG charts into docs/, $(SUITE_DIR)/summary.md, and the tables spliced into README.md.
charts: build
	./$(BUILD)/nanoserve bench charts --in $(SUITE_DIR) --docs docs --readme README.md

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
