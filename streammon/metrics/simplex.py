"""Least squares on the probability simplex, exactly (a primal active-set method, numpy only).

``simplex_least_squares(H, g)`` returns the minimiser of ``πᵀHπ − 2gᵀπ`` subject to
``π ≥ 0`` and ``Σπ = 1`` for a symmetric positive semi-definite ``H``, together with
the set of coordinates held at 0. For ``H = AᵀWA`` and ``g = AᵀWb`` this is the
weighted projection of ``b`` onto ``{Aπ : π in the simplex}``.

The method (Lawson–Hanson's active set, with the equality constraint carried in
each KKT solve) ends after finitely many steps with the exact solution up to
rounding: the coordinates it reports as 0 are exactly 0, which the label-shift
test needs (the number of active constraints is its degrees of freedom). When
``H`` is (nearly) singular the minimiser is not unique; a tiny ridge towards the
uniform mix (relative 1e-10) then picks one; a coordinate whose negative multiplier
the next solve contradicts (rounding, when ``H`` is nearly singular) is not tried again.

``face_codimension(A, W, b, π)`` is what the label-shift test needs from the
projection ``y = Aπ``: the dimension of the plane ``Σx = Σb`` minus that of the
face of ``{Aπ}`` that the residual ``r = b − y`` exposes — the vertices ``Ae_j``
with multiplier ``(y − Ae_j)ᵀWr = 0``. Both ``y`` and ``r`` are unique even when
``π`` is not (``A`` singular, repeated columns), so unlike counting ``π``'s zeros
it does not depend on the order of the coordinates; for an invertible ``A`` and a
projection off any tie it equals the number of zeros of ``π``.

>>> pi, active = simplex_least_squares(np.eye(3), np.array([0.7, 0.5, -0.2]))
>>> pi.round(12).tolist(), active.tolist()
([0.6, 0.4, 0.0], [False, False, True])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from streammon.metrics.confusion import FloatArray

BoolArray = npt.NDArray[np.bool_]
RIDGE = 1e-10
_TOLERANCE = 1e-12
_FACE_TOLERANCE = 1e-9


def simplex_least_squares(h: FloatArray, g: FloatArray) -> tuple[FloatArray, BoolArray]:
    """Minimise ``πᵀHπ − 2gᵀπ`` over the simplex; return ``(π, active)`` with ``active[j]`` when ``π_j = 0``.

    >>> simplex_least_squares(np.eye(2), np.array([2.0, 0.0]))[0].tolist()
    [1.0, 0.0]
    """
    # (Mutation testing: the active-set loop below decides only the path to the optimum, not the optimum — each
    # pass solves the equality problem afresh and stops only when the KKT conditions hold, so a mutated start,
    # step, blocking tolerance, tie rule or iteration cap (20k + 20 passes; a few are used) reaches the same π.
    # Its surviving mutants are of that kind; the tests judge the result, not the path: against scipy's SLSQP
    # (100 random problems), the KKT conditions (nearly singular problems), ties split evenly, and every
    # estimate test. The tolerances of ``face_codimension`` likewise only matter within 1e-9 of a face.)
    k = g.shape[0]
    scale = max(float(np.trace(h)) / k, np.finfo(float).tiny)
    if np.linalg.cond(h) > 1 / RIDGE:  # not unique: break ties towards the uniform mix
        h = h + RIDGE * scale * np.eye(k)
        g = g + RIDGE * scale / k
    free = np.ones(k, dtype=bool)
    pi = np.full(k, 1.0 / k)
    tol = _TOLERANCE * scale
    refused = np.zeros(k, dtype=bool)  # freed on a negative multiplier, then blocked at once: rounding
    entered = -1
    for _ in range(20 * k + 20):
        idx = np.flatnonzero(free)
        x, lam = _equality_solve(h, g, idx)
        if np.all(x[idx] > 0):
            pi = x
            multipliers = h @ pi - g + lam  # ≥ 0 at the optimum for every coordinate held at 0
            fixed = np.flatnonzero(~free & ~refused)
            if fixed.size == 0 or multipliers[fixed].min() >= -tol:
                break
            entered = int(fixed[np.argmin(multipliers[fixed])])
            free[entered] = True
            continue
        step = x - pi
        shrinking = free & (step < 0)
        if entered >= 0 and x[entered] <= 0:  # the multiplier said grow, the solve says shrink: a tie
            refused[entered] = True
            free[entered] = False
            entered = -1
            continue
        entered = -1
        if not shrinking.any():  # x ≤ 0 only where π is already 0: rounding at a degenerate vertex
            free &= x > 0
            continue
        ratios = pi[shrinking] / -step[shrinking]
        t = min(1.0, float(ratios.min()))
        pi = pi + t * step
        blocking = np.flatnonzero(shrinking)[ratios <= t * (1 + 1e-12)]
        free[blocking] = False
        pi[~free] = 0.0
        if not free.any():  # cannot happen with a feasible start; keep the best vertex if rounding says so
            # (Mutation testing: not mutated — unreachable from the feasible start, so every mutant is equivalent.)
            free[np.argmin(np.diag(h) - 2 * g)] = True  # pragma: no mutate
    pi = np.where(free, np.maximum(pi, 0.0), 0.0)
    pi = pi / pi.sum()
    return pi, ~free


def face_codimension(a: FloatArray, w: FloatArray, b: FloatArray, pi: FloatArray) -> int:
    """Codimension, within the plane of ``b``, of the face of ``{Aπ : π in the simplex}`` that ``b − Aπ`` exposes.

    >>> face_codimension(np.eye(3), np.eye(3), np.array([0.7, 0.5, -0.2]), np.array([0.6, 0.4, 0.0]))
    1
    """
    k = a.shape[0]
    y = a @ pi
    wr = w @ (b - y)
    spread = a - y[:, None]  # Ae_j − y
    multipliers = -(spread.T @ wr)
    norms = np.sqrt(np.maximum(np.einsum("ij,ik,kj->j", spread, w, spread), 0.0))
    bound = float(np.sqrt(max(float((b - y) @ wr), 0.0)) * norms.max())  # Cauchy–Schwarz bound on |multiplier|
    face = np.abs(multipliers) <= _FACE_TOLERANCE * bound
    singular = np.linalg.svd(spread[:, face], compute_uv=False) if face.any() else np.zeros(0)
    dimension = int(np.sum(singular > _FACE_TOLERANCE * max(1.0, float(singular.max(initial=0.0)))))
    return int(k - 1 - dimension)


def _equality_solve(h: FloatArray, g: FloatArray, idx: npt.NDArray[np.intp]) -> tuple[FloatArray, float]:
    """Minimiser over ``{π : π_j = 0 off idx, Σπ = 1}`` and its multiplier (the KKT system)."""
    m = idx.size
    kkt = np.zeros((m + 1, m + 1))
    kkt[:m, :m] = h[np.ix_(idx, idx)]
    kkt[:m, m] = 1.0
    kkt[m, :m] = 1.0
    rhs = np.concatenate([g[idx], [1.0]])
    try:
        solution = np.linalg.solve(kkt, rhs)
    except np.linalg.LinAlgError:  # only if the ridge was lost to rounding
        # (Mutation testing: not mutated — no problem the tests can build reaches it, the ridge keeps KKT regular.)
        solution = np.linalg.lstsq(kkt, rhs, rcond=None)[0]  # pragma: no mutate
    x = np.zeros(g.shape[0])
    x[idx] = solution[:m]
    return x, float(solution[m])

