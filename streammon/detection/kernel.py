"""The compiled scan of a batch: every class's CUSUM bank, sample by sample, until something switches.

A sequential recursion is what NumPy cannot vectorise without paying several passes per
member, so this loop is compiled (numba, imported on first use). It runs over the batch's
label codes in stream order and returns at the first event — a degradation alarm, a
recovery, a baseline just learned — for the Python side (``streammon.detection.watch``) to
handle before it calls again from the next sample. Events are rare.

**Only wrong samples step the bank.** A right sample only lowers a member's statistic,
floored at 0: ``k`` of them in a row take ``S`` to ``max(0, S − k·|up|)``, exactly what ``k``
single steps give. So a class keeps its sample count (``count``) and the count at its last
wrong sample (``seen``); its members are updated only at its next wrong sample — the only
samples at which a degradation statistic can rise, and so the only ones at which it can
cross. The stored ``S`` is the statistic as of that wrong sample; the statistic now is
``max(0, S − (count − seen)·|up|)``.

**Two passes per segment** of at most ``SEGMENT`` samples. The first counts each code's
samples (and the batch's confusion cells, so that the windows need no count of their
own) and records every wrong sample with its code's count so far; it stops early at a
class's **horizon** — the sample count at which a right sample could switch something (a
baseline completes; a degraded class's recovery statistic could reach its threshold). The
second pass steps the banks at the recorded wrong samples, in stream order. An event in the
second pass un-counts the samples after it, so that every count is as of the event's sample.

State arrays (K classes × M members where two-dimensional), all updated in place:

- ``status``: 0 learning its baseline, 1 watching for degradation, 2 degraded (watching for
  recovery), 3 not watched (no baseline can drop), 4 degraded and assessing how far (counting its
  first samples after the alarm, before the recovery test is armed);
- ``stat`` (K×M), ``up`` (K×M, |log-likelihood ratio| of a right sample), ``down`` (K×M, that of a
  wrong one), ``h`` (K×M, each member's threshold; ``inf`` for a member not in use): the bank;
- ``count`` (K): the class's samples so far; ``seen`` (K): its sample count at its last wrong sample
  (or at its last event);
- ``start`` (K×M): the class sample count at which each member's current excursion began (its
  change-point estimate), ``start_at`` (K×M): the same as a stream index;
- ``recovery`` (K), ``rec_up`` (K, added by a right sample), ``rec_down`` (K, added by a wrong one),
  ``rec_h`` (K): the recovery CUSUM of a degraded class, as of ``seen``;
- ``learned`` (K×2): (right, total) of a class still learning its baseline, watching with a
  learned baseline that is still being refined, or assessing, as of ``seen``; ``target`` (K): the
  total at which the next baseline (or the assessment) is due (``NEVER``: none).

Events: ``(NOTHING, n, -1, -1)`` — the batch is done; ``(ALARM, t, c, j)`` — member ``j`` of class ``c``
crossed at batch offset ``t``; ``(RECOVERED, t, c, -1)``; ``(LEARNED, t, c, -1)`` — class ``c``'s
baseline is complete with sample ``t``; ``(REFINED, t, c, -1)`` — a refined baseline of a watched
class is due with sample ``t`` (its statistics are as of ``t``); ``(ASSESSED, t, c, -1)`` — class ``c``'s
assessment after an alarm is complete with sample ``t``.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from streammon.detection.bank import MEMBERS
from streammon.metrics import jitting

NOTHING, ALARM, RECOVERED, LEARNED, REFINED, ASSESSED = 0, 1, 2, 3, 4, 5
LEARNING, WATCHING, DEGRADED, UNWATCHED, ASSESSING = 0, 1, 2, 3, 4
SEGMENT = 1 << 14  # samples per first pass: its buffers stay in cache
NEVER = 1 << 62  # a horizon that is never reached
PACK = 20  # a wrong sample found by the first pass: (its code's count in the segment) << PACK | its offset
OFFSET_MASK = (1 << PACK) - 1


def _scanner(members: int) -> Any:  # noqa: PLR0915 - the scan inside is one compiled loop
    """``_scan`` as a closure over ``members``, the bank's size (``bank.MEMBERS``): numba freezes it into the loop
    (a constant trip count: the loop over members unrolled; read from the arrays' shape instead, the scan of a batch
    with 30 % wrong samples took ~12 % longer) and its cache key holds the closure's pickled value, so a bank of
    another size compiles anew (a global of bank.py would leave the cached scan stale: ``streammon.metrics.jitting``).
    """

    def _scan(  # noqa: PLR0912, PLR0915, PLR0917 - one compiled loop; numba takes its arrays positionally
            true: Any, pred: Any, lut: Any, begin: int, cells: Any, span: int, status: Any, stat: Any, up: Any,
            down: Any, h: Any, count: Any, seen: Any, start: Any, start_at: Any, recovery: Any, rec_up: Any,
            rec_down: Any, rec_h: Any, learned: Any, target: Any, position: int,
            local: Any, stop_at: Any, wrongs_found: Any) -> tuple[int, int, int, int]:
        """Scan ``true[begin:]``/``pred[begin:]`` (codes, ``lut`` maps a code to its class) until an event.

        ``cells`` (``span × span``, flat): the confusion counts of the samples scanned are added to it.
        ``local``/``stop_at`` (one per code) and ``wrongs_found`` (``SEGMENT + 1``) are scratch space.
        """
        n = len(true)
        codes = len(lut)
        t0 = begin
        while t0 < n:
            for code in range(codes):  # each code's horizon: where a right sample could switch its class
                c = lut[code]
                local[code] = 0
                stop_at[code] = NEVER
                if status[c] in (LEARNING, ASSESSING) or (status[c] == WATCHING and target[c] < NEVER):
                    stop_at[code] = seen[c] + target[c] - learned[c, 1] - count[c]
                elif status[c] == DEGRADED:
                    # after j right samples the recovery statistic is recovery + j·rec_up; stop one sample early
                    # (rounding): the check at the horizon is exact
                    steps = (rec_h[c] - recovery[c]) / rec_up[c]
                    need = math.ceil(steps) - 1 if steps < 1e15 else NEVER // 2
                    stop_at[code] = max(seen[c] + need - count[c], 1)  # (past the early stop: every right sample)
            # pass 1: count, record the wrong samples, stop at a horizon
            end = min(n, t0 + SEGMENT)
            wrongs = 0
            stopped = -1
            for t in range(t0, end):
                ct = true[t]
                cp = pred[t]
                cells[ct * span + cp] += 1
                k = local[ct] + 1
                local[ct] = k
                wrongs_found[wrongs] = k << PACK | (t - t0)  # written always, kept only when wrong: no branch
                wrongs += ct != cp
                if k == stop_at[ct]:
                    stopped = t
                    break
            scanned = end if stopped < 0 else stopped + 1
            # pass 2: step the banks at the wrong samples, in stream order
            event, at, cls, member = NOTHING, -1, -1, -1
            for i in range(wrongs):
                found = wrongs_found[i]
                tw = t0 + (found & OFFSET_MASK)
                c = lut[true[tw]]
                number = count[c] + (found >> PACK)  # this sample's number among the class's samples
                s = status[c]
                if s == WATCHING:
                    k = float(number - seen[c] - 1)  # right samples since the last wrong one
                    above = -math.inf  # the largest excess of a statistic over its member's threshold
                    for j in range(members):  # branch-free: an excursion starts where the statistic was at 0
                        value = stat[c, j] - k * up[c, j]
                        fresh = value <= 0.0
                        start[c, j] += fresh * (number - start[c, j])  # (arithmetic, not a select: no branch)
                        start_at[c, j] += fresh * (position + tw - start_at[c, j])
                        value = max(value, 0.0) + down[c, j]
                        stat[c, j] = value
                        above = max(above, value - h[c, j])
                    if target[c] < NEVER:  # a learned baseline still refining: count this sample into it
                        learned[c, 0] += number - seen[c] - 1
                        learned[c, 1] += number - seen[c]
                    seen[c] = number
                    if above >= 0.0:
                        crossed = 0
                        while stat[c, crossed] < h[c, crossed]:
                            crossed += 1
                        event, at, cls, member = ALARM, tw, c, crossed
                        break
                    if learned[c, 1] >= target[c]:
                        event, at, cls = REFINED, tw, c
                        break
                elif s == DEGRADED:
                    value = recovery[c] + (number - seen[c] - 1) * rec_up[c] + rec_down[c]
                    recovery[c] = value if value > 0.0 else 0.0
                    seen[c] = number
                elif s in (LEARNING, ASSESSING):
                    learned[c, 0] += number - seen[c] - 1
                    learned[c, 1] += number - seen[c]
                    seen[c] = number
                    if learned[c, 1] >= target[c]:
                        event, at, cls = LEARNED if s == LEARNING else ASSESSED, tw, c
                        break
                else:
                    seen[c] = number
            if event == NOTHING and stopped >= 0:  # a right sample at a horizon: check it exactly
                ct = true[stopped]
                c = lut[ct]
                number = count[c] + local[ct]
                if seen[c] < number:  # (a wrong sample at the horizon was stepped above)
                    s = status[c]
                    if s == DEGRADED:
                        value = recovery[c] + (number - seen[c]) * rec_up[c]
                        if value >= rec_h[c]:
                            recovery[c] = value
                            seen[c] = number
                            event, at, cls = RECOVERED, stopped, c
                    elif s in (LEARNING, ASSESSING):
                        learned[c, 0] += number - seen[c]
                        learned[c, 1] += number - seen[c]
                        seen[c] = number
                        if learned[c, 1] >= target[c]:
                            event, at, cls = LEARNED if s == LEARNING else ASSESSED, stopped, c
                    elif s == WATCHING and learned[c, 1] + number - seen[c] >= target[c]:
                        learned[c, 0] += number - seen[c]
                        learned[c, 1] += number - seen[c]
                        for j in range(members):  # the run of right samples applied: the statistics as of now
                            stat[c, j] = max(stat[c, j] - (number - seen[c]) * up[c, j], 0.0)
                        seen[c] = number
                        event, at, cls = REFINED, stopped, c
            if event != NOTHING:  # un-count what pass 1 read after the event's sample
                for u in range(at + 1, scanned):
                    local[true[u]] -= 1
                    cells[true[u] * span + pred[u]] -= 1
            for code in range(codes):
                count[lut[code]] += local[code]
            if event != NOTHING:
                return event, at, cls, member
            t0 = scanned
        return NOTHING, n, -1, -1

    return _scan


@cache
def compiled() -> Any:
    """The scan compiled by numba (once per process; the machine code is cached on disk where it can be)."""
    return jitting.compiled(_scanner(MEMBERS))  # (numba is imported there, on the first batch that detects)


def scan(*args: Any) -> tuple[int, int, int, int]:
    """``_scan`` compiled (the arguments as ``_scan``'s, ``_scanner``)."""
    event, t, c, j = compiled()(*args)
    return int(event), int(t), int(c), int(j)
