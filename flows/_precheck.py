"""The command line's checks that need no data: run before any Dask cluster or
Prefect server starts, so that a misspelled name fails in a second.

Each raises the error the flow itself would raise later (the flows keep their
own checks, for callers other than the command line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows._output import claim_output, has_marker
from flows._tabular import DataError


def check_prepare(source: str, target: str | list[str], task: str = "auto",
                  categorical: list[str] | None = None, drop: list[str] | None = None,
                  validation_fraction: float = 0.15, test_fraction: float = 0.15,
                  batch_rows: int = 1, id_columns: list[str] | None = None,
                  feature_columns: list[str] | None = None, group: str | None = None,
                  event: str | None = None, label_upper_bound: str | None = None) -> None:
    """The input's files, and its columns (from the first rows of its first
    file: the Parquet schema or the CSV header): the target, the categorical,
    dropped, identifier and feature columns named, text columns not declared
    categorical, identifier-like columns not declared; the split fractions
    and the batch size; a survival task's labels (``flows._survival``).

    Raises
    ------
    FileNotFoundError, DataError, ValueError
        Naming the file, column or value.
    """
    from flows._schema import source_schema, split_fractions

    split_fractions(validation_fraction, test_fraction)
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1; got {batch_rows}")
    source_schema(source, target, task, categorical or [], drop or [], id_columns or [],
                  feature_columns or [], group, event, label_upper_bound)


def check_prepare_output(output: str, overwrite: bool) -> None:
    """``prepare``'s ``check_output``, without importing the flow (and Prefect)."""
    claim_output(output, "a distboost prepared-data folder (no schema.json)",
                 has_marker("schema.json"), overwrite)


def check_evaluate_output(output: str) -> None:
    """``evaluate``'s ``check_output`` (an evaluation folder is regenerated, any
    other non-empty folder refused), without writing anything."""
    claim_output(output, "a distboost evaluation folder", has_marker("evaluation.json"), True)


def check_model_data(est: Any, data: str) -> None:
    """A local Parquet ``data`` (file or folder) exists and its first file's
    schema has every feature column of the model ``est``. Other data (URLs,
    other formats) are left to the flow.

    Raises
    ------
    FileNotFoundError, DataError
        Naming the path and the missing columns.
    """
    import pyarrow.parquet as pq

    if "://" in data:
        return
    path = Path(data)
    if not path.exists():
        raise FileNotFoundError(f"data {data} does not exist; give a Parquet file or folder "
                                f"with the model's feature columns")
    files = [path] if path.is_file() else sorted(path.rglob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"data folder {data} holds no Parquet files")
    if files[0].suffix not in (".parquet", ".pq"):
        return
    try:
        columns = set(pq.read_schema(files[0]).names)
    except Exception as exc:  # noqa: BLE001 - reported with the file's name
        raise DataError(f"cannot read {files[0]}: {type(exc).__name__}: {exc}") from None
    names = getattr(est, "feature_names_in_", None)
    if names is None:  # a model of a numpy array: columns f0, f1... (flows.predict)
        names = [f"f{j}" for j in range(est.n_features_in_)]
    missing = [str(n) for n in names if str(n) not in columns]
    if missing:
        raise DataError(f"{data} lacks the model's feature column(s) {missing} "
                        f"(in {files[0]}; it has {sorted(columns)})")
