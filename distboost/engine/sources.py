"""Where a row of a Dask DataFrame came from: the Parquet file and the row in it.

Dask may read several small files into one partition, so "partition 1, row
250" is not where a user looks. On the error path only (nothing here runs
while training goes well), the partition is traced back through the
collection's optimized expression to the files it reads, and the row to a
file and a row in that file, from the files' Parquet footers.

The plan of the collection is dask-expr's, read by ``dask_internals.parquet_pieces``;
where it cannot be read (other readers, aggregated files, a Dask of another
shape, ``distboost.dask-internals`` off) the error keeps its partition and row.
"""

from __future__ import annotations

import re

from . import dask_internals

_WHERE = re.compile(r"partition (\d+)\b.*?\brow (\d+)\b", re.DOTALL)


def file_and_row(collection, partition: int, row: int, optimize: bool = True) -> str | None:
    """``"file F, row r"`` (0-based rows) for row ``row`` of ``partition``, or None.

    ``optimize`` says whether the partitions are the collection's optimized ones
    (``to_delayed()``) or its partitions as given.
    """
    pieces = dask_internals.parquet_pieces(collection, partition, optimize)
    if pieces is None:
        return None
    try:
        for fs, path, row_groups in pieces:
            n_rows, first = _rows(fs, path, row_groups)
            if row < n_rows:
                return f"file {path}, row {first + row}"
            row -= n_rows
    except Exception:  # noqa: BLE001 (a file changed or gone since it was read: keep the message)
        return None
    return None


def _rows(fs, path: str, row_groups) -> tuple[int, int]:
    """Rows read from ``path`` and the first one's row number in the file."""
    import pyarrow.parquet as pq

    with fs.open(path, "rb") as fh:
        meta = pq.ParquetFile(fh).metadata
    if row_groups is None:
        return meta.num_rows, 0
    groups = sorted(row_groups)
    first = sum(meta.row_group(g).num_rows for g in range(groups[0]))
    return sum(meta.row_group(g).num_rows for g in groups), first


def with_source(exc: Exception, collection, optimize: bool = True) -> Exception | None:
    """``exc`` with the file and row its message's "partition P ... row R" came from."""
    match = _WHERE.search(str(exc))
    if match is None or collection is None or str(exc).startswith("eval_set"):
        return None
    where = file_and_row(collection, int(match.group(1)), int(match.group(2)), optimize)
    if where is None:
        return None
    try:
        return type(exc)(f"{exc} [read from {where}]")
    except TypeError:
        return None
