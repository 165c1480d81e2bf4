#!/usr/bin/env bash
# Machine set-up for pypto, by what you are about to do. Idempotent and quick when everything is
# already there.
#   scripts/setup.sh build   what `make demo` / `make install` need: a C++ compiler, CMake, Ninja,
#                            and nanobind, scikit-build-core, numpy from PyPI (nothing else)
#   scripts/setup.sh test    build + GoogleTest (C++ tests) and pytest
#   scripts/setup.sh bench   test + oneTBB, clang/libomp (the runtime benchmarks' peers), valgrind
#                            (codegen_bench's instruction counts)
# Torch is never installed here: the torch interop tests run where torch is present
# (.ci/run installs the CPU build explicitly).
set -euo pipefail
level=${1:-test}
case "$level" in build|test|bench) ;; *) echo "setup.sh: unknown level '$level' (build, test, bench)" >&2; exit 2 ;; esac
PY=${PY:-python3}

need_apt=()
command -v g++ >/dev/null || need_apt+=(g++)
command -v ninja >/dev/null || need_apt+=(ninja-build)
if [ "$level" != build ]; then
  [ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev googletest)
fi
if [ "$level" = bench ]; then
  [ -f /usr/include/tbb/tbb.h ] || [ -f /usr/include/oneapi/tbb.h ] || need_apt+=(libtbb-dev)
  command -v clang++ >/dev/null || need_apt+=(clang)
  ls /usr/lib/llvm-*/include/omp.h >/dev/null 2>&1 || ls /usr/lib/llvm-*/lib/clang/*/include/omp.h >/dev/null 2>&1 \
    || need_apt+=(libomp-dev)
  command -v valgrind >/dev/null || need_apt+=(valgrind)   # codegen_bench --instructions (callgrind)
fi
if [ "$level" != build ]; then
  # Open MPI: the L3 runtime's MPI transport (libpto2_mpi) and its tests (an optional part of the build).
  command -v mpirun >/dev/null && [ -f /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h -o -f /usr/include/mpi.h ] \
    || need_apt+=(openmpi-bin libopenmpi-dev)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} (apt)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

py_need=("nanobind>=2.0" "scikit-build-core>=0.10" "numpy>=1.24" cmake ninja)
py_mods="nanobind scikit_build_core numpy"
if [ "$level" != build ]; then py_need+=("pytest>=7"); py_mods="$py_mods pytest"; fi
if ! $PY -c "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]" $py_mods 2>/dev/null; then
  echo "setup: installing ${py_need[*]} (pip)"
  $PY -m pip install -q "${py_need[@]}"
fi
