"""Prepare flow: raw CSV or Parquet -> validated, typed, split Parquet.

Output folder::

    train/part-00000.parquet ...      one file per input file and split
    validation/...  test/...
    schema.json                       column kinds, categories, classes, split sizes
    statistics.json                   per-column statistics of the whole input
    bin_edges.json                    the library's bins of the training split

The splits are assigned by a seeded hash of each row's content, so the same
input and seed give the same splits however the input is split into files.
Every input file is read in batches of ``batch_rows`` rows (Parquet record
batches, CSV chunks), twice: once for the statistics and once to write the
splits; no worker holds a whole file, so files larger than a worker's memory
prepare. The second pass also draws the training rows' binning sample as
``fit`` would (``distboost.binning``), so that training on the folder bins
exactly as a ``fit`` on its training split would.
Invalid input is rejected before anything is written, with every problem
named (column, file, row); an existing output is replaced only with
``overwrite=True``, and only after the new one is complete.
"""

# No `from __future__ import annotations` in a flow's module: Prefect 3.4.25 cannot
# resolve a flow parameter's annotation given as text (tests/test_prefect_compat.py).
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import dask
import numpy as np
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from distboost.model_file import write_atomic
from flows._cluster import check_functions, dask_client, run_logger
from flows._file_stats import file_statistics
from flows._output import claim_output, has_marker
from flows._prepared import PreparedSchema
from flows._progress import gather_with_progress
from flows._schema import (
    categories_of,
    check_statistics,
    classes_of,
    combine_statistics,
    source_schema,
    split_fractions,
)
from flows._tabular import BATCH_ROWS, DataError, write_file_splits
from flows.config import ClusterConfig

MARKER = "schema.json"
MERGE_FAN_IN = 8
"""Files' binning samples merged per task (on the workers, never all on the driver)."""


def check_output(output: str | Path, overwrite: bool) -> Path:
    """Refuse to replace an existing output unless asked, and only a prepared
    folder (``_output.claim_output``)."""
    return claim_output(output, f"a distboost prepared-data folder (no {MARKER})",
                        has_marker(MARKER), overwrite)


@task(name="inspect-source", cache_policy=NO_CACHE)
def inspect_source(
    source: str, target: str | list[str], task_kind: str, categorical: list[str],
    drop: list[str],
    id_columns: list[str] | None = None, feature_columns: list[str] | None = None,
    group: str | None = None, survival: tuple = (None, None),
) -> tuple[str, list[str], PreparedSchema]:
    """List the input files and infer the schema from the first one (``survival``:
    the event and upper bound columns of a survival task, ``flows._survival``)."""
    return source_schema(source, target, task_kind, categorical, drop, id_columns,
                         feature_columns, group, *survival)


def _worker_tasks(client, function, label, calls, **delayed) -> list[Any]:
    """One Dask task of ``function`` per argument tuple of ``calls``, keyed ``(label, i)``."""
    check_functions(client, function)
    fn = dask.delayed(function, pure=True, **delayed)
    return [fn(*args, dask_key_name=(label, i)) for i, args in enumerate(calls)]


def _on_workers(client, function, label, calls, progress) -> list[Any]:
    tasks = _worker_tasks(client, function, label, calls)
    return gather_with_progress(client, tasks, label.removeprefix("distboost-"), progress)


@task(name="scan-statistics", cache_policy=NO_CACHE)
def scan_statistics(
    scheduler: str,
    fmt: str,
    files: list[str],
    schema: PreparedSchema,
    seed: int,
    fractions: dict,
    progress: bool,
    batch_rows: int = BATCH_ROWS,
) -> list[dict]:
    """One pass over the input on the workers: statistics per file."""
    from distributed import Client

    with Client(scheduler, set_as_default=False) as client:
        calls = [(f, fmt, schema, seed, fractions, batch_rows) for f in files]
        return _on_workers(client, file_statistics, "distboost-prepare-scan", calls, progress)


def finish_schema(schema: PreparedSchema, stats: dict, per_file: list[dict]) -> PreparedSchema:
    """Validate the statistics; add categories and classes to the schema."""
    problems = check_statistics(schema, stats, per_file)
    if problems:
        raise DataError(f"{schema.source} cannot be used as is:\n  - " + "\n  - ".join(problems))
    features = [f.model_copy(update={"categories": categories_of(stats, f.name)})
                if f.kind == "categorical" else f for f in schema.features]
    classes = classes_of(stats, schema) if schema.task == "classification" else None
    return schema.model_copy(update={"features": features, "classes": classes})


def bin_edges(schema: PreparedSchema, sample: tuple, max_bins: int) -> dict:
    """The library's bins (``distboost.binning.BinMapper``) of the training
    split's binning sample, by feature name (``BinMapper.from_edges``' form)."""
    from distboost.binning import BinMapper

    _, rows, weights = sample
    features = schema.features
    is_categorical = schema.is_categorical
    categories = {j: f.categories for j, f in enumerate(features) if is_categorical[j]}
    mapper = BinMapper(max_bins).fit(rows, is_categorical, categories, weights)
    out = {}
    for j, f in enumerate(features):
        if is_categorical[j]:
            out[f.name] = {"kind": "categorical", "categories": mapper.categories_[j]}
        else:
            out[f.name] = {"kind": "numeric", "edges": mapper.bin_edges_[j].tolist()}
    return {"max_bins": max_bins, "sample_rows": len(rows), "features": out}


def merged_sample(samples: list) -> Any:
    """The files' binning samples merged into one (``distboost.binning.merge_candidates``),
    as a tree of tasks of ``MERGE_FAN_IN`` samples each."""
    from distboost.binning import SAMPLE_ROWS, merge_candidates

    merge = dask.delayed(merge_candidates, pure=True)
    while len(samples) > 1:
        samples = [merge(samples[i:i + MERGE_FAN_IN], SAMPLE_ROWS)
                   for i in range(0, len(samples), MERGE_FAN_IN)]
    return samples[0]


@task(name="write-splits", cache_policy=NO_CACHE)
def write_splits(
    scheduler: str,
    fmt: str,
    files: list[str],
    schema: PreparedSchema,
    seed: int,
    fractions: dict,
    staging: str,
    progress: bool,
    batch_rows: int = BATCH_ROWS,
) -> tuple[dict[str, int], tuple]:
    """Type, split and write every input file on the workers.

    Returns the rows of each split, and the training split's binning sample.
    """
    from distributed import Client

    with Client(scheduler, set_as_default=False) as client:
        calls = [(f, fmt, schema, seed, fractions, staging, i, batch_rows)
                 for i, f in enumerate(files)]
        written = _worker_tasks(client, write_file_splits, "distboost-prepare-write", calls,
                                nout=2)
        sample = merged_sample([w[1] for w in written])
        *counts, sample = gather_with_progress(client, [w[0] for w in written] + [sample],
                                               "prepare-write", progress)
    return {s: sum(c[s] for c in counts) for s in ("train", "validation", "test")}, sample


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, default=_json_default) + "\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


PREPARED = ("train", "validation", "test", "statistics.json", "bin_edges.json", MARKER)
"""What the flow writes in its folder, the marker last: all that ``overwrite`` replaces."""


def publish(staging: Path, out: Path) -> None:
    """Move the finished output into place: the staging folder itself where
    ``out`` does not exist; else, entry by entry, what the flow wrote before
    (``PREPARED``: the old marker out first, the new one in last, so that a
    folder caught half-way is not taken for a prepared one), leaving anything
    else in ``out`` as it is. The old entries go only after that."""
    if not out.exists():
        os.replace(staging, out)
        return
    old = out.with_name(f".{out.name}.old-{uuid.uuid4().hex[:8]}")
    old.mkdir()
    for name in (MARKER, *PREPARED):
        if os.path.lexists(out / name):
            os.replace(out / name, old / name)
    for name in PREPARED:
        if os.path.lexists(staging / name):
            os.replace(staging / name, out / name)
    shutil.rmtree(old)
    shutil.rmtree(staging, ignore_errors=True)


def remove_stale_staging(out: Path) -> None:
    """Staging and replaced folders a killed run left next to ``out`` (``.NAME.partial-*``,
    ``.NAME.old-*``): after a successful run they hold nothing anyone needs."""
    for pattern in (f".{out.name}.partial-*", f".{out.name}.old-*"):
        for stale in out.parent.glob(pattern):
            shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink()


def _scan(address, fmt, files, schema, seed, fractions, progress, batch_rows):
    """First pass: the statistics of all files, and the schema they complete."""
    per_file = scan_statistics(address, fmt, files, schema, seed, fractions, progress, batch_rows)
    stats = combine_statistics(schema, per_file)
    return finish_schema(schema, stats, per_file), stats


def _publish(staging: Path, out: Path, schema: PreparedSchema, stats: dict, edges: dict) -> None:
    """Write the prepared folder's JSON files into ``staging``, then move it to ``out``."""
    _write_json(staging / "statistics.json", stats)
    _write_json(staging / "bin_edges.json", edges)
    _write_json(staging / MARKER, schema.to_dict())
    publish(staging, out)


@flow(name="distboost-prepare")
def prepare(
    source: str,
    output: str,
    target: str | list[str],
    task: str = "auto",
    categorical: list[str] | None = None,
    drop: list[str] | None = None,
    id_columns: list[str] | None = None,
    feature_columns: list[str] | None = None,
    validation_fraction: float = 0.15,
    test_fraction: float = 0.15,
    seed: int = 0,
    max_bins: int = 256,
    overwrite: bool = False,
    scheduler: str | None = None,
    cluster: ClusterConfig | None = None,
    progress: bool = False,
    batch_rows: int = BATCH_ROWS,
    group: str | None = None, event: str | None = None, label_upper_bound: str | None = None,
) -> str:
    """Validate raw CSV/Parquet and write typed train/validation/test Parquet.

    Parameters
    ----------
    source : str
        A CSV or Parquet file, a folder of them, a glob, or an fsspec URL.
    output : str
        Folder to create (a local or shared path the Dask workers can write).
    target : str or list of str
        The column to predict; several: a multi-output task (``flows._targets``).
    task : {"auto", "classification", "regression", "ranking", "survival"}
        "auto": classification for text labels or few distinct integers; ranking with
        ``group`` (``flows._queries``); survival with ``event`` or ``label_upper_bound``.
    categorical, drop, id_columns, feature_columns : list of str
        Columns to treat as categories / to leave out / to carry beside the
        features, never features (identifiers) / to use as features though they
        look like identifiers (``_schema.identifier_reason``; refused else).
    validation_fraction, test_fraction : float
    seed : int
        Seed of the split hash.
    max_bins : int
        Bins per feature for ``bin_edges.json`` (another model's computes its own).
    overwrite : bool
        Replace an existing prepared folder.
    scheduler, cluster, progress : str, ClusterConfig, bool
        Dask scheduler address (default: a LocalCluster with these settings); bars.
    batch_rows : int
        Rows of an input file a worker reads at a time (its memory for the
        file is about this many rows); the output does not depend on it.

    Returns
    -------
    str
        The output folder.
    """
    logger, labels = run_logger(), (event, label_upper_bound)  # survival (flows._survival)
    out = check_output(output, overwrite)
    fractions = split_fractions(validation_fraction, test_fraction)
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1; got {batch_rows}")
    fmt, files, schema = inspect_source(source, target, task, categorical or [], drop or [],
                                        id_columns, feature_columns, group, labels)
    logger.info("reading %d %s file(s) from %s", len(files), fmt, source)
    staging = out.with_name(f".{out.name}.partial-{uuid.uuid4().hex[:8]}")
    with dask_client(scheduler, cluster) as client:
        address = client.scheduler.address
        schema, stats = _scan(address, fmt, files, schema, seed, fractions, progress, batch_rows)
        staging.mkdir(parents=True)
        try:
            rows, sample = write_splits(address, fmt, files, schema, seed, fractions,
                                        str(staging), progress, batch_rows)
            schema = schema.model_copy(update={"seed": seed, "fractions": fractions,
                                               "split_rows": rows, "files": files})
            _publish(staging, out, schema, stats, bin_edges(schema, sample, max_bins))
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    remove_stale_staging(out)
    logger.info("prepared %s: %s", out, rows)
    return str(out)
