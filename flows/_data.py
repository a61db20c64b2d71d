"""Reading a prepared folder (see flows/prepare.py) as Dask collections, and
writing a partition's predictions: the functions Dask workers run, kept out
of the flow modules (which Prefect may load under another module name)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from flows._prepared import Feature, PreparedSchema, read_schema
from flows._tabular import DataError


def empty_like(ddf: Any) -> pd.DataFrame:
    """An empty pandas DataFrame with a Dask DataFrame's columns and dtypes (its
    metadata, from public attributes only)."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in ddf.dtypes.items()},
                        columns=ddf.columns)


def has_split(data: str | Path, split: str) -> bool:
    folder = Path(data) / split
    return folder.is_dir() and any(folder.glob("*.parquet"))


def _typed_features(frame: pd.DataFrame, features: list[Feature]) -> pd.DataFrame:
    """Categorical columns with their schema's categories (in every partition)."""
    for spec in features:
        if spec.kind == "categorical":
            frame[spec.name] = (
                frame[spec.name]
                .astype(str)
                .where(frame[spec.name].notna(), None)
                .astype(pd.CategoricalDtype(spec.categories))
            )
    return frame


def _typed(frame: pd.DataFrame, schema: PreparedSchema) -> pd.DataFrame:
    frame = _typed_features(frame, schema.features)
    target = schema.target
    if target in frame.columns and schema.target_kind == "integer":
        frame[target] = frame[target].astype("int64")
    elif target in frame.columns and schema.target_kind == "text":
        frame[target] = frame[target].astype(object)
    return frame


def load_split(data: str | Path, split: str,
               schema: PreparedSchema | None = None) -> tuple[Any, Any]:
    """Features and target of one split as a Dask DataFrame and Series.

    Categorical columns get the schema's categories (so every partition and
    every split agree on the codes).
    """
    X, y, _ = load_split_queries(data, split, schema)
    return X, y


def load_split_queries(data: str | Path, split: str,
                       schema: PreparedSchema | None = None) -> tuple[Any, Any, Any]:
    """``load_split``'s features and target, and a ranking task's query ids (the
    ``group`` column as an int64 Dask Series, else None), one partition per
    file: the prepare flow keeps each query in one file."""
    import dask.dataframe as dd

    schema = schema or read_schema(data)
    if not has_split(data, split):
        raise DataError(f"{data} has no {split!r} split (no Parquet files in {Path(data) / split})")
    group = schema.group
    ddf = dd.read_parquet(str(Path(data) / split), engine="pyarrow",
                          **({} if group is None else {"split_row_groups": False}))
    names = schema.feature_names
    columns = [c for c in names + [schema.target] + [group] if c in ddf.columns]
    ddf = ddf[columns]  # the meta too: without the --id columns the partitions leave out
    ddf = ddf.map_partitions(_typed, schema, meta=_typed(empty_like(ddf), schema))
    target = ddf[schema.target] if schema.target in ddf.columns else None
    qid = None if group is None else ddf[group].astype("int64")
    return ddf[names], target, qid


def load_features(data: str | Path, features: list[Feature]) -> Any:
    """Just the ``features`` (a schema's ``features``: name, kind, categories)
    of any Parquet folder/file with those columns."""
    import dask.dataframe as dd

    ddf = dd.read_parquet(str(data), engine="pyarrow")
    names = [f.name for f in features]
    missing = [n for n in names if n not in ddf.columns]
    if missing:
        raise DataError(f"{data} lacks the model's feature column(s) {missing}")
    ddf = ddf[names]
    return ddf.map_partitions(_typed_features, features,
                              meta=_typed_features(empty_like(ddf), features))


def shap_columns(est: Any, n_outputs: int) -> list[str]:
    """Column names of SHAP values: ``shap_<feature>`` and ``shap_bias`` for one
    output, ``shap_<class>_<feature>`` and ``shap_<class>_bias`` for several."""
    names = getattr(est, "feature_names_in_", None)
    names = [str(n) for n in (names if names is not None
                              else [f"f{j}" for j in range(est.n_features_in_)])]
    names.append("bias")
    if n_outputs == 1:
        return [f"shap_{n}" for n in names]
    outputs = [str(c) for c in getattr(est, "classes_", range(n_outputs))]
    return [f"shap_{c}_{n}" for c in outputs for n in names]


def shap_frame(est: Any, part: pd.DataFrame) -> pd.DataFrame:
    """SHAP values of one partition's rows (``distboost.inspection.shap_values``)
    as columns named by ``shap_columns``, in row order."""
    from distboost.inspection import shap_values

    values = np.asarray(shap_values(est, part))
    n_outputs = 1 if values.ndim == 2 else values.shape[1]
    return pd.DataFrame(values.reshape(len(values), -1), columns=shap_columns(est, n_outputs))


def with_shap(part: pd.DataFrame, est: Any) -> pd.DataFrame:
    """A partition's rows followed by their SHAP values (``shap_frame``)."""
    values = shap_frame(est, part) if len(part) else None
    rows = part.reset_index(drop=True)
    return rows if values is None else pd.concat([rows, values], axis=1)


def load_bin_mapper(data: str | Path, schema: PreparedSchema | None = None) -> Any:
    """The prepare flow's bin edges (``bin_edges.json``) as a ``BinMapper``
    matched to the features by name, or None if the folder has none.

    Raises
    ------
    DataError
        Naming the file and the feature, when the edges are unusable or do not
        match ``schema``'s features (default: the folder's ``schema.json``).
    """
    from distboost.binning import BinMapper

    path = Path(data) / "bin_edges.json"
    if not path.is_file():
        return None
    saved = json.loads(path.read_text())
    features = saved["features"]
    _check_bin_features(path, features, schema or read_schema(data))
    edges = {n: f["edges"] for n, f in features.items() if f["kind"] == "numeric"}
    categories = {n: f["categories"] for n, f in features.items() if f["kind"] == "categorical"}
    try:
        return BinMapper.from_edges(edges, categories, saved["max_bins"])
    except ValueError as exc:
        raise DataError(f"{path}: {exc}") from None


def _check_bin_features(path: Path, features: dict, schema: PreparedSchema) -> None:
    """Every feature of the schema, and only those, with the schema's kind."""
    kinds = {f.name: f.kind for f in schema.features}
    for name, kind in kinds.items():
        if name not in features:
            raise DataError(f"{path} has no bins for feature {name!r} of schema.json; "
                            f"prepare the data again")
        if features[name]["kind"] != kind:
            raise DataError(f"{path} bins feature {name!r} as {features[name]['kind']}, but "
                            f"schema.json says {kind}; prepare the data again")
    extra = [name for name in features if name not in kinds]
    if extra:
        raise DataError(f"{path} has bins for feature {extra[0]!r}, which schema.json does not "
                        f"list; prepare the data again")
