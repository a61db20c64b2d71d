"""Predict flow: a model applied to CSV or Parquet input, file by file.

Each input file is predicted on a worker (``flows._apply``), ``batch_rows``
rows at a time. Output rows are in input order: the files in the order
``prepare`` lists them, rows as in each file; first the ``keep`` columns,
passed through as read, then ``prediction`` (and with ``proba=True``
``proba_<class label>`` columns; a multi-output model: ``prediction_<target>``
per target, and ``proba_<label>``, ``flows._targets``), or with ``pred_leaf=True`` instead each
row's leaf in every tree (``flows._apply.leaf_columns``). An output ending in ``.csv`` is one CSV
file; anything else is a folder of ``part-NNNNN.parquet``, one per input file
(none for a file without rows).
"""

# No `from __future__ import annotations` in a flow's module: Prefect 3.4.25 cannot
# resolve a flow parameter's annotation given as text (tests/test_prefect_compat.py).
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, NamedTuple

import dask
import numpy as np
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows._apply import apply_file, check_columns, leaf_columns
from flows._cluster import check_functions, connect, dask_client, run_logger, step
from flows._output import PART_FILE, claim_output, only_parquet
from flows._prepared import Feature
from flows._progress import gather_with_progress
from flows._schema import list_source_files
from flows._survival import output_columns
from flows._tabular import BATCH_ROWS, DataError
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
    """``output`` may receive the results: a ``.csv`` file that is absent (or,
    with ``overwrite``, a file); else a folder, empty or absent, or with
    ``overwrite`` a folder of nothing but Parquet files (``holds`` names what
    it would hold; ``_output.claim_output``)."""
    if is_csv(output):
        if Path(output).is_dir():
            raise FileExistsError(f"{output} is a folder; a .csv output is one file: choose "
                                  f"another output")
        if Path(output).exists() and not overwrite:
            raise FileExistsError(f"{output} already exists; pass --force (overwrite=True) to "
                                  f"replace it")
        return
    claim_output(output, f"a folder of {holds}", only_parquet, overwrite,
                 refuse=f"holds more than {holds}; refusing to replace it: choose another output")


def is_csv(output: str) -> bool:
    """Whether ``output`` names one CSV file (it ends in ``.csv``)."""
    return str(output).lower().endswith(".csv")


class Plan(NamedTuple):
    """What applying a model to ``data`` takes: the input's format and files,
    the model's features and the columns passed through (name -> kind)."""

    fmt: str
    files: list[str]
    features: list[Feature]
    keep: dict[str, str]


def load_checked(model: str) -> Any:
    """The model of a file that exists and passes the model file checks."""
    import distboost

    if not Path(model).is_file():
        raise FileNotFoundError(f"model file {model} does not exist; train one first")
    return distboost.load_model(model)


def plan_files(est: Any, data: str, output: str, overwrite: bool, keep: list[str] | None,
               taken: list[str], holds: str) -> Plan:
    """Every check that needs no cluster, before any work starts: the input
    files, the columns (features, ``keep``) of the first one, and the output.

    Parameters
    ----------
    est : the model
    taken : the output's own column names, which a kept column may not have
    holds : what the output holds, for messages ("predictions")

    Raises
    ------
    FileNotFoundError, FileExistsError, DataError
        Naming the path or column and what to do.
    """
    try:
        fmt, files = list_source_files(data)
    except FileNotFoundError:
        raise FileNotFoundError(f"data {data} does not exist; give a CSV or Parquet file or "
                                f"folder with the model's feature columns") from None
    files = [f.removeprefix("file://") for f in files]  # local paths as the user wrote them
    features = model_features(est)
    kept = check_columns(files[0], fmt, features, list(dict.fromkeys(keep or [])), taken)
    check_output(output, overwrite, holds)
    return Plan(fmt, files, features, kept)


def output_names(est: Any, proba: bool, pred_leaf: bool = False,
                 times: list[float] | None = None) -> list[str]:
    """The columns ``predict`` writes besides the kept ones."""
    if pred_leaf:
        if proba or times:
            raise ValueError("--pred-leaf writes the leaves alone (as XGBoost's pred_leaf); "
                             "leave out --proba and --times, or predict twice")
        return leaf_columns(est)
    survival = output_columns(est, times)  # a survival model's (flows._survival)
    if survival:
        return survival
    if getattr(est, "n_targets_", None) is not None:  # k targets (flows._targets)
        from flows._targets import prediction_columns

        return prediction_columns(est, proba)
    names = ["prediction"]
    if proba and hasattr(est, "predict_proba"):
        names += [f"proba_{c}" for c in est.classes_]
    return names


def emptied(output: str) -> Path:
    """The folder ``check_output`` allowed, made, or rid of its part files (all it
    holds)."""
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    for path in out.iterdir():
        if PART_FILE.fullmatch(path.name):
            path.unlink()
    return out


def write_files(scheduler: str, model: str, plan: Plan, output: str, kind: str, progress: bool,
                proba: bool = False, batch_rows: int = BATCH_ROWS) -> int:
    """Apply the model to every input file of ``plan`` on the workers
    (``flows._apply.apply_file``), writing ``output``; return the rows written."""
    import distboost

    est = dask.delayed(distboost.load_model(model), pure=True)
    fn = dask.delayed(apply_file, pure=True, nout=2)
    csv = is_csv(output)
    parts = _staging(output) if csv else Path(output)
    suffix = "csv" if csv else "parquet"
    tasks = [fn(est, path, plan.fmt, plan.features, plan.keep, kind, proba,
                str(parts / f"part-{i:05d}.{suffix}"), batch_rows,
                dask_key_name=(f"distboost-{kind}", i))
             for i, path in enumerate(plan.files)]
    try:
        with connect(scheduler) as client:
            check_functions(client, apply_file)
            written = gather_with_progress(client, tasks, f"{kind}: files", progress,
                                           note=_rows_written)
        if csv:
            _join_csv(parts, [h for _, h in written], output)
    finally:
        if csv:
            shutil.rmtree(parts, ignore_errors=True)
    return sum(rows for rows, _ in written)


def _rows_written(results: list) -> str:
    return f"{sum(rows for rows, _ in results):,} rows"


def _staging(output: str) -> Path:
    out = Path(output)
    staging = out.with_name(f".{out.name}.partial-{uuid.uuid4().hex[:8]}")
    staging.mkdir(parents=True)
    return staging


def _join_csv(parts: Path, headers: list, output: str) -> None:
    """The part files (no header) one after the other under one header, moved
    into place at once."""
    found = [h for h in headers if h is not None]
    if any(h != found[0] for h in found):
        raise DataError(f"the input files give {output} different columns: {sorted(set(found))}")
    joined = parts / "joined.csv"
    with open(joined, "w", newline="") as out:
        out.write(found[0] if found else "")
        for i in range(len(headers)):
            part = parts / f"part-{i:05d}.csv"
            if part.is_file():
                with open(part, newline="") as f:
                    shutil.copyfileobj(f, out)
    os.replace(joined, output)


@task(name="predict-files", cache_policy=NO_CACHE)
def predict_files(scheduler: str, model: str, plan: Plan, output: str, proba: bool,
                  progress: bool, batch_rows: int, pred_leaf: bool = False) -> int:
    return write_files(scheduler, model, plan, output, "leaves" if pred_leaf else "predict",
                       progress, proba, batch_rows)


def check_predict(model: str, data: str, output: str, overwrite: bool = False,
                  keep: list[str] | None = None, proba: bool = False,
                  pred_leaf: bool = False, times: list[float] | None = None) -> Plan:
    """``plan_files`` for ``predict`` (the command line calls it before anything starts)."""
    est = load_checked(model)
    names = output_names(est, proba, pred_leaf, times)
    return plan_files(est, data, output, overwrite, keep, names, "predictions")


@flow(name="distboost-predict")
def predict(
    model: str,
    data: str,
    output: str,
    proba: bool = False,
    keep: list[str] | None = None,
    overwrite: bool = False,
    scheduler: str | None = None,
    cluster: ClusterConfig | None = None,
    progress: bool = False,
    batch_rows: int = BATCH_ROWS,
    pred_leaf: bool = False,
    times: list[float] | None = None,
) -> str:
    """Write predictions of ``model`` for every row of the CSV or Parquet ``data``.

    Parameters
    ----------
    model : str
        Model file.
    data : str
        A CSV or Parquet file, a folder of them, a glob or an fsspec URL (as
        ``prepare`` takes), with the model's feature columns.
    output : str
        A ``.csv`` file, or a folder of Parquet part files.
    proba : bool
        Also ``proba_<class label>`` columns.
    keep : list of str
        Columns of ``data`` written first, beside each row's prediction
        (identifiers to join on).
    batch_rows : int
        Rows of an input file a worker reads at a time.
    pred_leaf : bool
        Instead of predictions, the leaf each row reaches in every tree
        (``apply``), in XGBoost's ``pred_leaf`` layout: ``leaf_<round>``, or
        ``leaf_<round>_<class label>`` with several trees a round.
    times : list of float, optional
        A survival model's: ``survival_<t>`` columns, S(t | x) at each time,
        beside ``prediction`` and ``margin`` (``flows._survival``).

    Returns
    -------
    str
        The output file or folder.
    """
    plan = check_predict(model, data, output, overwrite, keep, proba, pred_leaf, times)
    out = output if is_csv(output) else str(emptied(output))
    option = list(times) if times else proba  # a survival model's times (flows._apply)
    with dask_client(scheduler, cluster) as client:
        rows = step(predict_files, client.scheduler.address, model, plan, out, option, progress,
                    batch_rows, pred_leaf)
    run_logger().info("wrote %d predictions to %s", rows, out)
    return out
