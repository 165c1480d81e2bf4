#!/usr/bin/env bash
# Builds libpto2 and its tests with ThreadSanitizer and runs the suite.
#   runtime/tools/run_tsan.sh [build-dir] [gtest filter]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/../build-rt-tsan}"
# Not the API fuzzer (ApiFuzz): its random programs include tasks left unordered on purpose
# (MANUAL scopes without dependencies, untracked writes), the programs' races, not the
# runtime's, which TSan reports all the same; it runs in the release and ASan builds.
filter="${2:-*-ApiFuzz.*}"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTO2_TSAN=ON >/dev/null
cmake --build "$build" -j2 --target pto2_tests
# The stress sweeps are scaled down under TSan (PTO2_TEST_SCALE) to fit CI time.
export PTO2_TEST_SCALE="${PTO2_TEST_SCALE:-10}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
"$build/pto2_tests" --gtest_filter="$filter"
