"""Explain flow: SHAP values of a model for every row of a Parquet folder,
partition by partition on the workers (``distboost explain``).

Each partition is explained where it is read and written as
``part-NNNNN.parquet``: one column per feature, ``shap_<feature>``, and the
bias (expected value) ``shap_bias``, which add up to the model's raw output
(``decision_function``, or ``predict`` for regressors); for several outputs
(classes) ``shap_<class>_<feature>``. Rows keep their order within a partition.
"""

# No `from __future__ import annotations` in a flow's module: Prefect 3.4.25 cannot
# resolve a flow parameter's annotation given as text (tests/test_prefect_compat.py).
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._cluster import dask_client, run_logger
from flows._data import explain_partition
from flows.config import ClusterConfig
from flows.predict import check_output, emptied, write_partitions


def check_explain_paths(model: str, data: str, output: str, overwrite: bool) -> None:
    """The model file and the data exist, and the output may be written.

    Raises
    ------
    FileNotFoundError, FileExistsError
        Naming the path and what to do.
    """
    if not Path(model).is_file():
        raise FileNotFoundError(f"model file {model} does not exist; train one first")
    source = Path(data)
    if not source.exists():
        raise FileNotFoundError(f"data {data} does not exist; give a Parquet file or folder "
                                f"with the model's feature columns")
    if source.is_dir() and not any(source.rglob("*.parquet")):
        raise FileNotFoundError(f"data folder {data} holds no Parquet files")
    check_output(output, overwrite, "SHAP values")


@task(name="explain-partitions", cache_policy=NO_CACHE)
def explain_partitions(scheduler: str, model: str, data: str, output: str,
                       progress: bool) -> int:
    return write_partitions(scheduler, model, data, output, explain_partition, "explain",
                            progress)


@flow(name="distboost-explain")
def explain(
    model: str,
    data: str,
    output: str,
    overwrite: bool = False,
    scheduler: str | None = None,
    cluster: ClusterConfig | None = None,
    progress: bool = False,
) -> str:
    """Write the SHAP values of ``model`` for every row of the Parquet ``data``.

    Returns
    -------
    str
        The output folder.
    """
    check_explain_paths(model, data, output, overwrite)
    out = emptied(output)
    with dask_client(scheduler, cluster) as client:
        rows = explain_partitions(client.scheduler.address, model, data, str(out), progress)
    run_logger().info("wrote the SHAP values of %d rows to %s", rows, out)
    return str(out)
