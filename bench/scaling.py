"""Scale-out: what reaches the driver as workers are added (docs/benchmarks.md).

For each worker count W, starts a ``dask scheduler`` and ``dask worker
--nworkers W --nthreads 1`` as their own processes, and in a fresh client
process per system and repeat (alternating systems) fits the same model on
W1 read with ``dask.dataframe.read_parquet`` and persisted on the workers:

- distboost ``GradientBoostingClassifier(client=...)``
- xgboost.dask ``DaskQuantileDMatrix`` + ``train`` (its binning included)

and reports, per fit: the bytes the driver (client) process received over
TCP (``ss -tinp`` sampled every 0.1 s while it fits), the driver's CPU seconds
(its own sampling thread included), the wall time, and per level (rounds × (depth + 1)
waves) the driver's bytes and CPU. The workers share this machine's cores
(oversubscribed at W > 2): compare ratios, not absolute times.

    python bench/scaling.py --workers 2,4,8,16,32
    python bench/scaling.py --workers 2,16 --extra-features 472 --rows 100000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import w1

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
SYSTEMS = ("distboost", "xgboost.dask")


def _socket_bytes(pid: int) -> dict[tuple[str, str], int]:
    """Bytes received so far on each TCP socket of process ``pid`` (``ss -tinp``)."""
    out = subprocess.run(["ss", "-tinpH"], capture_output=True, text=True,
                         check=False).stdout.splitlines()
    counts, key = {}, None
    for line in out:
        if not line.startswith((" ", "\t")):
            fields = line.split()
            key = (fields[3], fields[4]) if f"pid={pid}," in line else None
        elif key is not None and "bytes_received:" in line:
            counts[key] = int(line.split("bytes_received:")[1].split()[0])
    return counts


class InboundBytes:
    """Bytes this process receives over TCP while it runs: ``ss`` sampled every
    0.1 s, the largest count of each socket, less what it had at the start."""

    def __init__(self):
        import threading

        self.pid, self.start = os.getpid(), _socket_bytes(os.getpid())
        self.seen, self._stop = dict(self.start), threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._stop.wait(0.1):
            for key, n in _socket_bytes(self.pid).items():
                self.seen[key] = max(n, self.seen.get(key, 0))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        for key, n in _socket_bytes(self.pid).items():
            self.seen[key] = max(n, self.seen.get(key, 0))
        return sum(n - self.start.get(key, 0) for key, n in self.seen.items())


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def fit_one(system: str, scheduler_file: str, data: Path, args) -> dict:
    """Fit ``system`` on the persisted training data; measure the driver."""
    import dask.dataframe as dd
    from distributed import Client, wait

    features = w1.feature_names(args.extra_features)
    with Client(scheduler_file=scheduler_file) as client:
        frame = client.persist(dd.read_parquet(data / "train", columns=features + ["label"]))
        wait(frame)
        X, y = frame[features], frame["label"]
        workers_cpu0 = sum(client.run(_cpu_seconds).values())
        inbound, cpu0 = InboundBytes(), _cpu_seconds()
        t0 = time.perf_counter()
        if system == "distboost":
            import distboost as db

            model = db.GradientBoostingClassifier(
                n_estimators=args.rounds, max_depth=args.depth, learning_rate=0.1, max_bins=256,
                reg_lambda=1.0, client=client).fit(X, y)
            trees = model.trees_
        else:
            import xgboost.dask as dxgb

            dtrain = dxgb.DaskQuantileDMatrix(client, X, y, max_bin=256)
            params = {"tree_method": "hist", "max_depth": args.depth, "eta": 0.1,
                      "max_bin": 256, "lambda": 1.0, "objective": "binary:logistic"}
            trees = dxgb.train(client, params, dtrain, num_boost_round=args.rounds)["booster"]
        wall = time.perf_counter() - t0
        received, cpu1 = inbound.stop(), _cpu_seconds()
        workers_cpu = sum(client.run(_cpu_seconds).values()) - workers_cpu0
        timings = getattr(model, "fit_timings_", {}) if system == "distboost" else {}
    levels = args.rounds * (args.depth + 1)
    return {"system": system, "workers": args.n_workers, "fit_s": wall,
            "driver_mb": received / 1e6, "driver_cpu_s": cpu1 - cpu0,
            "driver_kb_per_level": received / 1e3 / levels,
            "driver_cpu_ms_per_level": (cpu1 - cpu0) * 1e3 / levels,
            "round_ms": wall * 1e3 / args.rounds, "workers_cpu_s": workers_cpu,
            "n_trees": len(trees) if system == "distboost" else args.rounds,
            **{f"t_{k}": v for k, v in timings.items()}}


class Cluster:
    """A ``dask scheduler`` and ``dask worker --nworkers W`` as their own processes."""

    def __init__(self, n_workers: int, memory_limit: str):
        self.folder = tempfile.mkdtemp(prefix="distboost-scaling-")
        self.scheduler_file = os.path.join(self.folder, "scheduler.json")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
        bindir = os.path.dirname(sys.executable)
        # The processes keep their own copies of the log's descriptor.
        with open(os.path.join(self.folder, "cluster.log"), "w") as log:
            self.procs = [subprocess.Popen(
                [os.path.join(bindir, "dask"), "scheduler", "--scheduler-file",
                 self.scheduler_file, "--port", "0", "--dashboard-address", ":0", "--no-show"],
                stdout=log, stderr=log, env=env, start_new_session=True)]
            self._wait_for(lambda: os.path.exists(self.scheduler_file))
            self.procs.append(subprocess.Popen(
                [os.path.join(bindir, "dask"), "worker", "--scheduler-file", self.scheduler_file,
                 "--nworkers", str(n_workers), "--nthreads", "1", "--memory-limit", memory_limit,
                 "--local-directory", self.folder, "--no-dashboard"],
                stdout=log, stderr=log, env=env, start_new_session=True))
        from distributed import Client

        with Client(scheduler_file=self.scheduler_file) as client:
            client.wait_for_workers(n_workers, timeout=300)

    @staticmethod
    def _wait_for(ready, timeout=60.0):
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                raise TimeoutError("the Dask scheduler did not start")
            time.sleep(0.2)

    def close(self):
        for proc in reversed(self.procs):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)


def _child(system, scheduler_file, data, args) -> dict:
    command = [sys.executable, __file__, "--child", system, "--scheduler-file", scheduler_file,
               "--data", str(data), "--rounds", str(args.rounds), "--depth", str(args.depth),
               "--extra-features", str(args.extra_features), "--n-workers", str(args.n_workers)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600,
                         check=False)
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"system": system, "workers": args.n_workers, "error": out.stderr[-800:]}


def _table(records) -> str:
    rows = [("| workers | system | fit s (median) | driver MB per fit | driver KB per level | "
             "driver CPU ms per level | workers' CPU s | ms per round | fit ÷ xgboost.dask |"),
            "|---|---|---|---|---|---|---|---|---|"]
    import statistics

    by = {}
    for r in records:
        if "error" not in r:
            by.setdefault((r["workers"], r["system"]), []).append(r)
    for (w, system), rs in sorted(by.items()):
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0] if isinstance(rs[0][k], float)}
        peer = by.get((w, "xgboost.dask"))
        ratio = med["fit_s"] / statistics.median(r["fit_s"] for r in peer) if peer else float("nan")
        rows.append(f"| {w} | {system} | {med['fit_s']:.2f} | {med['driver_mb']:.1f} | "
                    f"{med['driver_kb_per_level']:.0f} | {med['driver_cpu_ms_per_level']:.2f} | "
                    f"{med['workers_cpu_s']:.1f} | {med['round_ms']:.0f} | {ratio:.2f} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="2,4,8,16,32")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=32)
    parser.add_argument("--extra-features", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--memory-limit", default="auto")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--scheduler-file", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--n-workers", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(fit_one(args.child, args.scheduler_file, args.data, args)), flush=True)
        return
    data = w1.generate(args.rows, args.partitions, extra_features=args.extra_features)
    systems = args.systems.split(",")
    records = []
    for n_workers in [int(w) for w in args.workers.split(",")]:
        args.n_workers = n_workers
        cluster = Cluster(n_workers, args.memory_limit)
        try:
            for repeat in range(args.repeats):
                for system in systems if repeat % 2 == 0 else systems[::-1]:
                    record = _child(system, cluster.scheduler_file, data, args)
                    records.append(record)
                    print(json.dumps(record), file=sys.stderr, flush=True)
        finally:
            cluster.close()
    print(f"W1 {args.rows:,} rows × {w1.N_FEATURES + args.extra_features} features in "
          f"{args.partitions} partitions, {args.rounds} rounds of depth {args.depth}; "
          f"{os.cpu_count()} CPUs; medians of {args.repeats}\n")
    print(_table(records))


if __name__ == "__main__":
    main()
