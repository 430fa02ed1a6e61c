# Thin wrapper around CMake: make, make test, make demo, make bench, make fuzz, make install,
# make clean.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo bench fuzz install clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@test -f $(BUILD)/build.ninja || cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j 1 $(CTEST_ARGS)

demo: build
	@scripts/demo.sh $(BUILD)

# The benchmark (root; `make test` runs only a smoke run of it): one table of ratios measured
# in the same run.
# BENCH_ARGS=--quick for a smoke run; see tests/bench/README.md.
bench: build
	@$(BUILD)/bin/xtrace_bench $(BENCH_ARGS)

# libFuzzer harnesses with ASan and UBSan (tests/fuzz/README.md), in their own clang build:
# each runs FUZZ_SECONDS. `make test` replays their corpus (and mutations of it) instead.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= log_reader convert record_decoder control_codec option_parser itt_ring

fuzz: deps
	@test -f $(FUZZ_BUILD)/build.ninja || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja \
	  -DXTRACE_FUZZ=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target xtrace_fuzzers
	@tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

install: build
	@cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
