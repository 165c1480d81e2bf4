# pypto — the two Quick start commands are `make demo` and `make test`.
PY ?= python3
JOBS ?= 2
CPP_BUILD ?= build/cpp

.PHONY: setup setup-build setup-bench install cpp test test-cpp test-python test-tsan test-asan test-asan-smoke demo bench bench-runtime clean fuzz fuzz-programs fuzz-race fuzz-auto-deps fuzz-trace-summary fuzz-runtime-api fuzz-runtime-api-asan fuzz-chunked-operands fuzz-exprs fuzz-host

# What each job needs (scripts/setup.sh): `build` for demo/install, `test` adds GoogleTest and
# pytest, `bench` adds the runtime benchmarks' peers (oneTBB, clang/libomp).
setup-build:
	@PY=$(PY) bash scripts/setup.sh build

setup:
	@PY=$(PY) bash scripts/setup.sh test

setup-bench:
	@PY=$(PY) bash scripts/setup.sh bench

# Build and install the Python package (C++ core + extension + libpto2). Incremental:
# scikit-build-core keeps its build tree under build/.
install: setup-build
	@echo "building the pypto C++ core and libpto2 (pip install .; about 2-4 min on a fresh 2-core machine, seconds when up to date; progress on a terminal, PYPTO_QUIET=1 hides it)"
	@$(PY) python/pypto/runtime/progress.py build -- $(PY) -m pip install -v --no-build-isolation .

# Build the C++ libraries and C++ tests directly with CMake.
cpp: setup
	cmake -S . -B $(CPP_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPYPTO_BUILD_TESTS=ON >/dev/null
	cmake --build $(CPP_BUILD) -j $(JOBS)

test-cpp: cpp
	ctest --test-dir $(CPP_BUILD) --output-on-failure -j $(JOBS) --timeout 600

test-python: setup install
	$(PY) -m pytest -q tests/python
	PY=$(PY) bash scripts/test_bf16_other_mode.sh

# Every test: C++ (GoogleTest via CTest), Python (pytest) and a sanitizer smoke run.
test: test-cpp test-python test-asan-smoke

# The runtime's GoogleTest suite under ThreadSanitizer (stress sizes scaled down).
test-tsan: setup
	bash runtime/tools/run_tsan.sh $(CURDIR)/build/tsan

# Generated code and libpto2 under AddressSanitizer + UBSan (scripts/run_asan.sh; docs/running.md
# "Sanitizers"): the smoke run (a canary and two examples, about a minute) is part of `make test`;
# the full one (every example and the test files that run programs, tens of minutes) of `make fuzz`.
test-asan-smoke: setup install
	PY=$(PY) JOBS=$(JOBS) bash scripts/run_asan.sh smoke

test-asan: setup install
	PY=$(PY) JOBS=$(JOBS) bash scripts/run_asan.sh full

# The main job: compile an example program, run it on the CPU runtime, check it, trace it.
demo: install
	$(PY) examples/demo.py

bench-runtime: setup-bench
	bash benchmarks/runtime/run.sh

bench: install bench-runtime
	$(PY) benchmarks/run_all.py

# Long randomized checks (not part of `make test`). fuzz-race: the race checker against random
# MANUAL programs with one required edge removed (RACE_FUZZ_CASES programs from RACE_FUZZ_SEED).
# RACE_FUZZ_TASKS: the largest program (default 14 tasks).
RACE_FUZZ_CASES ?= 50000
RACE_FUZZ_SEED ?= 1000
RACE_FUZZ_TASKS ?= 14
fuzz: fuzz-race

fuzz-race: cpp
	PTO2_RACE_FUZZ_CASES=$(RACE_FUZZ_CASES) PTO2_RACE_FUZZ_SEED=$(RACE_FUZZ_SEED) PTO2_RACE_FUZZ_TASKS=$(RACE_FUZZ_TASKS) \
	  $(CPP_BUILD)/runtime/pto2_tests --gtest_filter='RaceChecker.RandomManualPrograms*'

# The runtime API fuzzer (runtime/tests/test_api_fuzz.cpp; docs/running.md "Fuzzing"): random
# sequences of public libpto2 calls with edge values, API_FUZZ_CASES cases from each seed of
# API_FUZZ_SEEDS on the release build, then API_FUZZ_ASAN_CASES per seed with libpto2 and the
# tests under AddressSanitizer + UBSan (build/asan-rt). `make test` runs 150 cases (CTest).
API_FUZZ_CASES ?= 50000
API_FUZZ_ASAN_CASES ?= 20000
API_FUZZ_SEEDS ?= 1 2 3
API_FUZZ_ENV = PTO2_API_FUZZ_TIMEOUT_S=60
fuzz: fuzz-runtime-api

fuzz-runtime-api: cpp
	for s in $(API_FUZZ_SEEDS); do \
	  $(API_FUZZ_ENV) PTO2_API_FUZZ_SEED=$$s PTO2_API_FUZZ_CASES=$(API_FUZZ_CASES) \
	    $(CPP_BUILD)/runtime/pto2_tests --gtest_filter='ApiFuzz.*' || exit 1; \
	done
	$(MAKE) fuzz-runtime-api-asan

fuzz-runtime-api-asan: setup
	cmake -S runtime -B build/asan-rt -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTO2_ASAN=ON >/dev/null
	cmake --build build/asan-rt -j $(JOBS) --target pto2_tests
	for s in $(API_FUZZ_SEEDS); do \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(API_FUZZ_ENV) PTO2_API_FUZZ_SEED=$$s PTO2_API_FUZZ_CASES=$(API_FUZZ_ASAN_CASES) \
	    build/asan-rt/pto2_tests --gtest_filter='ApiFuzz.*' || exit 1; \
	done

clean:
	rm -rf build

# The fuzzer (docs/running.md "Fuzzing"): 2,000 mutated example/spec programs through parse,
# codegen, build and run; fails on any outcome but "ran" or "located error". Sub-targets are
# added to `fuzz`'s prerequisites. FUZZ_SEED / FUZZ_COUNT override the defaults.
# FUZZ_ARGS: more fuzz.py flags (the default --werror: a warning in generated C++ is a finding).
FUZZ_SEED ?= 1
FUZZ_COUNT ?= 2000
FUZZ_ARGS ?= --werror
fuzz-programs: install
	$(PY) scripts/fuzz.py --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) --run-every 10 $(FUZZ_ARGS)

fuzz: fuzz-programs

# Chunked calls with the values between them (StampCallOperands): CHUNK_FUZZ_COUNT random
# straight-line programs, each built with -Werror, run and compared with its NumPy model.
CHUNK_FUZZ_COUNT ?= 100
CHUNK_FUZZ_SEED ?= 1000
fuzz-chunked-operands: install
	$(PY) scripts/fuzz_chunked_operands.py --count $(CHUNK_FUZZ_COUNT) --seed $(CHUNK_FUZZ_SEED)

fuzz: fuzz-chunked-operands

fuzz: test-asan

# AutoDeriveTaskDependencies differential fuzz (docs/auto_dependencies.md): AUTO_DEPS_FUZZ_COUNT
# random AUTO programs compiled with analyze_auto_scopes_for_deps off and on, compared and race-checked.
AUTO_DEPS_FUZZ_COUNT ?= 1000
fuzz-auto-deps: install
	$(PY) scripts/fuzz_auto_deps.py --count $(AUTO_DEPS_FUZZ_COUNT)

fuzz: fuzz-auto-deps

# The trace summary's readers (native, line, whole document) on TRACE_FUZZ_COUNT mutated traces
# (tests/python/trace_fuzz.py); any disagreement is a finding.
TRACE_FUZZ_COUNT ?= 200000
fuzz-trace-summary: install
	$(PY) scripts/fuzz_trace_summary.py --count $(TRACE_FUZZ_COUNT)

fuzz: fuzz-trace-summary

# Distributed HOST programs in-process and over MPI against NumPy (scripts/fuzz_host.py):
# HOST_FUZZ_COUNT cases from HOST_FUZZ_SEED, then the same with an injected chip failure.
HOST_FUZZ_COUNT ?= 100
HOST_FUZZ_SEED ?= 1000
fuzz-host: install
	$(PY) scripts/fuzz_host.py --count $(HOST_FUZZ_COUNT) --seed $(HOST_FUZZ_SEED)
	$(PY) scripts/fuzz_host.py --count $(HOST_FUZZ_COUNT) --seed $(HOST_FUZZ_SEED) --faults

fuzz: fuzz-host

# Generated arithmetic against Python and NumPy (scripts/fuzz_exprs.py): integer scalar
# expressions in kernels and orchestrations (INT64, and over every integer dtype), FP32 scalar
# expressions, tile-op chains, valid regions, index ops, control flow and the matmul family in kernels; EXPR_FUZZ_COUNT
# seeds of each from EXPR_FUZZ_SEED.
EXPR_FUZZ_COUNT ?= 100
EXPR_FUZZ_SEED ?= 1000
fuzz-exprs: install
	$(PY) scripts/fuzz_exprs.py --count $(EXPR_FUZZ_COUNT) --seed $(EXPR_FUZZ_SEED)

fuzz: fuzz-exprs
