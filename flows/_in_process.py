"""Small jobs without a cluster: predict, explain and evaluate in this process.

A job whose data fit comfortably in this process's memory gains nothing from
a Dask cluster but its start-up (seconds). The command line runs such a job
here (``fits_in_process``): the flows get an ``InProcess`` stand-in for their
Dask client, and the very Dask graphs they would send to the workers are
computed by Dask's synchronous scheduler, one pandas partition at a time, in
this process; the same functions on the same partitions give the same results.

The rule (``fits_in_process``): at most ``MAX_ROWS`` rows, and a size (the
Parquet files' uncompressed size from their footers, or the CSV files' bytes)
of at most ``MEMORY_SHARE`` of the memory available now. Data given by an
fsspec URL (not a local path), and compressed CSV, always go to a cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

IN_PROCESS = "synchronous"
"""The ``scheduler`` of a flow run in this process (Dask's name for its scheduler)."""
MAX_ROWS = 1_000_000
"""Most rows of a job run in process."""
MEMORY_SHARE = 0.1
"""Largest share of the available memory the data of a job run in process may take."""


class _Address:
    address = IN_PROCESS


class InProcess:
    """What the flows use of a Dask ``Client``, computed in this process.

    ``compute`` and ``as_current`` use Dask's synchronous scheduler; nothing
    is started, and there is nothing to close.
    """

    in_process = True
    scheduler = _Address()
    dashboard_link = None

    def compute(self, collections: Any, sync: bool = True) -> Any:
        """``Client.compute(collections, sync=True)``: the result of one
        collection, or the results of a list of them, in order."""
        import dask

        if not isinstance(collections, (list, tuple)):
            return dask.compute(collections, scheduler=IN_PROCESS)[0]
        return list(dask.compute(*collections, scheduler=IN_PROCESS))

    @contextmanager
    def as_current(self) -> Iterator[InProcess]:
        """Dask's default scheduler is this process's synchronous one meanwhile."""
        import dask

        with dask.config.set(scheduler=IN_PROCESS):
            yield self

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_in_process(client: Any) -> bool:
    """Whether ``client`` is an ``InProcess`` stand-in."""
    return bool(getattr(client, "in_process", False))


def data_size(data: str | Path) -> tuple[int, int] | None:
    """Rows and bytes of local input, the files ``prepare`` would read
    (``flows._schema.list_source_files``): for Parquet the rows and
    uncompressed bytes from the files' footers; for CSV (not compressed) the
    bytes on disk and the lines after each header, counted only when the
    bytes could pass. None for anything else (a URL, a missing path,
    compressed CSV, an unreadable footer: the cluster path then reports it)."""
    import pyarrow.parquet as pq

    from flows._schema import list_source_files

    if "://" in str(data) or not Path(data).exists():
        return None
    try:
        fmt, urls = list_source_files(str(data))
        files = [Path(u.removeprefix("file://")) for u in urls]
        if fmt == "csv":
            return _csv_size(files)
        rows = size = 0
        for file in files:
            meta = pq.ParquetFile(file).metadata
            rows += meta.num_rows
            size += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except Exception:  # noqa: BLE001 - the flow names the bad file
        return None
    return rows, size


def _csv_size(files: list[Path]) -> tuple[int, int] | None:
    if any(f.suffix != ".csv" for f in files):
        return None
    size = sum(f.stat().st_size for f in files)
    if size > MEMORY_SHARE * available_memory():
        return MAX_ROWS + 1, size  # too large to count
    rows = 0
    for file in files:
        with open(file, "rb") as f:
            rows += max(0, sum(1 for _ in f) - 1)
    return rows, size


def available_memory() -> int:
    """Bytes of memory available to this process now."""
    import psutil

    return int(psutil.virtual_memory().available)


def fits_in_process(size: tuple[int, int] | None, available: int | None = None) -> bool:
    """Whether data of ``size`` (rows, uncompressed bytes) are a small job."""
    if size is None:
        return False
    rows, nbytes = size
    available = available_memory() if available is None else available
    return rows <= MAX_ROWS and nbytes <= MEMORY_SHARE * available
