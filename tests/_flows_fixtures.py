"""Shared helpers of the flow tests (not a conftest: imported by the modules).

Importing this module sets Prefect's quiet, offline settings before Prefect
itself is imported, so import it before anything from ``flows``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUIET = {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "CRITICAL",
}
for _key, _value in QUIET.items():
    os.environ.setdefault(_key, _value)
if "PREFECT_HOME" not in os.environ:
    os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="distboost-test-prefect-")
    atexit.register(shutil.rmtree, os.environ["PREFECT_HOME"], ignore_errors=True)
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np
import pandas as pd

TEST_CLUSTER = {
    "processes": False,
    "n_workers": 1,
    "threads_per_worker": 2,
    "dashboard_address": ":0",
}
"""LocalCluster settings for flows run in the test process."""


def subprocess_env(prefect_home: str | Path) -> dict[str, str]:
    """Environment for running ``python -m flows.cli`` in a child process."""
    env = dict(os.environ)
    env.update(QUIET)
    env["PREFECT_HOME"] = str(prefect_home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("PREFECT_API_URL", None)
    # no cluster of the developer's (`distboost cluster start`, DISTBOOST_SCHEDULER)
    run = Path(prefect_home) / "run"
    run.mkdir(parents=True, exist_ok=True)
    env["XDG_RUNTIME_DIR"] = str(run)
    env.pop("DISTBOOST_SCHEDULER", None)
    return env


def hastie_csv(folder: Path, n_rows: int = 1200, n_files: int = 3, seed: int = 0) -> Path:
    """A small ESL 10.2 data set with a categorical column, as CSV files."""
    from distboost.demo_data import hastie_10_2, write_csv_files

    frame = hastie_10_2(n_rows, seed).iloc[:, [0, 1, 2, 3, 10]]  # x1..x4 and y
    frame["colour"] = np.random.default_rng(seed).choice(["red", "green", "blue"], n_rows)
    frame.loc[frame.index[::23], "x2"] = np.nan
    frame["y"] = np.where((frame[["x1", "x2", "x3", "x4"]] ** 2).sum(axis=1) > 3.36, 1, -1)
    write_csv_files(frame, folder, n_files)
    return folder


def write_csv(path: Path, frame: pd.DataFrame) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


_HOME: list[Path] = []


def shared_prefect_home() -> Path:
    """One PREFECT_HOME for every child process of this test session, so its
    database is created and migrated once."""
    if not _HOME:
        _HOME.append(Path(tempfile.mkdtemp(prefix="distboost-cli-prefect-")))
        atexit.register(shutil.rmtree, _HOME[0], ignore_errors=True)
    return _HOME[0]


def prepared_folder(raw: Path, out: Path, target: str = "y", categorical=()) -> Path:
    """What the prepare flow writes (splits, schema.json, bin_edges.json), made
    without Prefect (its pure steps)."""
    import json

    from distboost.binning import SAMPLE_ROWS, merge_candidates
    from flows._file_stats import file_statistics
    from flows._schema import combine_statistics, infer_data_schema, list_source_files
    from flows._tabular import read_file, write_file_splits
    from flows.prepare import bin_edges, finish_schema

    fractions = {"validation": 0.15, "test": 0.15}
    fmt, files = list_source_files(str(raw))
    schema = infer_data_schema(read_file(files[0], fmt), files[0], target, "auto", list(categorical))
    per_file = [file_statistics(f, fmt, schema, 0, fractions) for f in files]
    schema = finish_schema(schema, combine_statistics(schema, per_file), per_file)
    counts, samples = zip(*(write_file_splits(f, fmt, schema, 0, fractions, str(out), i)
                            for i, f in enumerate(files)))
    split_rows = {s: sum(c[s] for c in counts) for s in counts[0]}
    schema = schema.model_copy(update={"split_rows": split_rows, "seed": 0, "fractions": fractions})
    (out / "schema.json").write_text(json.dumps(schema.to_dict()))
    sample = merge_candidates(list(samples), SAMPLE_ROWS)
    (out / "bin_edges.json").write_text(json.dumps(bin_edges(schema, sample, 256)))
    return out


def run_cli(args: list[str], timeout: float = 300, **kwargs):
    """``python -m flows.cli ARGS`` in a child process; returns CompletedProcess."""
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "flows.cli", "--no-progress", *args],
        env=subprocess_env(shared_prefect_home()),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,
    )


def process_gone(proc, within: float) -> bool:
    """Whether the ``psutil.Process`` ``proc`` ends (or is a zombie nobody reaps)
    within ``within`` seconds."""
    import time

    import psutil

    deadline = time.monotonic() + within
    while True:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def squared_objective(y, f):
    """L = (y - f)^2 as a user's objective (the flows name it "module:function")."""
    return 2.0 * (f - y), np.full_like(f, 2.0)


def _within_one(y, f):
    return (np.abs(y - f) < 1.0).astype(float)


def within_one():
    """A user's metric, higher is better (made lazily: distboost imports late here)."""
    from distboost.metrics import make_metric

    return make_metric(_within_one, name="within_1", greater_is_better=True)


WITHIN_ONE = None  # set by the tests that need it: ``fx.WITHIN_ONE = fx.within_one()``
