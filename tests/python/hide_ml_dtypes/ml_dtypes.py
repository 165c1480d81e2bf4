"""Hides an installed ml_dtypes (scripts/test_bf16_other_mode.sh puts this directory first on
PYTHONPATH): pypto then carries pl.BF16 arrays as uint16 bits, as on a machine without it."""
raise ImportError("ml_dtypes hidden by tests/python/hide_ml_dtypes (the BF16 tests' other mode)")
