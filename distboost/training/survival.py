"""Cox's risk sets across partitions, exact whatever the partitioning.

A row's Cox gradient needs R_k = sum of exp(f_j) over every row j still at
risk at event time t_k (time_j >= t_k), rows of every partition. The sums
are made in three steps, each independent of how the rows are partitioned:

1. Once per fit (``event_times``): each partition's event times (y > 0) with
   their counts; the driver merges them into the sorted distinct event times
   t_1 < ... < t_K and the counts d_k (integers: exact).
2. Each round (``cox_round``): f_max, the largest margin this round (an
   exact maximum over every row, the pending trees added: the same whatever
   the partitioning, and whether training continues a model or not). Each
   partition adds exp(f_i - f_max) in (0, 1] of
   every row, rounded down to a multiple of 2^-192, as an integer spread over
   32-bit limbs (``kernels.survival.cox_bin_sums``), into the bin of the last
   event time <= time_i. Integers add exactly in any order, so the per-bin
   sums the holders reduce are the same for every partitioning; each term's
   rounding (2^-192 relative to the largest term) is far below float64's.
3. The driver suffix-sums the bins as integers (R~_k = sum_{j >= k} bin_j,
   R~_k = R_k exp(-f_max)), converts each R~_k to float once, and
   prefix-sums A_k = sum_{j <= k} d_j / R~_j and B_k = sum_{j <= k}
   d_j / R~_j^2 in one fixed order. The round's ``CoxLoss`` carries
   (f_max, A, B) to the workers, where each row's g and h need only the
   entry at its own time (``kernels.survival.cox_gradients``).

So Dask at any number of workers and partitions gives the in-process model
to the bit (``tests/test_survival.py``). At the end of fit one more such
round at the fitted model's margins gives Breslow's baseline cumulative
hazard H_0(t_k) = A_k exp(-f_max) (``breslow_baseline``), exact in the same
way (``tests/test_survival_curves.py``).
"""

from __future__ import annotations

import time as _time

import numpy as np

from ..engine.group import each_shard
from ..kernels import survival as ks
from ..learners.gradient import GradientLearner, pack_rounds
from ..trees.survival import CoxLoss, cox_tables, row_event_bins, times_events
from . import objective


def _event_counts(state):
    """Per group: the distinct event times of its rows and their counts."""
    found = []
    for (shard,) in each_shard(state.shards):
        time, event = times_events(shard.y)
        found.append(np.unique(time[event > 0], return_counts=True))
    return state, found


def event_times(engine) -> tuple[np.ndarray, np.ndarray]:
    """(t_k, d_k): the training rows' distinct event times, sorted, and their counts."""
    parts = [p for group in engine.apply(_event_counts, "survival-event-times") for p in group]
    times = np.concatenate([t for t, _ in parts]) if parts else np.zeros(0)
    counts = np.concatenate([c for _, c in parts]) if parts else np.zeros(0, np.int64)
    unique, inverse = np.unique(times, return_inverse=True)
    return unique, np.bincount(inverse, weights=counts, minlength=len(unique)).astype(np.int64)


def _margin_max(state, packed):
    """Per group: the largest margin of its rows, the pending trees added."""
    top = -np.inf
    for shard, rows in each_shard(state.shards, state.rows):
        if shard.n_rows:
            top = max(top, float(objective._margins(shard, rows, packed)[0].max()))
    return state, top


def _bin_sums(state, event_times_, f_max, packed):
    """Per group: the fixed-point sums of exp(f - f_max) per event-time bin."""
    out = np.zeros((len(event_times_), ks.N_LIMBS), np.int64)
    for shard, rows in each_shard(state.shards, state.rows):
        bins, _ = row_event_bins(shard.y, event_times_)
        f = np.ascontiguousarray(objective._margins(shard, rows, packed)[0], np.float64)
        ks.cox_bin_sums(bins, f, f_max, out)
    return state, out


def cox_round(engine, loss: CoxLoss, pending) -> CoxLoss:
    """This round's ``CoxLoss``: the risk-set tables at the margins plus the
    ``pending`` trees (two passes: the largest margin, the bin sums)."""
    t0 = _time.perf_counter()
    f_max = max(engine.apply(_margin_max, "survival-margin-max", pending))
    per_group = engine.apply(_bin_sums, "survival-risk-sets", loss.event_times, f_max, pending)
    sums = np.sum(per_group, axis=0, dtype=np.int64)  # integers: any order, same sums
    a, b = cox_tables(sums, loss.event_counts)
    engine.timings["gradient_range"] += _time.perf_counter() - t0
    return loss.with_tables(f_max, a, b)


def breslow_baseline(engine, loss: CoxLoss, base, trees) -> tuple[float, np.ndarray]:
    """(f_max, A): Breslow's baseline cumulative hazard at the fitted model,
    H_0(t_k) = A_k exp(-f_max) (``trees.survival_curves``). The rows' margins
    are set to f_0 plus every tree of the model (as a continued fit sets them),
    then one more ``cox_round``: the same exact sums as the gradients', so
    Dask gives the in-process baseline to the bit."""
    engine.set_rows(GradientLearner(loss), base, pack_rounds(trees, 1) if trees else None)
    f_max, a, _ = cox_round(engine, loss, None).tables
    return f_max, a
