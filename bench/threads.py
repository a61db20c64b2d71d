"""Thread and worker scaling: does a fit use every core, at any data size (issue 39)?

Every fit trains W1 with the ``w1`` shape's parameters (depth 6, learning rate 0.1,
256 bins, L2 λ 1, log loss; ``--rounds``, default 50) in a fresh ``python
bench/_systems.py SYSTEM`` process, whose OpenMP and numba thread pools are sized to the
threads it is given (``OMP_NUM_THREADS``, ``NUMBA_NUM_THREADS``; on Dask, the threads per
worker, which the worker processes inherit). Three sections:

- in process (``--threads 1,2,4,...``; default powers of two up to the CPU count, and
  the CPU count): distboost ``GradientBoostingClassifier(n_jobs=T)`` on float32 numpy,
  xgboost ``QuantileDMatrix(nthread=T)`` + ``train(nthread=T)``, LightGBM
  ``LGBMClassifier(num_threads=T)``; per system its speed-up over its own 1-thread fit
  and parallel efficiency, and distboost's time over each peer's at every T;
- on Dask (``--dask 8x2,16x1``): distboost.dask and xgboost.dask on
  ``LocalCluster(n_workers=W, threads_per_worker=T)``, W1 of ``--dask-rows`` rows;
- weak scaling (``--weak 1,2,4`` workers × ``--weak-threads`` threads): the same on W1
  of W × ``--weak-rows`` rows; efficiency t(first W) / t(W), 1 when time stays flat.

The runs go repeat by repeat through every point of every section (systems alternating,
their order rotated between repeats), so that a ``--budget`` cut leaves whole repeats:
before each run its wall time is estimated from the runs so far, and once it would
overrun the budget the rest is skipped (and listed in the report).

    python bench/threads.py                                 # in process, 2M rows
    python bench/threads.py --threads 1,2,16 --dask 8x2,16x1 --weak 1,2,4 --budget 540 \\
        --out threads-16cpu
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import _machine
from _report import Record, Summary, summarize_system
from _shapes import SHAPES
from _systems import command_line, timer
from run import (
    RESULTS_DIR,
    byte_compile_distboost,
    git_commit,
    run_command,
    thread_environment,
    warm_distboost,
    write_results,
)

SHAPE = SHAPES["w1"]
IN_PROCESS = ("distboost", "xgboost", "lightgbm")
ON_DASK = ("distboost.dask", "xgboost.dask")
IN_PROCESS_PEERS = ("xgboost", "lightgbm")
SECTIONS = ("in-process", "dask", "weak")
NONE = "—"


@dataclass(frozen=True)
class Config:
    """One point of a section: the data, and the threads (and Dask workers) of a fit.

    ``threads`` are the process's (in process) or each Dask worker's; ``workers`` is 0
    in process.
    """

    section: str
    rows: int
    partitions: int
    threads: int
    workers: int = 0

    @property
    def label(self) -> str:
        """"T threads" in process, "W × T" on Dask."""
        if not self.workers:
            return f"{self.threads} thread{'s' * (self.threads != 1)}"
        return f"{self.workers} × {self.threads}"

    def holds(self, record: Record) -> bool:
        """Whether ``record`` is a run of this point."""
        return all(record.get(key) == value for key, value in asdict(self).items())


@dataclass(frozen=True)
class Run:
    """One fit to run: a system at a point, in a repeat."""

    config: Config
    system: str
    repeat: int

    def describe(self) -> str:
        """E.g. "in-process 8 threads: xgboost, repeat 2"."""
        return f"{self.config.section} {self.config.label}: {self.system}, repeat {self.repeat + 1}"


def default_threads(cpus: int) -> list[int]:
    """1, 2, 4, ... up to ``cpus``, and ``cpus`` itself when not a power of two."""
    counts = [1 << k for k in range(cpus.bit_length()) if 1 << k <= cpus]
    return counts + ([cpus] if counts[-1] != cpus else [])


def configs(args: argparse.Namespace) -> list[Config]:
    """Every point of the chosen sections, in order."""
    points = [Config("in-process", args.rows, args.partitions, threads)
              for threads in (args.threads if args.in_process else [])]
    points += [Config("dask", args.dask_rows, args.dask_partitions, threads, workers)
               for workers, threads in args.dask]
    points += [Config("weak", workers * args.weak_rows, workers * args.weak_partitions,
                      args.weak_threads, workers) for workers in args.weak]
    return points


def plan(points: list[Config], systems: Callable[[Config], list[str]],
         repeats: int) -> list[Run]:
    """The runs, repeat by repeat: every point, its systems rotated by the repeat."""
    runs = []
    for repeat in range(repeats):
        for config in points:
            names = systems(config)
            shift = repeat % len(names)
            runs += [Run(config, name, repeat) for name in names[shift:] + names[:shift]]
    return runs


def estimate_s(run: Run, records: list[Record]) -> float:
    """Likely wall time of ``run``: the median of the earlier runs of its system at its
    point; else the latest run of its system in its section (in process: at fewer
    threads, so no less); else 0 (nothing to go by)."""
    same = [record["wall_s"] for record in records
            if record["system"] == run.system and run.config.holds(record)]
    if same:
        return statistics.median(same)
    section = [record["wall_s"] for record in records
               if record["system"] == run.system and record["section"] == run.config.section]
    return section[-1] if section else 0.0


class Data:
    """W1 folders, generated into the cache when first needed; the seconds it took each."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.cache_dir = cache_dir
        self.folders: dict[tuple[int, int], Path] = {}
        self.seconds: dict[str, float] = {}

    def folder(self, config: Config) -> Path:
        """The W1 folder of ``config``'s rows and partitions."""
        key = (config.rows, config.partitions)
        if key not in self.folders:
            with timer() as elapsed:
                self.folders[key] = SHAPE.generate(*key, cache_dir=self.cache_dir)
            self.seconds[self.folders[key].name] = elapsed[0]
        return self.folders[key]


def execute(run: Run, data_dir: Path, args: argparse.Namespace, timeout: float) -> Record:
    """Fit ``run``'s system in a fresh process; its record, with the point, the repeat
    and the process's wall time (``wall_s``) added."""
    config = run.config
    command = command_line(run.system, SHAPE.name, data_dir, threads=config.threads,
                           workers=max(config.workers, 1), rounds=args.rounds,
                           memory_limit=args.memory_limit,
                           threads_per_worker=config.threads if config.workers else 1)
    with timer() as wall:
        record = run_command(run.system, command, thread_environment(config.threads), timeout)
    return {**record, **asdict(config), "repeat": run.repeat, "wall_s": wall[0]}


@dataclass
class Budget:
    """Wall-clock seconds for the whole run, counted by ``clock`` from ``start``; None:
    no limit."""

    seconds: float | None
    start: float
    clock: Callable[[], float] = time.perf_counter

    def remaining(self) -> float:
        """Seconds left (infinite without a budget)."""
        if self.seconds is None:
            return float("inf")
        return self.seconds - (self.clock() - self.start)


def run_all(runs: list[Run], args: argparse.Namespace, data: Data,
            budget: Budget) -> tuple[list[Record], list[Run]]:
    """Run in order until the next run would likely overrun the budget (`estimate_s`);
    return the records and the runs skipped. A run is killed when the budget is spent."""
    records: list[Record] = []
    for index, run in enumerate(runs):
        if estimate_s(run, records) > budget.remaining():
            return records, runs[index:]
        data_dir = data.folder(run.config)  # the first time, generating may take a while
        if estimate_s(run, records) > budget.remaining():
            return records, runs[index:]
        timeout = max(1.0, min(args.timeout, budget.remaining()))
        records.append(execute(run, data_dir, args, timeout))
        _progress(records[-1], index, len(runs), run)
    return records, []


def _progress(record: Record, index: int, total: int, run: Run) -> None:
    """One line per run on stderr, so the report on stdout stays clean."""
    if record["status"] == "ok":
        outcome = f"whole fit {record['whole_s']:.2f} s, test AUC {record['auc']:.4f}"
    else:
        outcome = f"{record['status']}: {record.get('error', '')}"
    print(f"[{index + 1}/{total}] {run.describe()}: {outcome}", file=sys.stderr, flush=True)


def summarize(records: list[Record], points: list[Config],
              systems: Callable[[Config], list[str]]) -> list[Summary]:
    """One summary per point and system (``_report.summarize_system``), with the point."""
    summaries = []
    for config in points:
        for system in systems(config):
            mine = [record for record in records
                    if record["system"] == system and config.holds(record)]
            summaries.append({**asdict(config), **summarize_system(system, mine)})
    return summaries


def _find(summaries: list[Summary], system: str, **point: Any) -> Summary | None:
    """The summary of ``system`` at the point with these fields, if any."""
    for summary in summaries:
        if summary["system"] == system and all(summary[k] == v for k, v in point.items()):
            return summary
    return None


def _median(summary: Summary | None) -> float | None:
    """The median whole fit of a summary (None if there is none, or it did not run)."""
    return summary["whole_median_s"] if summary and summary["runs"] else None


def quotient(numerator: float | None, denominator: float | None) -> str:
    """``numerator / denominator`` with 2 decimals, or an em dash if either is missing."""
    if numerator is None or not denominator:
        return NONE
    return f"{numerator / denominator:.2f}"


def _fmt(value: float | None, digits: int) -> str:
    """A number with fixed decimals, or an em dash."""
    return NONE if value is None else f"{value:.{digits}f}"


def _whole(summary: Summary) -> str:
    """Median [min–max] whole fit."""
    if not summary["runs"]:
        return NONE
    return (f"{summary['whole_median_s']:.2f} [{summary['whole_min_s']:.2f}–"
            f"{summary['whole_max_s']:.2f}]")


def _auc(summary: Summary) -> str:
    """The median test AUC."""
    return _fmt(summary["metrics"]["auc"], 4) if summary["runs"] else NONE


def _row(cells: list[str]) -> str:
    """A markdown table row."""
    return "| " + " | ".join(cells) + " |"


def _header(columns: list[str]) -> list[str]:
    """A markdown table's header and rule lines."""
    return [_row(columns), "|" + "---|" * len(columns)]


def in_process_tables(summaries: list[Summary]) -> list[str]:
    """Per system and thread count: whole fit, speed-up over 1 thread, efficiency; then
    distboost's whole fit over each peer's at every thread count."""
    mine = [summary for summary in summaries if summary["section"] == "in-process"]
    lines = _header(["threads", "system", "status", "runs", "whole fit s, median [min–max]",
                     "speed-up over 1 thread", "efficiency", "prepare s", "rounds s",
                     "test AUC"])
    for summary in mine:
        one = _median(_find(mine, summary["system"], threads=1))
        seconds = _median(summary)
        speed_up = None if one is None or seconds is None else one / seconds
        efficiency = None if speed_up is None else speed_up / summary["threads"]
        lines.append(_row([str(summary["threads"]), summary["system"], summary["status"],
                           str(summary["runs"]), _whole(summary), _fmt(speed_up, 2),
                           _fmt(efficiency, 2),
                           _fmt(summary.get("prepare_median_s"), 2),
                           _fmt(summary.get("rounds_median_s"), 2), _auc(summary)]))
    lines += ["", *_header(["threads", "distboost s",
                            *(f"distboost ÷ {peer}" for peer in IN_PROCESS_PEERS)])]
    for threads in _unique(summary["threads"] for summary in mine):
        distboost = _median(_find(mine, "distboost", threads=threads))
        lines.append(_row([str(threads), _fmt(distboost, 2), *(
            quotient(distboost, _median(_find(mine, peer, threads=threads)))
            for peer in IN_PROCESS_PEERS)]))
    return lines


def _unique(values: Any) -> list[Any]:
    """The values without repeats, in first-seen order."""
    return list(dict.fromkeys(values))


def _dask_ratio(summary: Summary, summaries: list[Summary]) -> str:
    """distboost.dask's whole fit over xgboost.dask's at the summary's point (its row
    only)."""
    if summary["system"] != "distboost.dask":
        return NONE
    point = {key: summary[key] for key in ("section", "rows", "threads", "workers")}
    return quotient(_median(_find(summaries, "distboost.dask", **point)),
                    _median(_find(summaries, "xgboost.dask", **point)))


def dask_table(summaries: list[Summary]) -> list[str]:
    """Per LocalCluster shape and system: whole fit, its parts, worker memory, AUC, and
    distboost.dask over xgboost.dask."""
    lines = _header(["workers × threads", "cores", "system", "status", "runs",
                     "whole fit s, median [min–max]", "prepare s", "rounds s",
                     "largest worker peak RSS MB", "test AUC", "distboost.dask ÷ xgboost.dask"])
    for summary in (s for s in summaries if s["section"] == "dask"):
        peak = summary.get("worker_peak_rss_mb") or []
        lines.append(_row([f"{summary['workers']} × {summary['threads']}",
                           str(summary["workers"] * summary["threads"]), summary["system"],
                           summary["status"], str(summary["runs"]), _whole(summary),
                           _fmt(summary.get("prepare_median_s"), 2),
                           _fmt(summary.get("rounds_median_s"), 2),
                           _fmt(max(peak) if peak else None, 0), _auc(summary),
                           _dask_ratio(summary, summaries)]))
    return lines


def weak_table(summaries: list[Summary]) -> list[str]:
    """Per worker count and system: rows, whole fit, weak-scaling efficiency against
    the fewest workers, and distboost.dask over xgboost.dask."""
    mine = [summary for summary in summaries if summary["section"] == "weak"]
    first = min((summary["workers"] for summary in mine), default=0)
    lines = _header(["workers × threads", "rows", "system", "status", "runs",
                     "whole fit s, median [min–max]", f"efficiency t(W={first}) ÷ t",
                     "distboost.dask ÷ xgboost.dask"])
    for summary in mine:
        base = _median(_find(mine, summary["system"], workers=first))
        lines.append(_row([f"{summary['workers']} × {summary['threads']}",
                           f"{summary['rows']:,}", summary["system"], summary["status"],
                           str(summary["runs"]), _whole(summary),
                           quotient(base, _median(summary)),
                           _dask_ratio(summary, summaries)]))
    return lines


def _context(meta: dict[str, Any]) -> str:
    """The sentences under the title: what every fit is, the budget, commit and date."""
    settings = meta["settings"]
    budget = ""
    if settings["budget"] is not None:
        skipped = f"; {len(meta['skipped'])} run(s) skipped" if meta["skipped"] else ""
        budget = f" Budget {settings['budget']:.0f} s, used {meta['elapsed_s']:.0f} s{skipped}."
    return (f"{_machine.sentence(meta)} W1 (28 float32 features), {settings['rounds']} rounds "
            f"of depth 6, learning rate 0.1, 256 bins, L2 λ 1, log loss; "
            f"{settings['repeats']} repeat(s), each fit a fresh process (OMP_NUM_THREADS and "
            f"NUMBA_NUM_THREADS = its threads), systems alternating. Whole fit = binning and "
            f"rounds, from features in memory (numpy, or Dask collections persisted on the "
            f"workers) to a trained model; seconds.{budget} Commit {meta['commit']}; "
            f"{meta['date']}.")


def render(summaries: list[Summary], meta: dict[str, Any]) -> str:
    """The markdown report: context, one part per section that ran, skips, notes."""
    settings = meta["settings"]
    sections = {summary["section"] for summary in summaries}
    lines = ["## Thread and worker scaling (issue 39: every core, at any data size)", "",
             _context(meta), ""]
    if "in-process" in sections:
        lines += [(f"### In process: W1 {settings['rows']:,} rows ({settings['partitions']} "
                   "Parquet files read into numpy before the fit)"), "",
                  *in_process_tables(summaries), ""]
    if "dask" in sections:
        lines += [(f"### On Dask: LocalCluster(workers × threads per worker), W1 "
                   f"{settings['dask_rows']:,} rows in {settings['dask_partitions']} "
                   "partitions"), "", *dask_table(summaries), ""]
    if "weak" in sections:
        lines += [(f"### Weak scaling: W workers × {settings['weak_threads']} threads, W × "
                   f"{settings['weak_rows']:,} rows (W × {settings['weak_partitions']} "
                   "partitions)"), "", *weak_table(summaries), ""]
    if meta["skipped"]:
        lines += ["### Skipped (budget)", "", *(f"- {run}" for run in meta["skipped"]), ""]
    return "\n".join([*lines, "### Notes", "", *notes(summaries), ""])


NOTES = {
    "in-process": ("- speed-up = the system's median whole fit at 1 thread ÷ at T threads; "
                   "efficiency = speed-up ÷ T (1.00: every added thread pays in full)."),
    "dask": ("- Dask: each worker has `threads` threads (distboost sets its numba threads to "
             "them, xgboost.dask its `nthread`) and inherits OMP_NUM_THREADS = NUMBA_NUM_THREADS "
             "= `threads`; cores = workers × threads."),
    "weak": ("- weak scaling: rows grow with the workers; efficiency 1.00 means the fit takes as "
             "long on W workers and W times the rows as on the fewest."),
}
"""The definitions under a report that holds the section."""


def notes(summaries: list[Summary]) -> list[str]:
    """Definitions, failures and each system's notes (once), library versions."""
    sections = {summary["section"] for summary in summaries}
    lines = [note for section, note in NOTES.items() if section in sections]
    seen: set[str] = set()
    for summary in summaries:
        for message in summary["errors"] + summary["notes"]:
            line = f"- {summary['system']}: {message}"
            if line not in seen:
                seen.add(line)
                lines.append(line)
    versions = _unique(f"{s['system']} {s['version']}" for s in summaries if s.get("version"))
    return [*lines, f"- versions: {', '.join(versions) or NONE}"]


def _int_list(text: str) -> list[int]:
    """Parse "1,2,4": positive integers."""
    values = [int(value) for value in text.split(",") if value.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers like 1,2,4, got {text!r}")
    return values


def _shapes(text: str) -> list[tuple[int, int]]:
    """Parse "8x2,16x1": (workers, threads per worker) pairs."""
    try:
        pairs = [tuple(int(n) for n in item.lower().split("x")) for item in text.split(",")
                 if item.strip()]
    except ValueError:
        pairs = []
    if not pairs or any(len(pair) != 2 or min(pair) < 1 for pair in pairs):
        raise argparse.ArgumentTypeError(f"expected WORKERSxTHREADS like 8x2,16x1, got {text!r}")
    return pairs


def _system_list(allowed: tuple[str, ...]) -> Callable[[str], list[str]]:
    """A parser of comma-separated systems out of ``allowed``."""
    def parse(text: str) -> list[str]:
        """The systems named in ``text``."""
        systems = [name.strip() for name in text.split(",") if name.strip()]
        if not systems or set(systems) - set(allowed):
            raise argparse.ArgumentTypeError(f"choose from {','.join(allowed)}, got {text!r}")
        return systems
    return parse


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options; see ``python bench/threads.py --help``."""
    parser = argparse.ArgumentParser(description="Thread and worker scaling on W1.")
    parser.add_argument("--in-process", action=argparse.BooleanOptionalAction, default=True,
                        help="run the in-process section (default yes)")
    parser.add_argument("--threads", type=_int_list, default=default_threads(os.cpu_count() or 1),
                        help="in process: thread counts (default 1,2,4,... up to the CPU "
                             "count, and the CPU count)")
    parser.add_argument("--systems", type=_system_list(IN_PROCESS), default=list(IN_PROCESS),
                        help=f"in-process systems (default {','.join(IN_PROCESS)})")
    parser.add_argument("--rows", type=int, default=2_000_000, help="in process: W1 rows")
    parser.add_argument("--partitions", type=int, default=8, help="in process: Parquet files")
    parser.add_argument("--dask", type=_shapes, default=[],
                        help="Dask section: LocalCluster shapes WORKERSxTHREADS, e.g. 8x2,16x1")
    parser.add_argument("--dask-rows", type=int, default=10_000_000, help="Dask section: rows")
    parser.add_argument("--dask-partitions", type=int, default=80,
                        help="Dask section: partitions")
    parser.add_argument("--weak", type=_int_list, default=[],
                        help="weak scaling: worker counts, e.g. 1,2,4")
    parser.add_argument("--weak-threads", type=int, default=2, help="weak: threads per worker")
    parser.add_argument("--weak-rows", type=int, default=1_000_000, help="weak: rows per worker")
    parser.add_argument("--weak-partitions", type=int, default=8,
                        help="weak: partitions per worker")
    parser.add_argument("--dask-systems", type=_system_list(ON_DASK), default=list(ON_DASK),
                        help=f"systems of the Dask sections (default {','.join(ON_DASK)})")
    parser.add_argument("--rounds", type=int, default=50, help="boosting rounds")
    parser.add_argument("--repeats", type=int, default=3, help="runs per system and point")
    parser.add_argument("--budget", type=float, default=None,
                        help="wall-clock seconds for the whole run (data generation included); "
                             "runs that would likely overrun it are skipped")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    parser.add_argument("--memory-limit", default="auto", help="memory_limit of each Dask worker")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="W1 cache root (default $DISTBOOST_BENCH_CACHE or bench/.cache)")
    parser.add_argument("--out", nargs="?", const="", default=None, metavar="NAME",
                        help="also write bench/results/NAME.md and NAME.json "
                             "(NAME defaults to threads-CPUS-DATE)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR,
                        help="folder of --out (default bench/results)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run the chosen sections within the budget, print the report, optionally save it."""
    start = time.perf_counter()
    args = _parse_args(argv)
    points = configs(args)
    if not points:
        sys.exit("nothing to run: give --threads, --dask or --weak")

    def systems(config: Config) -> list[str]:
        """The systems run at ``config``."""
        return args.systems if config.section == "in-process" else args.dask_systems

    byte_compile_distboost()
    warm_distboost([*args.systems, *args.dask_systems], cache_dir=args.cache_dir)
    load_before = os.getloadavg()[0]
    data = Data(args.cache_dir)
    records, skipped = run_all(plan(points, systems, args.repeats), args, data,
                               Budget(args.budget, start))
    summaries = summarize(records, points, systems)
    meta = {"settings": {key: value for key, value in vars(args).items()
                         if key not in ("cache_dir", "results_dir", "out")},
            **_machine.describe(), "commit": git_commit(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "load_average_before": load_before,
            "load_average_after": os.getloadavg()[0], "generation_s": data.seconds,
            "elapsed_s": time.perf_counter() - start,
            "skipped": [run.describe() for run in skipped]}
    report = render(summaries, meta)
    print(report)
    if args.out is not None:
        name = args.out or f"threads-{os.cpu_count()}-{time.strftime('%Y%m%d-%H%M%S')}"
        payload = {"meta": meta, "summaries": summaries, "records": records}
        print(f"wrote {write_results(name, report, payload, args.results_dir)}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
