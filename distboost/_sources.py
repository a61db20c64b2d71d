"""Where a row of a Dask DataFrame came from: the Parquet file and the row in it.

Dask may read several small files into one partition, so "partition 1, row
250" is not where a user looks. On the error path only (nothing here runs
while training goes well), the partition is traced back through the
collection's optimized expression to the files it reads, and the row to a
file and a row in that file, from the files' Parquet footers.

This reads dask-expr's plan of the collection; where that plan has another
shape (other readers, aggregated files) the error keeps its partition and row.
"""

from __future__ import annotations

import re

_WHERE = re.compile(r"partition (\d+)\b.*?\brow (\d+)\b", re.DOTALL)


def file_and_row(collection, partition: int, row: int) -> str | None:
    """``"file F, row r"`` (0-based rows) for row ``row`` of ``partition``, or None."""
    try:
        pieces = _pieces(collection, partition)
    except Exception:  # noqa: BLE001 (dask-expr internals of another shape: keep the message)
        return None
    if pieces is None:
        return None
    for path, n_rows, first in pieces:
        if row < n_rows:
            return f"file {path}, row {first + row}"
        row -= n_rows
    return None


def _pieces(collection, partition: int):
    """(path, rows read, first row in the file) of each piece the partition reads."""
    from dask.dataframe.dask_expr.io.io import FusedIO

    expr = collection.optimize(fuse=False).expr
    fused = [e for e in expr.walk() if isinstance(e, FusedIO)]
    reads = [e for e in expr.walk() if type(e).__name__.startswith("ReadParquet")]
    if fused:
        read = fused[0].operand("_expr")
        indices = list(fused[0]._fusion_buckets[partition])
    elif len(reads) == 1:
        read = reads[0]
        indices = [list(read._partitions)[partition]]
    else:
        return None
    fs = read._dataset_info["fs"]
    out = []
    for index in indices:
        piece = read._plan["parts"][index]["piece"]
        if not isinstance(piece, tuple):
            return None  # aggregated files
        path, row_groups = piece[0], piece[1]
        out.append((path, *_rows(fs, path, row_groups)))
    return out


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


def with_source(exc: Exception, collection) -> Exception | None:
    """``exc`` with the file and row its message's "partition P ... row R" came from."""
    match = _WHERE.search(str(exc))
    if match is None or collection is None or str(exc).startswith("eval_set"):
        return None
    where = file_and_row(collection, int(match.group(1)), int(match.group(2)))
    if where is None:
        return None
    try:
        return type(exc)(f"{exc} [read from {where}]")
    except TypeError:
        return None
