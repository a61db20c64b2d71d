"""Per-file work of the prepare flow: read, type, split, write.

These functions run on Dask workers, one task per input file, so they import
neither Prefect nor anything heavy; each returns a small dict. A file is read
``batch_rows`` rows at a time (Parquet record batches, CSV chunks), so a
worker holds one batch of a file, never the whole file.

Splits are assigned by a seeded hash of each row's typed content, so they are
deterministic and independent of how the input is split into files,
partitions or batches (duplicate rows always land in the same split).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fsspec
import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from flows._prepared import PreparedSchema

SPLITS = ("train", "validation", "test")
BATCH_ROWS = 100_000
"""Rows of an input file read at a time."""


class DataError(ValueError):
    """The input data is invalid; the message says what and where."""


# --------------------------------------------------------------------- reading
def iter_frames(path: str, fmt: str, batch_rows: int = BATCH_ROWS,
                columns: list[str] | None = None) -> Iterator[pd.DataFrame]:
    """The rows of one CSV (every column as text) or Parquet file, ``batch_rows``
    at a time; at least one frame (empty for a file without rows).

    Parameters
    ----------
    path : str
        A local path or fsspec URL.
    fmt : {"csv", "parquet"}
    batch_rows : int
        Rows per frame (Parquet batches may be shorter at row-group ends).
    columns : list of str, optional
        Read only these of the file's columns (those it has; the caller
        reports the ones it lacks).

    Raises
    ------
    DataError
        Naming the file, when it cannot be read.
    """
    try:
        with fsspec.open(path, "rb", compression="infer" if fmt == "csv" else None) as f:
            reader = _csv_frames if fmt == "csv" else _parquet_frames
            yield from reader(f, batch_rows, columns)
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"cannot read {path}: {type(exc).__name__}: {exc}") from exc


def _csv_frames(f: Any, batch_rows: int, columns: list[str] | None) -> Iterator[pd.DataFrame]:
    usecols = None if columns is None else set(columns).__contains__
    yield from pd.read_csv(f, dtype=str, chunksize=batch_rows, usecols=usecols)


def _parquet_frames(f: Any, batch_rows: int,
                    columns: list[str] | None) -> Iterator[pd.DataFrame]:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(f, pre_buffer=False)  # pre-buffering would read far ahead
    names = parquet.schema_arrow.names
    wanted = None if columns is None else [c for c in names if c in set(columns)]
    empty = True
    for batch in parquet.iter_batches(batch_size=batch_rows, columns=wanted):
        empty = False
        yield batch.to_pandas()
    if empty:
        yield parquet.schema_arrow.empty_table().to_pandas()[wanted or names]


def read_file(path: str, fmt: str, nrows: int | None = None) -> pd.DataFrame:
    """The first ``nrows`` rows of one file (all of them if None); name it on failure."""
    if nrows is not None:
        return next(iter_frames(path, fmt, batch_rows=nrows))
    return pd.concat(list(iter_frames(path, fmt)), ignore_index=True)


# ---------------------------------------------------------------------- typing
_WHOLE = r"-?(?:0|[1-9]\d{0,17})"
"""A whole number as text that reads back the same (no leading zeros, fits int64)."""


def text_kind(column: pd.Series) -> str:
    """How a passed-through CSV column (an identifier) is read: "integer" if
    every value in ``column`` (its first rows) is a whole number written
    plainly, "float" if every value is a number, else "text" (so ``00123``
    stays text). A column typed already (Parquet) is kept "typed"."""
    if not (column.dtype == object or pd.api.types.is_string_dtype(column.dtype)):
        return "typed"
    values = column.dropna().astype(str)
    if values.str.fullmatch(_WHOLE).all():
        return "integer"
    padded = values.str.match(r"-?0\d").any()
    if not padded and pd.to_numeric(values, errors="coerce").notna().all():
        return "float"
    return "text"


def from_text(column: pd.Series, kind: str, path: str, first_row: int = 0) -> pd.Series:
    """A passed-through column read as ``kind`` (``text_kind``): nullable Int64,
    float64, text, or as stored ("typed").

    Raises
    ------
    DataError
        Naming the column, the file and the row of a value that is not of the
        kind the column's first rows had.
    """
    if kind in ("typed", "text"):
        return column
    text = column.astype(object).where(column.notna(), None)
    values = (pd.to_numeric(text, errors="coerce") if kind == "integer"  # exact, as int64
              else pd.Series(parse_floats(text), index=text.index))
    bad = text.notna().to_numpy() & values.isna().to_numpy()
    if kind == "integer":
        bad |= text.notna().to_numpy() & ~text.astype(str).str.fullmatch(_WHOLE).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"column {column.name!r} of {path} held {kind} values in the first rows "
                        f"read, but {text.iloc[i]!r} at data row {first_row + i + 1}; make its "
                        f"values alike (or write the file as Parquet, typed)")
    return values.astype("Int64") if kind == "integer" else values.astype(np.float64)


def parse_floats(text: pd.Series) -> np.ndarray:
    """Float64 of each entry of a text column, the nearest double to the decimal
    written (as Python's ``float``); NaN where an entry is missing or not a number.

    ``pd.to_numeric`` decides what is a number, but its parser is not correctly
    rounded before pandas 3 (about a third of 17-digit values come out one unit
    in the last place off), so the same CSV would give other values, row
    hashes and splits under another pandas. Its finite values are read again
    exactly here.
    """
    values = pd.to_numeric(text, errors="coerce").to_numpy(np.float64, copy=True, na_value=np.nan)
    finite = np.isfinite(values)
    if finite.any():
        written = text.to_numpy(dtype=object)[finite]
        try:
            values[finite] = written.astype(np.float64)
        except (TypeError, ValueError):  # a form pandas reads and Python does not: keep pandas'
            values[finite] = [_exact(v, x) for v, x in zip(written, values[finite])]
    return values


def _exact(written: Any, parsed: float) -> float:
    try:
        return float(written)
    except (TypeError, ValueError):
        return parsed


def _numeric(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Float64 values and a mask of the entries that were not numbers."""
    if pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_numeric_dtype(column.dtype):
        return column.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(len(column), bool)
    values = parse_floats(column)
    bad = column.notna().to_numpy() & np.isnan(values)
    return values, bad


def _as_text(column: pd.Series) -> pd.Series:
    """Category labels as text (missing stays missing)."""
    text = column.astype(object).where(column.notna(), None)
    return text.map(lambda v: v if v is None else str(v)).astype(object)


def target_values(column: pd.Series, schema: PreparedSchema) -> pd.Series:
    """The target typed as the schema says: float for regression, labels else."""
    kind = schema.target_kind
    if kind == "text":
        return _as_text(column)
    values, _ = _numeric(column)
    if kind == "integer":
        # a value that is not a whole number (text, 2.5, inf) becomes missing here and is
        # reported by the checks as "not an integer", with its file and row
        whole = np.isfinite(values) & (values == np.round(values))
        values = np.where(whole, values, np.nan)
        return pd.Series(values, index=column.index).astype("Int64")
    return pd.Series(values, index=column.index)


def typed_frame(raw: pd.DataFrame, schema: PreparedSchema) -> tuple[pd.DataFrame, dict]:
    """Type the feature and target columns; return the frame and the masks of
    entries that were not numbers (numeric columns only).

    Categorical columns are left as text here (see :func:`with_categories`).
    """
    out, bad = {}, {}
    for spec in schema.features:
        name = spec.name
        if spec.kind == "categorical":
            out[name] = _as_text(raw[name])
        else:
            out[name], bad[name] = _numeric(raw[name])
    for name in schema.target_names:  # one, or a multi-output task's k
        out[name] = target_values(raw[name], schema)
    return pd.DataFrame(out, index=raw.index).reset_index(drop=True), bad


def with_ids(frame: pd.DataFrame, raw: pd.DataFrame, schema: PreparedSchema,
             path: str, first_row: int = 0) -> pd.DataFrame:
    """``frame`` followed by the schema's identifier columns of ``raw``, read as
    their kinds (``from_text``): carried beside the data, never features, and
    not in the row hash that splits the rows (a row's split does not depend on
    its id)."""
    ids = {name: from_text(raw[name], kind, path, first_row).reset_index(drop=True)
           for name, kind in (schema.ids or {}).items()}
    return frame.assign(**ids) if ids else frame


def with_categories(frame: pd.DataFrame, schema: PreparedSchema) -> pd.DataFrame:
    """Categorical columns as pandas categories with the schema's categories."""
    frame = frame.copy()
    for spec in schema.features:
        if spec.kind == "categorical":
            dtype = pd.CategoricalDtype(spec.categories or [])
            frame[spec.name] = frame[spec.name].astype(dtype)
    return frame


def row_uniforms(frame: pd.DataFrame, seed: int) -> np.ndarray:
    """A uniform [0, 1) number per row from a seeded hash of its content."""
    h = pd.util.hash_pandas_object(frame, index=False).to_numpy(np.uint64)
    # splitmix64 finaliser of hash + seed: pandas' hash_key only salts text columns
    salt = np.uint64((0x9E3779B97F4A7C15 * (seed + 1)) % 2**64)
    z = h + salt
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53


def split_labels(u: np.ndarray, validation: float, test: float) -> np.ndarray:
    """0 = train, 1 = validation, 2 = test."""
    return np.where(u < test, 2, np.where(u < test + validation, 1, 0))


# ---------------------------------------------------------------------- writing
def write_file_splits(
    path: str, fmt: str, schema: PreparedSchema, seed: int, fractions: dict, output: str,
    index: int,
    batch_rows: int = BATCH_ROWS, n_samples: int | None = None,
) -> tuple[dict, tuple]:
    """Type one input file, split its rows, write one Parquet file per split
    (``SPLIT/part-INDEX.parquet``, a row group per batch; none for an empty split).

    Returns
    -------
    counts : dict
        The number of rows written to each split.
    candidates : tuple
        The training rows' binning candidates, drawn as ``fit`` draws them
        from the rows it reads back (``distboost.binning.frame_candidates``),
        to be merged with the other files' (``distboost.binning.merge_candidates``).
        At most ``n_samples`` rows (default: the library's sample size, which
        bins equal to ``fit``'s need); besides a batch, the worker holds those.
    """
    from distboost.binning import SAMPLE_ROWS, CandidatePool, frame_candidates
    from flows._queries import split_keys  # imports this module

    writers: dict[str, Any] = {}
    counts = dict.fromkeys(SPLITS, 0)
    pool = CandidatePool(SAMPLE_ROWS if n_samples is None else n_samples)
    features = schema.feature_names
    try:
        for raw in iter_frames(path, fmt, batch_rows, schema.columns_needed):
            frame, _ = typed_frame(raw, schema)
            labels = split_labels(row_uniforms(split_keys(frame, raw, schema), seed),
                                  fractions["validation"], fractions["test"])
            frame = with_categories(with_ids(frame, raw, schema, path), schema)
            for i, name in enumerate(SPLITS):
                part = frame[labels == i]
                if len(part):
                    target = Path(output) / name / f"part-{index:05d}.parquet"
                    _append(writers, name, target, part)
                    counts[name] += len(part)
            pool.add(frame_candidates(frame.loc[labels == 0, features], below=pool.threshold))
    finally:
        for writer in writers.values():
            writer.close()
    return counts, pool.result()


def _append(writers: dict, split: str, target: Path, part: pd.DataFrame) -> None:
    """Write ``part`` as a row group of the split's file (opened at its first rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = writers.get(split)
    table = pa.Table.from_pandas(part, preserve_index=False,
                                 schema=None if writer is None else writer.schema)
    if writer is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        writer = writers[split] = pq.ParquetWriter(target, table.schema)
    writer.write_table(table)
