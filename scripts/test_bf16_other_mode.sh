#!/usr/bin/env bash
# The BF16 tests once more, in the mode this machine is not in: pypto passes pl.BF16 arrays as
# ml_dtypes.bfloat16 values when ml_dtypes is installed and as their uint16 bits when it is not,
# and `make test`'s main run covers only the one it finds. Without ml_dtypes, it is installed
# for this run only (pip --target build/ml-dtypes-site, no dependencies: it uses the installed
# NumPy); with it, tests/python/hide_ml_dtypes hides it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
files=(tests/python/test_anchor_features.py tests/python/test_c_abi.py tests/python/test_call_arguments.py
       tests/python/test_call_array_sweep.py tests/python/test_cli_run_io.py tests/python/test_e2e_api.py
       tests/python/test_e2e_ops.py tests/python/test_ir_api.py tests/python/test_tile_mixed_dtype.py
       tests/python/test_tile_expr_fuzz.py)
if $PY -c "import ml_dtypes" 2>/dev/null; then
  echo "BF16 tests without ml_dtypes (hidden): pl.BF16 arrays are uint16 bits"
  extra=tests/python/hide_ml_dtypes
else
  extra=build/ml-dtypes-site
  if ! PYTHONPATH=$extra $PY -c "import ml_dtypes" 2>/dev/null; then
    $PY -m pip install -q --no-deps --target "$extra" ml_dtypes
    PYTHONPATH=$extra $PY -c "import ml_dtypes" || { echo "ml_dtypes does not import with this NumPy" >&2; exit 1; }
  fi
  echo "BF16 tests with ml_dtypes ($extra): pl.BF16 arrays are bfloat16 values"
fi
PYTHONPATH=$extra${PYTHONPATH:+:$PYTHONPATH} $PY -m pytest -q "${files[@]}"
