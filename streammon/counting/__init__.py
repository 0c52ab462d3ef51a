"""Samples into counts: label validation and encoding, times, batches, integer confusion counts, windows.

Imports only ``streammon.metrics`` and numpy. A batch goes one way: ``labels`` (validate and
encode) → ``batch`` (codes, times) → ``blocks`` (one counting pass) → ``windows``.
"""
