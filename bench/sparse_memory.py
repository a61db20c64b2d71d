"""Peak memory of a fit on a scipy CSR matrix, against the dense float64
matrix the same data would need.

Each system fits in a process of its own (``resource.getrusage``'s peak RSS
is per process). The CSR matrix is generated directly (never dense): rows
with ``density * n_features`` stored entries on average, values N(0, 1), a
target from a few columns with missing as its own effect.

    python bench/sparse_memory.py --rows 200000 --features 2000 --density 0.005
    python bench/sparse_memory.py --rows 2000 --features 200 --system xgboost
    python bench/sparse_memory.py --system dask    # distboost and xgboost.dask, LocalCluster(2x1)

Prints one JSON line per system: peak RSS before and after the fit (MiB),
the CSR's bytes, the binned codes' bytes dense (rows x features, uint8) and
sparse (what distboost keeps for a partition of at most 20 % stored: 8 bytes
a row and 5 an entry), and the dense float64 matrix's bytes (8 x rows x
features). ``--system dask`` fits distboost and xgboost.dask on a
LocalCluster of 2 single-thread workers instead (time only).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np


def make_csr(n_rows: int, n_features: int, density: float, seed: int = 0):
    """CSR data built row-block by row-block from (row, column) draws."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    nnz = int(n_rows * n_features * density)
    rows = np.sort(rng.integers(0, n_rows, nnz))
    cols = rng.integers(0, n_features, nnz)
    data = rng.normal(size=nnz)
    X = sp.csr_matrix((data, (rows, cols)), shape=(n_rows, n_features))
    X.sum_duplicates()
    y = np.zeros(n_rows)
    for j in range(5):
        col = X[:, j].toarray().ravel()
        stored = np.zeros(n_rows, bool)
        stored[X[:, j].nonzero()[0]] = True
        y += np.where(stored, col * (j + 1), 0.5)
    return X, y + 0.1 * rng.normal(size=n_rows)


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def on_dask(system: str, X, y, rounds: int, workers: int = 2) -> tuple[float, np.ndarray]:
    """Fit on ``LocalCluster(workers x 1 thread)``, X as row chunks of CSR
    (one per worker, persisted there first), after a 2-round fit on 4,000 rows
    (the workers' imports and compiled code loaded); the fit's wall time and
    the first 1,000 rows' predictions."""
    import dask.array as da
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        chunk = -(-X.shape[0] // workers)
        Xd = da.from_array(X, chunks=(chunk, X.shape[1]), asarray=False).persist()
        yd = da.from_array(y, chunks=chunk).persist()
        client.wait_for_workers(workers)
        from distributed import wait

        wait([Xd, yd])
        small = da.from_array(X[:4000], chunks=(2000, X.shape[1]), asarray=False)
        fit(system, client, small, da.from_array(y[:4000], chunks=2000), 2)  # warm the workers
        t0 = time.perf_counter()
        predict = fit(system, client, Xd, yd, rounds)
        seconds = time.perf_counter() - t0
        return seconds, predict(X[:1000])


def fit(system: str, client, Xd, yd, rounds: int):
    """One fit of ``system`` on the cluster; its in-process prediction function."""
    if system == "distboost.dask":
        from distboost import GradientBoostingRegressor

        return GradientBoostingRegressor(n_estimators=rounds, max_depth=6, learning_rate=0.3,
                                         random_state=0, client=client).fit(Xd, yd).predict
    import xgboost.dask

    model = xgboost.dask.DaskXGBRegressor(n_estimators=rounds, max_depth=6, learning_rate=0.3,
                                          tree_method="hist", max_bin=256)
    model.client = client
    return model.fit(Xd, yd).get_booster().inplace_predict


def one(system: str, n_rows: int, n_features: int, density: float, rounds: int) -> dict:
    if system.endswith(".dask"):
        X, y = make_csr(n_rows, n_features, density)
        seconds, pred = on_dask(system, X, y, rounds)
        rmse = float(np.sqrt(np.mean((pred - y[:1000]) ** 2)))
        return {"system": system, "rows": n_rows, "features": n_features, "density": density,
                "stored": int(X.nnz), "cluster": "LocalCluster(2 x 1)",
                "train_rmse_first_1000": round(rmse, 4), "seconds": round(seconds, 2)}
    if system == "distboost":
        from distboost import GradientBoostingRegressor
    else:
        import xgboost
    X, y = make_csr(n_rows, n_features, density)
    before = _peak_mib()  # the libraries imported and the data made
    t0 = time.perf_counter()
    if system == "distboost":
        model = GradientBoostingRegressor(n_estimators=rounds, max_depth=6, learning_rate=0.3,
                                          random_state=0)
        model.fit(X, y)
        pred = model.predict(X[:1000])
    else:
        model = xgboost.XGBRegressor(n_estimators=rounds, max_depth=6, tree_method="hist",
                                     max_bin=256)
        model.fit(X, y)
        pred = model.predict(X[:1000])
    seconds = time.perf_counter() - t0
    rmse = float(np.sqrt(np.mean((pred - y[:1000]) ** 2)))
    return {"system": system, "rows": n_rows, "features": n_features, "density": density,
            "stored": int(X.nnz), "csr_mib": (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
            / 2**20, "dense_codes_mib": n_rows * n_features / 2**20,
            "sparse_codes_mib": (8 * (n_rows + 1) + 5 * X.nnz) / 2**20,
            "dense_float64_mib": 8 * n_rows * n_features / 2**20,
            "peak_rss_before_fit_mib": round(before, 1), "peak_rss_mib": round(_peak_mib(), 1),
            "train_rmse_first_1000": round(rmse, 4), "seconds": round(seconds, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=2000)
    parser.add_argument("--density", type=float, default=0.005)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--system", default="both",
                        choices=["distboost", "xgboost", "both", "distboost.dask", "xgboost.dask",
                                 "dask"], help="both: in process; dask: the two on LocalCluster(2x1)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one(args.system, args.rows, args.features, args.density, args.rounds)))
        return
    systems = {"both": ["distboost", "xgboost"], "dask": ["distboost.dask", "xgboost.dask"]}.get(
        args.system, [args.system])
    for system in systems:
        cmd = [sys.executable, __file__, "--child", "--system", system, "--rows", str(args.rows),
               "--features", str(args.features), "--density", str(args.density),
               "--rounds", str(args.rounds)]
        print(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
