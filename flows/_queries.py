"""A ranking task's query id column (``distboost prepare --group``): what a row's
split is hashed from, and the checks that keep each query whole.

``GradientBoostingRanker`` compares every pair of a query's documents, so a
query's rows must be consecutive, the query ids non-decreasing (as XGBoost's
``qid``), and every query in one partition (Burges 2010, "From RankNet to
LambdaRank to LambdaMART"). The prepare flow splits by a hash of the query id
alone, so a query's rows go to one split together, keeps each input file's
rows in order, and refuses a file whose ids are not sorted, or a query whose
rows are in two files (a prepared file is a partition when training).

Like ``flows._tabular`` this runs on Dask workers: no Prefect.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from flows._prepared import PreparedSchema
from flows._tabular import DataError, from_text

FIX = ("sort the rows by query id, each query's rows together in one file (e.g. "
       "df.sort_values(QID, kind='stable') before writing)")


def split_keys(frame: pd.DataFrame, raw: pd.DataFrame, schema: PreparedSchema) -> pd.DataFrame:
    """What each row's split is hashed from (``flows._tabular.row_uniforms``): its
    typed content, or with a query column only its query id, so that a query's
    rows share a split."""
    if schema.group is None:
        return frame
    ids = from_text(raw[schema.group], (schema.ids or {})[schema.group], "", 0)
    return pd.DataFrame({schema.group: ids.reset_index(drop=True)})


class QueryScan:
    """A file's query ids, batch by batch: refuses missing or decreasing ids
    (naming the file and data row) and keeps each id once."""

    def __init__(self, name: str, kind: str, path: str):
        self.name, self.kind, self.path = name, kind, path
        self.rows, self.last, self.ids = 0, None, []

    def add(self, column: pd.Series) -> None:
        ids = from_text(column, self.kind, self.path, self.rows)
        missing = np.flatnonzero(ids.isna().to_numpy())
        if len(missing):
            raise DataError(f"query id column {self.name!r} of {self.path} is missing at data "
                            f"row {self.rows + int(missing[0]) + 1}; every row needs its query")
        values = ids.to_numpy(np.int64)
        full = values if self.last is None else np.concatenate([[self.last], values])
        first = self.rows - (self.last is not None)  # the row of full[0]
        down = np.flatnonzero(full[1:] < full[:-1])
        if len(down):
            i = int(down[0])
            raise DataError(
                f"query id column {self.name!r} of {self.path} is not sorted: data row "
                f"{first + i + 2} has query {full[i + 1]} after query {full[i]}; a query's rows "
                f"must be consecutive and the ids non-decreasing: "
                f"{FIX.replace('QID', repr(self.name))}")
        if len(values):
            self.ids.append(np.unique(values))
            self.last = int(values[-1])
        self.rows += len(values)

    def result(self) -> np.ndarray:
        """The file's query ids, once each, sorted."""
        return np.unique(np.concatenate(self.ids)) if self.ids else np.zeros(0, np.int64)


def queries_across_files(name: str, files: list[str], per_file: list[np.ndarray]) -> list[str]:
    """The problem of the first query whose rows are in two files (or none)."""
    ids = np.concatenate(per_file) if per_file else np.zeros(0, np.int64)
    if len(ids) == len(np.unique(ids)):
        return []
    owner: dict = {}
    for path, queries in zip(files, per_file):
        for q in queries.tolist():
            if q in owner:
                return [(f"query {q} of column {name!r} has rows in {owner[q]} and {path}; "
                         f"each file is a partition when training and a query's rows must all "
                         f"be in one: {FIX.replace('QID', repr(name))}")]
            owner[q] = path
    return []


def check_group_column(head: pd.DataFrame, group: str, source: str, task: str) -> str:
    """The ``--group`` column of the first rows: present and integers; the task
    "ranking" (refused with another task). Returns how the column is read."""
    from flows._tabular import text_kind

    if group not in head.columns:
        raise DataError(f"query id column {group!r} (--group) not found in {source}; its columns "
                        f"are {[str(c) for c in head.columns]}")
    if task not in ("auto", "ranking"):
        raise DataError(f"--group {group} makes a ranking task (relevance within each query), "
                        f"not {task}: leave out --task, or --task ranking")
    kind = text_kind(head[group])
    typed_ints = kind == "typed" and pd.api.types.is_integer_dtype(head[group].dtype)
    if kind != "integer" and not typed_ints:
        raise DataError(f"query id column {group!r} of {source} must hold integers (one query id "
                        f"per row), e.g. {head[group].dropna().iloc[0]!r} is not; number the "
                        f"queries first")
    return kind
