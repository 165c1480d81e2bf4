#!/usr/bin/env bash
# One-time machine set-up for building and testing pypto: system packages (GoogleTest,
# oneTBB and clang/libomp for the runtime benchmarks) and the Python build/test tools.
# Idempotent and quick when everything is already there.
set -euo pipefail
need_apt=()
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev googletest)
[ -f /usr/include/tbb/tbb.h ] || [ -f /usr/include/oneapi/tbb.h ] || need_apt+=(libtbb-dev)
command -v clang++ >/dev/null || need_apt+=(clang)
ls /usr/lib/llvm-*/include/omp.h >/dev/null 2>&1 || ls /usr/lib/llvm-*/lib/clang/*/include/omp.h >/dev/null 2>&1 || need_apt+=(libomp-dev)
command -v ninja >/dev/null || need_apt+=(ninja-build)
# Open MPI: the L3 runtime's MPI transport (libpto2_mpi) and its tests (optional part of the build).
command -v mpirun >/dev/null && [ -f /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h -o -f /usr/include/mpi.h ] \
  || need_apt+=(openmpi-bin libopenmpi-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
PY=${PY:-python3}
$PY - <<'PYEOF' || $PY -m pip install -q "nanobind>=2.0" "scikit-build-core>=0.10" "numpy>=1.24" "pytest>=7" cmake ninja
import importlib, sys
for m in ("nanobind", "scikit_build_core", "numpy", "pytest"):
    importlib.import_module(m)
PYEOF
# Optional: the CPU build of PyTorch, so the torch-tensor path of CompiledProgram is tested.
# (This machine kind keeps that wheel on disk; where it cannot be had, the torch test skips.)
$PY -c "import torch" 2>/dev/null || $PY -m pip install -q torch==2.13.0 2>/dev/null \
  || echo "setup: torch not installed; the torch interop test will be skipped"
