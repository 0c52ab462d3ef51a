"""Speed and memory benchmark: streammon against river and a bare np.bincount, side by side (run on demand).

Every number is a ratio measured in the same run (medians of 5 repeats) — absolute times on a
shared machine are only indicative. Before timing, the script checks that streammon and river
report the same values where they overlap (a fast wrong benchmark is worthless).

    python examples/bench_speed.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import time
import tracemalloc
import urllib.request
import warnings
from collections.abc import Callable
from typing import Any

import bench_labels
import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from river import metrics, utils

from streammon import Cumulative, DetectorSettings, Monitor, Sliding, Timed
from streammon.export.families import write_model
from streammon.export.prometheus import MonitorCollector
from streammon.export.server import serve
from streammon.export.text import Lines, document
from streammon.monitor import reports as monitor_reports

WINDOW = 1000


def four_windows() -> list:
    return [Cumulative(), Sliding(1000), Sliding(10_000), Timed(3600)]


def median_time(fn: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def side_by_side(fns: dict[str, Callable[[], object]], repeats: int = 5) -> dict[str, float]:
    """Median seconds of each function, the functions taking turns within every repeat (so that a
    slow spell of this shared machine hits them alike)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            gc.collect()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def labels(k: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n)
    return truth, np.where(rng.random(n) < 0.8, truth, rng.integers(0, k, n))


# river's metrics, with the streammon catalog name each one equals where one does (river's MCC is binary:
# on 10 classes it scores "label 1 vs the rest", so it is timed but not compared there)
RIVER_BINARY = [(metrics.Accuracy, "accuracy"), (metrics.BalancedAccuracy, "acsa"), (metrics.Precision, None),
                (metrics.Recall, None), (metrics.F1, None), (metrics.MCC, "mcc"), (metrics.CohenKappa, "kappa"),
                (metrics.GeometricMean, "gmean")]
RIVER_MULTICLASS = [(metrics.Accuracy, "accuracy"), (metrics.BalancedAccuracy, "acsa"), (metrics.MacroPrecision, None),
                    (metrics.MacroRecall, "acsa"), (metrics.MacroF1, "macro_f1"), (metrics.MCC, None),
                    (metrics.CohenKappa, "kappa"), (metrics.GeometricMean, "gmean")]


def river_composed(k: int) -> Any:
    """The issue's baseline: 8 metrics composed with ``+`` and windowed by one ``utils.Rolling(…, 1000)``."""
    pairs = RIVER_BINARY if k == 2 else RIVER_MULTICLASS
    composed = pairs[0][0]()
    for cls, _ in pairs[1:]:
        composed = composed + cls()
    with warnings.catch_warnings():  # river 0.26 deprecates Rolling(instance); a Metrics object has no class form
        warnings.simplefilter("ignore", DeprecationWarning)
        return utils.Rolling(composed, window_size=WINDOW)


def river_separate(k: int) -> list[Any]:
    """8 metrics, each in its own ``utils.Rolling`` window of 1 000 (faster than the composed form)."""
    return [utils.Rolling(cls, window_size=WINDOW) for cls, _ in (RIVER_BINARY if k == 2 else RIVER_MULTICLASS)]


def per_sample(k: int, n: int) -> dict[str, float]:
    """Seconds per sample of river's windowed metrics (composed, separate, one confusion matrix) and streammon."""
    truth, preds = labels(k, n)
    if k == 2:
        truth, preds = truth.astype(bool), preds.astype(bool)
    t, p = truth.tolist(), preds.tolist()
    pairs = RIVER_BINARY if k == 2 else RIVER_MULTICLASS

    def run_composed() -> Any:
        rolled = river_composed(k)
        update = rolled.update
        for y, q in zip(t, p, strict=True):
            update(y, q)
        return rolled

    def run_separate() -> list[Any]:
        rolled = river_separate(k)
        for y, q in zip(t, p, strict=True):
            for metric in rolled:
                metric.update(y, q)
        return rolled

    def run_cm() -> None:
        cm = utils.Rolling(metrics.ConfusionMatrix, window_size=WINDOW)
        update = cm.update
        for y, q in zip(t, p, strict=True):
            update(y, q)

    def run_streammon() -> Monitor:
        monitor = Monitor(four_windows(), classes=sorted(set(t)))
        update = monitor.update
        for y, q in zip(t, p, strict=True):
            update(y, q)
        monitor.flush()  # every sample reaches the windows inside the timing
        return monitor

    composed, separate, monitor = run_composed(), run_separate(), run_streammon()
    scores = monitor.report().windows["sliding_1000"].scores
    for (cls, name), together, alone in zip(pairs, composed.obj, separate, strict=True):
        assert math.isclose(together.get(), alone.get(), abs_tol=1e-12), f"river's {cls.__name__} differs composed"
        if name is not None:
            assert math.isclose(alone.get(), scores[name], rel_tol=1e-9, abs_tol=1e-12), \
                f"{name} = {scores[name]} differs from river's {cls.__name__} = {alone.get()}"
    reads = side_by_side({"river": composed.get, "streammon": monitor.report})
    updates = side_by_side({"composed": run_composed, "separate": run_separate, "cm": run_cm,
                            "streammon": run_streammon}, repeats=3)
    return {**{name: seconds / n for name, seconds in updates.items()},
            "read_river": reads["river"], "read_streammon": reads["streammon"]}


def batch(k: int, n: int) -> dict[str, float]:
    """Samples/s of update_many (four windows, with and without degradation detection) and np.bincount."""
    truth, preds = labels(k, n)
    with_detection = Monitor(four_windows())  # no classes= given: labels are registered in first-seen order
    windows_only = Monitor(four_windows(), detector=DetectorSettings(enabled=False))
    check = Monitor([Sliding(1000)], classes=list(range(k)))
    check.update_many(truth, preds)
    tail = np.bincount(truth[-1000:] * k + preds[-1000:], minlength=k * k).reshape(k, k)
    assert np.array_equal(check.report().windows["sliding_1000"].confusion.matrix, tail), "sliding window is wrong"
    times = side_by_side({
        "bincount": lambda: np.bincount(truth * k + preds, minlength=k * k),
        "update_many": lambda: with_detection.update_many(truth, preds),
        "update_many_windows_only": lambda: windows_only.update_many(truth, preds),
    }, repeats=7)
    return {name: n / seconds for name, seconds in times.items()}


def reads() -> dict[str, float]:
    """report() time after one new sample (every window changed), by K, by window size and by samples seen."""
    out = {}
    for k in (2, 10, 100):
        monitor = Monitor(four_windows(), classes=list(range(k)))
        monitor.update_many(*labels(k, 200_000))
        out[f"K={k}"] = _fresh_read(monitor, k)
    for size in (1_000, 100_000):
        monitor = Monitor([Sliding(size)], classes=list(range(10)))
        monitor.update_many(*labels(10, 200_000))
        out[f"sliding {size:,}"] = _fresh_read(monitor, 10)
    for seen in (10_000, 1_000_000):
        monitor = Monitor(four_windows(), classes=list(range(10)))
        monitor.update_many(*labels(10, seen))
        out[f"after {seen:,} samples"] = _fresh_read(monitor, 10)
    return out


def _fresh_read(monitor: Monitor, k: int, repeats: int = 15) -> float:
    """Median seconds of report() after one new sample (added, and counted into the windows, outside the timing)."""
    truth, preds = labels(k, repeats, seed=1)
    times = []
    for i in range(repeats):
        monitor.update_many(truth[i:i + 1], preds[i:i + 1])
        monitor.counts()
        start = time.perf_counter()
        monitor.report()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def memory() -> dict[str, float]:
    """Bytes per sample of a sliding window; bytes of a timed window at two throughputs."""
    out = {}
    size = 100_000
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    monitor = Monitor([Sliding(size)], classes=list(range(10)), detector=DetectorSettings(enabled=False))
    monitor.update_many(*labels(10, size))
    grown = tracemalloc.take_snapshot()
    tracemalloc.stop()
    sliding_bytes = sum(s.size_diff for s in grown.compare_to(base, "filename") if "streammon" in str(s.traceback))
    empty = Monitor([Sliding(1)], classes=list(range(10)), detector=DetectorSettings(enabled=False))
    del empty
    out["sliding bytes/sample"] = sliding_bytes / size
    for rate in (1_000, 100_000):
        monitor = Monitor([Timed(60, buckets=60)], classes=list(range(10)), detector=DetectorSettings(enabled=False))
        truth, preds = labels(10, rate)
        tracemalloc.start()
        for second in range(120):
            monitor.update_many(truth, preds, t=float(second))
            if second == 60:
                base = tracemalloc.take_snapshot()
        end = tracemalloc.take_snapshot()
        tracemalloc.stop()
        kept = sum(s.size for s in end.statistics("filename") if "streammon" in str(s.traceback))
        out[f"timed 60s window at {rate:,}/s: bytes held"] = kept
        out[f"timed growth after 60 s at {rate:,}/s"] = sum(
            s.size_diff for s in end.compare_to(base, "filename") if "streammon" in str(s.traceback))
    return out


WINDOW_FIELDS = ("counts", "predicted", "priors", "recall", "precision", "corrected_precision", "scores", "corrected",
                 "distortion", "competitiveness", "recall_interval", "intervals")


def read_everything(report: Any) -> None:
    """Read every value of every window: a report builds its per-window mappings (and intervals) when first read."""
    for w in report.windows.values():
        for field in WINDOW_FIELDS:
            dict(getattr(w, field))


def read_costs(k: int) -> dict[str, float]:
    """Seconds of river's eight get() on one Rolling(1000) window, and of report() on four windows — fresh (one
    new sample before each, counted into the windows outside the timing), fresh with every value of every window
    then read, unchanged (nothing new), and right after one per-sample update() (moving it into the windows is
    part of the read) — taking turns in one run."""
    truth, preds = labels(k, 20_000)
    river = river_separate(k)
    for y, q in zip(truth[-WINDOW:].tolist(), preds[-WINDOW:].tolist(), strict=True):
        for metric in river:
            metric.update(y, q)
    monitor = Monitor(four_windows(), classes=list(range(k)))
    monitor.update_many(truth, preds)
    times: dict[str, list[float]] = {"river": [], "fresh": [], "fresh_read": [], "unchanged": [], "after_update": []}
    for i in range(21):
        for metric in river:  # a new sample before each read, on both sides (outside the timing)
            metric.update(int(truth[i]), int(preds[i]))
        start = time.perf_counter()
        [metric.get() for metric in river]
        times["river"].append(time.perf_counter() - start)
        for name in ("fresh", "fresh_read"):
            monitor.update_many(truth[i:i + 1], preds[i:i + 1])
            monitor.counts()  # the new sample reaches the windows outside the timing
            start = time.perf_counter()
            report = monitor.report()
            if name == "fresh_read":
                read_everything(report)
            times[name].append(time.perf_counter() - start)
        start = time.perf_counter()
        monitor.report()
        times["unchanged"].append(time.perf_counter() - start)
        monitor.update(int(truth[i]), int(preds[i]))  # one per-sample update: the read moves it into the windows
        start = time.perf_counter()
        monitor.report()
        times["after_update"].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")  # what Prometheus 2 sends


class _NullSink:
    """Takes the samples and drops them: what building the families costs without formatting them."""

    def add(self, family: str, labels: object, value: float) -> None:
        pass

    def add_buckets(self, family: str, labels: object, buckets: object) -> None:
        pass

    def add_series(self, family: str, rows: object, values: object) -> None:
        pass


def scrape(rounds: int = 7) -> dict[str, float]:
    """Seconds per scrape of 20 models × 4 windows at K = 10, after new samples in every model ("changed") and
    again right after ("unchanged"): prometheus_client's generate_latest of a registry (the collect() path),
    MonitorCollector.exposition(), and over HTTP on 127.0.0.1 as Prometheus asks (OpenMetrics, gzip) from
    serve() — answered from exposition() — and from serve(registry=...) — answered by make_wsgi_app (and an empty
    answer, /favicon.ico: the HTTP round trip of urllib and the server alone). The paths
    take turns within each round; each "changed" follows new samples in every model. Also the changed scrape's
    parts: the 20 report() calls, building the samples (into a sink that drops them), formatting them into
    text, joining the document."""
    collector = MonitorCollector()
    monitors = []
    for i in range(20):
        monitor = Monitor(four_windows(), reference={c: 1 for c in range(10)})
        monitor.update_many(*labels(10, 20_000, seed=i))
        collector.add(f"model-{i}", monitor)
        monitors.append(monitor)
    registry = CollectorRegistry()
    registry.register(collector)
    fast, slow = serve(collector, port=0), serve(collector, port=0, registry=CollectorRegistry())

    def http(url: str) -> Callable[[], object]:
        request = urllib.request.Request(url, headers={"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip"})
        return lambda: urllib.request.urlopen(request, timeout=30).read()

    paths: dict[str, Callable[[], object]] = {
        "generate_latest": lambda: generate_latest(registry), "exposition": collector.exposition,
        "HTTP serve()": http(fast.url), "HTTP make_wsgi_app": http(slow.url),
        "HTTP round trip alone": http(fast.url.replace("/metrics", "/favicon.ico"))}  # an empty answer
    times: dict[str, list[float]] = {f"{path} {state}": [] for path in paths for state in ("changed", "unchanged")}
    times |= {"reports": [], "build": [], "format": [], "join": []}
    try:
        for i in range(rounds):
            for j, (path, fn) in enumerate(paths.items()):
                _new_samples(monitors, seed=100 + 10 * i + j)
                for state in ("changed", "unchanged"):
                    gc.collect()
                    start = time.perf_counter()
                    fn()
                    times[f"{path} {state}"].append(time.perf_counter() - start)
            _new_samples(monitors, seed=100 + 10 * i + len(paths))
            for part, seconds in _scrape_parts(monitors, collector).items():
                times[part].append(seconds)
    finally:
        fast.stop()
        slow.stop()
    return {name: statistics.median(t) for name, t in times.items()}


def _new_samples(monitors: list[Monitor], seed: int) -> None:
    for monitor in monitors:
        monitor.update_many(*labels(10, 3, seed=seed))
        monitor.counts()


def _scrape_parts(monitors: list[Monitor], collector: MonitorCollector) -> dict[str, float]:
    """Seconds of each part of a changed scrape: the reports (``streammon.monitor.reports``: every model's windows
    in one stack, as the collector asks), building the samples (into a sink that drops them), formatting them
    (Lines, less the building), joining the document."""
    gc.collect()
    start = time.perf_counter()
    reports = [(f"model-{i}", r) for i, r in enumerate(monitor_reports(monitors))]  # as the collector asks
    built = time.perf_counter()
    for model, report in reports:
        write_model(_NullSink(), model, report)
    formatted = time.perf_counter()
    order = collector._order((False, False))
    pieces = []
    for model, report in reports:
        lines = Lines(order)
        write_model(lines, model, report)
        pieces.append(lines.pieces())
    joined = time.perf_counter()
    document(order, pieces, openmetrics=True)
    end = time.perf_counter()
    return {"reports": built - start, "build": formatted - built, "format": (joined - formatted) - (formatted - built),
            "join": end - joined}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams (noisier)")
    quick = parser.parse_args().quick
    n_sample, n_batch = (20_000, 1_000_000) if quick else (100_000, 2_000_000)
    print("| measure | K | streammon | baseline | ratio |\n|---|---|---|---|---|")
    for k in (2, 10):
        r = per_sample(k, n_sample)
        ns = r["streammon"] * 1e9
        print(f"| update, per sample | {k} | {ns:,.0f} ns | river 8 metrics `+`-composed in one Rolling(1000) "
              f"{r['composed'] * 1e6:,.1f} µs | **{r['composed'] / r['streammon']:.0f}× faster** |")
        print(f"| update, per sample | {k} | {ns:,.0f} ns | river 8 metrics, each in its own Rolling(1000) "
              f"{r['separate'] * 1e6:,.1f} µs | **{r['separate'] / r['streammon']:.0f}× faster** |")
        print(f"| update, per sample | {k} | {ns:,.0f} ns | river Rolling(ConfusionMatrix, 1000) "
              f"{r['cm'] * 1e6:,.2f} µs | **{r['cm'] / r['streammon']:.1f}× faster** |")
        ratio = r["read_river"] / r["read_streammon"]
        print(f"| read, nothing new (report vs get) | {k} | {r['read_streammon'] * 1e3:,.2f} ms (4 windows, full "
              "catalog; nothing new since the last read) "
              f"| river {r['read_river'] * 1e3:,.2f} ms (8 metrics, 1 window) | {ratio:.2f}× |")
    for k in (2, 10, 100):
        b = batch(k, n_batch)
        print(f"| update_many, 4 windows + detection | {k} | {b['update_many'] / 1e6:,.0f} M/s | np.bincount "
              f"{b['bincount'] / 1e6:,.0f} M/s | {b['update_many'] / b['bincount']:.0%} of bincount |")
        print(f"| update_many, 4 windows only | {k} | {b['update_many_windows_only'] / 1e6:,.0f} M/s | np.bincount "
              f"{b['bincount'] / 1e6:,.0f} M/s | {b['update_many_windows_only'] / b['bincount']:.0%} of bincount |")
    print()
    for name, seconds in reads().items():
        print(f"report() after a new sample, {name}: {seconds * 1e3:.2f} ms")
    for name, value in memory().items():
        print(f"{name}: {value:,.1f}")
    print()
    print("| read | K | river 8 get() (1 window) | report() fresh (4 windows) | ratio | fresh, every value read "
          "| ratio | report() unchanged | ratio | report() right after one update() | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in (2, 10, 100):
        r = read_costs(k)
        print(f"| report vs get | {k} | {r['river'] * 1e3:.3f} ms | {r['fresh'] * 1e3:.3f} ms | "
              f"{r['river'] / r['fresh']:.2f}× | {r['fresh_read'] * 1e3:.3f} ms | "
              f"{r['river'] / r['fresh_read']:.2f}× | {r['unchanged'] * 1e3:.3f} ms | "
              f"{r['river'] / r['unchanged']:.2f}× | {r['after_update'] * 1e3:.3f} ms | "
              f"{r['river'] / r['after_update']:.2f}× |")
    s = scrape()
    print("Scrape of 20 models × 4 windows, K = 10 (~10,000 lines; median ms; HTTP: Prometheus' Accept, gzip):")
    print("| path | after new samples in every model | unchanged | unchanged / changed |\n|---|---|---|---|")
    for path in ("generate_latest", "exposition", "HTTP make_wsgi_app", "HTTP serve()", "HTTP round trip alone"):
        changed, unchanged = s[f"{path} changed"], s[f"{path} unchanged"]
        print(f"| {path} | {changed * 1e3:.1f} ms | {unchanged * 1e3:.1f} ms | {unchanged / changed:.0%} |")
    print(f"changed scrape's parts: {s['reports'] * 1e3:.1f} ms the reports (one stack), {s['build'] * 1e3:.1f} ms "
          f"building the samples, {s['format'] * 1e3:.1f} ms formatting them, {s['join'] * 1e3:.1f} ms joining")
    print()
    print("Predictions whose labels come later (examples/bench_labels.py):")
    print(bench_labels.table(quick))


if __name__ == "__main__":
    main()
