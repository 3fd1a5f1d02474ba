# The README's commands: `make serve` (build the server, start it), `make test` (every test of the
# Release build, in minutes) and `make check` (make test, then the ASan+UBSan run, the stress tests
# and the Arm64 run: what CI runs). Everything else here is a helper they call, or a developer
# tool (fuzz, bench).
SHELL := /bin/bash
.PHONY: serve test check deps build build-serve build-tests build-asan test-release test-asan test-stress test-arm64 \
        test-node fuzz-gguf bench-tokenizer bench bench-quick charts clean

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
CONFIGURE  = cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

serve: build-serve
	./$(BUILD)/nanoserve serve $(ARGS)

test: deps test-release test-node
	@./scripts/test-summary.sh $(BUILD)

# Tests that need ../shared fail when it is missing, instead of being skipped.
check: export NANOSERVE_REQUIRE_SHARED = 1
check: test test-stress test-asan test-arm64

deps:
	@./scripts/install-deps.sh

# The server binary alone (make serve).
build-serve: deps
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS) --target nanoserve

# The server and every test binary (make test), without the benchmark programs.
build-tests: deps
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS) --target nanoserve_tests

# Everything: the server, the tests, the benchmark programs.
build: deps
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS)

# -O1 -g1 rather than RelWithDebInfo's -O2 -g: half the compile time under the sanitizers
# (matmul_simd.cpp 167 s -> 76 s, vocab_hf.cpp 29 s -> 14 s), and the reports keep their line numbers.
build-asan: deps
	cmake -S . -B $(BUILD_ASAN) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
	  -DNANOSERVE_SANITIZE=ON -DNANOSERVE_BENCH=OFF
	cmake --build $(BUILD_ASAN) -j $(JOBS) --target nanoserve_tests

test-release: build-tests
	./scripts/run-ctest.sh $(BUILD) -LE '^stress$$' -j $(JOBS)

# Many concurrent streams against a real server (the stress label), in the Release build.
test-stress: build-tests
	./scripts/run-ctest.sh $(BUILD) -L '^stress$$' -j $(JOBS)

# Every test, the stress label too, under the sanitizers.
test-asan: build-asan
	$(SANITIZER_ENV) ./scripts/run-ctest.sh $(BUILD_ASAN) -j $(JOBS)

# On x86-64: cross-built for Arm64 (NEON), the CPU-dependent rooms' tests under qemu-user.
test-arm64: deps
	./scripts/test-arm64.sh $(BUILD_ARM64) $(JOBS)

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

# Node tests (real client conformance) run when there are any.
test-node: build-tests
	@if [ -d tests/node ]; then $(MAKE) --no-print-directory $(NPM_STAMP) && \
	  node --test tests/node/ 2>&1 | tee $(BUILD)/node-test.log; exit $${PIPESTATUS[0]}; \
	else echo "test-node: no node tests yet"; fi

# libFuzzer on the GGUF reader (clang); corpus seeded with the golden models' headers.
fuzz-gguf: deps
	CC=clang CXX=clang++ cmake -S . -B $(BUILD_FUZZ) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DNANOSERVE_FUZZ=ON -DNANOSERVE_TESTS=OFF -DNANOSERVE_BENCH=OFF
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_gguf fuzz_gguf_seeds
	./scripts/fuzz-gguf.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

bench-tokenizer: build $(NPM_STAMP)
	./scripts/bench-tokenizer.sh $(BUILD)

# The whole suite (about 20 minutes on 2 cores), or the smaller sweep (a few minutes),
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
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_ARM64)
