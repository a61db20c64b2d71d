"""A model applied to input files on the workers (``distboost predict`` and
``distboost explain``): one task per input file, read ``batch_rows`` rows at
a time like the prepare flow reads it (``flows._tabular.iter_frames``, CSV or
Parquet), its feature columns typed as the model expects, the results written
beside the columns to pass through (``keep``), as one output part per file.

Like ``flows._tabular`` this runs on Dask workers: no Prefect, small results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from flows._prepared import Feature
from flows._tabular import (
    BATCH_ROWS,
    DataError,
    _numeric,
    from_text,
    iter_frames,
    read_file,
    text_kind,
)


def file_columns(path: str, fmt: str) -> list[str]:
    """The column names of one CSV or Parquet file (read from its first rows)."""
    return [str(c) for c in read_file(path, fmt, nrows=2).columns]


def check_columns(path: str, fmt: str, features: list[Feature], keep: list[str],
                  taken: list[str]) -> dict[str, str]:
    """The first input file holds the model's features and the ``keep`` columns,
    and no kept column takes an output column's name. Returns the kind each
    kept column is read as (``flows._tabular.text_kind``: "typed" for Parquet,
    as stored).

    Raises
    ------
    DataError
        Naming the file, the columns it lacks and the columns it has.
    """
    head = read_file(path, fmt, nrows=2000)
    columns = [str(c) for c in head.columns]
    lacking = [f.name for f in features if f.name not in columns]
    if lacking:
        raise DataError(f"{path} lacks the model's feature column(s) {lacking}; its columns are "
                        f"{columns}")
    clash = [c for c in keep if c in taken]
    if clash:
        raise DataError(f"--keep column(s) {clash} would share a name with the output's own "
                        f"column(s); rename them in the input first")
    unknown = [c for c in keep if c not in columns]
    if unknown:
        raise DataError(f"--keep names column(s) {unknown} that {path} does not have; its "
                        f"columns are {columns}")
    return {c: text_kind(head[c]) for c in keep}


def typed_features(raw: pd.DataFrame, features: list[Feature], path: str,
                   first_row: int) -> pd.DataFrame:
    """The model's features of a batch: numbers as float64, categories with the
    model's categories (one it does not know is missing, as in ``predict``).

    Raises
    ------
    DataError
        Naming the column, the file, the row and the value that is not a number.
    """
    out = {}
    for spec in features:
        column = raw[spec.name]
        if spec.kind == "categorical":
            text = column.astype(object).where(column.notna(), None)
            text = text.map(lambda v: v if v is None else str(v))
            out[spec.name] = text.astype(pd.CategoricalDtype(spec.categories))
            continue
        values, bad = _numeric(column)
        bad = np.flatnonzero(bad)
        if bad.size:
            raise DataError(f"column {spec.name!r} of {path} holds {column.iloc[bad[0]]!r} at "
                            f"data row {first_row + bad[0] + 1}, which is not a number; the "
                            f"model takes it as a numeric feature: fix or drop that row")
        out[spec.name] = values
    return pd.DataFrame(out, index=raw.index)


def predictions(est: Any, X: pd.DataFrame, proba: Any) -> pd.DataFrame:
    """``prediction``, and with ``proba`` one ``proba_<class label>`` column per class;
    a multi-output model's ``flows._targets.prediction_frame``; of a survival model,
    ``prediction``, ``margin`` and with ``proba`` a list of times, ``survival_<t>``
    columns (``flows._survival.survival_predictions``)."""
    if hasattr(est, "predict_survival_function"):
        from flows._survival import survival_predictions

        return survival_predictions(est, X, proba)
    if getattr(est, "n_targets_", None) is not None:
        from flows._targets import prediction_frame

        return prediction_frame(est, X, proba)
    frame = pd.DataFrame({"prediction": np.asarray(est.predict(X))})
    if proba and hasattr(est, "predict_proba"):
        p = np.asarray(est.predict_proba(X))
        for k, c in enumerate(est.classes_):
            frame[f"proba_{c}"] = p[:, k]
    return frame


def explanations(est: Any, X: pd.DataFrame, proba: bool) -> pd.DataFrame:
    """SHAP values (``flows._data.shap_frame``); ``proba`` is not used."""
    from flows._data import shap_frame

    return shap_frame(est, X)


def leaf_columns(est: Any) -> list[str]:
    """The columns ``leaf_indices`` writes: one per tree in XGBoost's ``pred_leaf``
    layout, round by round and within a round class by class: ``leaf_<round>``,
    or ``leaf_<round>_<class label>`` for a model of several trees a round."""
    if hasattr(est, "trees_"):  # gradient boosting: K trees a round
        rounds, k = len(est.trees_), len(est.base_score_)
    elif hasattr(est, "apply") and hasattr(est, "estimators_"):
        rounds, k = len(est.estimators_), 1
    else:
        raise DataError(f"a {type(est).__name__} has no trees' leaves to write: --pred-leaf "
                        f"takes a tree ensemble (gradient boosting, forest, bagging, AdaBoost)")
    if getattr(est, "n_targets_", None) is not None:  # k targets: named after them
        from flows._targets import output_names

        labels = output_names(est)
    else:
        labels = list(est.classes_) if k > 1 else []
    return [f"leaf_{r}" if k == 1 else f"leaf_{r}_{labels[j]}"
            for r in range(rounds) for j in range(k)]


def leaf_indices(est: Any, X: pd.DataFrame, proba: bool) -> pd.DataFrame:
    """The leaf each row reaches in every tree (``est.apply``), int32, as
    ``leaf_columns`` names them; ``proba`` is not used."""
    leaves = np.asarray(est.apply(X))
    return pd.DataFrame(leaves.reshape(len(leaves), -1).astype(np.int32),
                        columns=leaf_columns(est))


KINDS = {"predict": predictions, "explain": explanations, "leaves": leaf_indices}


def apply_file(est: Any, path: str, fmt: str, features: list[Feature], keep: dict[str, str],
               kind: str, proba: bool, target: str,
               batch_rows: int = BATCH_ROWS) -> tuple[int, str | None]:
    """Apply ``est`` to every row of one input file and write ``target``.

    Parameters
    ----------
    keep : dict
        The columns passed through, first, in this order, by name; for CSV
        input, the kind each is read as (``flows._tabular.from_text``).
    kind : {"predict", "explain", "leaves"}
    target : str
        A ``.parquet`` file (a row group per batch; none for a file without
        rows) or a ``.csv`` file (no header: the caller writes one).

    Returns
    -------
    rows : int
    header : str or None
        The CSV header line of the rows written (None for Parquet or no rows).
    """
    names = list(dict.fromkeys([f.name for f in features] + list(keep)))
    rows, header, writer = 0, None, None
    try:
        for raw in iter_frames(path, fmt, batch_rows, names):
            lacking = [c for c in names if c not in raw.columns]
            if lacking:
                raise DataError(f"{path} has no column(s) {lacking}; every input file needs "
                                f"the model's features and the --keep columns")
            if raw.empty:
                continue
            frame = pd.concat([_passed(raw, keep, path, rows),
                               KINDS[kind](est, typed_features(raw, features, path, rows), proba)],
                              axis=1)
            if target.endswith(".csv"):
                header = header or frame.iloc[:0].to_csv(index=False)
                frame.to_csv(target, mode="a", header=False, index=False)
            else:
                writer = _append_parquet(writer, target, frame)
            rows += len(frame)
    finally:
        if writer is not None:
            writer.close()
    return rows, header


def _passed(raw: pd.DataFrame, keep: dict[str, str], path: str, first_row: int) -> pd.DataFrame:
    columns = {}
    for name, kind in keep.items():
        columns[name] = from_text(raw[name], kind, path, first_row)
    return pd.DataFrame(columns, index=raw.index).reset_index(drop=True)


def _append_parquet(writer: Any, target: str, frame: pd.DataFrame) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False,
                                 schema=None if writer is None else writer.schema)
    if writer is None:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        writer = pq.ParquetWriter(target, table.schema)
    writer.write_table(table)
    return writer
