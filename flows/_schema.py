"""Schema inference and validation of the prepare flow (pure functions).

:func:`infer_data_schema` looks at the first rows of the first file and decides the
kind of every column; :func:`combine_statistics` adds up the per-file
statistics; :func:`check_statistics` turns them into a list of problems, each
naming the column and the file (and row) where it was found.
"""

from __future__ import annotations

import re
from typing import Any

import fsspec
import numpy as np
import pandas as pd

from flows._prepared import Feature, PreparedSchema
from flows._survival import schema_labels
from flows._tabular import SPLITS, DataError, read_file, text_kind
from flows._targets import (
    label_problems,
    multi_target_task,
    target_list,
    target_views,
)

FORMATS = {".csv": "csv", ".csv.gz": "csv", ".parquet": "parquet", ".pq": "parquet"}
MAX_CLASSES = 50
"""A numeric target with at most this many distinct integer values is a class label."""
HEAD_ROWS = 2000
"""Rows of the first input file the column kinds are inferred from."""


def _format_of(path: str) -> str | None:
    lower = path.lower()
    return next((fmt for ext, fmt in FORMATS.items() if lower.endswith(ext)), None)


def list_source_files(source: str) -> tuple[str, list[str]]:
    """The format and files of a source: a file, a folder, a glob, any fsspec URL.

    In a folder, files and folders *below* it whose names start with "." are
    skipped (``.ipynb_checkpoints/``, editors' ``.part.csv.swp``); the folder
    itself may be anywhere, hidden folders included (``~/.cache/data/w1``).
    """
    fs, path = fsspec.core.url_to_fs(source)
    if any(ch in path for ch in "*?["):
        paths = sorted(fs.glob(path))
    elif not fs.exists(path):
        raise FileNotFoundError(f"input {source} does not exist")
    elif fs.isdir(path):
        paths = sorted(p for p in fs.find(path) if _format_of(p) and not _hidden_below(p, path))
    else:
        paths = [path]
    formats = {_format_of(p) for p in paths}
    if not paths:
        raise DataError(f"no CSV or Parquet files in {source}")
    if None in formats:
        odd = next(p for p in paths if _format_of(p) is None)
        raise DataError(f"{odd} is neither CSV (.csv, .csv.gz) nor Parquet (.parquet, .pq)")
    if len(formats) > 1:
        raise DataError(f"{source} mixes CSV and Parquet files; keep one format per input")
    return formats.pop(), [fs.unstrip_protocol(p) for p in paths]


def _hidden_below(path: str, folder: str) -> bool:
    """Whether a name in ``path`` below ``folder`` starts with "."."""
    root = folder.rstrip("/") + "/"
    below = path[len(root):] if path.startswith(root) else path.rsplit("/", 1)[-1]
    return any(name.startswith(".") for name in below.split("/"))


def _is_numeric_text(column: pd.Series) -> bool:
    values = column.dropna()
    return bool(pd.to_numeric(values, errors="coerce").notna().all())


def _mostly_numeric(column: pd.Series) -> bool:
    """At least 90% numbers: a numeric column with a few bad entries, which the
    statistics pass then reports with their file and row."""
    values = column.dropna()
    return values.empty or pd.to_numeric(values, errors="coerce").notna().mean() >= 0.9


def _first_text(column: pd.Series) -> object:
    values = column.dropna()
    return values[pd.to_numeric(values, errors="coerce").isna()].iloc[0]


def _column_kind(column: pd.Series, categorical: bool) -> str:
    if categorical or isinstance(column.dtype, pd.CategoricalDtype):
        return "categorical"
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return "numeric"
    return "numeric" if _mostly_numeric(column) else "text"


def _target_kind(column: pd.Series, task: str) -> tuple[str, str]:
    """(task, target_kind): target_kind is "float", "integer" or "text"."""
    numeric = pd.api.types.is_numeric_dtype(column.dtype) or _is_numeric_text(column)
    if not numeric:
        if task == "regression":
            raise DataError(
                f"target column {column.name!r} is not numeric (e.g. "
                f"{column.dropna().iloc[0]!r}) but task='regression'"
            )
        return "classification", "text"
    values = pd.to_numeric(column.dropna(), errors="coerce").to_numpy(np.float64)
    integral = values.size > 0 and bool(np.all(np.isfinite(values) & (values == np.round(values))))
    if task == "auto":
        task = (
            "classification" if integral and np.unique(values).size <= MAX_CLASSES else "regression"
        )
    if task == "classification":
        return task, "integer" if integral else "text"
    return task, "float"


ID_NAMES = re.compile(r"(?i:(?:.*[_\- ])?(?:id|uuid|guid|key)|row_?id|index)|"
                      r".*[a-z](?:Id|ID|Uuid|UUID|Key)")
"""Column names that say "identifier": id, uuid, guid, key, *_id, customerId, row_id..."""
MIN_ID_ROWS = 20
"""Rows needed before one distinct value per row marks a column as an identifier."""


def identifier_reason(column: pd.Series) -> str | None:
    """Why a column looks like an identifier, or None: its name (``ID_NAMES``),
    or one distinct value in each of at least ``MIN_ID_ROWS`` rows, all
    integers (an integer dtype, or text like ``1042``) or all text that is not
    a number; distinct measurements (floats, even ``3.0``) are not identifiers."""
    name = str(column.name)
    if ID_NAMES.fullmatch(name):
        return f"its name {name!r}"
    values = column.dropna()
    if len(values) < MIN_ID_ROWS or len(values) < len(column) or not values.is_unique:
        return None
    if pd.api.types.is_bool_dtype(values.dtype) or pd.api.types.is_float_dtype(values.dtype):
        return None
    if not pd.api.types.is_integer_dtype(values.dtype):
        text = values.astype(str)
        numbers = pd.to_numeric(text, errors="coerce")
        if numbers.notna().any() and not text.str.fullmatch(r"-?\d+").all():
            return None
    return f"a different value in each of the first {len(values)} rows"


def infer_data_schema(
    head: pd.DataFrame,
    source: str,
    target: str | list[str],
    task: str = "auto",
    categorical: list[str] | None = None,
    drop: list[str] | None = None,
    id_columns: list[str] | None = None,
    feature_columns: list[str] | None = None,
    group: str | None = None,
    event: str | None = None,
    label_upper_bound: str | None = None,
) -> PreparedSchema:
    """Decide every column's kind from the first rows of the first file.

    ``group``: a ranking task's query id column (``flows._queries``), carried
    as an identifier. ``event``, ``label_upper_bound``: survival (``flows._survival``).

    ``id_columns`` are carried beside the data, never features; a column that
    looks like an identifier (``identifier_reason``) is refused unless it is
    named in ``id_columns``, ``drop``, ``categorical`` or ``feature_columns``.
    """
    categorical, drop = list(categorical or []), list(drop or [])
    ids, told = list(id_columns or []), list(feature_columns or [])
    names = target_list(target, categorical, drop, ids, told, group)  # flows._targets
    target = names[0]
    if task == "ranking" and group is None:
        raise DataError("a ranking task needs its query id column: --group COLUMN")
    if group is not None:
        from flows._queries import check_group_column

        check_group_column(head, group, source, task)
        ids = list(dict.fromkeys([*ids, group]))
    survival = schema_labels(head, source, target, task, group, event, label_upper_bound)
    ids = list(dict.fromkeys([*ids, *(survival or {})]))
    columns = [str(c) for c in head.columns]
    for name in names:
        if name not in columns:
            raise DataError(
                f"target column {name!r} not found in {source}; its columns are {columns}"
            )
    unknown = [c for c in categorical + drop + ids + told if c not in columns]
    if unknown:
        raise DataError(f"column(s) {unknown} named in categorical/drop/id/feature are not in "
                        f"{source}; its columns are {columns}")
    features, problems = [], []
    for name in columns:
        if name in names or name in drop or name in ids:
            continue
        reason = None if name in categorical + told else identifier_reason(head[name])
        if reason:
            problems.append(
                f"column {name!r} looks like an identifier ({reason}); as a feature a model "
                f"would learn the rows by heart: pass --id {name} to carry it beside the data "
                f"(not a feature; `distboost predict --keep {name}` passes it through), "
                f"--drop {name} to leave it out, or --feature {name} to use it as a feature")
            continue
        kind = _column_kind(head[name], name in categorical)
        if kind == "text":
            example = _first_text(head[name])
            problems.append(
                f"column {name!r} is not numeric (e.g. {example!r} in {source}); "
                f"declare it categorical (--categorical {name}) or drop it (--drop {name})"
            )
        else:
            features.append(Feature(name=name, kind=kind))
    if problems:
        raise DataError("\n".join(problems))
    if not features:
        raise DataError(f"{source} has no feature columns besides the target {target!r}")
    task, target_kind = _task_and_kind(head, names, task, source, group, survival)
    return PreparedSchema(source=source, target=target, task=task, target_kind=target_kind,
                          group=group, targets=names if len(names) > 1 else None,
                          event=event, label_upper_bound=label_upper_bound, features=features,
                          ids={n: text_kind(head[n]) for n in ids} | (survival or {}) or None,
                          columns_needed=[f.name for f in features] + names + ids)


def _task_and_kind(head, names, task, source, group, survival) -> tuple[str, str]:
    """The task and the target's kind: several targets (``flows._targets``), ranking
    relevance (numbers), survival times or bounds (checked by ``label_columns``), or
    one target's own (``_target_kind``)."""
    if len(names) > 1:
        return multi_target_task(head, names, task, source)
    if group is not None:
        _target_kind(head[names[0]], "regression")
        return "ranking", "float"
    if survival is not None:
        return "survival", "float"
    return _target_kind(head[names[0]], task)


def source_schema(
    source: str, target: str | list[str], task: str = "auto",
    categorical: list[str] | None = None,
    drop: list[str] | None = None, id_columns: list[str] | None = None,
    feature_columns: list[str] | None = None, group: str | None = None,
    event: str | None = None, label_upper_bound: str | None = None,
) -> tuple[str, list[str], PreparedSchema]:
    """The format and files of ``source`` and the schema inferred from the first
    ``HEAD_ROWS`` rows of its first file (``infer_data_schema``): every check of
    names and kinds that needs no more of the data."""
    fmt, files = list_source_files(source)
    head = read_file(files[0], fmt, nrows=HEAD_ROWS)
    schema = infer_data_schema(head, files[0], target, task, categorical, drop, id_columns,
                               feature_columns, group, event, label_upper_bound)
    return fmt, files, schema.model_copy(update={"source": source})


def split_fractions(validation: float, test: float) -> dict[str, float]:
    """The validation and test shares of the rows, checked."""
    if validation < 0 or test < 0 or validation + test >= 1:
        raise ValueError(
            f"validation_fraction ({validation}) and test_fraction ({test}) must be >= 0 "
            "and leave rows for training (sum < 1)"
        )
    return {"validation": validation, "test": test}


# ----------------------------------------------------------------- combination
def _merge_numeric(parts: list[dict]) -> dict:
    count = sum(p["count"] for p in parts)
    total = sum(p["sum"] for p in parts)
    squares = sum(p["sum_squares"] for p in parts)
    mins = [p["min"] for p in parts if p["min"] is not None]
    maxs = [p["max"] for p in parts if p["max"] is not None]
    mean = total / count if count else None
    var = max(squares / count - mean**2, 0.0) if count else None
    return {
        "kind": "numeric",
        "count": count,
        "missing": sum(p["missing"] for p in parts),
        "infinite": sum(p["infinite"] for p in parts),
        "not_numeric": sum(p["not_numeric"] for p in parts),
        "min": min(mins) if mins else None,
        "max": max(maxs) if maxs else None,
        "mean": mean,
        "std": float(np.sqrt(var)) if var is not None else None,
    }


def _merge_counts(dicts: list[dict | None]) -> dict | None:
    if any(d is None for d in dicts):
        return None
    out: dict[str, int] = {}
    for d in dicts:
        for key, value in d.items():
            out[key] = out.get(key, 0) + value
    return dict(sorted(out.items()))


def combine_statistics(schema: PreparedSchema, per_file: list[dict]) -> dict:
    """Column statistics of the whole input from the per-file statistics."""
    columns = {}
    for spec in schema.features:
        parts = [f["columns"][spec.name] for f in per_file]
        if spec.kind == "categorical":
            columns[spec.name] = {
                "kind": "categorical",
                "missing": sum(p["missing"] for p in parts),
                "values": _merge_counts([p["values"] for p in parts]),
            }
        else:
            columns[spec.name] = _merge_numeric(parts)
    out = {"rows": sum(f["rows"] for f in per_file), "columns": columns,
           "target": _combined_target(schema, [f["target"] for f in per_file])}
    if schema.targets:  # the targets after the first (flows._targets)
        out["targets"] = {n: _combined_target(schema, [f["targets"][n] for f in per_file])
                          for n in schema.targets[1:]}
    return out


def _combined_target(schema: PreparedSchema, targets: list[dict]) -> dict:
    """One target's statistics of the whole input from the files'."""
    target: dict[str, Any] = {"missing": sum(t["missing"] for t in targets)}
    if schema.target_kind != "text":
        target.update(_merge_numeric(targets))
        target["missing"] = sum(t["missing"] for t in targets)
    target["per_split"] = {
        s: _merge_counts([t["per_split"][s] for t in targets]) or {} for s in SPLITS
    }
    target["split_rows"] = {s: sum(t["split_rows"][s] for t in targets) for s in SPLITS}
    overflow = any(t["distinct_overflow"] for t in targets)
    target["values"] = (
        None
        if overflow
        else _merge_counts([_merge_counts([t["per_split"][s] for s in SPLITS]) for t in targets])
    )
    return target


# ---------------------------------------------------------------------- checks
def _where(per_file: list[dict], key: str, column: str | None, row_key: str) -> str:
    for f in per_file:
        part = f["target"] if column is None else f["columns"][column]
        if part.get(key):
            return f"{f['path']}, data row {part[row_key] + 1}"
    return "?"


def check_statistics(schema: PreparedSchema, stats: dict, per_file: list[dict]) -> list[str]:
    """Every problem found, each naming the column and where it occurs."""
    problems = []
    for name, col in stats["columns"].items():
        if col["kind"] != "numeric":
            continue
        if col["not_numeric"]:
            f = next(f for f in per_file if f["columns"][name]["not_numeric"])
            problems.append(
                f"column {name!r} has {col['not_numeric']} non-numeric value(s), e.g. "
                f"{f['columns'][name]['example_not_numeric']!r} at "
                f"{_where(per_file, 'not_numeric', name, 'first_not_numeric_row')}; "
                f"declare it categorical or fix the data"
            )
        if col["infinite"]:
            problems.append(
                f"column {name!r} has {col['infinite']} infinite value(s), the first at "
                f"{_where(per_file, 'infinite', name, 'first_infinite_row')}; "
                "replace them by a finite value or leave the cell empty (missing)"
            )
    for view in target_views(schema, stats, per_file):  # each target's, once
        problems += [p for p in _target_problems(*view) if p not in problems]
    problems += label_problems(schema, stats)
    if schema.group is not None:
        from flows._queries import queries_across_files

        problems += queries_across_files(schema.group, [f["path"] for f in per_file],
                                         [f["queries"] for f in per_file])
    return problems


def _target_problems(schema: PreparedSchema, stats: dict, per_file: list[dict]) -> list[str]:
    target, name = stats["target"], schema.target
    problems = []
    if target["missing"]:
        problems.append(
            f"target {name!r} is missing in {target['missing']} row(s), the first at "
            f"{_where(per_file, 'missing', None, 'first_missing_row')}; drop those rows"
        )
    if target.get("not_numeric"):
        kind = "whole numbers (class labels)" if schema.target_kind == "integer" else "numbers"
        first = next(f["target"] for f in per_file if f["target"].get("not_numeric"))
        problems.append(
            f"target {name!r} holds {kind}, but {target['not_numeric']} value(s) are not, "
            f"e.g. {first['example_not_numeric']!r} at "
            f"{_where(per_file, 'not_numeric', None, 'first_not_numeric_row')}; fix or drop "
            f"those rows (or pass --task classification to treat every value as a label)"
        )
    if target.get("infinite"):
        problems.append(
            f"target {name!r} has {target['infinite']} infinite value(s), the first at "
            f"{_where(per_file, 'infinite', None, 'first_infinite_row')}"
        )
    values = target.get("values")
    constant = (values is not None and len(values) == 1) or (
        target.get("min") is not None and target.get("min") == target.get("max")
    )
    if constant:
        only = next(iter(values)) if values else target.get("min")
        problems.append(f"target {name!r} is constant (every row is {only}): nothing to learn")
    if schema.task == "classification" and values and not constant:
        train = target["per_split"]["train"]
        absent = [c for c in values if c not in train]
        if absent:
            problems.append(
                f"class(es) {absent} of target {name!r} have no row in the training split "
                f"(counts: { ({c: values[c] for c in absent}) }); add data for them or remove them"
            )
    if stats["rows"] and not target["split_rows"]["train"]:
        problems.append("the training split is empty: the input has too few rows")
    return problems


def categories_of(stats: dict, name: str) -> list[str]:
    values = stats["columns"][name]["values"]
    if values is None:
        raise DataError(
            f"categorical column {name!r} has more than 1000 distinct values; "
            "that is an identifier, not a category: drop it"
        )
    return list(values)


def classes_of(stats: dict, schema: PreparedSchema) -> list:
    values = stats["target"]["values"] or {}
    if schema.target_kind == "integer":
        return sorted(int(v) for v in values)
    return sorted(values)
