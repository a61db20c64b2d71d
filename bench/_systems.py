"""Train one system on a shape's W1 in this process and print one JSON line with the results.

``bench/run.py`` starts a fresh ``python bench/_systems.py SYSTEM --shape S --data DIR``
per system and repeat, so that no system inherits another's caches, threads or
memory. Every system trains the shape's model (``_shapes.Shape``).

Timings, in seconds:

- ``read_s``: Parquet to memory: numpy, or a Dask DataFrame persisted on the
  workers. Not part of the whole fit.
- ``whole_s``: the **whole fit**, from features in memory (numpy, or persisted
  Dask collections) to a trained model: binning and rounds.
- ``prepare_s``: the binning within it (DMatrix construction, bins), when the
  system lets it be told apart; ``rounds_s``: the boosting rounds.

Peak RSS comes from ``getrusage`` (Linux: kilobytes), in this process and, for
the Dask systems, in each worker (read with ``client.run`` right after the fit).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import numbers
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from _shapes import LABEL, N_BINS, SHAPES, Shape, task_metrics


class Skipped(Exception):
    """A peer library is not installed; the system is skipped, not failed."""


@dataclass
class Setup:
    """What every system gets: the shape, the data and the compute budget."""

    shape: Shape
    train_dir: Path
    X_test: np.ndarray
    threads: int
    workers: int
    rounds: int
    memory_limit: str = "auto"
    lazy: bool = False
    threads_per_worker: int = 1


@dataclass
class Outcome:
    """What a system reports back; times in seconds, memory in MB.

    ``proba`` holds the test set's probabilities: of class 1, shape (n,) or
    (n, 2), or of every class, shape (n, 10).
    """

    version: str
    whole_s: float
    proba: np.ndarray
    prepare_s: float | None = None
    rounds_s: float | None = None
    read_s: float | None = None
    worker_peak_rss_mb: list[float] = field(default_factory=list)
    breakdown: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _peak_rss_mb() -> float:
    """Peak resident set size of the calling process, in MB (Linux ru_maxrss is in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _import_peer(name: str) -> ModuleType:
    """Import a peer library, raising `Skipped` if it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise Skipped(f"{name} is not installed ({error}); pip install -e .[bench]") from error


def read_numpy(folder: Path, features: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Read a W1 split: X of shape (n, d) float32 C-order, y of shape (n,) int8."""
    table = pq.read_table(folder, columns=[*features, LABEL])
    X = np.column_stack([table.column(name).to_numpy() for name in features])
    return np.ascontiguousarray(X, dtype=np.float32), table.column(LABEL).to_numpy()


@contextmanager
def timer() -> Iterator[list[float]]:
    """Measure a block's wall time; the result is in ``elapsed[0]`` afterwards."""
    elapsed: list[float] = []
    start = time.perf_counter()
    yield elapsed
    elapsed.append(time.perf_counter() - start)


@contextmanager
def local_cluster(workers: int, memory_limit: str = "auto",
                  threads_per_worker: int = 1) -> Iterator[Any]:
    """Yield a Client on ``LocalCluster(workers, threads_per_worker, memory_limit)``,
    dashboard off."""
    import dask
    from distributed import Client, LocalCluster

    # cold workers (imports, numba's cache) on a busy machine can take longer than Dask's
    # default 30 s to answer; a run failed by a connect timeout measures nothing
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "180s"}),
        LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                     dashboard_address=None, memory_limit=memory_limit,
                     silence_logs=logging.ERROR) as cluster,
        Client(cluster, timeout="180s") as client,
    ):
        yield client


def _worker_pids(client: Any) -> dict[str, int]:
    """Each worker's process id, by address."""
    return client.run(os.getpid)


def _restarts(client: Any, before: dict[str, int]) -> list[str]:
    """A note if worker processes were restarted (e.g. for exceeding ``memory_limit``)."""
    after = _worker_pids(client)
    if before == after:
        return []
    return [(f"worker processes restarted: before {sorted(before.values())}, "
             f"after {sorted(after.values())}")]


def _workers_peak_rss_mb(client: Any) -> list[float]:
    """Peak RSS of each Dask worker process, in MB, sorted by worker address."""
    peaks = client.run(_peak_rss_mb)
    return [peaks[address] for address in sorted(peaks)]


def persisted_parquet(client: Any, folder: Path) -> Any:
    """Read a Parquet folder with ``dask.dataframe`` and persist it on the workers."""
    import dask.dataframe as dd
    from distributed import wait

    frame = client.persist(dd.read_parquet(folder))
    wait(frame)
    return frame


def run_xgboost(setup: Setup) -> Outcome:
    """xgboost ``hist`` in memory: QuantileDMatrix (prepare), then ``xgb.train`` (rounds)."""
    xgb = _import_peer("xgboost")
    with timer() as read:
        X, y = read_numpy(setup.train_dir, setup.shape.features)
    with timer() as prepare:
        dtrain = xgb.QuantileDMatrix(X, y, max_bin=N_BINS, nthread=setup.threads)
    params = {**setup.shape.xgboost_params(), "nthread": setup.threads}
    with timer() as rounds:
        booster = xgb.train(params, dtrain, num_boost_round=setup.rounds)
    proba = booster.predict(xgb.DMatrix(setup.X_test, nthread=setup.threads))
    return Outcome(xgb.__version__, prepare[0] + rounds[0], proba, prepare_s=prepare[0],
                   rounds_s=rounds[0], read_s=read[0])


XGBOOST_DASK_NOTE = (
    "whole fit = DaskQuantileDMatrix(...) + xgboost.dask.train (the quantile matrix is built "
    "lazily inside train); prepare = the same with a fresh DaskQuantileDMatrix and 0 rounds, "
    "timed after the fit, so with the workers warm; rounds = whole − prepare, so they also "
    "hold the first train call's start-up on the workers"
)


def run_xgboost_dask(setup: Setup) -> Outcome:
    """xgboost.dask on a LocalCluster: persisted Parquet, DaskQuantileDMatrix, train.

    The binning alone is timed after the fit, as a 0-round ``train`` on a fresh
    DaskQuantileDMatrix; the rounds are the whole fit minus that.
    """
    xgb = _import_peer("xgboost")
    xgb_dask = _import_peer("xgboost.dask")
    features, params = setup.shape.features, setup.shape.xgboost_params()
    with local_cluster(setup.workers, setup.memory_limit, setup.threads_per_worker) as client:
        pids = _worker_pids(client)
        with timer() as read:
            frame = persisted_parquet(client, setup.train_dir)

        def quantile_matrix() -> Any:
            """A fresh DaskQuantileDMatrix of the persisted frame (built lazily, in train)."""
            return xgb_dask.DaskQuantileDMatrix(client, frame[features], frame[LABEL],
                                                max_bin=N_BINS)

        with timer() as whole:
            booster = xgb_dask.train(client, params, quantile_matrix(),
                                     num_boost_round=setup.rounds)["booster"]
        workers_rss = _workers_peak_rss_mb(client)
        with timer() as prepare:
            xgb_dask.train(client, params, quantile_matrix(), num_boost_round=0)
        restarts = _restarts(client, pids)
    proba = booster.predict(xgb.DMatrix(setup.X_test, feature_names=features,
                                        nthread=setup.threads))
    return Outcome(xgb.__version__, whole[0], proba, prepare_s=prepare[0],
                   rounds_s=whole[0] - prepare[0], read_s=read[0],
                   worker_peak_rss_mb=workers_rss, notes=[XGBOOST_DASK_NOTE, *restarts])


def lightgbm_note(shape: Shape) -> str:
    """What LightGBM's whole fit holds, and the tree shape it is told."""
    return ("whole fit = fit, which holds LightGBM's binning (Dataset construction); "
            f"num_leaves {shape.lightgbm_leaves}, depth unlimited")


def run_lightgbm_dask(setup: Setup) -> Outcome:
    """lightgbm.dask DaskLGBMClassifier (the shape's leaves) on a LocalCluster, persisted
    Parquet."""
    lgb = _import_peer("lightgbm")
    features = setup.shape.features
    with local_cluster(setup.workers, setup.memory_limit, setup.threads_per_worker) as client:
        pids = _worker_pids(client)
        with timer() as read:
            frame = persisted_parquet(client, setup.train_dir)
        model = lgb.DaskLGBMClassifier(client=client, **setup.shape.lightgbm_params(setup.rounds))
        with timer() as whole:
            model.fit(frame[features], frame[LABEL])
        workers_rss = _workers_peak_rss_mb(client)
        restarts = _restarts(client, pids)
    proba = model.booster_.predict(setup.X_test, num_threads=setup.threads)
    notes = [lightgbm_note(setup.shape), *restarts]
    return Outcome(lgb.__version__, whole[0], proba, read_s=read[0],
                   worker_peak_rss_mb=workers_rss, notes=notes)


def run_lightgbm(setup: Setup) -> Outcome:
    """LightGBM in memory: ``LGBMClassifier`` (the shape's leaves), ``num_threads=threads``."""
    lgb = _import_peer("lightgbm")
    with timer() as read:
        X, y = read_numpy(setup.train_dir, setup.shape.features)
    model = lgb.LGBMClassifier(**setup.shape.lightgbm_params(setup.rounds),
                               num_threads=setup.threads)
    with timer() as whole:
        model.fit(X, y)
    proba = model.predict_proba(setup.X_test)
    return Outcome(lgb.__version__, whole[0], proba, read_s=read[0],
                   notes=[lightgbm_note(setup.shape)])


def run_sklearn(setup: Setup) -> Outcome:
    """scikit-learn HistGradientBoostingClassifier in memory, OpenMP limited to ``threads``."""
    sklearn = _import_peer("sklearn")
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    with timer() as read:
        X, y = read_numpy(setup.train_dir, setup.shape.features)
    model = HistGradientBoostingClassifier(**setup.shape.sklearn_params(setup.rounds))
    with threadpool_limits(limits=setup.threads, user_api="openmp"):
        with timer() as whole:
            model.fit(X, y)
        proba = model.predict_proba(setup.X_test)
    notes = ["whole fit = fit, which holds the binning; max_bins=255 + 1 bin for missing values"]
    return Outcome(sklearn.__version__, whole[0], proba, read_s=read[0], notes=notes)


def _seconds(value: Any) -> float | None:
    """A timing from ``fit_timings_`` as a JSON-able float (None stays None)."""
    return None if value is None else float(value)


def fit_and_time(model: Any, X: Any, y: Any) -> dict[str, Any]:
    """Fit a distboost model: the whole fit is the wall time of ``fit``.

    Returns
    -------
    dict
        ``whole_s`` (wall time of fit), ``prepare_s`` and ``rounds_s``
        (``fit_timings_["prepare"]`` and ``["train"]``, None if missing),
        ``breakdown`` (the other numeric keys of ``fit_timings_``) and
        ``notes``, for `Outcome`.
    """
    with timer() as wall:
        model.fit(X, y)
    timings = getattr(model, "fit_timings_", None)
    timings = timings if isinstance(timings, dict) else {}
    missing = [key for key in ("prepare", "train") if key not in timings]
    notes = [f"fit_timings_ lacks {', '.join(map(repr, missing))}"] if missing else []
    breakdown = {key: _seconds(value) for key, value in timings.items()
                 if key not in ("prepare", "train") and isinstance(value, numbers.Real)}
    return {"whole_s": wall[0], "prepare_s": _seconds(timings.get("prepare")),
            "rounds_s": _seconds(timings.get("train")), "breakdown": breakdown, "notes": notes}


LAZY_NOTE = ("fitted on the lazy dd.read_parquet frame (--lazy): the whole fit and prepare "
             "include reading the Parquet")


def run_distboost_dask(setup: Setup, out_of_core: Any = "auto") -> Outcome:
    """distboost on a LocalCluster, fitted on the persisted ``dd.read_parquet`` frame
    (``setup.lazy``: on the lazy one, reading inside the fit)."""
    import dask.dataframe as dd

    db = importlib.import_module("distboost")
    features = setup.shape.features
    with local_cluster(setup.workers, setup.memory_limit, setup.threads_per_worker) as client:
        pids = _worker_pids(client)
        with timer() as read:
            frame = (dd.read_parquet(setup.train_dir) if setup.lazy
                     else persisted_parquet(client, setup.train_dir))
        model = db.GradientBoostingClassifier(client=client, out_of_core=out_of_core,
                                              **setup.shape.distboost_params(setup.rounds))
        timing = fit_and_time(model, frame[features], frame[LABEL])
        workers_rss = _workers_peak_rss_mb(client)
        timing["notes"] += _restarts(client, pids) + [_placement(model)]
        proba = model.predict_proba(setup.X_test)
    if setup.lazy:
        timing["notes"].append(LAZY_NOTE)
    return Outcome(db.__version__, proba=proba, read_s=None if setup.lazy else read[0],
                   worker_peak_rss_mb=workers_rss, **timing)


def run_distboost_dask_disk(setup: Setup) -> Outcome:
    """distboost on a LocalCluster with every partition on the workers' disks."""
    return run_distboost_dask(setup, out_of_core=True)


def _placement(model: Any) -> str:
    """Where the workers kept their training rows (``data_placement_``)."""
    rows = getattr(model, "data_placement_", [])
    disk = sum(p["disk_rows"] for p in rows)
    memory = sum(p["memory_rows"] for p in rows)
    return f"training rows on the workers' disks: {disk}, in memory: {memory}"


def run_distboost(setup: Setup) -> Outcome:
    """distboost in this process on numpy arrays, ``n_jobs=threads``, no Dask client."""
    db = importlib.import_module("distboost")
    with timer() as read:
        X, y = read_numpy(setup.train_dir, setup.shape.features)
    model = db.GradientBoostingClassifier(n_jobs=setup.threads,
                                          **setup.shape.distboost_params(setup.rounds))
    timing = fit_and_time(model, X, y)
    proba = model.predict_proba(setup.X_test)
    return Outcome(db.__version__, proba=proba, read_s=read[0], **timing)


SYSTEMS: dict[str, Callable[[Setup], Outcome]] = {
    "distboost.dask": run_distboost_dask,
    "distboost.dask.disk": run_distboost_dask_disk,
    "distboost": run_distboost,
    "xgboost.dask": run_xgboost_dask,
    "xgboost": run_xgboost,
    "lightgbm.dask": run_lightgbm_dask,
    "sklearn": run_sklearn,
    "lightgbm": run_lightgbm,
}
DEFAULT_SYSTEMS = [name for name in SYSTEMS if name != "lightgbm"]
"""run.py's systems unless ``--systems`` says otherwise (LightGBM in memory is asked for by
name, as ``threads.py`` does)."""


def command_line(system: str, shape: str, data_dir: Path, *, threads: int, workers: int,
                 rounds: int, memory_limit: str = "auto", lazy: bool = False,
                 threads_per_worker: int = 1) -> list[str]:
    """The command that runs ``system`` once in a fresh process (``python bench/_systems.py
    SYSTEM ...``, options as in `run`) and prints its JSON record."""
    return [sys.executable, str(Path(__file__).resolve()), system, "--shape", shape,
            "--data", str(data_dir), "--threads", str(threads), "--workers", str(workers),
            "--threads-per-worker", str(threads_per_worker), "--rounds", str(rounds),
            "--memory-limit", memory_limit, *(["--lazy"] if lazy else [])]


def run(system: str, shape: Shape, data_dir: Path, threads: int, workers: int, rounds: int,
        memory_limit: str = "auto", lazy: bool = False,
        threads_per_worker: int = 1) -> dict[str, Any]:
    """Run one system on the shape's W1 folder ``data_dir``; return its JSON-able record.

    ``lazy``: distboost's Dask systems fit the lazy ``dd.read_parquet`` frame
    (for data larger than the workers' memory); the others ignore it.
    ``threads_per_worker``: of every Dask system's LocalCluster (default 1).

    ``status`` is "ok", "skipped" (peer not installed) or "failed" (any error,
    with ``error`` and ``traceback``). An "ok" record has the `Outcome`'s fields
    (but the probabilities) and the shape's test metrics (``_shapes.METRICS``).
    """
    record: dict[str, Any] = {"system": system, "shape": shape.name, "status": "ok"}
    try:
        X_test, y_test = read_numpy(data_dir / "test", shape.features)
        setup = Setup(shape, data_dir / "train", X_test, threads, workers, rounds, memory_limit,
                      lazy, threads_per_worker)
        outcome = SYSTEMS[system](setup)
        record.update(task_metrics(shape.task, y_test, outcome.proba))
    except Skipped as error:
        record.update(status="skipped", error=str(error))
    except Exception as error:  # noqa: BLE001 - any failure is reported, not raised
        record.update(status="failed", error=f"{type(error).__name__}: {error}",
                      traceback=traceback.format_exc())
    else:
        record.update({key: value for key, value in vars(outcome).items() if key != "proba"})
    record["peak_rss_mb"] = _peak_rss_mb()
    return record


def _parse_args() -> argparse.Namespace:
    """Command-line options: the system, the shape, its W1 folder and the compute budget."""
    parser = argparse.ArgumentParser(description="Train one system on W1, print one JSON line.")
    parser.add_argument("system", choices=list(SYSTEMS))
    parser.add_argument("--shape", choices=list(SHAPES), default="w1")
    parser.add_argument("--data", type=Path, required=True, help="W1 folder (train/, test/)")
    parser.add_argument("--threads", type=int, default=2, help="threads of in-memory systems")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers")
    parser.add_argument("--threads-per-worker", type=int, default=1,
                        help="threads of each Dask worker (default 1)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="boosting rounds (default: the shape's)")
    parser.add_argument("--memory-limit", default="auto", help="memory_limit of each Dask worker")
    parser.add_argument("--lazy", action="store_true",
                        help="distboost on Dask: fit the lazy read_parquet frame, not a persisted one")
    return parser.parse_args()


if __name__ == "__main__":
    args = _parse_args()
    shape = SHAPES[args.shape]
    print(json.dumps(run(args.system, shape, args.data, args.threads, args.workers,
                         args.rounds or shape.rounds, args.memory_limit, args.lazy,
                         args.threads_per_worker)), flush=True)
