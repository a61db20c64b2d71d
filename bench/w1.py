"""Workload W1: a deterministic, HIGGS-shaped binary classification data set.

Each row is a synthetic "collision event": a lepton, missing transverse energy
and four jets (21 low-level features: transverse momenta, pseudorapidities,
azimuthal angles and b-tags), plus 7 high-level invariant-mass-like features
computed from them, as in the HIGGS data set (Baldi, Sadowski & Whiteson 2014).
The label is drawn from a nonlinear log-odds with interactions (a resonance in
one mass, angular correlations, b-tag coincidences) plus unobserved noise, so
the best achievable test AUC is well below 1 and gradient boosting peers reach
about 0.84.

Rows are generated in fixed blocks of ``BLOCK_ROWS``; block ``k`` of split
``s`` is drawn from its own seed ``(seed, s, k)``. Row ``i`` therefore depends
only on the seed and ``i``: the data are the same whatever the partition count,
and memory stays bounded by one block even at 10M rows.

Run ``python bench/w1.py --rows 1000000 --partitions 8`` to write the cache.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

Task = Literal["binary", "regression", "multiclass"]

N_FEATURES = 28
FEATURES = [f"f{i:02d}" for i in range(N_FEATURES)]
TARGET_COLUMN = {"binary": "label", "regression": "target", "multiclass": "label"}
BLOCK_ROWS = 1 << 17
DEFAULT_SEED = 20240611
MAX_TEST_ROWS = 200_000
CACHE_ENV = "DISTBOOST_BENCH_CACHE"
_TRAIN_SPLIT, _TEST_SPLIT = 0, 1
_META = "meta.json"
# Strength of the observable log-odds against the unobserved N(0, 1) noise; tuned
# so that xgboost reaches a test AUC of 0.841 at 1M rows (the oracle: 0.850).
_SIGNAL_SCALE = 2.57
_LOGIT_NOISE = 1.0
_TARGET_NOISE = 1.0
# Multiclass W1: the noisy log-odds cut at its deciles (measured on 200k rows) into 10 classes.
_CLASS_CUTS = np.array([-2.77, -1.88, -1.2, -0.6, -0.02, 0.61, 1.33, 2.22, 3.61])


def default_cache_dir() -> Path:
    """Return the cache root: ``$DISTBOOST_BENCH_CACHE`` or ``bench/.cache``."""
    return Path(os.environ.get(CACHE_ENV, Path(__file__).parent / ".cache"))


def default_test_rows(n_rows: int) -> int:
    """Return the test-set size for ``n_rows`` training rows.

    200,000 rows at 1M training rows and above, one fifth of the training set
    below (at least 1,000 rows).
    """
    return min(MAX_TEST_ROWS, max(n_rows // 5, 1_000))


def _pair_mass(
    pt_a: np.ndarray, eta_a: np.ndarray, phi_a: np.ndarray,
    pt_b: np.ndarray, eta_b: np.ndarray, phi_b: np.ndarray,
) -> np.ndarray:
    """Invariant mass of two massless particles, shape (n,), float64.

    ``m^2 = 2 pt_a pt_b (cosh(eta_a - eta_b) - cos(phi_a - phi_b))``.
    """
    return np.sqrt(2.0 * pt_a * pt_b * (np.cosh(eta_a - eta_b) - np.cos(phi_a - phi_b)))


def _low_level(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Draw the 21 low-level kinematic features of ``n`` events, float64."""
    low = {
        "lep_pt": rng.lognormal(0.0, 0.5, n),
        "lep_eta": rng.normal(0.0, 1.0, n),
        "lep_phi": rng.uniform(-np.pi, np.pi, n),
        "met": rng.exponential(1.0, n),
        "met_phi": rng.uniform(-np.pi, np.pi, n),
    }
    for j, log_pt_mean in enumerate([0.3, 0.0, -0.2, -0.4], start=1):
        low[f"j{j}_pt"] = rng.lognormal(log_pt_mean, 0.6, n)
        low[f"j{j}_eta"] = rng.normal(0.0, 1.2, n)
        low[f"j{j}_phi"] = rng.uniform(-np.pi, np.pi, n)
        low[f"j{j}_btag"] = rng.choice([0.0, 1.1, 2.2], size=n, p=[0.6, 0.25, 0.15])
    return low


def _jet(low: dict[str, np.ndarray], j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (pt, eta, phi) of jet ``j``."""
    return low[f"j{j}_pt"], low[f"j{j}_eta"], low[f"j{j}_phi"]


def _high_level(low: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Compute the 7 high-level mass features from the low-level ones, float64."""
    lep = low["lep_pt"], low["lep_eta"], low["lep_phi"]
    m_jj = _pair_mass(*_jet(low, 1), *_jet(low, 2))
    m_jjj = np.sqrt(
        m_jj**2 + _pair_mass(*_jet(low, 1), *_jet(low, 3)) ** 2
        + _pair_mass(*_jet(low, 2), *_jet(low, 3)) ** 2
    )
    # Transverse mass of lepton + missing energy (the neutrino's eta is unknown).
    m_lv = np.sqrt(2.0 * low["lep_pt"] * low["met"] * (1.0 - np.cos(low["lep_phi"] - low["met_phi"])))
    m_jlv = np.sqrt(m_lv**2 + _pair_mass(*lep, *_jet(low, 1)) ** 2)
    m_bb = _pair_mass(*_jet(low, 3), *_jet(low, 4))
    m_wbb = np.sqrt(m_jj**2 + m_bb**2)
    m_wwbb = np.sqrt(m_jlv**2 + m_wbb**2)
    return {
        "m_jj": m_jj, "m_jjj": m_jjj, "m_lv": m_lv, "m_jlv": m_jlv,
        "m_bb": m_bb, "m_wbb": m_wbb, "m_wwbb": m_wwbb,
    }


def _log_odds(low: dict[str, np.ndarray], high: dict[str, np.ndarray]) -> np.ndarray:
    """Observable part of the signal log-odds, shape (n,), float64.

    A resonance in ``m_bb`` strengthened by two b-tags, a smooth trend in the
    total mass, lepton/missing-energy angular correlation gated by the missing
    energy, an eta-eta interaction and a soft lepton-pT preference.
    """
    resonance = np.exp(-(((high["m_bb"] - 1.2) / 0.35) ** 2))
    both_btagged = (low["j3_btag"] > 0) & (low["j4_btag"] > 0)
    angular = np.cos(low["lep_phi"] - low["met_phi"]) * np.tanh(low["met"] - 0.7)
    return _SIGNAL_SCALE * (
        -0.45
        + 1.6 * resonance * (1.0 + 0.8 * both_btagged)
        + 0.6 * np.tanh(np.log(high["m_wwbb"]) - 1.1)
        + 0.5 * both_btagged
        + 0.7 * angular
        - 0.35 * low["lep_eta"] * low["j1_eta"]
        + 0.4 * np.log(low["lep_pt"])
        - 0.25 * np.abs(low["j2_eta"])
    )


def block(seed: int, split: int, index: int, task: Task, extra_features: int = 0) -> pa.Table:
    """Generate block ``index`` of a split: ``BLOCK_ROWS`` rows of W1.

    Parameters
    ----------
    seed : int
        Data-set seed.
    split : int
        0 for training rows, 1 for test rows.
    index : int
        Block number within the split.
    task : {"binary", "regression", "multiclass"}
        "binary" adds an int8 column ``label`` drawn from the log-odds;
        "regression" adds a float32 column ``target`` = log-odds + noise;
        "multiclass" an int8 ``label`` in 0..9, the noisy log-odds' decile.
    extra_features : int
        Wide W1: this many more float32 columns ``x000`` ... after the 28, each
        a noisy mix of two W1 features (every fourth) or pure noise.

    Returns
    -------
    pyarrow.Table
        Columns ``f00`` .. ``f27`` (float32), the extra ones, and the target column.
    """
    rng = np.random.default_rng([seed, split, index])
    low = _low_level(rng, BLOCK_ROWS)
    high = _high_level(low)
    # Both draws always happen, so the features are the same for either task.
    log_odds = _log_odds(low, high) + rng.normal(0.0, _LOGIT_NOISE, BLOCK_ROWS)
    uniform = rng.random(BLOCK_ROWS)
    target_noise = rng.normal(0.0, _TARGET_NOISE, BLOCK_ROWS)
    columns = {name: values.astype(np.float32) for name, values in
               zip(FEATURES, [*low.values(), *high.values()], strict=True)}
    if extra_features:
        columns.update(_extra_columns(np.random.default_rng([seed, split, index, 1]),
                                      columns, extra_features))
    if task == "binary":
        columns["label"] = (uniform < 1.0 / (1.0 + np.exp(-log_odds))).astype(np.int8)
    elif task == "multiclass":
        columns["label"] = np.digitize(log_odds, _CLASS_CUTS).astype(np.int8)
    else:
        columns["target"] = (log_odds + target_noise).astype(np.float32)
    return pa.table(columns)


def _extra_columns(rng: np.random.Generator, base: dict[str, np.ndarray],
                   n: int) -> dict[str, np.ndarray]:
    """``n`` more columns for wide W1: every fourth a noisy mix of two of the 28
    base features (standardized), the others noise."""
    names = list(base)
    out = {}
    for k in range(n):
        noise = rng.standard_normal(BLOCK_ROWS, dtype=np.float32)
        if k % 4 == 0:
            a, b = (base[names[(k * 7 + j * 11) % len(names)]] for j in range(2))
            noise = (a - a.mean()) / (a.std() + 1e-9) + (b - b.mean()) / (b.std() + 1e-9) + noise
        out[f"x{k:03d}"] = noise.astype(np.float32)
    return out


def row_range(seed: int, split: int, start: int, stop: int, task: Task,
              extra_features: int = 0) -> Iterator[pa.Table]:
    """Yield rows ``[start, stop)`` of a split as tables of at most one block."""
    for index in range(start // BLOCK_ROWS, -(-stop // BLOCK_ROWS)):
        lo = max(start - index * BLOCK_ROWS, 0)
        hi = min(stop - index * BLOCK_ROWS, BLOCK_ROWS)
        yield block(seed, split, index, task, extra_features).slice(lo, hi - lo)


def _write_rows(path: Path, tables: Iterator[pa.Table]) -> None:
    """Write tables to one Parquet file, one row group per table."""
    writer = None
    for table in tables:
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def dataset_dir(
    n_rows: int, n_partitions: int, task: Task = "binary", cache_dir: Path | None = None,
    extra_features: int = 0,
) -> Path:
    """Return the cache folder of a W1 data set (which may not exist yet)."""
    prefix = "w1" if task == "binary" else f"w1-{task}"
    if extra_features:
        prefix += f"-wide{N_FEATURES + extra_features}"
    return Path(cache_dir or default_cache_dir()) / f"{prefix}-{n_rows}-{n_partitions}"


def feature_names(extra_features: int = 0) -> list[str]:
    """The feature columns of W1 with ``extra_features`` more (wide W1)."""
    return FEATURES + [f"x{k:03d}" for k in range(extra_features)]


def generate(
    n_rows: int,
    n_partitions: int,
    *,
    n_test_rows: int | None = None,
    task: Task = "binary",
    seed: int = DEFAULT_SEED,
    cache_dir: Path | None = None,
    extra_features: int = 0,
) -> Path:
    """Write W1 to the cache unless a complete copy is there, and return its folder.

    Parameters
    ----------
    n_rows : int
        Number of training rows.
    n_partitions : int
        Number of training Parquet files, ``train/part-000.parquet`` ...
    n_test_rows : int, optional
        Rows in ``test/part-000.parquet``; default ``default_test_rows(n_rows)``.
    task : {"binary", "regression", "multiclass"}
        Target column: ``label`` (0/1, or 0..9) or ``target`` (log-odds + noise).
    seed : int
        Data-set seed.
    cache_dir : path, optional
        Cache root; default ``$DISTBOOST_BENCH_CACHE`` or ``bench/.cache``.
    extra_features : int
        Wide W1: columns beyond the 28 (``block``).

    Returns
    -------
    pathlib.Path
        The data-set folder, holding ``train/``, ``test/`` and ``meta.json``.
    """
    if not 1 <= n_partitions <= n_rows:
        raise ValueError(f"need 1 <= partitions <= rows, got {n_partitions} partitions "
                         f"for {n_rows} rows")
    n_test_rows = default_test_rows(n_rows) if n_test_rows is None else n_test_rows
    meta = {"rows": n_rows, "partitions": n_partitions, "test_rows": n_test_rows,
            "task": task, "seed": seed, "block_rows": BLOCK_ROWS}
    if extra_features:
        meta["extra_features"] = extra_features
    target = dataset_dir(n_rows, n_partitions, task, cache_dir, extra_features)
    if (target / _META).exists() and json.loads((target / _META).read_text()) == meta:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write beside the target and rename, so an interrupted run leaves no partial copy.
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    staging.chmod(0o755)
    _write_split(staging / "train", seed, _TRAIN_SPLIT, n_rows, n_partitions, task,
                 extra_features)
    _write_split(staging / "test", seed, _TEST_SPLIT, n_test_rows, 1, task, extra_features)
    (staging / _META).write_text(json.dumps(meta, indent=1))
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def _write_split(
    folder: Path, seed: int, split: int, n_rows: int, n_partitions: int, task: Task,
    extra_features: int = 0,
) -> None:
    """Write rows ``[0, n_rows)`` of a split as ``n_partitions`` near-equal files."""
    folder.mkdir()
    bounds = np.linspace(0, n_rows, n_partitions + 1).astype(int)
    jobs = [(folder / f"part-{part:03d}.parquet", seed, split, int(start), int(stop), task,
             extra_features) for part, (start, stop) in enumerate(itertools.pairwise(bounds))]
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers > 1 and n_rows > BLOCK_ROWS:  # files are independent: one process each
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_write_partition, *zip(*jobs)))
        return
    for job in jobs:
        _write_partition(*job)


def _write_partition(path: Path, seed: int, split: int, start: int, stop: int, task: Task,
                     extra_features: int) -> None:
    """Write rows ``[start, stop)`` of a split to one Parquet file."""
    _write_rows(path, row_range(seed, split, start, stop, task, extra_features))


def _parse_args() -> argparse.Namespace:
    """Command-line options: the data-set shape, task, seed and cache root."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--test-rows", type=int, default=None)
    parser.add_argument("--task", choices=["binary", "regression", "multiclass"],
                        default="binary")
    parser.add_argument("--extra-features", type=int, default=0, help="wide W1")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--cache-dir", type=Path, default=None)
    return parser.parse_args()


if __name__ == "__main__":
    args = _parse_args()
    print(generate(args.rows, args.partitions, n_test_rows=args.test_rows, task=args.task,
                   seed=args.seed, cache_dir=args.cache_dir, extra_features=args.extra_features))
