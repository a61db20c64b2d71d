"""Where one boosting round's time goes, in process, step by step.

Trains W1 (generated into the bench cache if missing) with distboost in this
process and measures, per round, the time of each step of the engine:
gradients (per-row statistics), the sample's row partition, the margin
update, and the trees' growth. In process the trees grow in one compiled call
(``kernels.local_grower``: one step, "grow"); with ``--waves`` they grow wave
by wave as a Dask holder grows them (the root histogram, each level's
routing and histogram building, and the driver's split finding, per level
also how many rows were routed and built, and ns per built row x feature).
Then runs xgboost ``hist`` on the same data with the same thread count and
reports its time per round, for scale. CPU time (not wall time) of the
calling thread is used for the steps unless ``--clock wall``, so a busy
machine distorts the figures less.

    python bench/profile.py                       # 1M rows, 20 rounds, 1 thread, depth 6
    python bench/profile.py --rows 200000 --rounds 10 --threads 2 --clock wall
    python bench/profile.py --rows 500000 --depth 3 --waves   # a Dask holder's shallow rounds
    python bench/profile.py --threads 16 --cprofile 40   # and the Python functions' wall time

``--cprofile N`` adds, after the steps, the N Python functions (and compiled
calls made from Python) with the most own wall time in the whole fit, binning
included, and the N with the most cumulative time.
"""

from __future__ import annotations

import argparse
import collections
import resource
import sys

_bench = sys.path.pop(0)  # this file is profile.py: cProfile must find the standard library's
import cProfile
import pstats

sys.path.insert(0, _bench)
import time
from pathlib import Path

import dask
import numpy as np
import pyarrow.parquet as pq

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
sys.path.insert(0, str(BENCH_DIR))

import w1

import distboost as db
from distboost.engine import group as _group
from distboost.kernels import histogram, local_grower
from distboost.learners import gradient as learner
from distboost.trees import evaluation

STEPS = collections.defaultdict(float)
LEVELS = collections.defaultdict(lambda: np.zeros(4))  # depth -> routed, built, seconds, calls


CLOCK = [time.thread_time]


def _cpu():
    return CLOCK[0]()


def _timed(owner, name, label):
    fn = getattr(owner, name)

    def wrapper(*args, **kwargs):
        t0 = _cpu()
        try:
            return fn(*args, **kwargs)
        finally:
            STEPS[label] += _cpu() - t0

    setattr(owner, name, wrapper)


def _timed_level():
    split_level = _group.split_level

    def wrapper(X, X_columns, stats, partition, splits, n_slots, features, out=None):
        t0 = _cpu()
        hist, counts = split_level(X, X_columns, stats, partition, splits, n_slots, features, out)
        seconds = _cpu() - t0
        built = np.where(splits.build_left, splits.left, splits.right)
        sizes = partition.stop - partition.start
        depth = int(np.log2(splits.left.min() + 1))
        LEVELS[depth] += (counts.sum(), sizes[splits.tree, built][splits.slot >= 0].sum(), seconds,
                          1)
        return hist, counts

    _group.split_level = wrapper


def instrument():
    _timed(learner.GradientLearner, "row_stats", "gradients (per-row statistics)")
    _timed(histogram.RowPartition, "from_positions", "row partition of the sample")
    _timed(local_grower, "grow", "grow (compiled: every level)")
    _timed(learner.GradientLearner, "update", "margin update (add the round's tree)")
    _timed(learner.GradientLearner, "update_routed", "margin update (add the round's tree)")
    _timed(_group, "root_histograms", "root histogram (every row)")
    _timed(histogram, "route_rows", "levels: routing rows")
    _timed(_group, "_pending_counts", "levels: counting the deferred last level's rows")
    _timed(evaluation.SplitFinder, "evaluate", "split finding")
    _timed_level()


def load(rows: int, partitions: int):
    folder = w1.dataset_dir(rows, partitions)
    if not (folder / "meta.json").exists():
        w1.generate(rows, partitions)
    table = pq.read_table(folder / "train")
    names = [n for n in table.column_names if n != "label"]
    X = np.ascontiguousarray(np.column_stack([table.column(n).to_numpy() for n in names]),
                             np.float32)
    return X, table.column("label").to_numpy()


def profile_distboost(X, y, rounds, threads, depth, waves, top=0):
    params = {"learning_rate": 0.1, "max_depth": depth, "reg_lambda": 1.0, "n_jobs": threads}
    with dask.config.set({"distboost.local-grower": not waves}):
        db.GradientBoostingClassifier(n_estimators=2, **params).fit(X[:5000], y[:5000])  # compile
        instrument()
        profiler = cProfile.Profile(time.perf_counter) if top else None
        t0 = time.perf_counter()
        if profiler:
            profiler.enable()
        model = db.GradientBoostingClassifier(n_estimators=rounds, **params).fit(X, y)
        if profiler:
            profiler.disable()
        wall = time.perf_counter() - t0
    if profiler:
        for key in ("tottime", "cumulative"):
            print(f"cProfile of the whole fit, by {key} (wall seconds):")
            pstats.Stats(profiler).sort_stats(key).print_stats(top)
    return model, wall


def profile_xgboost(X, y, rounds, threads, depth):
    try:
        import xgboost as xgb
    except ImportError:
        return None
    data = xgb.QuantileDMatrix(X, y, max_bin=256, nthread=threads)
    params = {"tree_method": "hist", "max_depth": depth, "eta": 0.1, "lambda": 1.0,
              "objective": "binary:logistic", "nthread": threads, "max_bin": 256}
    cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    t0 = time.perf_counter()
    xgb.train(params, data, rounds)
    return (time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu0)


def report(rows, rounds, threads, n_features, model, wall, xgb, depth, waves):
    per = 1e3 / rounds
    how = "wave by wave (as on Dask)" if waves else "in one compiled call"
    print(f"W1 {rows:,} rows x {n_features} features, {rounds} rounds, depth {depth}, "
          f"{threads} thread(s), trees grown {how}")
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in model.fit_timings_.items())
    print(f"distboost: train wall {model.fit_timings_['train'] * per:.1f} ms/round; "
          f"whole fit {wall:.2f} s ({timings})\n")
    unit = "CPU" if CLOCK[0] is time.thread_time else "wall"
    print(f"| step | {unit} ms per round |\n|---|---|")
    for label, seconds in sorted(STEPS.items(), key=lambda kv: -kv[1]):
        print(f"| {label} | {seconds * per:.1f} |")
    levels = sum(v[2] for v in LEVELS.values())
    routing = STEPS["levels: routing rows"]
    if waves:
        print(f"| levels: histogram building (smaller children) | {(levels - routing) * per:.1f} |")
    print(f"| (sum of the steps) | {(sum(STEPS.values()) + levels - routing) * per:.1f} |\n")
    if not waves:
        _report_xgboost(xgb, per)
        return
    print(f"| level (depth of the built children) | rows routed | rows built | {unit} ms "
          "| ns per built row x feature |\n|---|---|---|---|---|")
    for level in sorted(LEVELS):
        routed, built, seconds, calls = LEVELS[level]
        routed, built, seconds = routed / calls, built / calls, seconds / calls
        ns = f"{seconds / (built * n_features) * 1e9:.2f}" if built else "— (into the leaves)"
        print(f"| {level} | {routed / 1e6:.3f} M | {built / 1e6:.3f} M | {seconds * 1e3:.1f} "
              f"| {ns} |")
    print()
    _report_xgboost(xgb, per)


def _report_xgboost(xgb, per):
    if xgb is not None:
        print(f"xgboost hist, same data and threads: train wall {xgb[0] * per:.1f} ms/round, "
              f"CPU {xgb[1] * per:.1f} ms/round")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--waves", action="store_true",
                        help="grow wave by wave, as a Dask holder does (not in one compiled call)")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                        help="time steps by this thread's CPU time (default) or by wall time "
                             "(use with --threads > 1 to see what does not run in parallel)")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N",
                        help="also print the N functions with the most wall time (cProfile)")
    args = parser.parse_args()
    if args.clock == "wall":
        CLOCK[0] = time.perf_counter
    X, y = load(args.rows, args.partitions)
    model, wall = profile_distboost(X, y, args.rounds, args.threads, args.depth, args.waves,
                                    args.cprofile)
    xgb = profile_xgboost(X, y, args.rounds, args.threads, args.depth)
    report(args.rows, args.rounds, args.threads, X.shape[1], model, wall, xgb, args.depth,
           args.waves)


if __name__ == "__main__":
    main()
