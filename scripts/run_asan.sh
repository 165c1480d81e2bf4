#!/usr/bin/env bash
# Runs generated code under AddressSanitizer + UndefinedBehaviorSanitizer (docs/running.md,
# "Sanitizers"): libpto2 is built with -fsanitize=address,undefined (runtime/CMakeLists.txt,
# PTO2_ASAN), every program library is compiled with the same flags (PYPTO_CXXFLAGS, part of the
# build cache key; its own cache directory), and Python runs with the sanitizer runtimes
# preloaded (the interpreter itself is not instrumented). Any finding aborts the program, so a
# finding is a failed example or test.
#   scripts/run_asan.sh smoke   the canary + two examples (part of `make test`, about a minute)
#   scripts/run_asan.sh full    the canary + every example + the test files that run programs
#                               (`make test-asan`, part of `make fuzz`; tens of minutes)
set -euo pipefail
mode=${1:-full}
case "$mode" in smoke|full) ;; *) echo "run_asan.sh: unknown mode '$mode' (smoke, full)" >&2; exit 2 ;; esac
here="$(cd "$(dirname "$0")/.." && pwd)"
PY=${PY:-python3}
CXX=${CXX:-g++}
build="${ASAN_BUILD_DIR:-$here/build/asan}"

cmake -S "$here/runtime" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTO2_ASAN=ON \
  -DPTO2_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target pto2 >/dev/null

export PYPTO_LIBPTO2="$build/libpto2.so"
# -O1 (after pypto's -O3, so it wins): g++ took over 11 minutes on tiled_matmul's instrumented
# matmul kernel at -O3 on a loaded 2-core machine.
# float-cast-overflow is not part of GCC's `undefined`: a float -> integer conversion out of range
# (the DSL's casts saturate; a raw C++ cast would not).
export PYPTO_CXXFLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
export PYPTO_CACHE_DIR="${PYPTO_CACHE_DIR:-$here/.pypto-cache}/asan"
# Python and NumPy leak by design at exit; leaks of the runtime are the C++ tests' business.
# allocator_may_return_null: a malloc too large for the machine returns NULL, as it does without
# ASan (NumPy raises MemoryError, which pypto reports at the parameter); by default ASan aborts
# the process instead (the program fuzzer's mutant with a [16, 2**40] input, seed 887000 #1151).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LD_PRELOAD="$("$CXX" -print-file-name=libasan.so) $("$CXX" -print-file-name=libubsan.so)"
export PYPTO_QUIET=1

# The canary: an out-of-bounds write in a library built the way program libraries are must be
# caught, or the run below would prove nothing (flags lost, runtime not preloaded).
"$PY" "$here/scripts/asan_canary.py"

status=0
if [ "$mode" = smoke ]; then
  examples=("$here/examples/vector_add.py" "$here/examples/online_softmax.py")
else
  examples=("$here"/examples/*.py)
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for ex in "${examples[@]}"; do
  # Examples write their outputs (sources, traces) under the current directory.
  if (cd "$out" && "$PY" "$ex" >"$out/log" 2>&1); then
    echo "asan: ok      $(basename "$ex")"
  else
    echo "asan: FAILED  $(basename "$ex")"; tail -40 "$out/log"; status=1
  fi
done
if [ "$mode" = full ]; then
  # The test files whose programs run (spec programs, every op, argument passing, runtime checks).
  tests=(test_e2e_spec_programs test_e2e_ops test_e2e_ops_access test_e2e_ops_reference test_e2e_api
         test_kernel_memory_safety test_kernel_valid_ops test_kernel_valid_shape test_kernel_valid_mask_ops
         test_tensor_reference_ops test_tensor_reference_ops_rest test_call_arguments
         test_call_arguments_adversarial test_runtime_index_checks test_runtime_dsl_checks test_manual_e2e
         test_slice_valid_shape test_tile_mixed_dtype test_auto_deps_e2e test_host_l3_e2e
         test_scalar_expr_fuzz test_tile_expr_fuzz test_chunked_operands_fuzz)
  args=()
  for t in "${tests[@]}"; do args+=("$here/tests/python/$t.py"); done
  # --capture=sys: a sanitizer report goes to fd 2, which pytest would swallow when it aborts.
  (cd "$here" && "$PY" -m pytest -q -p no:cacheprovider --capture=sys "${args[@]}") || status=1
fi
exit $status
