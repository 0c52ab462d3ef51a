"""Degradation detection: per-class sequential tests on the correctness stream (class-conditional only)."""
