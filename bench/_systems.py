"""Train one system on W1 in this process and print one JSON line with the results.

``bench/run.py`` starts a fresh ``python bench/_systems.py SYSTEM --data DIR``
per system and repeat, so that no system inherits another's caches, threads or
memory. Every system trains the same model shape: 100 rounds, depth 6,
learning rate 0.1, 256 bins, L2 regularization 1, binary log loss.

Timings, in seconds:

- ``read_s``: Parquet to memory (numpy, or Dask ``persist``), if done apart.
- ``prepare_s``: building the binned training structure (DMatrix, bins).
- ``train_s``: the boosting rounds.

Peak RSS comes from ``getrusage`` (Linux: kilobytes), in this process and, for
the Dask systems, in each worker (read with ``client.run`` right after
training).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import numbers
import resource
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
from w1 import FEATURES

N_ROUNDS = 100
LEARNING_RATE = 0.1
MAX_DEPTH = 6
N_BINS = 256
REG_LAMBDA = 1.0
LABEL = "label"


class Skipped(Exception):
    """A peer library is not installed; the system is skipped, not failed."""


@dataclass
class Setup:
    """What every system gets: the data and the compute budget."""

    train_dir: Path
    X_test: np.ndarray
    threads: int
    workers: int
    rounds: int = N_ROUNDS
    memory_limit: str = "auto"


@dataclass
class Outcome:
    """What a system reports back; times in seconds, memory in MB."""

    version: str
    train_s: float
    proba: np.ndarray
    prepare_s: float | None = None
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


def _read_numpy(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Read a W1 split: X of shape (n, 28) float32 C-order, y of shape (n,) int8."""
    table = pq.read_table(folder)
    X = np.column_stack([table.column(name).to_numpy() for name in FEATURES])
    return np.ascontiguousarray(X, dtype=np.float32), table.column(LABEL).to_numpy()


@contextmanager
def _timer() -> Iterator[list[float]]:
    """Measure a block's wall time; the result is in ``elapsed[0]`` afterwards."""
    elapsed: list[float] = []
    start = time.perf_counter()
    yield elapsed
    elapsed.append(time.perf_counter() - start)


@contextmanager
def _local_cluster(setup: Setup) -> Iterator[Any]:
    """Yield a Client on ``LocalCluster(workers, threads_per_worker=1, memory_limit)``,
    dashboard off."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=setup.workers, threads_per_worker=1, dashboard_address=None,
                     memory_limit=setup.memory_limit, silence_logs=logging.ERROR) as cluster,
        Client(cluster) as client,
    ):
        yield client


def _worker_pids(client: Any) -> dict[str, int]:
    import os

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


def _persisted_parquet(client: Any, folder: Path) -> Any:
    """Read a Parquet folder with ``dask.dataframe`` and persist it on the workers."""
    import dask.dataframe as dd
    from distributed import wait

    frame = client.persist(dd.read_parquet(folder))
    wait(frame)
    return frame


XGBOOST_PARAMS = {"tree_method": "hist", "max_depth": MAX_DEPTH, "eta": LEARNING_RATE,
                  "max_bin": N_BINS, "lambda": REG_LAMBDA, "objective": "binary:logistic"}


def run_xgboost(setup: Setup) -> Outcome:
    """xgboost ``hist`` in memory: QuantileDMatrix (prepare), then ``xgb.train``."""
    xgb = _import_peer("xgboost")
    with _timer() as read:
        X, y = _read_numpy(setup.train_dir)
    with _timer() as prepare:
        dtrain = xgb.QuantileDMatrix(X, y, max_bin=N_BINS, nthread=setup.threads)
    params = {**XGBOOST_PARAMS, "nthread": setup.threads}
    with _timer() as train:
        booster = xgb.train(params, dtrain, num_boost_round=setup.rounds)
    proba = booster.predict(xgb.DMatrix(setup.X_test, nthread=setup.threads))
    return Outcome(xgb.__version__, train[0], proba, prepare_s=prepare[0], read_s=read[0])


def run_xgboost_dask(setup: Setup) -> Outcome:
    """xgboost.dask on a LocalCluster: persisted Parquet, DaskQuantileDMatrix, train."""
    xgb = _import_peer("xgboost")
    xgb_dask = _import_peer("xgboost.dask")
    with _local_cluster(setup) as client:
        pids = _worker_pids(client)
        with _timer() as read:
            frame = _persisted_parquet(client, setup.train_dir)
        with _timer() as prepare:
            dtrain = xgb_dask.DaskQuantileDMatrix(client, frame[FEATURES], frame[LABEL],
                                                 max_bin=N_BINS)
        with _timer() as train:
            output = xgb_dask.train(client, XGBOOST_PARAMS, dtrain, num_boost_round=setup.rounds)
        workers_rss = _workers_peak_rss_mb(client)
        restarts = _restarts(client, pids)
    X_test = xgb.DMatrix(setup.X_test, feature_names=FEATURES, nthread=setup.threads)
    proba = output["booster"].predict(X_test)
    note = "train includes building the QuantileDMatrix on the workers (lazy in xgboost.dask)"
    return Outcome(xgb.__version__, train[0], proba, prepare_s=prepare[0], read_s=read[0],
                   worker_peak_rss_mb=workers_rss, notes=[note, *restarts])


def run_lightgbm_dask(setup: Setup) -> Outcome:
    """lightgbm.dask DaskLGBMClassifier (63 leaves) on a LocalCluster, persisted Parquet."""
    lgb = _import_peer("lightgbm")
    with _local_cluster(setup) as client:
        pids = _worker_pids(client)
        with _timer() as read:
            frame = _persisted_parquet(client, setup.train_dir)
        model = lgb.DaskLGBMClassifier(
            client=client, n_estimators=setup.rounds, learning_rate=LEARNING_RATE, num_leaves=63,
            max_bin=N_BINS - 1, reg_lambda=REG_LAMBDA, verbose=-1,
        )
        with _timer() as train:
            model.fit(frame[FEATURES], frame[LABEL])
        workers_rss = _workers_peak_rss_mb(client)
        restarts = _restarts(client, pids)
    proba = model.booster_.predict(setup.X_test, num_threads=setup.threads)
    notes = ["train includes LightGBM's binning (Dataset construction happens inside fit)",
             *restarts]
    return Outcome(lgb.__version__, train[0], proba, read_s=read[0],
                   worker_peak_rss_mb=workers_rss, notes=notes)


def run_sklearn(setup: Setup) -> Outcome:
    """scikit-learn HistGradientBoostingClassifier in memory, OpenMP limited to ``threads``."""
    sklearn = _import_peer("sklearn")
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    with _timer() as read:
        X, y = _read_numpy(setup.train_dir)
    model = HistGradientBoostingClassifier(
        max_iter=setup.rounds, learning_rate=LEARNING_RATE, max_depth=MAX_DEPTH,
        max_leaf_nodes=None, max_bins=N_BINS - 1, l2_regularization=REG_LAMBDA,
        early_stopping=False,
    )
    with threadpool_limits(limits=setup.threads, user_api="openmp"):
        with _timer() as train:
            model.fit(X, y)
        proba = model.predict_proba(setup.X_test)[:, 1]
    notes = ["train includes binning (inside fit); max_bins=255 + 1 bin for missing values"]
    return Outcome(sklearn.__version__, train[0], proba, read_s=read[0], notes=notes)


def _distboost_classifier(db: ModuleType, rounds: int, **options: Any) -> Any:
    """A distboost classifier with the W1 model shape."""
    return db.GradientBoostingClassifier(
        n_estimators=rounds, learning_rate=LEARNING_RATE, max_depth=MAX_DEPTH,
        max_bins=N_BINS, reg_lambda=REG_LAMBDA, **options,
    )


def _seconds(value: Any) -> float | None:
    """A timing from ``fit_timings_`` as a JSON-able float (None stays None)."""
    return None if value is None else float(value)


def _fit_and_time(model: Any, X: Any, y: Any) -> dict[str, Any]:
    """Fit a distboost model and split its time using ``fit_timings_``.

    Returns
    -------
    dict
        ``train_s``, ``prepare_s``, ``breakdown`` and ``notes`` for `Outcome`.
        Without ``fit_timings_["train"]`` the train time is the wall time of fit.
    """
    with _timer() as wall:
        model.fit(X, y)
    timings = getattr(model, "fit_timings_", None)
    if not isinstance(timings, dict) or "train" not in timings:
        note = "fit_timings_['train'] missing: train is the wall time of fit (incl. preparation)"
        return {"train_s": wall[0], "prepare_s": None, "breakdown": {}, "notes": [note]}
    notes = [] if "prepare" in timings else ["fit_timings_['prepare'] missing"]
    breakdown = {key: _seconds(value) for key, value in timings.items()
                 if key not in ("prepare", "train") and isinstance(value, numbers.Real)}
    return {"train_s": _seconds(timings["train"]), "prepare_s": _seconds(timings.get("prepare")),
            "breakdown": breakdown, "notes": notes}


def run_distboost_dask(setup: Setup, out_of_core: Any = "auto") -> Outcome:
    """distboost on a LocalCluster, fitted on the lazy ``dd.read_parquet`` frame."""
    import dask.dataframe as dd

    db = importlib.import_module("distboost")
    with _local_cluster(setup) as client:
        pids = _worker_pids(client)
        frame = dd.read_parquet(setup.train_dir)
        model = _distboost_classifier(db, setup.rounds, client=client, out_of_core=out_of_core)
        timing = _fit_and_time(model, frame.drop(columns=LABEL), frame[LABEL])
        workers_rss = _workers_peak_rss_mb(client)
        timing["notes"] += _restarts(client, pids) + [_placement(model)]
        proba = model.predict_proba(setup.X_test)[:, 1]
    return Outcome(db.__version__, proba=proba, worker_peak_rss_mb=workers_rss, **timing)


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
    with _timer() as read:
        X, y = _read_numpy(setup.train_dir)
    model = _distboost_classifier(db, setup.rounds, n_jobs=setup.threads)
    timing = _fit_and_time(model, X, y)
    proba = model.predict_proba(setup.X_test)[:, 1]
    return Outcome(db.__version__, proba=proba, read_s=read[0], **timing)


SYSTEMS: dict[str, Callable[[Setup], Outcome]] = {
    "distboost.dask": run_distboost_dask,
    "distboost.dask.disk": run_distboost_dask_disk,
    "distboost": run_distboost,
    "xgboost.dask": run_xgboost_dask,
    "xgboost": run_xgboost,
    "lightgbm.dask": run_lightgbm_dask,
    "sklearn": run_sklearn,
}


def _metrics(y_true: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """Test AUC and log loss of predicted probabilities of class 1, shape (n,)."""
    from sklearn.metrics import log_loss, roc_auc_score

    return {"auc": float(roc_auc_score(y_true, proba)),
            "logloss": float(log_loss(y_true, np.asarray(proba, dtype=np.float64)))}


def run(system: str, data_dir: Path, threads: int, workers: int, rounds: int = N_ROUNDS,
        memory_limit: str = "auto") -> dict[str, Any]:
    """Run one system on the W1 folder ``data_dir`` and return its JSON-able record.

    ``status`` is "ok", "skipped" (peer not installed) or "failed" (any error,
    with ``error`` and ``traceback``).
    """
    record: dict[str, Any] = {"system": system, "status": "ok"}
    try:
        X_test, y_test = _read_numpy(data_dir / "test")
        outcome = SYSTEMS[system](Setup(data_dir / "train", X_test, threads, workers, rounds,
                                        memory_limit))
        record.update(_metrics(y_test, outcome.proba))
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
    """Command-line options: the system, the W1 folder and the compute budget."""
    parser = argparse.ArgumentParser(description="Train one system on W1, print one JSON line.")
    parser.add_argument("system", choices=list(SYSTEMS))
    parser.add_argument("--data", type=Path, required=True, help="W1 folder (train/, test/)")
    parser.add_argument("--threads", type=int, default=2, help="threads of in-memory systems")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers (1 thread each)")
    parser.add_argument("--rounds", type=int, default=N_ROUNDS, help="boosting rounds")
    parser.add_argument("--memory-limit", default="auto", help="memory_limit of each Dask worker")
    return parser.parse_args()


if __name__ == "__main__":
    args = _parse_args()
    print(json.dumps(run(args.system, args.data, args.threads, args.workers, args.rounds,
                         args.memory_limit)), flush=True)
