"""Summaries and the markdown report of the W1 benchmark.

A *record* is one system's JSON line from ``_systems.py`` (one run); a
*summary* aggregates a system's records over repeats: medians of times and
metrics, the largest peak RSS.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Record = dict[str, Any]
Summary = dict[str, Any]
REFERENCES = ("distboost.dask", "distboost")


def _median(values: list[float | None]) -> float | None:
    """Median of the values that are not None, or None if there are none."""
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def _unique(values: list[str]) -> list[str]:
    """The values without repeats, in first-seen order."""
    return list(dict.fromkeys(values))


def _worker_peaks(runs: list[Record]) -> list[float]:
    """Per-worker peak RSS in MB, the largest over runs, worker by worker."""
    per_run = [run["worker_peak_rss_mb"] for run in runs if run.get("worker_peak_rss_mb")]
    return [max(peaks) for peaks in zip(*per_run, strict=False)] if per_run else []


def summarize_system(system: str, records: list[Record]) -> Summary:
    """Aggregate one system's records (all repeats) into a summary."""
    ok = [record for record in records if record["status"] == "ok"]
    summary: Summary = {
        "system": system,
        "status": _status(records, ok),
        "runs": len(ok),
        "errors": _unique([record["error"] for record in records if record.get("error")]),
        "notes": _unique([note for record in ok for note in record.get("notes", [])]),
    }
    if not ok:
        return summary
    train = [record["train_s"] for record in ok]
    breakdown_keys = _unique([key for record in ok for key in record.get("breakdown", {})])
    summary.update(
        version=ok[0]["version"],
        train_median_s=statistics.median(train),
        train_min_s=min(train),
        train_max_s=max(train),
        prepare_median_s=_median([record.get("prepare_s") for record in ok]),
        read_median_s=_median([record.get("read_s") for record in ok]),
        peak_rss_mb=max(record["peak_rss_mb"] for record in ok),
        worker_peak_rss_mb=_worker_peaks(ok),
        auc=statistics.median(record["auc"] for record in ok),
        logloss=statistics.median(record["logloss"] for record in ok),
        breakdown_median_s={
            key: _median([record["breakdown"].get(key) for record in ok])
            for key in breakdown_keys
        },
    )
    return summary


def _status(records: list[Record], ok: list[Record]) -> str:
    """Status over repeats: ok, skipped, failed, not run, or "k/n ok" for a mix."""
    if not records:
        return "not run"
    if len(ok) == len(records):
        return "ok"
    return f"{len(ok)}/{len(records)} ok" if ok else records[-1]["status"]


def summarize(records: list[Record], systems: list[str]) -> list[Summary]:
    """One summary per system, in the order of ``systems``."""
    return [
        summarize_system(system, [record for record in records if record["system"] == system])
        for system in systems
    ]


def _fmt(value: float | None, digits: int) -> str:
    """A number with fixed decimals, or an em dash for a missing value."""
    return "—" if value is None else f"{value:.{digits}f}"


def _ratio(summary: Summary, by_name: dict[str, Summary], reference: str) -> str:
    """This system's median train time divided by the reference system's."""
    base = by_name.get(reference, {}).get("train_median_s")
    mine = summary.get("train_median_s")
    return "—" if not base or mine is None else f"{mine / base:.2f}"


def _main_row(summary: Summary, by_name: dict[str, Summary]) -> str:
    """One markdown table row of the main table."""
    if summary["status"] in ("skipped", "failed", "not run"):
        return f"| {summary['system']} | {summary['status']} |" + " — |" * 9
    train = (f"{summary['train_median_s']:.2f} [{summary['train_min_s']:.2f}–"
             f"{summary['train_max_s']:.2f}]")
    workers = " / ".join(f"{peak:.0f}" for peak in summary["worker_peak_rss_mb"]) or "—"
    cells = [
        summary["system"], summary["status"], train,
        _fmt(summary["prepare_median_s"], 2), _fmt(summary["read_median_s"], 2),
        _fmt(summary["peak_rss_mb"], 0), workers,
        _fmt(summary["auc"], 4), _fmt(summary["logloss"], 4),
        *(_ratio(summary, by_name, reference) for reference in REFERENCES),
    ]
    return "| " + " | ".join(cells) + " |"


MAIN_HEADER = (
    "| system | status | train s, median [min–max] | prepare s | read s "
    "| peak RSS MB, process | peak RSS MB, workers | test AUC | test log loss "
    "| train ÷ distboost.dask | train ÷ distboost |"
)


def main_table(summaries: list[Summary]) -> list[str]:
    """The main table: times, memory, metrics and ratios, one row per system."""
    by_name = {summary["system"]: summary for summary in summaries}
    return [
        MAIN_HEADER,
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *(_main_row(summary, by_name) for summary in summaries),
    ]


NO_BREAKDOWN = (
    "No breakdown: fit_timings_ had no keys besides 'prepare' and 'train', "
    "or distboost did not run."
)


def breakdown_table(summaries: list[Summary]) -> list[str]:
    """Where distboost's train time goes, from its ``fit_timings_`` breakdown keys."""
    rows = []
    for summary in summaries:
        train = summary.get("train_median_s")
        for key, seconds in summary.get("breakdown_median_s", {}).items():
            share = "—" if not train or seconds is None else f"{100 * seconds / train:.0f} %"
            rows.append(f"| {summary['system']} | {key} | {_fmt(seconds, 3)} | {share} |")
    if not rows:
        return [NO_BREAKDOWN]
    return ["| system | part | median s | share of train |", "|---|---|---|---|", *rows]


@dataclass(frozen=True)
class Target:
    """A target of docs/benchmarks.md: ``value(system, peer)`` compared with ``limit``."""

    measure: str
    system: str
    peer: str
    value: Callable[[Summary, Summary], float]
    limit: float
    at_most: bool
    target: str


def _train_ratio(system: Summary, peer: Summary) -> float:
    """Median train time of ``system`` over the peer's."""
    return system["train_median_s"] / peer["train_median_s"]


def _auc_gap(system: Summary, peer: Summary) -> float:
    """Test AUC of ``system`` minus the peer's."""
    return system["auc"] - peer["auc"]


def _worker_memory_ratio(system: Summary, peer: Summary) -> float:
    """Largest worker peak RSS of ``system`` over the peer's."""
    return max(system["worker_peak_rss_mb"]) / max(peer["worker_peak_rss_mb"])


TARGETS = [
    Target("train time ÷ peer's", "distboost.dask", "xgboost.dask", _train_ratio, 1.0, True,
           "≤ 1.0 (goal 0.7)"),
    Target("train time ÷ peer's", "distboost", "xgboost", _train_ratio, 1.5, True,
           "≤ 1.5 (goal 1.0)"),
    Target("test AUC − peer's", "distboost.dask", "xgboost.dask", _auc_gap, -0.002, False,
           "≥ −0.002"),
    Target("test AUC − peer's", "distboost", "xgboost", _auc_gap, -0.002, False, "≥ −0.002"),
    Target("max worker peak RSS ÷ peer's", "distboost.dask", "xgboost.dask",
           _worker_memory_ratio, 1.0, True, "≤ 1.0"),
]


def _target_row(target: Target, by_name: dict[str, Summary]) -> str:
    """One row of the targets table; "not measured" unless both systems ran."""
    system, peer = by_name.get(target.system), by_name.get(target.peer)
    label = f"| {target.measure} | {target.system} vs {target.peer} |"
    if not (system and peer and system["runs"] and peer["runs"]):
        return f"{label} — | {target.target} | not measured |"
    value = target.value(system, peer)
    met = value <= target.limit if target.at_most else value >= target.limit
    return f"{label} {value:.3f} | {target.target} | {'yes' if met else 'NO'} |"


def targets_table(summaries: list[Summary]) -> list[str]:
    """The targets of docs/benchmarks.md that one run of W1 measures."""
    by_name = {summary["system"]: summary for summary in summaries}
    return [
        "| measure | systems | value | target | met |",
        "|---|---|---|---|---|",
        *(_target_row(target, by_name) for target in TARGETS),
    ]


def notes(summaries: list[Summary]) -> list[str]:
    """Bullet list of errors, skips, per-system notes and library versions."""
    lines = [f"- {summary['system']} ({summary['status']}): {message}"
             for summary in summaries for message in summary["errors"] + summary["notes"]]
    versions = [f"{summary['system']} {summary['version']}"
                for summary in summaries if summary.get("version")]
    return [*lines, f"- versions: {', '.join(versions) or '—'}"]


def render(summaries: list[Summary], title: str, context: str) -> str:
    """The full markdown report."""
    return "\n".join([
        f"## {title}", "", context, "",
        *main_table(summaries), "",
        "### Where distboost's time goes", "", *breakdown_table(summaries), "",
        "### Targets (docs/benchmarks.md)", "", *targets_table(summaries), "",
        "### Notes", "", *notes(summaries), "",
    ])
