"""Hysteresis for the generated alerts: an alert turns on at one level and, once firing, stays on at a looser one.

Prometheus has no memory of an alert's state in its expression, but it writes each alert's state to the
``ALERTS`` series; an alert's expression can read its own. ``held(on, hold, ...)`` is ``on or (hold and
<fired within the window>)``: the ``hold`` clause (the looser levels) counts only while the alert has been firing
within the rule window. The window, not the default 5-minute lookback of an instant selector: where rules are
evaluated less often than every 5 minutes (a replay's promtool run every 15 minutes, a slow rule group), the
previous evaluation's ``ALERTS`` sample would be invisible and the hold would do nothing. ``keep_firing_for``
keeps ``ALERTS`` firing after the condition ends, so a hold outlives a short gap in both clauses.

A ``for:`` applies to the whole expression, and a pending alert writes ``alertstate="pending"``: the hold never
starts an alert, only ``on`` held for ``for:`` does.

>>> held("x > 2", "x > 1", "A", "1h", "model")
'(x > 2) or (x > 1 and on (model) last_over_time(ALERTS{alertname="A", alertstate="firing"}[1h]))'
"""

from __future__ import annotations


def fired_within(alert: str, window: str) -> str:
    """PromQL: the alert's own firing ``ALERTS`` series, if it fired at some evaluation within ``window``."""
    return f'last_over_time(ALERTS{{alertname="{alert}", alertstate="firing"}}[{window}])'


def held(on: str, hold: str, alert: str, window: str, labels: str) -> str:
    """PromQL: ``on``, or ``hold`` while ``alert`` has fired within ``window`` (matched on ``labels``, the alert's
    grouping labels such as ``model, class``). ``on`` and ``hold`` must have the same labels and value."""
    return f"({on}) or ({hold} and on ({labels}) {fired_within(alert, window)})"
