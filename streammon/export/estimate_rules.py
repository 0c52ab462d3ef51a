"""PromQL rules for the label-free estimate (the families of ``streammon.export.estimate_families``).

Recording, one series per ``(model, window)`` whatever the number of replicas: the lowest
label-shift p-value over the replicas (``streammon_label_shift_p_value``) and the number of
replicas whose report holds the ``not_prior_shift`` alert (``streammon_alert{kind="not_prior_shift"}``,
counted once per replica, like the CUSUM rule); and, for estimates with scores, the highest upper bound over
the replicas of the expected balanced accuracy (``streammon_expected_performance{bound="upper"}``) and the
lowest validation balanced accuracy (``bound="validation"``).

Alert:

- ``StreammonNotPriorShift`` (warning) — the predictions moved in a way no class-mix change
  explains through the baseline's class-conditional rates: some replica reports ``not_prior_shift``
  (its p-value below its policy's ``shift_alpha``), or the lowest p-value is below
  ``label_shift_p_value``. Known before any label: check the model version and the input
  features; the labels, as they arrive, confirm through the recall alerts.
- ``StreammonExpectedPerformanceDrop`` (warning) — without labels, the expected balanced accuracy is below
  the validation's by more than ``expected_drop`` (0.05) even at the top of its interval, on every replica
  (the max over replicas of the upper bound, against the min of the validation value). Needs a
  ``Validation`` baseline and scores (K > 2: in a window of at most 10,000 scored predictions, where the mean of
  the recalls is ``acsa``). Balanced accuracy satisfies Condition 1: a pure class-mix change
  leaves it where the validation put it, so a drop means the scores moved to where the validation's model is
  less sure (covariate shift) — read the expected recall and precision beside it.

>>> from streammon.export.rules import RuleSettings
>>> [r["alert"] for r in estimate_alerting_rules(RuleSettings())]
['StreammonNotPriorShift', 'StreammonExpectedPerformanceDrop']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streammon.export.rules import RuleSettings

P_VALUE = "streammon:label_shift_p_value:min"
NOT_PRIOR_SHIFT = "streammon:not_prior_shift:replicas"
EXPECTED_UPPER = "streammon:expected_balanced_accuracy_upper:max"
VALIDATION = "streammon:validation_balanced_accuracy:min"
# balanced accuracy is the binary catalog's name; at K > 2 the same mean of the recalls is ``acsa`` (exported at
# K = 2 too, with the same value: the max and min below read either)
_BA = 'streammon_expected_performance{metric=~"balanced_accuracy|acsa",bound="%s"}'


def estimate_recording_rules(s: RuleSettings) -> list[dict[str, str]]:
    """The lowest label-shift p-value and the replicas reporting ``not_prior_shift``, per model and window."""
    del s  # no window: the replicas' reports hold the windows
    return [
        {"record": P_VALUE, "expr": "min by (model, window) (streammon_label_shift_p_value)"},
        {"record": NOT_PRIOR_SHIFT,
         "expr": 'count by (model, window) (streammon_alert{kind="not_prior_shift"} == 1)'},
        {"record": EXPECTED_UPPER, "expr": f"max by (model, window) ({_BA % 'upper'})"},
        {"record": VALIDATION, "expr": f"min by (model, window) ({_BA % 'validation'})"},
    ]


def estimate_alerting_rules(s: RuleSettings) -> list[dict[str, Any]]:
    """``StreammonNotPriorShift`` (its value: the lowest p-value over the replicas) and
    ``StreammonExpectedPerformanceDrop`` (its value: the highest upper bound of the expected balanced accuracy)."""
    return [
        {
            "alert": "StreammonNotPriorShift",
            "expr": (f"{P_VALUE} < {s.label_shift_p_value}"
                     f" or on (model, window) ({P_VALUE} and on (model, window) {NOT_PRIOR_SHIFT} >= 1)"),
            "for": s.not_prior_shift_for,
            "keep_firing_for": s.keep_firing_for,
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": ("Predictions of model {{ $labels.model }} moved in a way no class-mix change explains "
                            "({{ $labels.window }})"),
                "description": ("The lowest p-value over the replicas of \"only the class mix changed\" is "
                                "{{ printf \"%.2g\" $value }} (rule level "
                                f"{s.label_shift_p_value}, or a replica's own shift_alpha): the predicted counts "
                                "are not the baseline's class-conditional rates at any class mix. The model or its "
                                "inputs changed. Check the deployed model version and the input features (schema, "
                                "units, a broken upstream feature); the labels, as they arrive, will confirm "
                                "through the recall alerts."),
                "runbook_url": f"{s.runbook}#streammonnotpriorshift",
            },
        },
        {
            "alert": "StreammonExpectedPerformanceDrop",
            "expr": f"{EXPECTED_UPPER} < on (model, window) ({VALIDATION} - {s.expected_drop})",
            "for": s.expected_drop_for,
            "keep_firing_for": s.keep_firing_for,
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": ("Expected balanced accuracy of model {{ $labels.model }} dropped without labels "
                            "({{ $labels.window }})"),
                "description": ("Read from the scores without labels, the expected balanced accuracy is at most "
                                "{{ printf \"%.3f\" $value }} (upper bound of its interval, highest replica), more "
                                f"than {s.expected_drop} below the validation set's. A class-mix change alone does "
                                "not move it: the scores moved to where the model is less sure. Check the input "
                                "features and the model version; the labels, as they arrive, confirm through the "
                                "recall alerts."),
                "runbook_url": f"{s.runbook}#streammonexpectedperformancedrop",
            },
        },
    ]
