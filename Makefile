# relayc: the two commands of the README.
#   make demo   builds relayc and runs it on the shipped examples
#   make test   builds everything and runs every test through CTest
# Both install the Debian packages the build needs when they are missing.

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all deps build demo test test-asan fuzz-smoke fuzz-diff bench clean

all: build

deps:
	@sh scripts/deps.sh

# The configure step needs the packages deps installs: under make -j the
# two prerequisites of build would otherwise run at the same time.
$(BUILD)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@sh examples/demo.sh $(BUILD)/relayc

test: build
	@sh scripts/deps.sh test
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	@sh scripts/deps.sh test
	cmake -S . -B $(BUILD_ASAN) -DRLY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_ARGS)
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

# Short libFuzzer runs of each target, seeded from the repository's files:
# FUZZ_SECONDS in all, shared among FUZZ_TARGETS (the parser gets three
# shares, the others one each; fuzz/README.md).
FUZZ_SECONDS ?= 120
FUZZ_TARGETS ?= parser npy params metadata onnx
fuzz-smoke:
	@sh scripts/deps.sh fuzz
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DRLY_FUZZ=ON -DRLY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_ARGS)
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	sh fuzz/smoke_all.sh $(BUILD_FUZZ) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Differential testing with new random seeds (tests/diff/difftest.py) for
# SECONDS: generated programs run in the interpreter and compiled at -O0,
# -O2 and -O3 (JOBS at a time); each failing one is shrunk and saved with
# its inputs under $(BUILD)/fuzz-diff/seed-N/. DIFF_CC=clang compiles
# with clang instead of cc.
SECONDS ?= 300
DIFF_CC ?=
fuzz-diff: build
	tests/diff/difftest.py --relayc $(BUILD)/relayc --npycmp $(BUILD)/tests/npycmp --fuzz $(SECONDS) \
	  --jobs $(JOBS) --out $(BUILD)/fuzz-diff $(if $(DIFF_CC),--cc $(DIFF_CC))

# Benchmarks (they print tables; see bench/README.md): the parser, dynamic
# programs interpreted vs compiled, and building a model with 50 MB of weights.
bench: build
	sh bench/run.sh $(BUILD)/relayc
	sh bench/run_dynamic.sh $(BUILD)/relayc
	sh bench/run_weights.sh $(BUILD)/relayc

# The model benchmark: relayc against PyTorch, ONNX Runtime and OpenBLAS on
# an MLP, an LSTM, a Tree-LSTM and a dense (installs the peers when they are
# missing; bench/README.md).
.PHONY: bench-models
bench-models: build
	sh bench/run_models.sh $(BUILD)/relayc

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
