# Thin wrapper around CMake: make, make test, make demo, make bench, make install, make clean.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo bench install clean

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

install: build
	@cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
