"""The HTML report of a replay of scored predictions with a ``streammon.Validation`` baseline (issue 28, item 5):
per window, the class mix estimated by EM and the performance expected without labels over time, at K = 3 and
K = 2. The figures hold, snapshot by snapshot, what the monitor's own report held (``on_snapshot``), and the last
mix of the sliding window is an EM written here (Saerens, Latinne & Decaestecker 2002) on the validation's BCTS
posteriors of that window's predictions; a replay without scores or without a Validation keeps the page it had."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("plotly")
pa = pytest.importorskip("pyarrow")

import streammon  # noqa: E402
from streammon import Cumulative, Monitor, Sliding  # noqa: E402
from streammon.findings.report import Report  # noqa: E402
from streammon.logs.replayer import replay  # noqa: E402
from streammon.logs.report_page import html_page  # noqa: E402
from tests.test_html_report import _open  # noqa: E402
from tests.test_score_estimate_k3 import saerens, setup  # noqa: E402
from tests.test_score_estimate_monitor import _draw  # noqa: E402

N, EVERY, DELAY, WIDTH = 4_000, 500, 600.0, 1_000


def _k3_logs() -> tuple[dict[str, Any], dict[str, Any], Any, list[str]]:
    """Predictions of a 3-class logistic model (scores in the monitor's class order), the mix moving from uniform
    to (1/6, 2/6, 3/6) half-way; labels arrive DELAY seconds after their prediction."""
    means, model, validation, order = setup(3)
    rng = np.random.default_rng(35)
    y = np.concatenate([rng.choice(3, N // 2), rng.choice(3, N // 2, p=[1 / 6, 2 / 6, 3 / 6])])
    p = model.predict_proba(means[y] + rng.normal(size=(N, 4)))
    names = np.array([f"c{i}" for i in range(3)])
    columns = [int(c[1:]) for c in order]
    t = np.arange(N, dtype=np.float64)
    preds = {"id": np.arange(N), "p": names[p.argmax(axis=1)], "t": t,
             **{f"s_{c}": p[:, j] for c, j in zip(order, columns, strict=True)}}
    return preds, {"id": np.arange(N), "y": names[y], "t": t + DELAY}, validation, order


def _k2_logs() -> tuple[dict[str, Any], dict[str, Any], Any, list[str]]:
    """A fraud model's predictions (10 % fraud in validation, 10 % then 30 % in the log) and delayed labels."""
    rng = np.random.default_rng(36)
    validation = streammon.Validation(*_draw(rng, 3_000, 0.1))
    first, second = _draw(rng, N // 2, 0.1), _draw(rng, N // 2, 0.3)
    y, pred, score = (np.concatenate([a, b]) for a, b in zip(first, second, strict=True))
    t = np.arange(N, dtype=np.float64)
    return ({"id": np.arange(N), "p": pred, "t": t, "s_fraud": score}, {"id": np.arange(N), "y": y, "t": t + DELAY},
            validation, ["fraud", "ok"])


@cache
def replayed(k: int, baseline: str = "validation") -> tuple[Any, list[Report], dict[str, Any], Any]:
    """The joined replay (``baseline``: "validation", "counts" — the same validation's confusion counts — or
    "none"), each snapshot's report, the predictions log and the validation set."""
    preds, labels, validation, order = _k3_logs() if k == 3 else _k2_logs()
    extra: dict[str, Any] = {"positive": "fraud", "reference": {"fraud": 0.1, "ok": 0.9}} if k == 2 else {}
    given = {"validation": validation, "counts": validation.confusion, "none": None}[baseline]
    monitor = Monitor([Cumulative(), Sliding(WIDTH)], classes=order, baseline=given, detector=None,
                      clock=lambda: 0.0, **extra)
    reports: list[Report] = []
    result = replay(pa.table(preds), labels=pa.table(labels), key="id", true="y", pred="p", time="t",
                    every=EVERY, monitor=monitor, score=[f"s_{c}" for c in order][: 1 if k == 2 else None],
                    on_snapshot=lambda _, report: reports.append(report))
    return result, reports, preds, validation


def _figures(page: str) -> dict[str, dict[str, Any]]:
    """The page's figure specifications by id (the JSON inlined in its script)."""
    text = page.split("const {AXES, FIGURES} = ", 1)[1].split(";\nconst CONFIG", 1)[0]
    return {f["id"]: f for f in json.loads(text)["FIGURES"]}


def _trace(figure: dict[str, Any], name: str) -> list[float | None]:
    found = [t["y"] for t in figure["data"] if t["name"] == name]
    assert len(found) == 1, (name, [t["name"] for t in figure["data"]])
    return list(found[0])


def _close(drawn: list[float | None], held: list[float]) -> None:
    """The figure's points (4 significant digits) against the reports' values, snapshot by snapshot."""
    assert len(drawn) == len(held)
    for got, want in zip(drawn, held, strict=True):
        assert got is not None and got == pytest.approx(want, rel=6e-4, abs=1e-9), (drawn, held)


@pytest.mark.parametrize("k", [3, 2])
def test_each_snapshot_of_the_em_figures_is_the_monitors_report(k: int) -> None:
    """Per window, the mix figure's estimated line and band of each class, and the expected figure's mean recall and
    ROC AUC with their bounds, are the report's ``estimate`` and ``expected`` at every snapshot; the labelled lines
    its labelled mix and scores; the dotted line the validation's own mean recall."""
    result, reports, _, _ = replayed(k)
    assert len(reports) == len(result.snapshots) > 4
    figures = _figures(html_page(result))
    for w, name in enumerate(_order(result)):
        windows = [r.windows[name] for r in reports]
        assert all(x.estimate is not None and x.estimate.method == "em" for x in windows), name
        mix = figures[f"w{w}-em-mix"]
        for label in result.classes:
            shown = f"{label} estimated without labels"
            _close(_trace(mix, shown), [x.estimate.priors[label] for x in windows])  # type: ignore[union-attr]
            _close(_trace(mix, f"{shown} upper"), [x.estimate.upper[label] for x in windows])  # type: ignore[union-attr]
            _close(_trace(mix, f"{shown} 95 % interval"),
                   [x.estimate.lower[label] for x in windows])  # type: ignore[union-attr]
            labelled = [(i, x.priors[label]) for i, x in enumerate(windows) if x.n > 0]
            line = _trace(mix, f"{label} labelled")
            _close([line[i] for i, _ in labelled], [v for _, v in labelled])
        expected = figures[f"w{w}-em-expected"]
        for metric, title in (("acsa", "balanced accuracy (mean recall)"), ("roc_auc", "ROC AUC")):
            shown = f"{title} expected without labels"
            _close(_trace(expected, shown), [x.expected[metric] for x in windows])
            _close(_trace(expected, f"{shown} upper"),
                   [x.estimate.expected_upper[metric] for x in windows])  # type: ignore[union-attr]
            _close(_trace(expected, f"{shown} 95 % interval"),
                   [x.estimate.expected_lower[metric] for x in windows])  # type: ignore[union-attr]
        labelled = [(i, x.scores["acsa"]) for i, x in enumerate(windows) if x.n > 0]
        line = _trace(expected, "balanced accuracy (mean recall) labelled")
        _close([line[i] for i, _ in labelled], [v for _, v in labelled])
        dotted = [s for s in expected["layout"]["shapes"] if s["line"].get("dash") == "dot"]
        held = windows[-1].estimate.validation_scores["acsa"]  # type: ignore[union-attr]
        assert [s["y0"] for s in dotted] == [held]
        counts = replayed(k)[3].counts.astype(np.float64)  # the validation's recalls, counted
        assert held == pytest.approx(float(np.mean(np.diag(counts) / counts.sum(axis=1))), abs=1e-12)


def _order(result: Any) -> list[str]:
    """The windows in the page's order (the first is where the most severe alert is clearest)."""
    page = html_page(result)
    return [re.sub(r"&amp;", "&", n) for n in re.findall(r'<h2 id="window-\d+">Window ([^<]+)</h2>', page)]


def test_the_last_sliding_mix_is_an_em_written_here_on_that_windows_predictions() -> None:
    """K = 3: the final snapshot's mix of the sliding window, as drawn, is EM on the validation's BCTS posteriors of
    the last WIDTH predictions' scores (the report's points are rounded to 4 significant digits)."""
    result, _, preds, validation = replayed(3)
    order = list(result.classes)
    scores = np.column_stack([preds[f"s_{c}"] for c in order])[-WIDTH:]
    in_validation = np.empty_like(scores)
    in_validation[:, [validation.labels.index(c) for c in order]] = scores
    mine = saerens(validation.calibration.apply(in_validation), np.asarray(validation.priors))
    page = _figures(html_page(result))
    w = _order(result).index(f"sliding_{WIDTH}")
    for c in order:
        last = _trace(page[f"w{w}-em-mix"], f"{c} estimated without labels")[-1]
        assert last == pytest.approx(mine[validation.labels.index(c)], rel=6e-4)


def test_without_a_validation_or_scores_the_page_has_no_em_section() -> None:
    """The same predictions with the validation's confusion counts as baseline (the hard-label estimate), or with
    no baseline at all, draw no EM figure or heading; with the Validation every window has both figures."""
    for baseline in ("counts", "none"):
        page = html_page(replayed(3, baseline)[0])
        assert "-em-" not in page and "Without labels: the class mix" not in page
    result = replayed(3)[0]
    page = html_page(result)
    for w in range(len(result.windows)):
        assert f'id="w{w}-em-mix"' in page and f'id="w{w}-em-expected"' in page


def test_the_timeline_rows_of_the_estimate_are_the_reports(tmp_path: Path) -> None:
    """The written timeline holds, per snapshot and window, ``estimated_prior`` per class with its interval,
    ``label_shift_p`` and ``expected_acsa`` with its bounds, as the snapshot's report held them."""
    result, reports, _, _ = replayed(3)
    path = tmp_path / "timeline.json"
    result.write_timeline(path)
    rows = json.loads(path.read_text(encoding="utf-8"))
    by_samples = {s.samples: r for s, r in zip(result.snapshots, reports, strict=True)}
    checked = 0
    for row in rows:
        w = by_samples[row["samples"]].windows[row["window"]]
        e = w.estimate
        assert e is not None
        if row["metric"] == "estimated_prior":
            assert (row["value"], row["lower"], row["upper"]) == (e.priors[row["class"]], e.lower[row["class"]],
                                                                  e.upper[row["class"]])
        elif row["metric"] == "label_shift_p":
            assert row["value"] == e.p_value
        elif row["metric"] == "expected_acsa":
            assert (row["value"], row["lower"], row["upper"]) == (w.expected["acsa"], e.expected_lower["acsa"],
                                                                  e.expected_upper["acsa"])
        else:
            continue
        checked += 1
    assert checked == len(result.snapshots) * len(result.windows) * (3 + 2)


def test_the_em_figures_draw_offline(browser: Any, tmp_path: Path) -> None:
    """K = 3: the page with the EM figures opens offline with no console error, every figure drawn with data, the
    estimate's two figures per window among them, each with its bands."""
    result = replayed(3)[0]
    page = tmp_path / "em.html"
    result.write_html(page)
    drawn = {f["id"] for f in _open(browser, page, tmp_path / "em.png")}
    for w in range(len(result.windows)):
        assert {f"w{w}-em-mix", f"w{w}-em-expected"} <= drawn
        bands = browser.evaluate(f"document.getElementById('w{w}-em-mix').data.filter(t => t.fill === 'tonexty')"
                                 ".length")
        assert bands == 3
        bands = browser.evaluate(f"document.getElementById('w{w}-em-expected').data.filter(t => t.fill === "
                                 "'tonexty').length")
        assert bands == 2


def _write_csv(path: Path, columns: dict[str, Any]) -> None:
    pa_csv = pytest.importorskip("pyarrow.csv")
    pa_csv.write_csv(pa.table(columns), path)


@pytest.mark.parametrize("typed", [False, True])
def test_the_cli_reads_a_validation_file_and_draws_what_the_python_replay_draws(tmp_path: Path, typed: bool,
                                                                              capsys: Any) -> None:
    """``streammon replay --key --labels --score ... --validation V.csv --html``: the validation file (the server's
    format, y_score:CLASS per class) is the baseline of EM; the page's EM figures hold what the Python replay with
    that ``Validation`` draws. ``typed``: integer classes in the logs and the file, no --reference (the file's
    text labels are read as the log's integers, the score columns in the file's order)."""
    from streammon.cli import main

    preds, labels, _, order = _k3_logs()
    means, model, _, _ = setup(3)
    rng = np.random.default_rng(7)
    yv = rng.choice(3, 1_500)
    pv = model.predict_proba(means[yv] + rng.normal(size=(1_500, 4)))  # columns c0, c1, c2
    names = [f"c{i}" for i in range(3)]
    if typed:  # classes 0, 1, 2; no reference: the monitor takes the validation's order (the file's columns)
        order = [0, 1, 2]
        preds = {**{k: v for k, v in preds.items() if not k.startswith("s_")},
                 "p": np.array([int(c[1:]) for c in preds["p"]]),
                 **{f"s_{i}": preds[f"s_c{i}"] for i in range(3)}}
        labels = {**labels, "y": np.array([int(c[1:]) for c in labels["y"]])}
        names = ["0", "1", "2"]
    spelled = np.array(names)
    _write_csv(tmp_path / "v.csv", {"y_true": spelled[yv], "y_pred": spelled[pv.argmax(axis=1)],
                                    **{f"y_score:{n}": pv[:, i] for i, n in enumerate(names)}})
    _write_csv(tmp_path / "p.csv", preds)
    _write_csv(tmp_path / "y.csv", labels)
    args = ["replay", str(tmp_path / "p.csv"), "--key", "id", "--labels", str(tmp_path / "y.csv"), "--true", "y",
            "--pred", "p", "--time", "t", "--every", str(EVERY), "--window", "sliding:1000", "--no-detect",
            "--validation", str(tmp_path / "v.csv"), "--html", str(tmp_path / "r.html"),
            *(a for c in order for a in ("--score", f"s_{c}"))]
    if not typed:
        args += ["--reference", ",".join(f"{c}=1" for c in order)]
    assert main(args) == 0, capsys.readouterr().err
    given = streammon.Validation([int(n) if typed else n for n in spelled[yv]],
                                 [int(n) if typed else n for n in spelled[pv.argmax(axis=1)]], pv,
                                 classes=[int(n) if typed else n for n in names])
    monitor = Monitor([Sliding(1000)], classes=order, baseline=given, detector=None, clock=lambda: 0.0,
                      reference=None if typed else dict.fromkeys(order, 1))
    mine = replay(pa.table(preds), labels=pa.table(labels), key="id", true="y", pred="p", time="t", every=EVERY,
                  monitor=monitor, score=[f"s_{c}" for c in order])
    drawn = _figures((tmp_path / "r.html").read_text(encoding="utf-8"))
    want = _figures(html_page(mine))
    assert drawn["w0-em-mix"]["data"] == want["w0-em-mix"]["data"]
    assert drawn["w0-em-expected"]["data"] == want["w0-em-expected"]["data"]
    assert any(t["name"] == f"{order[0]} estimated without labels" for t in drawn["w0-em-mix"]["data"])


def test_the_cli_refuses_validation_with_baseline_or_counts(tmp_path: Path, capsys: Any) -> None:
    """--validation with --baseline or --counts is a usage error (status 2) naming the flags, before any read."""
    from streammon.cli import main

    for extra in (["--baseline", '{"a": {"a": 1}}', "--true", "y", "--pred", "p"], ["--counts"]):
        with pytest.raises(SystemExit) as stopped:
            main(["replay", str(tmp_path / "missing.csv"), "--validation", str(tmp_path / "v.csv"), *extra])
        assert stopped.value.code == 2
        assert "--validation is the baseline of a log with scores" in capsys.readouterr().err


def test_the_hard_label_estimates_timeline_rows_are_its_distortion_prone_expectations() -> None:
    """With the validation's confusion counts as baseline (no EM), each snapshot's ``expected_METRIC`` rows are the
    report's expected values of exactly the catalog's distortion-prone (not Condition 1) metrics, ``corrected`` the
    value at the reference mix (expected minus its expected distortion), with no bounds."""
    from streammon.metrics.specs import catalog

    result, reports, _, _ = replayed(3, "counts")
    by_samples = {s.samples: r for s, r in zip(result.snapshots, reports, strict=True)}
    seen: dict[tuple[int, str], set[str]] = {}
    for row in result.timeline.records():
        if not row["metric"].startswith("expected_"):
            continue
        w = by_samples[row["samples"]].windows[row["window"]]
        assert w.estimate is not None and w.estimate.method != "em"
        metric = row["metric"].removeprefix("expected_")
        assert row["value"] == pytest.approx(w.expected[metric], abs=0, nan_ok=True)
        assert row["corrected"] == pytest.approx(w.expected[metric] - w.expected_distortion[metric], abs=1e-15,
                                                 nan_ok=True)
        assert row["lower"] is None and row["upper"] is None
        seen.setdefault((row["samples"], row["window"]), set()).add(metric)
    assert len(seen) == len(result.snapshots) * len(result.windows)
    for (samples, window), metrics in seen.items():
        w = by_samples[samples].windows[window]
        assert metrics == {m for m in w.expected if m in catalog() and not catalog()[m].condition1}
        assert metrics and "acsa" not in metrics
