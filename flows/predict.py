"""Predict flow: a model applied to a Parquet folder, partition by partition.

Each partition is predicted on a worker and written as
``part-NNNNN.parquet`` with a ``prediction`` column (and ``proba_<class>``
columns with ``proba=True``); rows keep their order within a partition.
"""

# No `from __future__ import annotations` in a flow's module: Prefect 3.4.25 cannot
# resolve a flow parameter's annotation given as text (tests/test_prefect_compat.py).
from pathlib import Path
from typing import Any

import dask
import numpy as np
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._cluster import check_functions, connect, dask_client, run_logger
from flows._data import load_features, predict_partition
from flows._output import PART_FILE, claim_output, only_parquet
from flows._prepared import Feature
from flows._progress import gather_with_progress
from flows.config import ClusterConfig


def model_features(est: Any) -> list[Feature]:
    """The features a model expects, as a prepared schema lists them (name,
    kind, categories)."""
    names = getattr(est, "feature_names_in_", None)
    if names is None:
        names = [f"f{j}" for j in range(est.n_features_in_)]
    names = [str(n) for n in names]
    mapper = est.bin_mapper_
    features = []
    for j, name in enumerate(names):
        if bool(np.asarray(mapper.is_categorical_)[j]):
            cats = [str(c) for c in mapper.categories_[j]]
            features.append(Feature(name=name, kind="categorical", categories=cats))
        else:
            features.append(Feature(name=name, kind="numeric"))
    return features


def check_output(output: str, overwrite: bool, holds: str) -> None:
    """``output`` may receive part files: empty or absent, or with ``overwrite``
    a folder of nothing but Parquet files (``holds`` names what it would hold;
    ``_output.claim_output``)."""
    claim_output(output, f"a folder of {holds}", only_parquet, overwrite,
                 refuse=f"holds more than {holds}; refusing to replace it: choose another output")


def emptied(output: str) -> Path:
    """The folder ``check_output`` allowed, made, or rid of its part files (all it
    holds)."""
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    for path in out.iterdir():
        if PART_FILE.fullmatch(path.name):
            path.unlink()
    return out


def write_partitions(scheduler: str, model: str, data: str, output: str, function, name: str,
                     progress: bool, *args) -> int:
    """Apply ``function(model, partition, path, *args)`` to every partition of the
    Parquet ``data`` on the workers, each writing ``output/part-NNNNN.parquet``;
    return the number of rows written."""
    import distboost

    est = distboost.load_model(model)
    X = load_features(data, model_features(est))
    model_key = dask.delayed(est, pure=True)
    fn = dask.delayed(function, pure=True)
    tasks = [fn(model_key, part, str(Path(output) / f"part-{i:05d}.parquet"), *args,
                dask_key_name=(f"distboost-{name}", i))
             for i, part in enumerate(X.to_delayed())]
    with connect(scheduler) as client:
        check_functions(client, function)
        return sum(gather_with_progress(client, tasks, name, progress))


@task(name="predict-partitions", cache_policy=NO_CACHE)
def predict_partitions(
    scheduler: str, model: str, data: str, output: str, proba: bool, progress: bool
) -> int:
    return write_partitions(scheduler, model, data, output, predict_partition, "predict",
                            progress, proba)


@flow(name="distboost-predict")
def predict(
    model: str,
    data: str,
    output: str,
    proba: bool = False,
    overwrite: bool = False,
    scheduler: str | None = None,
    cluster: ClusterConfig | None = None,
    progress: bool = False,
) -> str:
    """Write predictions of ``model`` for every row of the Parquet ``data``.

    Returns
    -------
    str
        The output folder.
    """
    if not Path(model).is_file():
        raise FileNotFoundError(f"model file {model} does not exist")
    check_output(output, overwrite, "predictions")
    out = emptied(output)
    with dask_client(scheduler, cluster) as client:
        rows = predict_partitions(client.scheduler.address, model, data, str(out), proba, progress)
    run_logger().info("wrote %d predictions to %s", rows, out)
    return str(out)
