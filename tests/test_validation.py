"""``streammon.Validation``: input checks with clear errors, the class order, frozen values, the conversion to a
confusion baseline, and its answers against independent recounts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from sklearn.metrics import average_precision_score, roc_auc_score

import streammon
from streammon import ConfusionCounts, Monitor, Sliding, Validation
from streammon.metrics.em_priors import em_priors, mix_posteriors
from streammon.metrics.expected_scores import bin_representatives, weighted_average_precision
from streammon.metrics.score_bins import BINS, score_bins


def _binary(n: int = 1500, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.choice(["ok", "fraud"], n, p=[0.8, 0.2])
    s = special.expit(2.0 * (2.0 * (y == "fraud") - 1.0) + rng.normal(size=n))
    return y, np.where(s > 0.5, "fraud", "ok"), s


def test_validation_is_a_lazy_public_name() -> None:
    """``streammon.Validation`` is listed in ``__all__`` and resolves to the class."""
    assert "Validation" in streammon.__all__
    assert streammon.Validation is Validation


def test_counts_and_mix_are_a_recount_of_the_samples() -> None:
    """The confusion counts and priors equal a recount by brute force, in the sorted class order."""
    y, p, s = _binary()
    v = Validation(y, p, s)
    assert v.labels == ("fraud", "ok")
    recount = [[sum((a == t) and (b == q) for a, b in zip(y, p, strict=True)) for q in v.labels] for t in v.labels]
    assert v.counts.tolist() == recount
    assert v.priors.tolist() == [float(np.mean(y == "fraud")), float(np.mean(y == "ok"))]
    assert v.confusion == ConfusionCounts(["fraud", "ok"], recount)


def test_default_positive_is_the_minority_and_a_named_one_flips_the_score() -> None:
    """A 1-D score is the minority class's by default; ``positive="ok"`` reads it as P(ok): same calibration up to
    the sign of the bias, so the validation's own mix is estimated either way."""
    y, p, s = _binary()
    v = Validation(y, p, s)
    w = Validation(y, p, 1.0 - s, positive="ok")
    assert v.positive == "fraud" and w.positive == "ok"
    assert v.estimate(s).priors == pytest.approx(w.estimate(1.0 - s).priors, abs=1e-6)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (("ab", ["a", "b"], [0.1, 0.2]), {}, TypeError, "y_true must be a 1-D sequence"),
        ((["a", "b"], ["a"], [0.1, 0.2]), {}, ValueError, "one length, got 2 and 1"),
        ((["a", "b"], ["a", "b"], [0.1, float("nan")]), {}, ValueError, r"probabilities in \[0, 1\], got nan"),
        ((["a", "b"], ["a", "b"], [0.1, 1.2]), {}, ValueError, r"got 1.2 at \(1,\)"),
        ((["a", "b"], ["a", "b"], [0.1, 0.2, 0.3]), {}, ValueError, r"y_score must be \(n,\) scores .* n = 2"),
        ((["a", "b", "c"], ["a", "b", "c"], [0.1, 0.2, 0.3]), {}, ValueError, r"\(n, 3\) in the order"),
        ((["a", "b", "c"], ["a", "b", "c"], np.full((3, 3), 0.5)), {}, ValueError, "row 0 sums to 1.5"),
        ((["a", "a"], ["a", "b"], [0.1, 0.2]), {}, ValueError, r"none for \['b'\]"),
        ((["a", "a"], ["a", "a"], [0.1, 0.2]), {}, ValueError, "at least 2 classes"),
        ((["a", "b"], ["a", "b"], [0.1, 0.2]), {"positive": "c"}, ValueError, "positive='c' is not one of"),
        ((["a", "b"], ["a", "b"], [0.1, 0.2]), {"classes": ["a"]}, ValueError, r"\['b'\] are not in classes"),
        (([1, "b"], [1, "b"], [0.1, 0.2]), {}, TypeError, "do not sort: give their order as classes="),
        (([0.5, 1], [1, 1], [0.1, 0.2]), {}, ValueError, "looks like a score"),
        (([None, 1], [1, 1], [0.1, 0.2]), {}, ValueError, "is missing"),
        ((["a", "b"], ["a", "b"], ["x", "y"]), {}, TypeError, "y_score must be numbers"),
        ((["a", "b"], ["a", "b"], [True, False]), {}, TypeError, "got booleans"),
        ((["a", "b"], ["a", "b"], [0.1, 0.2]), {"bins": 1}, ValueError, "bins must be an int >= 2"),
        ((["a", "b"], ["a", "b"], [0.1, 0.2]), {"bootstrap": -1}, ValueError, "bootstrap must be an int >= 0"),
    ],
)
def test_bad_input_is_refused_with_the_value_and_what_was_expected(args: tuple, kwargs: dict, error: type,
                                                                    match: str) -> None:
    """Each malformed validation set raises a TypeError/ValueError whose message names the value and the fix."""
    with pytest.raises(error, match=match):
        Validation(*args, **kwargs)


def test_a_refused_large_input_is_named_in_a_short_message() -> None:
    """A 400-row array of text scores, or a 2-D array of labels, is named by the start of its repr: the message
    stays short (it held the whole array's repr, which numpy summarises only past 1,000 values: ~6,000 characters)."""
    y = np.array(["a", "b"] * 200)
    for args, error in (((y, y, np.full((400, 2), "x")), TypeError), ((np.zeros((400, 2)), y, y), TypeError)):
        with pytest.raises(error) as caught:
            Validation(*args)
        assert len(str(caught.value)) < 300, str(caught.value)[:400]


def test_a_validation_is_frozen() -> None:
    """Attributes cannot be set and the arrays it holds are read-only."""
    y, p, s = _binary(300)
    v = Validation(y, p, s)
    with pytest.raises(AttributeError, match="frozen"):
        v.positive = "ok"  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        v.counts[0, 0] = 5
    with pytest.raises(ValueError, match="read-only"):
        v.priors[0] = 0.5


def test_multiclass_scores_follow_the_given_class_order() -> None:
    """K > 2 columns are read in the order of ``classes``: permuting classes and columns together changes no
    estimate."""
    rng = np.random.default_rng(3)
    y = rng.choice(["c", "a", "b"], 900, p=[0.5, 0.3, 0.2])
    index = {"a": 0, "b": 1, "c": 2}
    s = special.softmax(2 * np.eye(3)[[index[v] for v in y]] + rng.normal(size=(900, 3)), axis=1)
    pred = np.array(["a", "b", "c"])[s.argmax(axis=1)]
    v = Validation(y, pred, s, classes=["a", "b", "c"])
    w = Validation(y, pred, s[:, [2, 0, 1]], classes=["c", "a", "b"])
    assert v.labels == ("a", "b", "c") and v.positive is None
    assert v.estimate(s).priors == pytest.approx(w.estimate(s[:, [2, 0, 1]]).priors[[1, 2, 0]], abs=1e-6)
    with pytest.raises(ValueError, match=r"\(n, 3\) in the order \['a', 'b', 'c'\]"):
        v.estimate(s[:, :2])


def test_a_monitor_takes_a_validation_where_it_takes_confusion_counts() -> None:
    """``Monitor(baseline=Validation)`` reports exactly what ``baseline=`` its confusion counts reports."""
    y, p, s = _binary(600)
    v = Validation(y, p, s)

    def run(baseline: object) -> object:
        m = Monitor([Sliding(50)], reference={"ok": 8, "fraud": 2}, baseline=baseline, clock=lambda: 0.0)
        for t, q in zip(y[:40], p[:40], strict=True):
            m.update(t, q)
        return m.report().windows["sliding_50"].estimate

    assert run(v) == run(v.confusion)


def test_expected_at_the_true_mix_matches_the_labelled_counts_on_average() -> None:
    """On windows drawn at a shifted mix, the expected confusion (at the EM mix) is within 3 % per cell of the
    recount of the true labels, averaged over 20 windows (a calibrated model, so the expectation is unbiased)."""
    rng = np.random.default_rng(8)
    yv = (rng.random(4000) < 0.2).astype(int)
    sv = special.expit(2.0 * (2 * yv - 1) + rng.normal(size=4000))
    v = Validation(yv, (sv > 0.5).astype(int), sv)
    gaps = []
    for _ in range(20):
        yw = (rng.random(2000) < 0.6).astype(int)
        sw = special.expit(2.0 * (2 * yw - 1) + rng.normal(size=2000))
        e = v.expected(sw, (sw > 0.5).astype(int))
        real = np.zeros((2, 2))
        np.add.at(real, (yw, (sw > 0.5).astype(int)), 1)
        gaps.append((e.confusion - real) / 2000)
    assert np.abs(np.mean(gaps, axis=0)).max() < 0.03


def test_expected_average_precision_is_the_mean_over_labellings_from_the_adjusted_posteriors() -> None:
    """``Validation.expected``'s average_precision is the mean of scikit-learn's AP over 20,000 labellings of the
    window drawn from its posteriors at the estimated mix (``shrunk_calibration``'s, moved by Saerens'
    adjustment), within 4 Monte Carlo standard errors plus 0.001, on a window of 60 (where the AP of the expected
    weights is 0.026 low)."""
    rng = np.random.default_rng(12)
    yv = (rng.random(3000) < 0.2).astype(int)
    sv = special.expit(0.5 * (2 * yv - 1) + rng.normal(size=3000))  # weak scores: AP far from 1
    v = Validation(yv, (sv > 0.5).astype(int), sv, bootstrap=0)
    yw = (rng.random(60) < 0.4).astype(int)
    sw = special.expit(0.5 * (2 * yw - 1) + rng.normal(size=60))
    e = v.expected(sw, (sw > 0.5).astype(int))
    share = mix_posteriors(v.shrunk_calibration.apply(sw), v.priors, e.priors)[:, 1]  # expected()'s map
    labels = rng.random((20_000, 60)) < share
    labels = labels[labels.any(axis=1)]
    order = np.argsort(-sw)  # distinct scores: AP is Σ over positives of the precision at their rank
    ranked = labels[:, order]
    ap = (ranked * np.cumsum(ranked, axis=1) / np.arange(1, 61)).sum(axis=1) / ranked.sum(axis=1)
    for row, value in zip(labels[:10], ap[:10], strict=True):  # the recount is scikit-learn's AP
        assert value == pytest.approx(average_precision_score(row, sw), abs=1e-12)
    tolerance = 4 * ap.std() / np.sqrt(ap.size) + 1e-3
    assert e.average_precision == pytest.approx(ap.mean(), abs=tolerance)
    assert abs(weighted_average_precision(sw, share, 1 - share) - ap.mean()) > 2 * tolerance


def test_bootstrap_intervals_add_the_replicas_spread_and_the_misfit_to_the_window_noise() -> None:
    """With bootstrap replicas the covariance is the window's plus the variance of EM over the refitted
    calibrations (recomputed here from the replicas' own EM runs) plus the square of the misfit (recomputed: EM on
    the validation's calibrated posteriors weighted to the estimated mix), so the intervals are wider."""
    y, p, s = _binary(800, seed=4)
    s = special.expit(special.logit(s) * (1 + 0.3 * special.logit(s) ** 2))  # a bent logit BCTS cannot straighten
    v = Validation(y, p, s, bootstrap=20, seed=1)
    window = s[y == "fraud"][:150].tolist() + s[y == "ok"][:100].tolist()  # 60 % fraud, far from the validation's
    e, alone = v.estimate(window), v.estimate(window, validation_noise=False)
    scores = np.column_stack([window, 1 - np.array(window)])  # classes sorted: ("fraud", "ok")
    estimates = np.array([em_priors(c.apply(scores), src).priors for c, src in v._replicas])
    classes = (y == "ok").astype(int)
    weights = (e.priors / v.priors)[classes]
    misfit = em_priors(v.calibration.apply(np.column_stack([s, 1 - s])), v.priors, weights=weights).priors - e.priors
    assert e.priors == pytest.approx(alone.priors)
    assert misfit[0] ** 2 > 1e-3 * alone.covariance[0, 0]  # a term the tolerance sees
    assert e.covariance[0, 0] == pytest.approx(alone.covariance[0, 0] + np.var(estimates[:, 0], ddof=1)
                                               + misfit[0] ** 2, rel=1e-4)
    assert np.all(e.upper - e.lower >= alone.upper - alone.lower)


def test_a_window_histogram_reads_as_its_samples() -> None:
    """A window given as its score_bins histogram (bin representatives with counts as weights) gives EM's mix
    within 0.002 and the mix test's p-value's decision of the same window given sample by sample."""
    y, p, s = _binary(3000, seed=6)
    v = Validation(y, p, s, bootstrap=0)
    rng = np.random.default_rng(2)
    window = special.expit(2.0 * (2.0 * (rng.random(2000) < 0.5) - 1.0) + rng.normal(size=2000))
    counts = np.bincount(score_bins(window), minlength=BINS)
    by_bins = v.estimate(bin_representatives(), weights=counts)
    by_samples = v.estimate(window)
    assert by_bins.priors == pytest.approx(by_samples.priors, abs=0.002)
    assert by_bins.n == by_samples.n == 2000
    assert (v.mix_test(bin_representatives(), weights=counts).p_value < 0.05) == (v.mix_test(window).p_value < 0.05)


@pytest.mark.parametrize(
    ("decided", "priors", "match"),
    [
        (["ok"], None, "one decision per score row: 5 rows, got 1"),  # was broadcast against the 5 weights
        ("ok", None, "one decision per score row: 5 rows, got a scalar"),
        (np.ones((1, 2)), None, "one decision per score row: 5 rows, got 1"),
        (np.ones((5, 3)), None, r"\(5, 2\) non-negative counts, got shape \(5, 3\)"),
        (["ok"] * 5, [0.5], r"priors must be 2 non-negative shares summing to 1 .* got \[0.5\]"),  # was broadcast
        (["ok"] * 5, [1.0, 1.0], "priors must be 2 non-negative shares summing to 1"),  # was read as is
        (["ok"] * 5, [1.5, -0.5], "priors must be 2 non-negative shares summing to 1"),
        (["ok"] * 5, [float("nan"), 1.0], "priors must be 2 non-negative shares summing to 1"),
    ],
)
def test_expected_refuses_decisions_or_a_mix_that_do_not_fit_the_rows(decided: object, priors: object,
                                                                       match: str) -> None:
    """``expected`` names a decision list of another length than the scores, or a mix that is not K shares summing
    to 1, instead of broadcasting it into a wrong expected confusion."""
    y, p, s = _binary()
    v = Validation(y, p, s)
    with pytest.raises(ValueError, match=match):
        v.expected(s[:5], decided, priors=priors)


def test_expected_at_a_given_mix_is_saerens_adjustment_recounted_by_hand() -> None:
    """At a given mix the expected confusion is Σᵢ p'ᵢ ⊗ e(decisionᵢ) with p' the shrunk calibration's posteriors
    moved by Saerens' formula p'_k ∝ (π'_k / π_k) p_k, recomputed here sample by sample."""
    y, p, s = _binary()
    v = Validation(y, p, s)
    window, decided, mix = s[:200], p[:200], np.array([0.6, 0.4])
    e = v.expected(window, decided, priors=mix)
    posteriors = v.shrunk_calibration.apply(np.column_stack([window, 1.0 - window]))  # columns: fraud, ok
    hand = np.zeros((2, 2))
    for row, label in zip(posteriors, decided, strict=True):
        moved = row * mix / v.priors
        hand[:, v.labels.index(label)] += moved / moved.sum()
    assert np.asarray(e.confusion) == pytest.approx(hand, abs=1e-9)
    assert e.priors.tolist() == mix.tolist()


def test_validation_takes_the_rows_a_monitor_takes() -> None:
    """K = 10 probabilities written with 5 decimals (a CSV, as ``streammon serve`` reads a validation file) sum to 1
    within ~5e-5 only: the monitor takes them as ``y_score``, and so does a Validation (it refused them, at 1e-6);
    a row off by 2e-4 is refused by both."""
    rng = np.random.default_rng(3)
    y = np.arange(300) % 10
    logits = rng.normal(size=(300, 10)) + 2.0 * np.eye(10)[y]
    p = np.round(special.softmax(logits, axis=1), 5)
    assert np.abs(p.sum(axis=1) - 1).max() > 1e-6
    Monitor(classes=list(range(10))).update_many(y, p.argmax(axis=1), y_score=p)
    assert Validation(y, p.argmax(axis=1), p).labels == tuple(range(10))
    p[0, 0] += 2e-4
    with pytest.raises(ValueError, match="row 0 sums to"):
        Monitor(classes=list(range(10))).update_many(y, p.argmax(axis=1), y_score=p)
    with pytest.raises(ValueError, match="row 0 sums to"):
        Validation(y, p.argmax(axis=1), p)


def test_k_class_expected_roc_auc_is_the_macro_one_vs_rest_of_the_moved_posteriors() -> None:
    """At K > 2 the expected ``roc_auc`` is macro one-vs-rest (as documented, not the report's one-vs-one): the
    mean over classes k of scikit-learn's ROC AUC of column k with each sample counted as a k (weight p'_k) and as
    a non-k (weight 1 − p'_k), p' the shrunk calibration's posteriors moved to the mix by Saerens' formula."""
    rng = np.random.default_rng(12)
    y = rng.choice(3, 900, p=[0.5, 0.3, 0.2])
    probs = special.softmax(rng.normal(size=(900, 3)) + 1.5 * np.eye(3)[y], axis=1)
    v = Validation(y, probs.argmax(axis=1), probs)
    window = probs[:300]
    mix = np.array([0.2, 0.3, 0.5])
    e = v.expected(window, window.argmax(axis=1), priors=mix)
    moved = v.shrunk_calibration.apply(window) * mix / v.priors
    moved /= moved.sum(axis=1, keepdims=True)
    truth = np.r_[np.ones(300), np.zeros(300)]
    want = np.mean([roc_auc_score(truth, np.r_[window[:, k], window[:, k]],
                                  sample_weight=np.r_[moved[:, k], 1 - moved[:, k]]) for k in range(3)])
    assert e.roc_auc == pytest.approx(want, abs=1e-9)
