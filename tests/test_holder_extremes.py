"""Hölder means at exponents whose powers leave float range: the value Decimal arithmetic gives, no warning."""

from __future__ import annotations

import math
import warnings
from decimal import Decimal, localcontext

import pytest

from streammon.metrics.holder import holder_mean


def _decimal_mean(values: list[float], p: float) -> float:
    """((1/C) Σ v^p)^(1/p) with 80 significant digits and an exponent range no float power leaves."""
    with localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = 80, 10**9, -(10**9)
        power = Decimal(p)
        mean = sum(Decimal(v) ** power for v in values) / len(values)
        return float(mean ** (1 / power))


@pytest.mark.parametrize(("values", "p"), [
    ([0.3, 0.9, 0.5], 800.0), ([0.3, 0.9, 0.5], -800.0), ([0.0, 0.5], 900.0), ([1e-200, 0.5], -3.0),
    ([0.25, 1.0], 1e6), ([0.25, 1.0], -1e6), ([2.0, 3.0, 1e-300], 400.0), ([0.1, 0.2], 0.5),
])
def test_extreme_exponents_agree_with_decimal_arithmetic(values: list[float], p: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow or underflow warning fails the test
        got = holder_mean(values, p)
    assert got == pytest.approx(_decimal_mean(values, p), rel=1e-12)


def test_exponents_beyond_any_power_reach_the_limits() -> None:
    """p → ±∞: the maximum and the minimum (Decimal itself overflows at p = 1e30)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert holder_mean([0.25, 0.5, 1.0], 1e30) == pytest.approx(1.0, rel=1e-12)
        assert holder_mean([0.25, 0.5, 1.0], -1e30) == pytest.approx(0.25, rel=1e-12)
        assert holder_mean([0.0, 0.0], 1e30) == 0.0
        assert math.isnan(holder_mean([0.5, math.nan], 1e30))
