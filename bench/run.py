"""Side-by-side W1 benchmark of distboost and its peers (see docs/benchmarks.md).

Generates W1 once into the cache, then runs every system in a fresh
``python bench/_systems.py SYSTEM`` process, alternating systems within each
repeat (the order rotates between repeats), and prints one markdown report:
times, peak memory, test AUC / log loss, ratios to distboost, distboost's time
breakdown and the targets.

    python bench/run.py                                   # W1: 1M rows, 8 partitions
    python bench/run.py --rows 50000 --partitions 4 --repeats 1 --systems xgboost,sklearn
    python bench/run.py --out                             # also write bench/results/
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import w1
from _report import Record, render, summarize
from _systems import N_ROUNDS, SYSTEMS

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"


def _child_environment(threads: int) -> dict[str, str]:
    """Environment of a system's process: this checkout's distboost first, OpenMP capped."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def _parse_record(system: str, returncode: int, stdout: str, stderr: str) -> Record:
    """The last JSON line of a system's stdout, or a failure record with stderr's tail."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = " | ".join(stderr.strip().splitlines()[-5:])
    return {"system": system, "status": "failed", "error": f"exit code {returncode}: {tail}"}


def run_once(system: str, data_dir: Path, args: argparse.Namespace) -> Record:
    """Run one system in a fresh process (its own session, so a timeout kills its workers)."""
    command = [sys.executable, str(BENCH_DIR / "_systems.py"), system, "--data", str(data_dir),
               "--threads", str(args.threads), "--workers", str(args.workers),
               "--rounds", str(args.rounds), "--memory-limit", args.memory_limit]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=_child_environment(args.threads), start_new_session=True) as child:
        try:
            stdout, stderr = child.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return {"system": system, "status": "failed",
                    "error": f"timed out after {args.timeout:.0f} s"}
    return _parse_record(system, child.returncode, stdout, stderr)


def _progress(record: Record, repeat: int, repeats: int) -> None:
    """One line per run on stderr, so the table on stdout stays clean."""
    if record["status"] == "ok":
        outcome = f"train {record['train_s']:.2f} s, AUC {record['auc']:.4f}"
    else:
        outcome = f"{record['status']}: {record.get('error', '')}"
    print(f"[{repeat + 1}/{repeats}] {record['system']}: {outcome}", file=sys.stderr, flush=True)


def run_all(systems: list[str], data_dir: Path, args: argparse.Namespace) -> list[Record]:
    """Run every system ``args.repeats`` times, alternating; a skipped peer is not retried."""
    records: list[Record] = []
    skipped: set[str] = set()
    for repeat in range(args.repeats):
        shift = repeat % len(systems)
        for system in systems[shift:] + systems[:shift]:
            if system in skipped:
                continue
            record = {**run_once(system, data_dir, args), "repeat": repeat}
            if record["status"] == "skipped":
                skipped.add(system)
            records.append(record)
            _progress(record, repeat, args.repeats)
    return records


def _git_commit() -> str:
    """This checkout's commit (with "+dirty" for uncommitted changes), or "unknown"."""
    def git(*options: str) -> str:
        return subprocess.run(["git", *options], cwd=REPO_ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    try:
        return git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain")
                                                      else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def describe_run(data_dir: Path, args: argparse.Namespace, load_before: float) -> dict[str, Any]:
    """Everything needed to interpret and reproduce the numbers.

    The 1-minute load averages before and after the runs show whether other work
    competed for the CPUs (OpenMP peers slow down several-fold when it does).
    """
    meta = json.loads((data_dir / "meta.json").read_text())
    return {**meta, "data_dir": str(data_dir), "repeats": args.repeats, "threads": args.threads,
            "workers": args.workers, "rounds": args.rounds, "memory_limit": args.memory_limit,
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "commit": _git_commit(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "load_average_before": load_before,
            "load_average_after": os.getloadavg()[0]}


def _context_line(meta: dict[str, Any]) -> str:
    """The sentence under the title: data shape, compute budget, commit and date."""
    return (f"{meta['rows']:,} training rows × {len(w1.FEATURES)} float32 features in "
            f"{meta['partitions']} Parquet partitions, {meta['test_rows']:,} test rows; "
            f"{meta['repeats']} repeat(s); in-memory systems {meta['threads']} threads, Dask "
            f"LocalCluster({meta['workers']} workers × 1 thread, memory_limit "
            f"{meta.get('memory_limit', 'auto')}); {meta.get('rounds', N_ROUNDS)} rounds; "
            f"{meta['cpu_count']} CPUs, "
            f"load average {meta['load_average_before']:.1f} before / "
            f"{meta['load_average_after']:.1f} after; "
            f"commit {meta['commit']}; {meta['date']}. Times in seconds, memory in MB.")


def write_results(name: str, report: str, payload: dict[str, Any]) -> Path:
    """Write ``bench/results/NAME.md`` and ``NAME.json``; return the markdown path."""
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"{name}.json").write_text(json.dumps(payload, indent=1) + "\n")
    markdown = RESULTS_DIR / f"{name}.md"
    markdown.write_text(report)
    return markdown


def _system_list(text: str) -> list[str]:
    """Parse ``--systems``: a comma-separated list of known system names."""
    systems = [name.strip() for name in text.split(",") if name.strip()]
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown or not systems:
        raise argparse.ArgumentTypeError(
            f"unknown system(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(SYSTEMS)}")
    return systems


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options; see ``python bench/run.py --help``."""
    parser = argparse.ArgumentParser(description="Side-by-side W1 benchmark.")
    parser.add_argument("--rows", type=int, default=1_000_000, help="training rows")
    parser.add_argument("--partitions", type=int, default=8, help="training Parquet files")
    parser.add_argument("--repeats", type=int, default=3, help="runs per system")
    parser.add_argument("--systems", type=_system_list, default=list(SYSTEMS),
                        help=f"comma-separated subset of {','.join(SYSTEMS)}")
    parser.add_argument("--threads", type=int, default=2, help="threads of in-memory systems")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers, 1 thread each")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=N_ROUNDS, help="boosting rounds")
    parser.add_argument("--memory-limit", default="auto",
                        help="memory_limit of each Dask worker (e.g. 500MB; default: Dask's)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help=f"W1 cache root (default ${w1.CACHE_ENV} or bench/.cache)")
    parser.add_argument("--out", nargs="?", const="", default=None, metavar="NAME",
                        help="also write bench/results/NAME.md and NAME.json "
                             "(NAME defaults to w1-ROWS-PARTITIONS-DATE)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Generate W1 if needed, run the systems, print the report, optionally save it."""
    args = _parse_args(argv)
    data_dir = w1.generate(args.rows, args.partitions, cache_dir=args.cache_dir)
    load_before = os.getloadavg()[0]
    records = run_all(args.systems, data_dir, args)
    summaries = summarize(records, args.systems)
    meta = describe_run(data_dir, args, load_before)
    report = render(summaries, "W1 benchmark (HIGGS-shaped binary classification)",
                    _context_line(meta))
    print(report)
    if args.out is not None:
        name = args.out or f"w1-{args.rows}-{args.partitions}-{time.strftime('%Y%m%d-%H%M%S')}"
        payload = {"meta": meta, "summaries": summaries, "records": records}
        print(f"wrote {write_results(name, report, payload)}", file=sys.stderr)


if __name__ == "__main__":
    main()
