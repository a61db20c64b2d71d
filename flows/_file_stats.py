"""Statistics of one input file, computed batch by batch (a worker task of the
prepare flow): column counts and ranges, the first bad value of each kind with
its row, and the target's values per split.

Each batch gets its statistics, and those of consecutive batches are merged,
rows renumbered from the file's start; so the result is the one of the whole
file (float sums up to rounding), whatever the batch size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from flows._queries import QueryScan, split_keys
from flows._tabular import (
    BATCH_ROWS,
    SPLITS,
    DataError,
    from_text,
    iter_frames,
    row_uniforms,
    split_labels,
    typed_frame,
)

if TYPE_CHECKING:
    from flows._prepared import PreparedSchema

MAX_TRACKED_VALUES = 1000
"""Distinct values counted exactly per column; beyond this only ranges are kept."""
_ADDED = ("rows", "missing", "infinite", "not_numeric", "count", "sum", "sum_squares")
_FIRST_ROWS = ("first_infinite_row", "first_not_numeric_row", "first_missing_row")


def file_statistics(
    path: str, fmt: str, schema: PreparedSchema, seed: int, fractions: dict,
    batch_rows: int = BATCH_ROWS,
) -> dict:
    """Statistics of one input file, with its rows' split counts."""
    stats: dict[str, Any] | None = None
    queries = None if schema.group is None else QueryScan(schema.group,
                                                          schema.ids[schema.group], path)
    for raw in iter_frames(path, fmt, batch_rows, schema.columns_needed):
        missing = [c for c in schema.columns_needed if c not in raw.columns]
        if missing:
            raise DataError(f"{path} has no column(s) {missing}; every file needs the same columns")
        if schema.task == "survival":  # times > 0, events 0/1, bounds in order
            from flows._survival import check_labels

            check_labels(raw, schema.target, schema.event, schema.label_upper_bound, path,
                         0 if stats is None else stats["rows"])
        for name, kind in (schema.ids or {}).items():  # a value unlike the first rows': named
            from_text(raw[name], kind, path, 0 if stats is None else stats["rows"])
        if queries is not None:
            queries.add(raw[schema.group])
        batch = batch_statistics(raw, schema, seed, fractions)
        stats = batch if stats is None else merge_statistics(stats, batch)
    return _finished(stats, path) | ({} if queries is None else {"queries": queries.result()})


def batch_statistics(raw: pd.DataFrame, schema: PreparedSchema, seed: int, fractions: dict) -> dict:
    """The statistics of one batch of a file's rows (rows numbered from 0)."""
    frame, bad = typed_frame(raw, schema)
    labels = split_labels(row_uniforms(split_keys(frame, raw, schema), seed),
                          fractions["validation"], fractions["test"])
    columns = {}
    for spec in schema.features:
        name = spec.name
        if spec.kind == "categorical":
            columns[name] = {"missing": int(frame[name].isna().sum()),
                             "values": _value_counts(frame[name])}
        else:
            columns[name] = _numeric_stats(frame[name].to_numpy(np.float64), bad[name], raw[name])
    target = _target_statistics(frame[schema.target], raw[schema.target], schema, labels)
    out = {"rows": len(frame), "columns": columns, "target": target}
    if schema.targets:  # the targets after the first (flows._targets)
        out["targets"] = {n: _target_statistics(frame[n], raw[n], schema, labels)
                          for n in schema.targets[1:]}
    return out


def merge_statistics(a: dict, b: dict) -> dict:
    """The statistics of batch ``a``'s rows followed by batch ``b``'s."""
    offset = a["rows"]
    out = {
        "rows": a["rows"] + b["rows"],
        "columns": {name: _merge(col, b["columns"][name], offset)
                    for name, col in a["columns"].items()},
        "target": _merge(a["target"], b["target"], offset),
    }
    if "targets" in a:
        out["targets"] = {n: _merge(t, b["targets"][n], offset) for n, t in a["targets"].items()}
    return out


def _finished(stats: dict, path: str) -> dict:
    """The per-file statistics the prepare flow combines (see ``flows._schema``)."""
    out = {"path": path, "rows": stats["rows"], "columns": stats["columns"],
           "target": _finished_target(stats["target"])}
    if "targets" in stats:
        out["targets"] = {n: _finished_target(t) for n, t in stats["targets"].items()}
    return out


def _finished_target(stats: dict) -> dict:
    target = dict(stats)
    target["distinct_overflow"] = target.pop("values") is None
    target["per_split"] = {s: counts or {} for s, counts in target["per_split"].items()}
    return target


# ------------------------------------------------------------------ one batch
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


def _target_statistics(target: pd.Series, raw: pd.Series, schema: PreparedSchema, labels) -> dict:
    """``values`` (all splits) and ``per_split`` counts are None beyond
    ``MAX_TRACKED_VALUES`` distinct values."""
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
        "per_split": {name: _value_counts(target[labels == i]) for i, name in enumerate(SPLITS)},
        "split_rows": {name: int((labels == i).sum()) for i, name in enumerate(SPLITS)},
        "values": _value_counts(target),
    }
    if schema.target_kind != "text":
        values = target.to_numpy(dtype=np.float64, na_value=np.nan)
        out.update(_numeric_stats(values, bad, raw))
        out["missing"] = int(raw_missing.sum())
    return out


def _merge(a: dict, b: dict, offset: int) -> dict:
    """Statistics of one column: ``a``'s rows, then ``b``'s numbered from ``offset``."""
    out = dict(a)
    for key in _ADDED:
        if key in a:
            out[key] = a[key] + b[key]
    for key in _FIRST_ROWS:
        if key in a and a[key] is None and b[key] is not None:
            out[key] = b[key] + offset
    if "example_not_numeric" in a and a["first_not_numeric_row"] is None:
        out["example_not_numeric"] = b["example_not_numeric"]
    if "min" in a:
        out["min"] = _extreme(min, a["min"], b["min"])
        out["max"] = _extreme(max, a["max"], b["max"])
    if "values" in a:
        out["values"] = _merge_counts(a["values"], b["values"])
    if "per_split" in a:
        out["per_split"] = {s: _merge_counts(a["per_split"][s], b["per_split"][s]) for s in SPLITS}
        out["split_rows"] = {s: a["split_rows"][s] + b["split_rows"][s] for s in SPLITS}
    return out


def _extreme(pick, x: float | None, y: float | None) -> float | None:
    return x if y is None else y if x is None else pick(x, y)


def _merge_counts(a: dict | None, b: dict | None) -> dict | None:
    """Value counts of both batches; None (too many to track) if either is or
    the union has more than ``MAX_TRACKED_VALUES`` values."""
    if a is None or b is None:
        return None
    out = dict(a)
    for key, count in b.items():
        out[key] = out.get(key, 0) + count
    return None if len(out) > MAX_TRACKED_VALUES else out
