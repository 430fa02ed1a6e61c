# Thin wrapper around CMake: make, make test, make demo, make install, make clean.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo install clean

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

install: build
	@cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
