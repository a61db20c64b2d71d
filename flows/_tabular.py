"""Per-file work of the prepare flow: read, type, check, split, write.

These functions run on Dask workers, one task per input file, so they import
neither Prefect nor anything heavy; each returns a small dict.

Splits are assigned by a seeded hash of each row's typed content, so they are
deterministic and independent of how the input is split into files or
partitions (duplicate rows always land in the same split).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fsspec
import numpy as np
import pandas as pd

SPLITS = ("train", "validation", "test")
MAX_TRACKED_VALUES = 1000
"""Distinct values counted exactly per column; beyond this only ranges are kept."""


class DataError(ValueError):
    """The input data is invalid; the message says what and where."""


# --------------------------------------------------------------------- reading
def read_file(path: str, fmt: str, nrows: int | None = None) -> pd.DataFrame:
    """Read one CSV (every column as text) or Parquet file; name it on failure."""
    try:
        with fsspec.open(path, "rb", compression="infer" if fmt == "csv" else None) as f:
            if fmt == "csv":
                return pd.read_csv(f, dtype=str, nrows=nrows)
            frame = pd.read_parquet(f)
            return frame if nrows is None else frame.head(nrows)
    except Exception as exc:
        raise DataError(f"cannot read {path}: {type(exc).__name__}: {exc}") from exc


# ---------------------------------------------------------------------- typing
def _numeric(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Float64 values and a mask of the entries that were not numbers."""
    if pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_numeric_dtype(column.dtype):
        return column.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(len(column), bool)
    values = pd.to_numeric(column, errors="coerce")
    values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = column.notna().to_numpy() & np.isnan(values)
    return values, bad


def _as_text(column: pd.Series) -> pd.Series:
    """Category labels as text (missing stays missing)."""
    text = column.astype(object).where(column.notna(), None)
    return text.map(lambda v: v if v is None else str(v)).astype(object)


def target_values(column: pd.Series, schema: dict) -> pd.Series:
    """The target typed as the schema says: float for regression, labels else."""
    kind = schema["target_kind"]
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


def typed_frame(raw: pd.DataFrame, schema: dict) -> tuple[pd.DataFrame, dict]:
    """Type the feature and target columns; return the frame and the masks of
    entries that were not numbers (numeric columns only).

    Categorical columns are left as text here (see :func:`with_categories`).
    """
    out, bad = {}, {}
    for spec in schema["features"]:
        name = spec["name"]
        if spec["kind"] == "categorical":
            out[name] = _as_text(raw[name])
        else:
            out[name], bad[name] = _numeric(raw[name])
    out[schema["target"]] = target_values(raw[schema["target"]], schema)
    return pd.DataFrame(out, index=raw.index).reset_index(drop=True), bad


def with_categories(frame: pd.DataFrame, schema: dict) -> pd.DataFrame:
    """Categorical columns as pandas categories with the schema's categories."""
    frame = frame.copy()
    for spec in schema["features"]:
        if spec["kind"] == "categorical":
            dtype = pd.CategoricalDtype(spec.get("categories", []))
            frame[spec["name"]] = frame[spec["name"]].astype(dtype)
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


# ---------------------------------------------------------------------- checks
def _first(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


def _numeric_stats(values: np.ndarray, bad: np.ndarray, raw: pd.Series) -> dict:
    finite = values[np.isfinite(values)]
    inf = np.isinf(values)
    first_bad = _first(bad)
    return {
        "rows": len(values),
        "missing": int(np.isnan(values).sum() - bad.sum()),
        "infinite": int(inf.sum()),
        "first_infinite_row": _first(inf),
        "not_numeric": int(bad.sum()),
        "first_not_numeric_row": first_bad,
        "example_not_numeric": None if first_bad is None else str(raw.iloc[first_bad]),
        "count": int(finite.size),
        "sum": float(finite.sum()),
        "sum_squares": float(np.square(finite).sum()),
        "min": float(finite.min()) if finite.size else None,
        "max": float(finite.max()) if finite.size else None,
    }


def _value_counts(column: pd.Series) -> dict | None:
    counts = column.dropna().value_counts(sort=False)
    if len(counts) > MAX_TRACKED_VALUES:
        return None
    return {_key(k): int(v) for k, v in counts.items()}


def _key(value: Any) -> str:
    """JSON-safe key of a label (integers without a trailing .0)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def file_statistics(
    path: str, fmt: str, schema: dict, seed: int, fractions: dict, n_samples: int
) -> dict:
    """Statistics of one input file, with its rows' split counts and a
    bin-edge sample (the training rows with the smallest content hashes).
    """
    raw = read_file(path, fmt)
    missing = [c for c in schema["columns_needed"] if c not in raw.columns]
    if missing:
        raise DataError(f"{path} has no column(s) {missing}; every file needs the same columns")
    frame, bad = typed_frame(raw, schema)
    target = frame[schema["target"]]
    labels = split_labels(row_uniforms(frame, seed), fractions["validation"], fractions["test"])
    stats = {"path": path, "rows": len(frame), "columns": {}}
    for spec in schema["features"]:
        name = spec["name"]
        if spec["kind"] == "categorical":
            stats["columns"][name] = {
                "missing": int(frame[name].isna().sum()),
                "values": _value_counts(frame[name]),
            }
        else:
            stats["columns"][name] = _numeric_stats(
                frame[name].to_numpy(np.float64), bad[name], raw[name]
            )
    stats["target"] = _target_statistics(target, raw[schema["target"]], schema, labels)
    stats["bin_sample"] = _bin_sample(frame, schema, labels == 0, n_samples)
    return stats


def _target_statistics(target: pd.Series, raw: pd.Series, schema: dict, labels) -> dict:
    raw_missing = raw.isna().to_numpy()
    typed_missing = target.isna().to_numpy()
    bad = typed_missing & ~raw_missing
    first_bad = _first(bad)
    out = {
        "missing": int(raw_missing.sum()),
        "first_missing_row": _first(raw_missing),
        "not_numeric": int(bad.sum()),
        "example_not_numeric": None if first_bad is None else str(raw.iloc[first_bad]),
        "first_not_numeric_row": first_bad,
        "per_split": {
            name: _value_counts(target[labels == i]) or {} for i, name in enumerate(SPLITS)
        },
        "split_rows": {name: int((labels == i).sum()) for i, name in enumerate(SPLITS)},
        "distinct_overflow": _value_counts(target) is None,
    }
    if schema["target_kind"] != "text":
        values = target.to_numpy(dtype=np.float64, na_value=np.nan)
        out.update(_numeric_stats(values, bad, raw))
        out["missing"] = int(raw_missing.sum())
    return out


def _bin_sample(frame: pd.DataFrame, schema: dict, train: np.ndarray, n_samples: int) -> tuple:
    names = [s["name"] for s in schema["features"] if s["kind"] == "numeric"]
    values = frame.loc[train, names].to_numpy(dtype=np.float64, na_value=np.nan)
    return sample_candidates(values, n_samples)


def sample_candidates(X: np.ndarray, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows with the ``n_samples`` smallest content hashes (and the hashes).

    Merging such samples by smallest hash gives the same rows whatever the
    files, so the bin edges do not depend on how the input is split.
    """
    h = pd.util.hash_pandas_object(pd.DataFrame(X), index=False).to_numpy(np.uint64)
    order = np.argsort(h, kind="stable")[:n_samples]
    return h[order], X[order]


# ---------------------------------------------------------------------- writing
def write_file_splits(
    path: str, fmt: str, schema: dict, seed: int, fractions: dict, output: str, index: int
) -> dict:
    """Type one input file, split its rows, write one Parquet file per split.

    Returns the number of rows written to each split.
    """
    frame, _ = typed_frame(read_file(path, fmt), schema)
    labels = split_labels(row_uniforms(frame, seed), fractions["validation"], fractions["test"])
    frame = with_categories(frame, schema)
    counts = {}
    for i, name in enumerate(SPLITS):
        part = frame[labels == i].reset_index(drop=True)
        counts[name] = len(part)
        if len(part):
            target = Path(output) / name / f"part-{index:05d}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            part.to_parquet(target, index=False, engine="pyarrow")
    return counts
