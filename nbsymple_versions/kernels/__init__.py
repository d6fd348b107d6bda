"""Compute kernels, one module per device kind: `cpu` (numba), `cuda` (numba-cuda)."""
