"""Summaries and the markdown report of a benchmark shape.

A *record* is one system's JSON line from ``_systems.py`` (one run); a
*summary* aggregates a system's records over repeats: medians of times and
metrics, the largest peak RSS. The headline is the whole fit (binning and
rounds); the targets of docs/benchmarks.md depend on the shape.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from _shapes import METRICS

Record = dict[str, Any]
Summary = dict[str, Any]
REFERENCES = ("distboost.dask", "distboost")
TEN_MILLION = 10_000_000


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


def _rest(record: Record) -> float | None:
    """Whole fit minus prepare and rounds (time outside both), if both are known."""
    if record.get("prepare_s") is None or record.get("rounds_s") is None:
        return None
    return record["whole_s"] - record["prepare_s"] - record["rounds_s"]


def summarize_system(system: str, records: list[Record], task: str = "binary") -> Summary:
    """Aggregate one system's records (all repeats) into a summary.

    Parameters
    ----------
    system : str
        The system's name.
    records : list of dict
        Its records, every status.
    task : {"binary", "multiclass"}
        Which test metrics (``_shapes.METRICS``) the records carry.
    """
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
    whole = [record["whole_s"] for record in ok]
    breakdown_keys = _unique([key for record in ok for key in record.get("breakdown", {})])
    summary.update(
        version=ok[0]["version"],
        whole_median_s=statistics.median(whole), whole_min_s=min(whole), whole_max_s=max(whole),
        prepare_median_s=_median([record.get("prepare_s") for record in ok]),
        rounds_median_s=_median([record.get("rounds_s") for record in ok]),
        rest_median_s=_median([_rest(record) for record in ok]),
        read_median_s=_median([record.get("read_s") for record in ok]),
        peak_rss_mb=max(record["peak_rss_mb"] for record in ok),
        worker_peak_rss_mb=_worker_peaks(ok),
        metrics={key: statistics.median(record[key] for record in ok)
                 for key, _ in METRICS[task]},
        breakdown_median_s={key: _median([record["breakdown"].get(key) for record in ok])
                            for key in breakdown_keys},
    )
    return summary


def _status(records: list[Record], ok: list[Record]) -> str:
    """Status over repeats: ok, skipped, failed, not run, or "k/n ok" for a mix."""
    if not records:
        return "not run"
    if len(ok) == len(records):
        return "ok"
    return f"{len(ok)}/{len(records)} ok" if ok else records[-1]["status"]


def summarize(records: list[Record], systems: list[str], task: str = "binary") -> list[Summary]:
    """One summary per system, in the order of ``systems``."""
    return [
        summarize_system(system, [record for record in records if record["system"] == system],
                         task)
        for system in systems
    ]


def _fmt(value: float | None, digits: int) -> str:
    """A number with fixed decimals, or an em dash for a missing value."""
    return "—" if value is None else f"{value:.{digits}f}"


def _ratio(summary: Summary, by_name: dict[str, Summary], reference: str) -> str:
    """This system's median whole fit divided by the reference system's."""
    base = by_name.get(reference, {}).get("whole_median_s")
    mine = summary.get("whole_median_s")
    return "—" if not base or mine is None else f"{mine / base:.2f}"


def _main_row(summary: Summary, by_name: dict[str, Summary], task: str) -> str:
    """One markdown table row of the main table."""
    if not summary["runs"]:
        return f"| {summary['system']} | {summary['status']} |" + " — |" * (8 + len(METRICS[task]))
    whole = (f"{summary['whole_median_s']:.2f} [{summary['whole_min_s']:.2f}–"
             f"{summary['whole_max_s']:.2f}]")
    workers = " / ".join(f"{peak:.0f}" for peak in summary["worker_peak_rss_mb"]) or "—"
    cells = [
        summary["system"], summary["status"], whole,
        _fmt(summary["prepare_median_s"], 2), _fmt(summary["rounds_median_s"], 2),
        _fmt(summary["read_median_s"], 2), _fmt(summary["peak_rss_mb"], 0), workers,
        *(_fmt(summary["metrics"][key], 4) for key, _ in METRICS[task]),
        *(_ratio(summary, by_name, reference) for reference in REFERENCES),
    ]
    return "| " + " | ".join(cells) + " |"


def main_header(task: str) -> list[str]:
    """The main table's header and rule lines; the metric columns depend on the task."""
    columns = ["system", "status", "whole fit s, median [min–max]", "prepare s", "rounds s",
               "read s", "peak RSS MB, process", "peak RSS MB, workers",
               *(name for _, name in METRICS[task]),
               *(f"whole fit ÷ {reference}" for reference in REFERENCES)]
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def main_table(summaries: list[Summary], task: str = "binary") -> list[str]:
    """The main table: times, memory, metrics and ratios, one row per system."""
    by_name = {summary["system"]: summary for summary in summaries}
    return [*main_header(task), *(_main_row(summary, by_name, task) for summary in summaries)]


NO_BREAKDOWN = "No breakdown: distboost did not run, or its fit_timings_ had no keys."


def breakdown_table(summaries: list[Summary]) -> list[str]:
    """Where distboost's whole fit goes: prepare, rounds, the time outside both,
    and the other keys of ``fit_timings_``."""
    rows = []
    for summary in summaries:
        if not summary.get("runs") or not summary["system"].startswith("distboost"):
            continue
        parts = {"prepare": summary["prepare_median_s"], "rounds (train)": summary[
            "rounds_median_s"], "outside prepare and rounds": summary["rest_median_s"],
            **summary["breakdown_median_s"]}
        whole = summary["whole_median_s"]
        for key, seconds in parts.items():
            share = "—" if not whole or seconds is None else f"{100 * seconds / whole:.0f} %"
            rows.append(f"| {summary['system']} | {key} | {_fmt(seconds, 3)} | {share} |")
    if not rows:
        return [NO_BREAKDOWN]
    return ["| system | part | median s | share of whole fit |", "|---|---|---|---|", *rows]


BREAKDOWN_NOTE = (
    "prepare and rounds are `fit_timings_['prepare']` and `['train']`; the parts below them "
    "are the other keys of `fit_timings_`, several nested in the rounds (the workers' "
    "kernels lie within the round-start and histogram waves) and `fit` the fit's own clock."
)


@dataclass(frozen=True)
class Target:
    """A target of docs/benchmarks.md: ``value(system, peer)`` against ``limit``.

    ``limit`` None: the value is reported, no target is set for it. A value of
    None: not measured (the run did not record it).
    """

    measure: str
    system: str
    peer: str
    value: Callable[[Summary, Summary], float | None]
    limit: float | None
    at_most: bool
    target: str


def _whole_ratio(system: Summary, peer: Summary) -> float:
    """Median whole fit of ``system`` over the peer's."""
    return system["whole_median_s"] / peer["whole_median_s"]


def _gap(key: str) -> Callable[[Summary, Summary], float]:
    """The test metric ``key`` of ``system`` minus the peer's."""
    def gap(system: Summary, peer: Summary) -> float:
        """``system``'s metric minus ``peer``'s."""
        return system["metrics"][key] - peer["metrics"][key]
    return gap


def _worker_memory_ratio(system: Summary, peer: Summary) -> float | None:
    """Largest worker peak RSS of ``system`` over the peer's (None if either is unknown)."""
    if not (system["worker_peak_rss_mb"] and peer["worker_peak_rss_mb"]):
        return None
    return max(system["worker_peak_rss_mb"]) / max(peer["worker_peak_rss_mb"])


def _w1_targets(rows: int) -> list[Target]:
    """W1's targets; at 10M rows and more, the scaling point's time target."""
    dask_target = (0.8, "≤ 0.8 (goal 0.6)") if rows >= TEN_MILLION else (1.0, "≤ 1.0 (goal 0.7)")
    return [
        Target("whole fit ÷ peer's", "distboost.dask", "xgboost.dask", _whole_ratio,
               dask_target[0], True, dask_target[1]),
        Target("whole fit ÷ peer's", "distboost", "xgboost", _whole_ratio, 1.0, True,
               "≤ 1.0 (goal 0.8)"),
        Target("test AUC − peer's", "distboost.dask", "xgboost.dask", _gap("auc"), -0.002, False,
               "≥ −0.002"),
        Target("test AUC − peer's", "distboost", "xgboost", _gap("auc"), -0.002, False,
               "≥ −0.002"),
        Target("largest worker peak RSS ÷ peer's", "distboost.dask", "xgboost.dask",
               _worker_memory_ratio, 1.0, True, "≤ 1.0"),
    ]


def targets(shape: str, task: str, rows: int) -> list[Target]:
    """The targets of docs/benchmarks.md that a run of ``shape`` measures.

    W1: whole fit against xgboost.dask and xgboost, AUC, worker memory. The
    other shapes: whole fit against xgboost.dask, and the metric gaps to it
    (reported; docs/benchmarks.md sets no number for them).
    """
    if shape == "w1":
        return _w1_targets(rows)
    gaps = [Target(f"{name} − peer's", "distboost.dask", "xgboost.dask", _gap(key), None,
                   False, "reported") for key, name in METRICS[task]]
    return [Target("whole fit ÷ peer's", "distboost.dask", "xgboost.dask", _whole_ratio, 1.0,
                   True, "≤ 1.0 (goal 0.7)"), *gaps]


def _target_row(target: Target, by_name: dict[str, Summary]) -> str:
    """One row of the targets table; "not measured" unless both systems ran."""
    system, peer = by_name.get(target.system), by_name.get(target.peer)
    label = f"| {target.measure} | {target.system} vs {target.peer} |"
    ran = bool(system and peer and system["runs"] and peer["runs"])
    value = target.value(system, peer) if ran else None
    if value is None:
        return f"{label} — | {target.target} | not measured |"
    return f"{label} {value:.3f} | {target.target} | {_met(target, value)} |"


def _met(target: Target, value: float) -> str:
    """"yes" or "NO" against the target's limit, "—" when there is none."""
    if target.limit is None:
        return "—"
    met = value <= target.limit if target.at_most else value >= target.limit
    return "yes" if met else "NO"


def targets_table(summaries: list[Summary], shape: str = "w1", task: str = "binary",
                  rows: int = 1_000_000) -> list[str]:
    """The targets table of a run of ``shape`` at ``rows`` training rows."""
    by_name = {summary["system"]: summary for summary in summaries}
    return [
        "| measure | systems | value | target | met |",
        "|---|---|---|---|---|",
        *(_target_row(target, by_name) for target in targets(shape, task, rows)),
    ]


def notes(summaries: list[Summary]) -> list[str]:
    """Bullet list of errors, skips, per-system notes and library versions."""
    lines = [f"- {summary['system']} ({summary['status']}): {message}"
             for summary in summaries for message in summary["errors"] + summary["notes"]]
    versions = [f"{summary['system']} {summary['version']}"
                for summary in summaries if summary.get("version")]
    return [*lines, f"- versions: {', '.join(versions) or '—'}"]


def render(summaries: list[Summary], title: str, context: str, shape: str = "w1",
           task: str = "binary", rows: int = 1_000_000) -> str:
    """The full markdown report of a run of ``shape`` (``task``) at ``rows`` training rows."""
    return "\n".join([
        f"## {title}", "", context, "",
        *main_table(summaries, task), "",
        "### Where distboost's time goes", "", BREAKDOWN_NOTE, "",
        *breakdown_table(summaries), "",
        "### Targets (docs/benchmarks.md)", "", *targets_table(summaries, shape, task, rows), "",
        "### Notes", "", *notes(summaries), "",
    ])
