"""The asv benchmark suite of nbsymple-versions (see docs/tracking_performance.md)."""
