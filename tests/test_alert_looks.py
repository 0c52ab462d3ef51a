"""A confirmation counts looks at new samples, not reads: the same samples read again (two Prometheus servers
scraping one monitor, a dashboard, a /report call) do not confirm a window alert, whichever way the samples came
(``update_many``, or ``predict`` then ``label``, whose reports are not cached)."""

from __future__ import annotations

import itertools

import pytest

import streammon

SHIFTED = 10  # fraud per 100 samples: a p-value between shift_alpha**3 and shift_alpha on sliding_200 (asserted)


class Feed:
    """One monitor fed by ``update_many`` or by ``predict_many`` then ``label_many``."""

    def __init__(self, keyed: bool) -> None:
        self.monitor = streammon.Monitor([streammon.Sliding(200)], reference={"legit": 95, "fraud": 5})
        self.keyed = keyed
        self.keys = itertools.count()

    def batch(self, fraud: int) -> None:
        y = ["fraud"] * fraud + ["legit"] * (100 - fraud)
        if self.keyed:
            keys = [next(self.keys) for _ in y]
            self.monitor.predict_many(keys, y)
            self.monitor.label_many(keys, y)
        else:
            self.monitor.update_many(y, y)

    def alerted(self) -> bool:
        return bool(self.monitor.report().alerting("prior_shift"))


@pytest.mark.parametrize("keyed", [False, True], ids=["update_many", "predict+label"])
def test_the_same_samples_read_again_do_not_confirm_a_window_alert(keyed: bool) -> None:
    """A moderate shift on sliding_200 is read once when it first holds and once two turnovers later (two looks of
    the three alert_confirm = 2 asks); five more reads of the same samples raise nothing; one more batch, read,
    is the third look and raises the alert, as the documented rule says."""
    feed = Feed(keyed)
    for _ in range(10):
        feed.batch(5)
    assert not feed.alerted()
    feed.batch(SHIFTED)
    feed.batch(SHIFTED)
    first = feed.monitor.report()
    p = first.windows["sliding_200"].prior_shift
    assert p is not None and 0.01**3 < p.p_value < 0.01, "the shift no longer needs confirmation: re-plan"
    assert not first.alerting("prior_shift")
    for _ in range(4):  # two turnovers of 200 samples, unread
        feed.batch(SHIFTED)
    assert not feed.alerted()  # the second look
    assert [feed.alerted() for _ in range(5)] == [False] * 5
    feed.batch(SHIFTED)
    assert feed.alerted()  # the third look


def test_both_ways_of_feeding_raise_the_same_alerts_read_after_read() -> None:
    """The same batches, read three times after every fourth batch, raise and clear the same prior-shift alerts at
    every read whether they came by update_many or by predict then label."""
    plan = [5] * 10 + [SHIFTED] * 9 + [5] * 9 + [30] * 4 + [5] * 12
    seen = []
    for keyed in (False, True):
        feed, alerts = Feed(keyed), []
        for i, fraud in enumerate(plan):
            feed.batch(fraud)
            alerts += [feed.alerted() for _ in range(3 if i % 4 == 0 else 0)]
        seen.append(alerts)
    assert seen[0] == seen[1]
    assert any(seen[0]) and not all(seen[0])
