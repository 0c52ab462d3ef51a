"""Alert episodes of the HTML report, from hand-made alert histories: merging within the hold, ordering by
severity then start, open episodes, durations, and the window the report shows first."""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest

from streammon.findings.report import ALERT_KINDS
from streammon.logs.report_episodes import (
    SEVERITY,
    Episode,
    Hold,
    clarity,
    episodes,
    first_window,
    hold_of,
    with_evidence,
)
from streammon.logs.report_series import WindowSeries
from streammon.logs.spans import AlertSpan, Snapshot

EVERY = 100  # samples between two snapshots, one second of data time per sample
SNAPS = [Snapshot(float(n), n) for n in range(EVERY, 100 * EVERY + 1, EVERY)]


def _span(kind: str, window: str, on: int, off: int | None, *, subject: str = "class_mix",
          reason: str = "") -> AlertSpan:
    """An on-period first seen at snapshot ``on`` (turned on 30 samples before it) and found cleared at snapshot
    ``off`` (None: still on at the end)."""
    since = SNAPS[on].samples - 30
    return AlertSpan(kind, window, subject, since, float(since), reason, SNAPS[on], None if off is None else SNAPS[off])


def test_a_flapping_alert_off_at_single_snapshots_is_one_episode() -> None:
    """Three on-periods of one alert, each off at a single snapshot, are one episode of three on-periods that
    ends where the last one cleared, with its latest reason."""
    spans = [_span("prior_shift", "cumulative", 2, 5, reason="a"), _span("prior_shift", "cumulative", 6, 8, reason="b"),
             _span("prior_shift", "cumulative", 9, 12, reason="c")]
    (e,) = episodes(spans, SNAPS)
    assert (e.toggles, e.start_sample, e.end, e.reason) == (3, SNAPS[2].samples - 30, SNAPS[12], "c")
    assert e.duration(SNAPS[-1]) == (SNAPS[12].time - (SNAPS[2].samples - 30), "s")


def test_a_gap_longer_than_the_hold_starts_a_new_episode() -> None:
    """Off for two snapshots (200 samples): one episode in sliding_1000 (span 1,000 samples), two in sliding_50 and
    in the cumulative window (no span), one in timed_300s (300 s), two in timed_100s."""
    for window, expected in (("sliding_1000", 1), ("sliding_50", 2), ("cumulative", 2), ("timed_300s", 1),
                             ("timed_100s", 2)):
        spans = [_span("prior_shift", window, 2, 4), _span("prior_shift", window, 6, 9)]
        assert len(episodes(spans, SNAPS)) == expected, window


def test_an_ongoing_episode_has_no_end_and_lasts_to_the_last_snapshot() -> None:
    """A last on-period still on at the end makes the merged episode ongoing; its duration runs to the last
    snapshot; without times it is counted in samples."""
    spans = [_span("class_set_change", "sliding_10000", 3, 10, subject="+x"),
             _span("class_set_change", "sliding_10000", 20, None, subject="+x")]
    (e,) = episodes(spans, SNAPS)
    assert e.ongoing and e.toggles == 2
    assert e.duration(SNAPS[-1]) == (SNAPS[-1].time - (SNAPS[3].samples - 30), "s")
    untimed = [AlertSpan(s.kind, s.window, s.subject, s.since_sample, math.nan, "", s.first_seen, s.cleared)
               for s in spans]
    assert episodes(untimed, SNAPS)[0].duration(SNAPS[-1]) == (SNAPS[-1].samples - (SNAPS[3].samples - 30), "samples")


def test_episodes_are_ordered_by_severity_then_start() -> None:
    """Degradation, not_prior_shift, class_set_change, prior_shift, incompetent, label_coverage_low,
    predicted_mix_shift, then an unknown kind; within a kind by start — whatever order the alerts came in."""
    kinds = ["degradation", "not_prior_shift", "class_set_change", "prior_shift", "incompetent",
             "label_coverage_low", "predicted_mix_shift", "something_new"]
    spans = [_span(kind, "sliding_50", at, at + 1) for kind in kinds for at in (40, 10)]
    random.Random(3).shuffle(spans)
    found = episodes(spans, SNAPS)
    assert [(e.kind, e.first_seen) for e in found] == [(k, SNAPS[at]) for k in kinds for at in (10, 40)]
    assert list(SEVERITY) == kinds[:-1]


def test_duplicate_or_overlapping_spans_are_one_episode() -> None:
    """The same on-period seen twice (or one still on while another starts) is one episode."""
    spans = [_span("prior_shift", "sliding_50", 5, None)] * 3 + [_span("prior_shift", "sliding_50", 8, 9)]
    (e,) = episodes(spans, SNAPS)
    assert e.ongoing and e.toggles == 4


def test_episode_counts_match_a_recount_of_random_on_off_histories() -> None:
    """For random per-snapshot on/off histories in the cumulative window (hold: one snapshot), the number of
    episodes and their on-periods equal a recount on the history's text: runs of '1' joined across single '0's."""
    rng = random.Random(7)
    for _ in range(300):
        history = "".join(rng.choice("0011") for _ in range(40))
        spans, start = [], None
        for i, bit in enumerate(history + "0"):
            if bit == "1" and start is None:
                start = i
            elif bit == "0" and start is not None:
                spans.append(_span("prior_shift", "cumulative", start, i if i < len(history) else None))
                start = None
        joined = re.sub(r"(?<=1)0(?=1)", "1", history)  # a single off snapshot inside an episode
        runs = re.findall(r"1+", joined)
        found = episodes(spans, SNAPS[:len(history)])
        assert len(found) == len(runs), history
        assert sum(e.toggles for e in found) == len(re.findall(r"1+", history)), history
        ongoing = [history.endswith("1") and i == len(runs) - 1 for i in range(len(runs))]
        assert [e.ongoing for e in found] == ongoing, history


def test_the_hold_of_a_window_is_its_span() -> None:
    """sliding_N holds N samples, timed_Ss S seconds; other names (cumulative, custom, the detector's stream) none."""
    assert hold_of("sliding_1000") == Hold(samples=1000)
    assert hold_of("timed_86400s") == Hold(seconds=86_400.0)
    assert hold_of("stream") == hold_of("my window") == Hold()


def _series(upper: dict[str, list[float]], p: dict[str, list[float]] | None = None) -> dict[str, WindowSeries]:
    out = {}
    for window, values in upper.items():
        s = WindowSeries(len(values))
        s.upper[("class_recall", "fraud")] = np.array(values, dtype=float)
        if p is not None and window in p:
            s.value[("prior_shift_p", None)] = np.array(p[window], dtype=float)
        out[window] = s
    return out


def test_the_first_window_is_where_the_degradation_is_clearest() -> None:
    """A degradation is shown first (above an earlier prior shift) in the window whose recall interval stays
    furthest below the baseline — the median over the episode's snapshots, so a short window's single dip does not
    win and values after the episode ended do not count; its evidence names that window."""
    snaps = SNAPS[:6]
    spans = [AlertSpan("degradation", "stream", "fraud", 250, 250.0, "", snaps[2], snaps[5]),
             AlertSpan("prior_shift", "timed_60s", "class_mix", 50, 50.0, "", snaps[0], None)]
    upper = {"cumulative": [0.95, 0.95, 0.93, 0.91, 0.89, 0.88],
             "sliding_1000": [0.99, 0.99, 0.85, 0.80, 0.78, 0.10],  # its lowest is after the episode ended
             "sliding_10000": [0.96, 0.96, 0.75, 0.72, 0.70, 0.72],
             "timed_60s": [1.0, 1.0, 1.0, 0.20, 1.0, 1.0]}  # one chance dip
    series = _series(upper)
    found = with_evidence(episodes(spans, snaps), snaps, series, {"fraud": 0.9})
    assert [e.kind for e in found] == ["degradation", "prior_shift"]
    by_window = clarity(found[0], snaps, series, {"fraud": 0.9})
    assert by_window == pytest.approx({"cumulative": 0.9 - 0.91, "sliding_1000": 0.9 - 0.80,
                                       "sliding_10000": 0.9 - 0.72, "timed_60s": 0.9 - 1.0})
    sizes = {"cumulative": 600, "sliding_1000": 600, "sliding_10000": 600, "timed_60s": 60}
    chosen = first_window(found, list(upper), sizes, snapshots=snaps, series=series, baseline={"fraud": 0.9})
    assert chosen == "sliding_10000"
    assert "window sliding_10000" in found[0].evidence_text and found[0].evidence == pytest.approx(0.18)


def test_the_first_window_of_a_prior_shift_has_the_smallest_p_value_ties_to_the_shortest() -> None:
    """Prior shifts only: the window with the smallest p-value while its episode lasts; equal p-values (both 0)
    go to the window with fewer samples; no episode keeps the given order."""
    snaps = SNAPS[:4]
    spans = [AlertSpan("prior_shift", w, "class_mix", 150, 150.0, "", snaps[1], None)
             for w in ("cumulative", "sliding_1000", "timed_3600s")]
    p = {"cumulative": [0.5, 1e-9, 1e-12, 1e-12], "sliding_1000": [1e-40, 1e-3, 1e-4, 1e-5],
         "timed_3600s": [0.5, 1e-20, 1e-30, 1e-25]}
    series = _series({w: [1.0] * 4 for w in p}, p)
    found = with_evidence(episodes(spans, snaps), snaps, series, {})
    sizes = {"cumulative": 400, "sliding_1000": 400, "timed_3600s": 300}
    assert first_window(found, list(p), sizes) == "timed_3600s"  # 1e-40 was before the episode began
    tied = [Episode(e.kind, e.window, e.subject, e.start_sample, e.start_time, e.first_seen, e.end, 1, "", math.inf)
            for e in found if e.window != "timed_3600s"]
    assert first_window(tied, list(p), {**sizes, "cumulative": 10_000}) == "sliding_1000"
    assert first_window([], list(p), sizes) == "cumulative"


def test_every_alert_kind_has_a_severity() -> None:
    """The severity order ranks each alert kind a monitor can raise, once (a kind left out would sort last)."""
    assert sorted(SEVERITY) == sorted(ALERT_KINDS) and len(set(SEVERITY)) == len(SEVERITY)
