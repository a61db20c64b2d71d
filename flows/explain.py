"""Explain flow: SHAP values of a model for every row of CSV or Parquet input,
file by file on the workers (``distboost explain``).

Each input file is explained where it is read (``flows._apply``), written as
the predict flow writes (a ``.csv`` file, or a folder of
``part-NNNNN.parquet``), rows in input order: first the ``keep`` columns,
then one column per feature, ``shap_<feature>``, and the bias (expected
value) ``shap_bias``, which add up to the model's raw output
(``decision_function``, or ``predict`` for regressors); for several outputs
(classes) ``shap_<class>_<feature>``.
"""

# No `from __future__ import annotations` in a flow's module: Prefect 3.4.25 cannot
# resolve a flow parameter's annotation given as text (tests/test_prefect_compat.py).
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._cluster import dask_client, run_logger, step
from flows._data import shap_columns
from flows._tabular import BATCH_ROWS
from flows.config import ClusterConfig
from flows.predict import Plan, emptied, is_csv, load_checked, plan_files, write_files


def check_explain(model: str, data: str, output: str, overwrite: bool = False,
                  keep: list[str] | None = None) -> Plan:
    """The model file, the data and its columns, and the output, checked
    before any work starts (``flows.predict.plan_files``).

    Raises
    ------
    FileNotFoundError, FileExistsError, DataError
        Naming the path or column and what to do.
    """
    est = load_checked(model)
    outputs = getattr(est, "n_targets_", None) or len(getattr(est, "classes_", ()))  # K or k
    names = shap_columns(est, 1) + (shap_columns(est, outputs) if outputs else [])
    return plan_files(est, data, output, overwrite, keep, names, "SHAP values")


@task(name="explain-files", cache_policy=NO_CACHE)
def explain_files(scheduler: str, model: str, plan: Plan, output: str, progress: bool,
                  batch_rows: int) -> int:
    return write_files(scheduler, model, plan, output, "explain", progress,
                       batch_rows=batch_rows)


@flow(name="distboost-explain")
def explain(
    model: str,
    data: str,
    output: str,
    keep: list[str] | None = None,
    overwrite: bool = False,
    scheduler: str | None = None,
    cluster: ClusterConfig | None = None,
    progress: bool = False,
    batch_rows: int = BATCH_ROWS,
) -> str:
    """Write the SHAP values of ``model`` for every row of the CSV or Parquet ``data``.

    Parameters
    ----------
    keep : list of str
        Columns of ``data`` written first, beside each row's SHAP values.

    The other parameters are ``flows.predict.predict``'s.

    Returns
    -------
    str
        The output file or folder.
    """
    plan = check_explain(model, data, output, overwrite, keep)
    out = output if is_csv(output) else str(emptied(output))
    with dask_client(scheduler, cluster) as client:
        rows = step(explain_files, client.scheduler.address, model, plan, out, progress,
                    batch_rows)
    run_logger().info("wrote the SHAP values of %d rows to %s", rows, out)
    return out
