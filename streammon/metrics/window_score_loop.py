"""The compiled loop of ``streammon.metrics.window_scores``: all five score metrics of one window's tally, at every
mix asked, in one call (pure).

A report reads the five metrics of each window at two mixes. Done with numpy, that is some forty small array
operations a window (~5 µs each, whatever the size), more than the arithmetic itself at K = 2; at K = 10 the
bins are K × K × 2,048 cells. This loop reads each histogram cell once (twice for the bins a column holds
samples in, while they are in cache), and makes every pair's AUC numerator, every class's average precision
at every mix, the Brier score, the log loss, the ECE and — binary — DeLong's variance of the AUC, with no
array made per metric. Only the average precisions' running sums are sequential, and they run over the bins the
class holds samples in; every other pass is written for the compiler to vectorise: a pair's AUC numerator is a
dot product of the other class's bins with the ranks of the column's own class (``_ranks``), not a running sum,
and the inner loops run over slices from 0 (``_add_scaled``, ``_tail``: written over index ranges of whole
arrays, the same loops ran 5x slower). A K = 10 window of 60,000 samples, in cache: 0.24 ms before, 0.055 ms
(int16 counts) to 0.067 ms (int64). The counts may be any integer type (a window's snapshot keeps the narrowest
that holds its samples); each type is a compiled specialisation of its own — with numba's disk cache a one-time
load, without one (``streammon.metrics.jitting``) ~3 s of compiling the first time a snapshot takes that type
(int32: a cumulative window past 32,767 samples).

Exactness: the AUC numerators are sums of products of integer counts (in int64 while the two classes' counts
multiply to less than 2⁶¹, else in float64); the average precisions add the same terms in the same order as
``window_scores``'s first compiled loop did (descending bins, the negatives summed over classes in class order);
the means over classes and pairs are plain sums of at most K(K − 1)/2 terms (``math.fsum`` before: a difference
of a few ulps).
``tests/test_score_report.py`` checks every value against the per-metric functions (each checked against
scikit-learn) to 1e-12.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammon.metrics.jitting import compiled, count_widths

ROC_AUC, AVERAGE_PRECISION, BRIER, LOG_LOSS, ECE = range(5)  # the columns of the output (``window_scores.NAMES``)
_SUM, _SUM_SQ, _SUM_LOG, _SUM_LOG1M = range(4)  # score_bins.SUMS
_COUNT, _CORRECT, _CONFIDENCE = range(3)  # score_bins.TOP
DIRECT_TERMS = 4  # a bin's positives summed term by term up to this many (``random_order_share``), else in closed form
HARMONIC_TERMS = 64  # ``_harmonic`` sums up to this many terms one by one


def jit(function: Any) -> Any:
    """A loop of this module compiled (``streammon.metrics.jitting``; this module is imported on first use). The
    loops take their arrays positionally (PLR0917): numba compiles no keyword-only parameters."""
    return compiled(function, error_model="numpy")


@jit
def _harmonic(x: float, count: int) -> float:  # pragma: no cover - compiled
    """``Σ_{j=1..count} 1/(x + j)`` for ``x >= 0``. Far from 0 (the middle term's ``x + (count + 1)/2`` at least
    50·count), the expansion about the middle term: with offsets ``d`` of mean 0, ``Σ 1/(μ + d) = (count/μ)(1 +
    E[d²]/μ² + E[d⁴]/μ⁴ + …)``, ``E[d²] = (count² − 1)/12``, ``E[d⁴] = (count² − 1)(3count² − 7)/240``. Else
    term by term up to ``HARMONIC_TERMS`` terms, beyond as the
    digamma difference ``ψ(x + count + 1) − ψ(x + 1)`` — the first terms while ``x + 1 < 20``, then the
    asymptotic series of the difference, the leading logarithm as ``log1p`` so that a difference of two large ψ
    keeps its digits. Relative error against a 40-digit digamma difference: at most 1.5e-13 far from 0, 6e-13
    in the asymptotic series (its worst where it starts, ``x + j + 1`` = 20, with few terms), 1e-15 term by
    term."""
    centre = x + 0.5 * (count + 1.0)
    if centre >= 50.0 * count:  # far from 0: the expansion about the middle term, its next term ~1.4e-13 of it
        inv = 1.0 / centre
        v = inv * inv
        m2 = count * count - 1.0
        return count * inv * (1.0 + v * (m2 * (1.0 / 12.0) + v * m2 * (3.0 * count * count - 7.0) * (1.0 / 240.0)))
    total = 0.0
    if count <= HARMONIC_TERMS and x + 1.0 < 20.0:
        for j in range(1, count + 1):
            total += 1.0 / (x + j)
        return total
    j = 0
    while j < count and x + j + 1.0 < 20.0:
        j += 1
        total += 1.0 / (x + j)
    if j == count:
        return total
    y0 = x + j + 1.0
    y1 = x + count + 1.0
    u0 = 1.0 / (y0 * y0)
    u1 = 1.0 / (y1 * y1)
    series = (0.5 / y0 - 0.5 / y1) + (u0 - u1) / 12.0 - (u0 * u0 - u1 * u1) / 120.0 \
        + (u0 * u0 * u0 - u1 * u1 * u1) / 252.0
    return total + math.log1p((count - j) / y0) + series


@jit
def random_order_share(above_pos: float, above: float, count: int, weight: float,
                       negatives: float) -> float:  # pragma: no cover - compiled
    """A bin's term of the average precision's numerator ``Σ w·precision`` when its ``count`` positives (each
    weighing ``weight``) and its negatives (weighing ``negatives`` in all) come in random order (the bin holds
    distinct scores): ``above_pos`` and ``above`` are the positive and the total
    weight ranked above the bin. The i-th positive of the bin has, in expectation, ``i·Q/(P + 1)`` of the
    bin's negative weight ahead of it (P positives, Q negatives in random order: each negative falls in any of
    the P + 1 gaps between the positives alike), so its precision is taken as that count's,
    ``(T + w·i)/(D + c·i)``, ``c = w + Q/(P + 1)``, and the bin's term is
    ``w·Σ_i (T + w·i)/(D + c·i) = w·(P·w/c + (T − w·D/c)/c · Σ_i 1/(D/c + i))`` (``_harmonic``). Not the
    expected precision (docs/benchmarks: it moved the errors by at most 1.2e-4), nor Davis & Goadrich 2006's
    interpolation between the bin's edges, which puts ``i·Q/P`` ahead (the last positive behind every negative)
    and read 4× further off (``examples/bench_ap_crowded.py --quick``, spread 0.3: mean error 1.8e-4 → 7.4e-4)."""
    inv_c = (count + 1.0) / (weight * (count + 1.0) + negatives)  # 1/c: one division (a share costs two)
    # term by term also where D/c overflows (a weight near the smallest float, no negative in the bin): the
    # closed form would read inf·0 or drop the harmonic sum
    if count <= DIRECT_TERMS or not above * inv_c < math.inf:
        c = weight + negatives / (count + 1.0)
        total = 0.0
        for i in range(1, count + 1):
            total += (above_pos + weight * i) / (above + c * i)
        return weight * total
    share: float = weight * inv_c * (count * weight + (above_pos - weight * above * inv_c) * _harmonic(above * inv_c,
                                                                                                         count))
    return share


@jit
def random_order_shares(above_pos: Any, above: Any, counts: Any, weight: float, negatives: Any,  # noqa: PLR0917
                        out: Any) -> None:  # pragma: no cover - compiled
    """``random_order_share`` of each bin of the arrays, into ``out`` (``score_ranking``'s per-metric path)."""
    for b in range(out.shape[0]):
        out[b] = random_order_share(above_pos[b], above[b], int(counts[b]), weight, negatives[b])


@jit
def _weights(hist: Any, mixes: Any, as_read: Any, w: Any, defined: Any, counts: Any) -> None:  # noqa: PLR0917
    """Each class's sample count into ``counts`` and, per mix row v, each class's weight into ``w[v]`` (1 as
    read; ``π_c·n/n_c``, 0 for a class the mix lacks, NaN for one the mix needs but the window lacks) and whether
    the row reads anything (``defined[v]``: every weight finite, some weighted sample). ``hist``: column 0's
    bins over its span."""
    k = hist.shape[0]
    n = 0.0
    for c in range(k):
        counts[c] = _tail(hist[c])
        n += counts[c]
    for v in range(mixes.shape[0]):
        ok = True
        mass = 0.0
        for c in range(k):
            if as_read[v]:
                w[v, c] = 1.0
            elif counts[c] > 0:
                w[v, c] = mixes[v, c] * n / counts[c]
            elif mixes[v, c] > 0:
                w[v, c] = math.nan
                ok = False
            else:
                w[v, c] = 0.0
            mass += w[v, c] * counts[c]
        defined[v] = ok and mass > 0


@jit
def _calibration(sums: Any, top: Any, w: Any, counts: Any, v: int, column: int, positive: int,  # noqa: PLR0917
                 binary: bool, out: Any) -> None:
    """Brier score, log loss and ECE of mix row v from the exact sums and the confidence bins."""
    k = counts.shape[0]
    total = 0.0
    squared = 0.0
    logs = 0.0
    for c in range(k):
        total += w[v, c] * counts[c]
        if binary:
            sq = sums[c, column, _SUM_SQ]
            if c == positive:
                sq += counts[c] - 2.0 * sums[c, column, _SUM]
                lg = sums[c, column, _SUM_LOG]
            else:
                lg = sums[c, column, _SUM_LOG1M]
        else:
            sq = 0.0
            for col in range(sums.shape[1]):
                sq += sums[c, col, _SUM_SQ]
            sq += counts[c] - 2.0 * sums[c, c, _SUM]
            lg = sums[c, c, _SUM_LOG]
        squared += w[v, c] * sq
        logs += w[v, c] * lg
    gaps = 0.0
    for b in range(top.shape[1]):
        gap = 0.0
        for c in range(k):
            gap += w[v, c] * (top[c, b, _CORRECT] - top[c, b, _CONFIDENCE])
        gaps += abs(gap)
    out[v, BRIER] = squared / total
    out[v, LOG_LOSS] = -logs / total
    out[v, ECE] = gaps / total


@jit
def _within(shares: Any, lo: int, hi: int, mine: int, other: int) -> float:  # pragma: no cover - compiled
    """Within one split bin (values ``lo … hi − 1`` of ``shares`` (K, M), ascending): the share of its (class
    ``mine``, class ``other``) pairs where ``mine``'s value is higher, ties ½ — ``Σ_m s_mine[m]·(S_other[< m] + ½
    s_other[m])`` (``bin_values``)."""
    below = 0.0
    total = 0.0
    for m in range(lo, hi):
        total += shares[mine, m] * (below + 0.5 * shares[other, m])
        below += shares[other, m]
    return total


@jit
def _binary(hist: Any, distinct: Any, within: bool, w: Any, defined: Any,  # noqa: PLR0917
            counts: Any, positive: int, out: Any, delong: Any, starts: Any, shares: Any, base: int,
            split: bool) -> None:
    """ROC AUC (the same at every mix: the weights cancel), each mix's average precision and, into ``delong[0]``,
    DeLong's variance of the AUC as read (NaN with fewer than 2 samples of a class). ``hist`` (K, bins): the score
    column's bins over its span; ``distinct`` (bins,): where ``within``, the bins whose samples are read in random
    order (``random_order_share``), not tied. ``split``: the bins ``g = base + b`` with values in ``starts``
    (BINS + 1,) are read over them, each class's count spread by its ``shares`` (K, M) (``bin_values``)."""
    bins = hist.shape[1]
    negative = 1 - positive
    npos, nneg = counts[positive], counts[negative]
    below = 0.0
    numer = 0.0
    for b in range(bins):
        p, q = hist[positive, b], hist[negative, b]
        if p:
            numer += p * (below + 0.5 * q)
            if split and q and starts[base + b + 1] > starts[base + b]:
                numer += p * q * (_within(shares, starts[base + b], starts[base + b + 1], positive, negative) - 0.5)
        below += q
    auc = numer / (npos * nneg) if npos > 0 and nneg > 0 else math.nan
    for v in range(out.shape[0]):
        if not defined[v]:
            continue
        out[v, ROC_AUC] = auc
        wp, wn = w[v, positive], w[v, negative]
        tp = 0.0
        fp = 0.0
        acc = 0.0
        for b in range(bins - 1, -1, -1):
            p = wp * hist[positive, b]
            q = wn * hist[negative, b]
            if p > 0.0 and split and starts[base + b + 1] > starts[base + b]:  # its values, highest first
                for m in range(starts[base + b + 1] - 1, starts[base + b] - 1, -1):
                    pm = p * shares[positive, m]
                    tp += pm
                    fp += q * shares[negative, m]
                    if pm > 0.0:
                        acc += pm * tp / (tp + fp)
                continue
            mixed = within and distinct[b] and (q > 0.0 or hist[positive, b] > 1)  # else the tied value is its own
            if p > 0.0 and mixed:
                acc += random_order_share(tp, tp + fp, int(hist[positive, b]), wp, q)
            tp += p
            fp += q
            if p > 0.0 and not mixed:
                acc += p * tp / (tp + fp)
        # each term is at most its bin's positive weight, so acc <= tp but for rounding (an ulp over 1 seen)
        out[v, AVERAGE_PRECISION] = min(acc / tp, 1.0) if tp > 0.0 else math.nan
    delong[0] = _delong(hist, npos, nneg, positive, auc, starts, shares, base, split)


@jit
def _delong(hist: Any, npos: float, nneg: float, positive: int, auc: float, starts: Any,  # noqa: PLR0917
            shares: Any, base: int, split: bool) -> float:  # pragma: no cover - compiled
    """DeLong's variance of the binary AUC ``auc`` (``_binary``'s arguments): each positive's placement among the
    negatives and each negative's among the positives, ties ½, bin by bin — a split bin value by value. NaN with
    fewer than 2 samples of a class."""
    if npos < 2 or nneg < 2:
        return math.nan
    negative = 1 - positive
    seen_neg = 0.0
    seen_pos = 0.0
    spread_pos = 0.0
    spread_neg = 0.0
    for b in range(hist.shape[1]):
        p, q = hist[positive, b], hist[negative, b]
        if not (p or q):
            continue
        lo, hi = (starts[base + b], starts[base + b + 1]) if split and p and q else (0, 0)
        for m in range(lo, max(hi, lo + 1)):  # a split bin value by value, any other bin once
            pm = p * shares[positive, m] if hi > lo else p
            qm = q * shares[negative, m] if hi > lo else q
            seen_neg += qm
            seen_pos += pm
            v10 = (seen_neg - 0.5 * qm) / nneg  # a positive's share of negatives below (ties ½)
            v01 = (npos - seen_pos + 0.5 * pm) / npos  # a negative's share of positives above (ties ½)
            spread_pos += pm * (v10 - auc) ** 2
            spread_neg += qm * (v01 - auc) ** 2
    variance: float = spread_pos / (npos - 1) / npos + spread_neg / (nneg - 1) / nneg
    return variance


@jit
def _ranks(mine: Any, g: Any) -> None:
    """``g[b] = 2·Σ_{b' > b} mine[b'] + mine[b]``: twice the samples of one class a sample in bin b ranks below,
    a tie counting ½ (one cumulative pass, from the top bin down; exact integers)."""
    above = 0
    for b in range(mine.shape[0] - 1, -1, -1):
        h = mine[b]
        g[b] = 2 * above + h
        above += h


@jit
def _pair_numerator(other: Any, g: Any, exact: bool) -> float:
    """``½ Σ_b other[b]·g[b]`` (``g`` from ``_ranks`` of the other class's bins): the pairs whose sample of that
    class scores above the sample of this one, ties ½ — a dot product, with no running sum to wait for, so the
    compiler vectorises it. In integers where that cannot overflow (``exact``: the product of the two classes'
    counts below 2⁶¹), else in float64."""
    if exact:
        acc = 0
        for b in range(other.shape[0]):
            acc += other[b] * g[b]
        return acc * 0.5
    accf = 0.0
    for b in range(other.shape[0]):
        accf += other[b] * (0.5 * g[b])
    return accf


@jit
def _macro(w: Any, defined: Any, counts: Any, numer: Any, aps: Any, ovo: bool, out: Any) -> None:  # noqa: PLR0917
    """Each mix's ROC AUC (Hand & Till's mean over the present pairs, or the macro one-vs-rest mean) and macro AP
    (over the present classes) from the pair numerators and the per-class APs."""
    k = counts.shape[0]
    views = out.shape[0]
    for v in range(views):
        if not defined[v]:
            continue
        auc_sum = 0.0
        auc_n = 0
        ap_sum = 0.0
        ap_n = 0
        for c in range(k):
            if not w[v, c] * counts[c] > 0:
                continue
            if not math.isnan(aps[v, c]):
                ap_sum += aps[v, c]
                ap_n += 1
            if ovo:
                for j in range(c + 1, k):
                    if w[v, j] * counts[j] > 0:
                        pair = counts[c] * counts[j]
                        auc_sum += (numer[c, j] / pair + numer[j, c] / pair) / 2
                        auc_n += 1
            else:  # the pooled negatives' AUC: the weighted mean of the pairwise ones
                weight = 0.0
                acc = 0.0
                for j in range(k):
                    other = w[v, j] * counts[j]
                    if j != c and other > 0:
                        weight += other
                        acc += numer[c, j] / (counts[c] * counts[j]) * other
                if weight > 0:
                    auc_sum += acc / weight
                    auc_n += 1
        out[v, ROC_AUC] = auc_sum / auc_n if auc_n else math.nan
        out[v, AVERAGE_PRECISION] = ap_sum / ap_n if ap_n else math.nan


@jit
def _multiclass(hist: Any, span: Any, distinct: Any, within: bool, w: Any,  # noqa: PLR0912, PLR0915, PLR0917
                defined: Any, counts: Any, ovo: bool, out: Any, starts: Any, shares: Any, base: int,
                split: bool) -> None:
    """Every pair's AUC numerator and every class's one-vs-rest average precision at every mix, column by column,
    each column read over its span (``span[i]``: bins ``[lo, hi)``, outside which every count is 0).

    Class i's own bins in its column, held in bins ``[lo, hi)``, give the ranks ``g`` (``_ranks``; 0 from ``hi``
    up). Each other class's row of that column is then read once: its pair numerator is a dot product with ``g``
    over ``[0, hi)``; its weighted share of the negatives is needed bin by bin only over ``[lo, hi)`` — where the
    average precision's running sum stops — and above as one total (``_tail``). Then ROC AUC (Hand & Till or
    macro one-vs-rest) and the macro AP of each mix (``distinct``, where ``within``: as ``_binary``'s, per column).
    ``split``: a bin ``g = base + start + b`` of column i with values in ``starts[i]`` is read over them (as
    ``_binary``'s): its pairs by ``_within``, its average-precision terms value by value."""
    k, _, bins = hist.shape
    views = out.shape[0]
    numer = np.zeros((k, k))
    aps = np.full((views, k), math.nan)
    neg = np.empty((views, bins))
    above = np.empty(views)
    g = np.empty(bins, np.int64)
    split_bins = np.empty(bins, np.int64)
    for i in range(k):
        start, stop = span[i, 0], max(span[i, 0], span[i, 1])
        mine = hist[i, i, start:stop]
        hi = stop - start
        while hi > 0 and mine[hi - 1] == 0:
            hi -= 1
        lo = 0
        while lo < hi and mine[lo] == 0:
            lo += 1
        _ranks(mine[:hi], g)
        neg[:, lo:hi] = 0.0
        above[:] = 0.0
        held = 0  # the column's split bins where its own class has samples
        if split:
            for b in range(lo, hi):
                if mine[b] and starts[i, base + start + b + 1] > starts[i, base + start + b]:
                    split_bins[held] = b
                    held += 1
        for j in range(k):
            if j == i:
                continue
            row = hist[j, i, start:stop]
            numer[i, j] = _pair_numerator(row[:hi], g, counts[i] * counts[j] < 2.0**61)
            for x in range(held):  # a split bin's pairs: its values' order, not ½ each
                b = split_bins[x]
                if row[b]:
                    at = base + start + b
                    numer[i, j] += mine[b] * row[b] * (_within(shares[i], starts[i, at], starts[i, at + 1], i, j) - 0.5)
            tail = _tail(row[hi:])
            for v in range(views):  # the negatives of class i's column at each mix, classes added in order
                wj = w[v, j]
                if defined[v] and wj != 0.0:
                    above[v] += wj * tail
                    _add_scaled(neg[v, lo:hi], wj, row[lo:hi])
        for v in range(views):
            if not defined[v]:
                continue
            wi = w[v, i]
            nv = neg[v]
            tp = 0.0
            fp = above[v]
            acc = 0.0
            for b in range(hi - 1, lo - 1, -1):
                p = wi * mine[b]
                at = base + start + b
                if p > 0.0 and split and starts[i, at + 1] > starts[i, at]:  # its values, highest first
                    for m in range(starts[i, at + 1] - 1, starts[i, at] - 1, -1):
                        pm = p * shares[i, i, m]
                        qm = 0.0
                        for j in range(k):
                            if j != i and w[v, j] != 0.0:
                                qm += w[v, j] * hist[j, i, start + b] * shares[i, j, m]
                        tp += pm
                        fp += qm
                        if pm > 0.0:
                            acc += pm * tp / (tp + fp)
                    continue
                mixed = within and distinct[i, start + b] and (nv[b] > 0.0 or mine[b] > 1)
                if p > 0.0 and mixed:
                    acc += random_order_share(tp, tp + fp, int(mine[b]), wi, nv[b])
                tp += p
                fp += nv[b]
                if p > 0.0 and not mixed:
                    acc += p * tp / (tp + fp)
            aps[v, i] = min(acc / tp, 1.0) if tp > 0.0 else math.nan  # as _binary's: rounding kept within 1
    _macro(w, defined, counts, numer, aps, ovo, out)


@jit
def _add_scaled(into: Any, weight: float, row: Any) -> None:
    """``into += weight · row``, elementwise — over slices, from 0: written ``for b in range(lo, hi)`` on the whole
    arrays, the compiler did not vectorise it (5x slower)."""
    for b in range(into.shape[0]):
        into[b] += weight * row[b]


@jit
def _tail(row: Any) -> int:
    """The samples of a row's bins (an integer sum: exact, and vectorised)."""
    total = 0
    for b in range(row.shape[0]):
        total += row[b]
    return total


@count_widths(0)  # the histogram's counts: int16, int32 or int64 (score_tally.count_type)
@jit
def window_loop(hist: Any, span: Any, distinct: Any, within: bool, sums: Any, top: Any, mixes: Any,  # noqa: PLR0917
                as_read: Any, positive: int, ovo: bool, ranking: bool, out: Any, delong: Any, w: Any,
                counts: Any, starts: Any, shares: Any, base: int, split: bool) -> None:
    """``out[v]`` = (roc_auc, average_precision, brier, log_loss, ece) of the tally (``hist`` (K, C, BINS) integers,
    ``sums`` (K, C, 4), ``top`` (K, 15, 3); ``span`` (C, 2): each column's bins ``[lo, hi)`` outside which every
    count is 0, ``bin_span``) at mix row v (``as_read[v]``: each sample counts once; else each class
    weighted to ``mixes[v]``, normalised), NaN where undefined; binary (K = 2) about ``positive``, with DeLong's
    variance into ``delong[0]``. ``distinct`` (C, bins) bool: where ``within``, the bins whose samples the average
    precision reads in random order, not tied (``random_order_share``). ``split``: the bins that exact scores show
    holding repeated distinct values (``bin_values``: ``starts`` (C, BINS + 1), ``shares`` (C, K, M); ``hist``'s
    bin b is bin ``base + b``) are read over those values, each class's count spread by its shares, no array made
    (the atoms a K = 10 window would need are 2.4 MB). ``out`` comes filled with NaN.
    ``ranking`` False: the ROC AUC, average precision and DeLong's variance are left NaN (a window read from its
    exact samples: ``exact_ranking``). ``w`` (V, K) and ``counts`` (K,) are filled with each mix row's class
    weights and each class's samples (``_weights``), which the exact reading then takes as they are (no second
    count of the samples, no weights made again in numpy)."""
    k = hist.shape[0]
    defined = np.empty(out.shape[0], np.bool_)
    _weights(hist[:, 0, span[0, 0]:max(span[0, 0], span[0, 1])], mixes, as_read, w, defined, counts)
    binary = k == 2
    column = 0 if hist.shape[1] == 1 else positive
    for v in range(out.shape[0]):
        if defined[v]:
            _calibration(sums, top, w, counts, v, column, positive, binary, out)
    if not ranking:
        return
    if binary:
        start, stop = span[column, 0], max(span[column, 0], span[column, 1])
        _binary(hist[:, column, start:stop], distinct[column, start:stop] if within else distinct[0, 0:1], within,
                w, defined, counts, positive, out, delong, starts[column if split else 0],
                shares[column if split else 0], base + start, split)
    else:
        _multiclass(hist, span, distinct, within, w, defined, counts, ovo, out, starts, shares, base, split)
