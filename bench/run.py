"""Side-by-side benchmark of distboost and its peers on a shape of W1 (docs/benchmarks.md).

Generates the shape's W1 variant once into the cache, then runs every system
in a fresh ``python bench/_systems.py SYSTEM`` process, alternating systems
within each repeat (the order rotates between repeats), and prints one
markdown report: whole fit (binning and rounds) with its prepare and rounds
parts, peak memory, test metrics, ratios to distboost, distboost's time
breakdown and the shape's targets.

    python bench/run.py                                   # W1: 1M rows, 8 partitions
    python bench/run.py --shape best-first                # also multiclass, wide, shallow
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

from _report import Record, render, summarize
from _shapes import METRICS, SHAPES, Shape
from _systems import DEFAULT_SYSTEMS, SYSTEMS, command_line

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"


def _child_environment(threads: int) -> dict[str, str]:
    """Environment of a system's process: this checkout's distboost first, OpenMP capped."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def thread_environment(threads: int) -> dict[str, str]:
    """Environment of a process that is to run ``threads`` threads and start no more:
    OpenMP's and numba's thread pools of that size too."""
    return {**_child_environment(threads), "NUMBA_NUM_THREADS": str(threads)}


def _parse_record(system: str, returncode: int, stdout: str, stderr: str) -> Record:
    """The last JSON line of a system's stdout, or a failure record with stderr's tail."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = " | ".join(stderr.strip().splitlines()[-5:])
    return {"system": system, "status": "failed", "error": f"exit code {returncode}: {tail}"}


def run_command(system: str, command: list[str], env: dict[str, str],
                timeout: float) -> Record:
    """Run ``command``, which prints ``system``'s JSON record, in a fresh process (its own
    session, so a timeout kills its Dask workers too); return the record, or a failure
    record."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, start_new_session=True) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return {"system": system, "status": "failed",
                    "error": f"timed out after {timeout:.0f} s"}
    return _parse_record(system, child.returncode, stdout, stderr)


def run_once(system: str, data_dir: Path, args: argparse.Namespace) -> Record:
    """Run one system in a fresh process (its own session, so a timeout kills its workers)."""
    command = command_line(system, args.shape, data_dir, threads=args.threads,
                           workers=args.workers, rounds=args.rounds,
                           memory_limit=args.memory_limit, lazy=args.lazy)
    return run_command(system, command, _child_environment(args.threads), args.timeout)


def _progress(record: Record, repeat: int, repeats: int) -> None:
    """One line per run on stderr, so the table on stdout stays clean."""
    if record["status"] == "ok":
        key, name = METRICS[SHAPES[record["shape"]].task][0]
        outcome = f"whole fit {record['whole_s']:.2f} s, {name} {record[key]:.4f}"
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


def git_commit() -> str:
    """This checkout's commit (with "+dirty" for uncommitted changes), or "unknown"."""
    def git(*options: str) -> str:
        """The stripped output of ``git OPTIONS`` in this checkout."""
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
    shape = SHAPES[args.shape]
    return {**meta, "shape": shape.name, "features": len(shape.features), "trees": shape.trees(),
            "data_dir": str(data_dir), "repeats": args.repeats, "threads": args.threads,
            "workers": args.workers, "rounds": args.rounds, "memory_limit": args.memory_limit,
            "lazy": args.lazy,
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "commit": git_commit(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "load_average_before": load_before,
            "load_average_after": os.getloadavg()[0]}


def _context_line(meta: dict[str, Any], shape: Shape) -> str:
    """The sentence under the title: shape, data, compute budget, commit and date."""
    return (f"Shape `{shape.name}`: {meta['rows']:,} training rows × {len(shape.features)} "
            f"float32 features in {meta['partitions']} Parquet partitions, "
            f"{meta['test_rows']:,} test rows, {shape.n_classes} classes; {meta['rounds']} rounds, "
            f"{shape.trees()}; {meta['repeats']} repeat(s); in-memory systems "
            f"{meta['threads']} thread(s), Dask LocalCluster({meta['workers']} workers × 1 "
            f"thread, memory_limit {meta.get('memory_limit', 'auto')}); "
            f"{meta['cpu_count']} CPUs, "
            f"load average {meta['load_average_before']:.1f} before / "
            f"{meta['load_average_after']:.1f} after; "
            f"commit {meta['commit']}; {meta['date']}. Times in seconds, memory in MB; "
            f"whole fit = binning and rounds, from features in memory (numpy, or Dask "
            f"collections persisted on the workers) to a trained model"
            + ("; but --lazy: distboost's Dask systems read the Parquet within their fit."
               if meta.get("lazy") else "."))


def write_results(name: str, report: str, payload: dict[str, Any],
                  folder: Path = RESULTS_DIR) -> Path:
    """Write ``NAME.md`` and ``NAME.json`` into ``folder`` (default ``bench/results``);
    return the markdown path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(payload, indent=1) + "\n")
    markdown = folder / f"{name}.md"
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
    parser = argparse.ArgumentParser(description="Side-by-side benchmark on a shape of W1.")
    parser.add_argument("--shape", choices=list(SHAPES), default="w1",
                        help="w1 (default), best-first, multiclass, wide or shallow")
    parser.add_argument("--rows", type=int, default=None,
                        help="training rows (default: the shape's)")
    parser.add_argument("--partitions", type=int, default=None,
                        help="training Parquet files (default: the shape's)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per system")
    parser.add_argument("--systems", type=_system_list, default=list(DEFAULT_SYSTEMS),
                        help=f"comma-separated subset of {','.join(SYSTEMS)} (default: all "
                             "but lightgbm)")
    parser.add_argument("--threads", type=int, default=2, help="threads of in-memory systems")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers, 1 thread each")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    parser.add_argument("--rounds", type=int, default=None,
                        help="boosting rounds (default: the shape's)")
    parser.add_argument("--memory-limit", default="auto",
                        help="memory_limit of each Dask worker (e.g. 500MB; default: Dask's)")
    parser.add_argument("--lazy", action="store_true",
                        help="distboost's Dask systems fit the lazy read_parquet frame (reading "
                             "inside the fit; for data larger than the workers' memory); the "
                             "peers still persist it")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="W1 cache root (default $DISTBOOST_BENCH_CACHE or bench/.cache)")
    parser.add_argument("--out", nargs="?", const="", default=None, metavar="NAME",
                        help="also write bench/results/NAME.md and NAME.json "
                             "(NAME defaults to SHAPE-ROWS-PARTITIONS-DATE)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR,
                        help="folder of --out (default bench/results)")
    args = parser.parse_args(argv)
    shape = SHAPES[args.shape]
    args.rows = args.rows or shape.rows
    args.partitions = args.partitions or shape.partitions
    args.rounds = args.rounds or shape.rounds
    return args


def byte_compile_distboost() -> None:
    """Write distboost's bytecode, as installing a wheel does (the peers come
    as wheels, compiled): an editable install under PYTHONDONTWRITEBYTECODE
    would otherwise compile every module from source in each fresh worker
    (about 75 ms of a cold fit)."""
    import compileall

    import distboost

    compileall.compile_dir(Path(distboost.__file__).parent, quiet=1)


WARM_ROWS = 3000


def warm_distboost(systems: list[str], shape: str = "w1", cache_dir: Path | None = None) -> None:
    """Compile distboost's kernels before anything is timed: one tiny fit of each of its
    ``systems`` (in a fresh process each, side by side). numba caches what it compiles
    on disk, so the timed runs load it; on a fresh checkout (or another processor) the
    first fit would otherwise hold a minute or more of compiling."""
    ours = [s for s in systems if s.startswith("distboost")]
    if not ours:
        return
    data_dir = SHAPES[shape].generate(WARM_ROWS, 2, cache_dir=cache_dir)
    children = [subprocess.Popen(command_line(system, shape, data_dir, threads=2, workers=2,
                                              rounds=2),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=thread_environment(2), start_new_session=True)
                for system in ours]
    for child in children:
        child.wait()


def main(argv: list[str] | None = None) -> None:
    """Generate the shape's W1 if needed, run the systems, print the report, optionally save it."""
    args = _parse_args(argv)
    shape = SHAPES[args.shape]
    data_dir = shape.generate(args.rows, args.partitions, cache_dir=args.cache_dir)
    byte_compile_distboost()
    warm_distboost(args.systems, args.shape, args.cache_dir)
    load_before = os.getloadavg()[0]
    records = run_all(args.systems, data_dir, args)
    summaries = summarize(records, args.systems, shape.task)
    meta = describe_run(data_dir, args, load_before)
    report = render(summaries, shape.title, _context_line(meta, shape), shape.name,
                    shape.task, args.rows)
    print(report)
    if args.out is not None:
        name = args.out or (f"{shape.name}-{args.rows}-{args.partitions}-"
                            f"{time.strftime('%Y%m%d-%H%M%S')}")
        payload = {"meta": meta, "summaries": summaries, "records": records}
        print(f"wrote {write_results(name, report, payload, args.results_dir)}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
