"""Exact weighted order statistics over all partitions, in a few passes.

The robust losses need, per leaf, a weighted quantile of the residuals of
the leaf's rows, wherever those rows are (ESL Algorithm 10.3 step 2(c) for
absolute error, quantile and Huber loss). An average of per-partition
medians is not a median; this module finds the exact one without moving rows.

Problem. Queries q = 0..Q-1 (e.g. the leaves of a round's trees); each row
contributes (query, value v, weight w) to at most one query per call. For
each query, return the lower weighted alpha-quantile

    x*_q = min { v_i : q_i = q, W_q(v <= v_i) >= alpha_q W_q },

the smallest minimizer of sum_i w_i rho_alpha(v_i - x) (rho: pinball loss).

Algorithm: a distributed quickselect on value ranges.

* pass 0: each worker caches its rows' (query, value, weight) and returns,
  per query, a histogram on a fixed log scale (sign, binade 2^-41..2^41,
  ``subs`` steps per binade): weight, row count, min and max per bucket;
* pass k: the candidate range [lo, hi] of every open query is cut into B
  even buckets, with the same statistics per bucket.

After each pass the driver keeps, per query, the bucket in which the
cumulative weight first reaches alpha W_q; its [min, max] becomes the new
range. A bucket with one distinct value is the answer; one with at most
``MAX_SHIP`` rows has its rows shipped in the next pass (at most
``MAX_SHIP_TOTAL`` per pass) and the driver finishes by sorting them.
Workers drop cached rows outside the new ranges, so later passes are cheap.
Residuals are dense on a log scale, so most selections end after pass 0 and
one shipping pass.

Weights are fixed-point integers (``round(w * scale)``, int64, as the
engine's statistics): sums are exact in any order, so the answer is the
same for any partitioning, and rows count by weight (weights equal
repeated rows). Values are compared, never summed, so they stay exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from fractions import Fraction

import numba
import numpy as np

from ..engine.group import GroupState, each_shard

MAX_SHIP = 2048
"""Rows of a query's final range shipped to the driver (over all partitions)."""
MAX_SHIP_TOTAL = 1 << 16
"""Rows shipped per pass over all queries; larger queries are bucketed once more."""
MAX_BUCKETS = 1 << 15
"""Buckets per pass over all queries (bounds the size of a pass's result)."""


@dataclass(frozen=True)
class _Searching(GroupState):
    """A group state with the rows of an ongoing selection cached per partition."""

    search: tuple = ()


def plain_state(state) -> GroupState:
    return GroupState(**{f.name: getattr(state, f.name) for f in fields(GroupState)})


N_BINADES = 82
"""Binades 2^-41 <= |v| < 2^41 have their own log buckets; the rest share the end ones."""
LOWEST_EXPONENT = -40  # frexp exponent of 2^-41


def weight_scale(w_max: float, n_rows: int) -> float:
    """Power of two such that the fixed-point sum of all weights stays below 2^62."""
    if w_max <= 0:
        return 1.0
    return 2.0 ** math.floor(61 - math.log2(w_max * max(n_rows, 1)))


# ------------------------------------------------------------------ kernels
def log_subdivisions(n_queries: int) -> int:
    """Log-scale steps per binade in pass 0, within the ``MAX_BUCKETS`` budget."""
    return max(1, MAX_BUCKETS // (2 * N_BINADES * max(n_queries, 1)))


@numba.njit(cache=True, inline="always")
def _log_bucket(v, subs):
    """Bucket of v on the value-ordered log scale: negatives, 0, positives."""
    half = N_BINADES * subs
    if v == 0.0:
        return half
    m, e = math.frexp(abs(v))  # |v| = m 2^e, 0.5 <= m < 1
    if e < LOWEST_EXPONENT:
        mag = 0
    elif e >= LOWEST_EXPONENT + N_BINADES:
        mag = half - 1
    else:
        mag = (e - LOWEST_EXPONENT) * subs + min(int((m - 0.5) * 2.0 * subs), subs - 1)
    return half + 1 + mag if v > 0 else half - 1 - mag


@numba.njit(cache=True)
def _log_stats(q, v, w, subs, weight, count, vmin, vmax):
    for i in range(len(q)):
        k = q[i]
        b = _log_bucket(v[i], subs)
        weight[k, b] += w[i]
        count[k, b] += 1
        vmin[k, b] = min(vmin[k, b], v[i])
        vmax[k, b] = max(vmax[k, b], v[i])


@numba.njit(cache=True, inline="always")
def _bucket(edges, v, lo, inv_width):
    """Number of inner edges <= v: a guess from the (nearly) even spacing, then fixed."""
    n_inner = len(edges)
    b = int(min(max((v - lo) * inv_width, 0.0), float(n_inner)))
    for _ in range(2):
        if b > 0 and v < edges[b - 1]:
            b -= 1
        elif b < n_inner and v >= edges[b]:
            b += 1
        else:
            return b
    return np.searchsorted(edges, v, side="right")


@numba.njit(cache=True)
def _route(q, v, w, lo, hi, slot_of_query, ship, edges, start, inv_width,
           weight, count, vmin, vmax):
    """One pass over cached rows: 0 = out of range (dropped), 1 = bucketed (kept,
    and counted in its bucket: weight, count, min, max), 2 = shipped."""
    fate = np.zeros(len(q), np.int8)
    for i in range(len(q)):
        k = q[i]
        if not (lo[k] <= v[i] and v[i] <= hi[k]):
            continue
        s = slot_of_query[k]
        if s >= 0:
            b = _bucket(edges[s], v[i], start[s], inv_width[s])
            weight[s, b] += w[i]
            count[s, b] += 1
            vmin[s, b] = min(vmin[s, b], v[i])
            vmax[s, b] = max(vmax[s, b], v[i])
            fate[i] = 1
        elif ship[k]:
            fate[i] = 2
    return fate


# ------------------------------------------------------------ worker side
def _open(state, source, scale, n_queries):
    """Pass 0: cache each partition's (query, value, weight); log-scale histograms."""
    subs = log_subdivisions(n_queries)
    shape = (n_queries, 2 * N_BINADES * subs + 1)
    weight, count = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    vmin, vmax = np.full(shape, np.inf), np.full(shape, -np.inf)
    caches = []
    for i, (shard,) in enumerate(each_shard(state.shards)):
        rows = state.rows[i] if state.rows else None
        positions = state.positions[i] if state.positions else None
        q, v, w = source(shard, rows, positions)
        wi = np.rint(np.asarray(w, np.float64) * scale).astype(np.int64)
        keep = (q >= 0) & (wi > 0)
        # + 0.0 turns -0.0 into 0.0: the answer must not depend on which zero comes first
        q, v, wi = q[keep].astype(np.int32), np.asarray(v, np.float64)[keep] + 0.0, wi[keep]
        _log_stats(q, v, wi, subs, weight, count, vmin, vmax)
        caches.append(shard.buffers.keep("search", (q, v, wi)))
    fields_ = {f.name: getattr(state, f.name) for f in fields(GroupState)}
    return _Searching(**fields_, search=tuple(caches)), (weight, count, vmin, vmax)


def _refine(state, lo, hi, slot_of_query, edges, start, inv_width, ship):
    """Pass k: keep rows in range; bucket stats of bucketed queries; ship the others."""
    n_slots, n_buckets = edges.shape[0], edges.shape[1] + 1
    weight = np.zeros((n_slots, n_buckets), np.int64)
    count = np.zeros((n_slots, n_buckets), np.int64)
    vmin = np.full((n_slots, n_buckets), np.inf)
    vmax = np.full((n_slots, n_buckets), -np.inf)
    shipped, caches = [], []
    for shard, (q, v, w) in each_shard(state.shards, state.search):
        fate = _route(q, v, w, lo, hi, slot_of_query, ship, edges, start, inv_width,
                      weight, count, vmin, vmax)
        out, kept = np.flatnonzero(fate == 2), np.flatnonzero(fate == 1)
        shipped.append((q[out], v[out], w[out]))
        caches.append(shard.buffers.keep("search", (q[kept], v[kept], w[kept])))
    if n_slots == 0:
        new = plain_state(state)
    else:
        new = _Searching(**{f.name: getattr(state, f.name) for f in fields(GroupState)},
                         search=tuple(caches))
    ship_q, ship_v, ship_w = (np.concatenate(a) for a in zip(*shipped)) if shipped else (
        np.zeros(0, np.int32), np.zeros(0), np.zeros(0, np.int64))
    return new, (weight, count, vmin, vmax, ship_q, ship_v, ship_w)


def _drop(state):
    return plain_state(state), None


# ------------------------------------------------------------ driver side
def _inner_edges(lo: float, hi: float, n_buckets: int) -> np.ndarray:
    """n_buckets - 1 nondecreasing inner edges on [lo, hi], the last equal to hi.

    Bucket b holds the values with b inner edges <= v, so the last bucket
    holds hi alone and no bucket holds both lo and hi: every pass makes
    progress.
    """
    t = np.arange(1, n_buckets) / n_buckets
    span = hi - lo
    e = lo + span * t if np.isfinite(span) else lo * (1.0 - t) + hi * t
    e = np.maximum.accumulate(np.clip(e, lo, hi))
    e[-1] = hi
    return e


@dataclass
class _Query:
    target: int  # ceil(alpha * W): the answer is the first value whose cumulative weight reaches it
    lo: float
    hi: float
    below: int = 0  # weight of the query's rows below lo
    count: int = 0  # rows in [lo, hi]
    result: float = np.nan
    done: bool = False


def _open_queries(smalls, alphas, n_queries) -> list[_Query]:
    """Queries after pass 0: each narrowed to its target's log bucket."""
    weight = sum(s[0] for s in smalls)
    count = sum(s[1] for s in smalls)
    vmin = np.minimum.reduce([s[2] for s in smalls])
    vmax = np.maximum.reduce([s[3] for s in smalls])
    queries = []
    for k in range(n_queries):
        f = Fraction(float(alphas[k])) * int(weight[k].sum())
        target = max(1, -(-f.numerator // f.denominator))
        qu = _Query(target, -np.inf, np.inf, count=int(count[k].sum()))
        if qu.count == 0:
            qu.done = True
        else:
            _narrow(qu, weight[k], count[k], vmin[k], vmax[k])
        queries.append(qu)
    return queries


def _plan(queries):
    """Arrays for the next pass: ranges, bucket slots and edges, rows to ship."""
    n = len(queries)
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)  # empty range: closed queries' rows are dropped
    slot = np.full(n, -1, np.int32)
    ship = np.zeros(n, bool)
    bucketed, shipped = [], 0
    for k in sorted(range(n), key=lambda k: queries[k].count):  # smallest first
        qu = queries[k]
        if qu.done:
            continue
        lo[k], hi[k] = qu.lo, qu.hi
        if qu.count <= MAX_SHIP and shipped + qu.count <= MAX_SHIP_TOTAL:
            ship[k] = True
            shipped += qu.count
        else:
            slot[k] = len(bucketed)
            bucketed.append(k)
    n_buckets = int(np.clip(MAX_BUCKETS // max(len(bucketed), 1), 16, 1024))
    edges = np.zeros((len(bucketed), n_buckets - 1))
    start = np.array([queries[k].lo for k in bucketed])
    span = np.array([queries[k].hi - queries[k].lo for k in bucketed])
    with np.errstate(over="ignore", divide="ignore"):
        inv_width = np.where(np.isfinite(n_buckets / span), n_buckets / span, 0.0)
    for s, k in enumerate(bucketed):
        edges[s] = _inner_edges(queries[k].lo, queries[k].hi, n_buckets)
    return lo, hi, slot, (edges, start, inv_width), ship, bucketed


def _narrow(qu: _Query, weight, count, vmin, vmax):
    """Keep the bucket where the cumulative weight reaches the target."""
    cum = qu.below + np.cumsum(weight)
    b = int(np.searchsorted(cum, qu.target, side="left"))
    qu.below = int(cum[b] - weight[b])
    qu.lo, qu.hi, qu.count = float(vmin[b]), float(vmax[b]), int(count[b])
    if qu.lo == qu.hi:
        qu.result, qu.done = qu.lo, True


def _finish(qu: _Query, values, weights):
    """Select among the shipped rows of a query's final range (sorted by value)."""
    cum = qu.below + np.cumsum(weights)
    qu.result = float(values[np.searchsorted(cum, qu.target, side="left")])
    qu.done = True


def _refine_pass(engine, queries, name):
    lo, hi, slot, edges, ship, bucketed = _plan(queries)
    smalls = engine.apply(_refine, name, lo, hi, slot, *edges, ship)
    weight = sum(s[0] for s in smalls)
    count = sum(s[1] for s in smalls)
    vmin = np.minimum.reduce([s[2] for s in smalls])
    vmax = np.maximum.reduce([s[3] for s in smalls])
    for s, k in enumerate(bucketed):
        _narrow(queries[k], weight[s], count[s], vmin[s], vmax[s])
    ship_q = np.concatenate([s[4] for s in smalls])
    ship_v = np.concatenate([s[5] for s in smalls])
    ship_w = np.concatenate([s[6] for s in smalls])
    order = np.lexsort((ship_v, ship_q))
    ship_q, ship_v, ship_w = ship_q[order], ship_v[order], ship_w[order]
    for k in np.flatnonzero(ship):
        a, b = np.searchsorted(ship_q, [k, k + 1])
        _finish(queries[k], ship_v[a:b], ship_w[a:b])
    return bool(bucketed)


def weighted_quantiles(engine, source, alphas, n_queries: int, name: str = "select") -> np.ndarray:
    """Exact lower weighted alpha-quantile of every query, over all partitions.

    Parameters
    ----------
    engine : Engine
        Its groups hold the data; passes run through ``engine.apply``.
    source : picklable callable
        ``source(shard, row_state, positions) -> (query, value, weight)``, three
        arrays of one length (int, float64, float64); rows with query < 0 or
        weight 0 are ignored. ``row_state``/``positions`` are None when the
        group has none yet.
    alphas : array-like of shape (n_queries,), values in (0, 1]
    n_queries : int

    Returns
    -------
    ndarray of shape (n_queries,), float64; NaN for queries without rows.
    """
    scale = weight_scale(engine.w_max, engine.n_rows)
    smalls = engine.apply(_open, name + "-range", source, scale, n_queries)
    queries = _open_queries(smalls, np.broadcast_to(alphas, (n_queries,)), n_queries)
    cached = True
    while any(not qu.done for qu in queries):
        cached = _refine_pass(engine, queries, name + "-refine")
    if cached:
        engine.apply(_drop, name + "-release")
    return np.array([qu.result for qu in queries])
