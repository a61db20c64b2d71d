"""Bin codes stored apart from each feature's most frequent code, for histograms.

Data whose features mostly hold one value (zeros: word counts, indicators,
ESL's spam) spend most of a dense histogram pass adding rows to that one bin.
``ModeCodes`` keeps, per row, only the entries whose code is not their
feature's mode (CSR, as ``sparse_codes.SparseCodes``, each entry one number,
feature x 256 + code); a histogram adds those entries to their bins, and
``settle_modes`` then sets each feature's mode bin to the node's total less
the feature's other bins. The statistics are
fixed-point integers, so the mode bin is exact and the histogram equals the
dense codes' to the bit, whatever order the rows come in (LightGBM skips a
feature's most frequent bin the same way).

Only histograms read these codes (``local_grower`` routes and searches on the
dense ones); ``by_modes`` says when they are less work than the dense codes.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from .common import MAX_BINS, MISSING_BIN
from .intrinsics import add_pair
from .sparse_codes import is_sparse_codes, rows_total
from .threads import for_rows

STORED_COST = 2
"""A stored entry's cost in a histogram pass, in dense codes' entries: an
entry read, its bin computed, then the same add (1.2 against 0.6 ns on
spam's rows, one thread)."""

MODE_CODES_MAX_FILL = 0.3
"""Stored entries, as a fraction of rows x features, above which no
``ModeCodes`` are made: at ``STORED_COST`` they would save little, in 2 bytes
an entry (at most 0.6 x the dense codes' memory, kept beside them)."""

SETTLE_ENTRIES = 256
"""Dense codes' entries that one node's ``settle_modes`` (a vectorised pass
over each feature's bins) and a pass's set-up cost as much as, per feature:
``by_modes`` weighs them. Spam's 200 rounds replayed on one thread: the
root's and the first level's histograms gain (20 us a round), nodes below
about 500 rows nothing."""


class ModeCodes(NamedTuple):
    """Codes of rows without their features' modes (see the module docstring)."""

    indptr: np.ndarray  # (n_rows + 1,), int64
    entries: np.ndarray  # (nnz,), feature * 256 + code, features ascending within each row
    mode: np.ndarray  # (n_features,), int64: the code each feature's row holds when not stored
    n_features: int
    top: np.ndarray  # (n_features,), int64: 1 + the largest code below 255 any row holds, or 0


def is_mode_type(t) -> bool:
    """Whether a numba type is ``ModeCodes``."""
    return isinstance(t, types.BaseNamedTuple) and t.instance_class is ModeCodes


def mode_codes(X_binned, buffers=None) -> ModeCodes | None:
    """``X_binned`` (dense, row-major uint8 codes) without each feature's mode,
    or None where more than ``MODE_CODES_MAX_FILL`` of the entries would be
    stored, and for sparse codes. Made once per shard when ``buffers`` keeps it."""
    if is_sparse_codes(X_binned):
        return None
    if buffers is not None and getattr(buffers, "mode_codes_of", None) is X_binned:
        return buffers.mode_codes
    X = np.ascontiguousarray(X_binned)
    with for_rows(len(X)):  # spam's 3,065 rows: no parallel region to wake the threads for
        out = _without_modes(X)
    if buffers is not None:
        buffers.mode_codes, buffers.mode_codes_of = out, X_binned
    return out


def _without_modes(X) -> ModeCodes | None:
    """``mode_codes`` of dense codes: the counts decide, then the entries are stored."""
    counts = _code_counts(X)
    mode = counts.argmax(axis=1)  # the smallest of equally frequent codes
    stored = X.size - int(counts[np.arange(X.shape[1]), mode].sum())
    if not X.size or stored > MODE_CODES_MAX_FILL * X.size:
        return None
    indptr = np.zeros(len(X) + 1, np.int64)
    np.cumsum(_stored_per_row(X, mode), out=indptr[1:])
    entries = np.empty(stored, np.uint16 if X.shape[1] <= 256 else np.uint32)
    _store(X, mode, indptr, entries)
    held = counts[:, :MISSING_BIN] > 0
    top = np.where(held.any(axis=1), MISSING_BIN - held[:, ::-1].argmax(axis=1), 0)
    return ModeCodes(indptr, entries, mode, X.shape[1], top.astype(np.int64))


COUNT_ROWS = 1 << 16
"""Rows a work item of ``_code_counts`` counts."""


@numba.njit(parallel=True, cache=True)
def _code_counts(X):
    """How many rows hold each (feature, code), shape (n_features, 256):
    chunks of ``COUNT_ROWS`` rows counted on the threads, then added up (W1
    2M x 28, whose codes are too varied for ``ModeCodes``, learns so from
    these counts alone)."""
    n_rows, n_features = X.shape
    n_chunks = max(1, (n_rows + COUNT_ROWS - 1) // COUNT_ROWS)
    parts = np.zeros((n_chunks, n_features, MAX_BINS), np.int64)
    for c in numba.prange(n_chunks):
        for r in range(c * COUNT_ROWS, min(n_rows, (c + 1) * COUNT_ROWS)):
            for f in range(n_features):
                parts[c, f, X[r, f]] += 1
    counts = np.zeros((n_features, MAX_BINS), np.int64)
    for c in range(n_chunks):
        counts += parts[c]
    return counts


@numba.njit(parallel=True, cache=True)
def _stored_per_row(X, mode):
    """How many of each row's codes are not their feature's ``mode``."""
    per_row = np.zeros(X.shape[0], np.int64)
    for r in numba.prange(X.shape[0]):
        for f in range(X.shape[1]):
            per_row[r] += X[r, f] != mode[f]
    return per_row


@numba.njit(cache=True)
def _store(X, mode, indptr, entries):
    for r in range(X.shape[0]):
        k = indptr[r]
        for f in range(X.shape[1]):
            if X[r, f] != mode[f]:
                entries[k] = f * MAX_BINS + X[r, f]
                k += 1


@numba.njit(cache=True)
def add_mode_rows(X, st, rows, lo, hi, features, hs, stride):
    """hs += the statistics of rows[lo:hi]' stored entries (``add_mode_row``);
    the codes' arrays taken out of ``X`` once (read through it in the loop,
    inside a parallel region, the pass took twice as long)."""
    indptr, entries = X.indptr, X.entries
    for k in range(lo, hi):
        add_mode_row(indptr, entries, rows[k], features, st, hs, stride)


@numba.njit(cache=True, inline="always")
def add_mode_row(indptr, entries, r, features, st, hs, stride):
    """``histogram._add_row`` of row r's stored entries (of ``features``, or
    every feature when empty); its mode bins are left to ``settle_modes``.
    Two statistics, (g, h), go in as one vector add an entry. An entry's
    bin is entry + feature x (``stride`` - 256)."""
    lo, hi = indptr[r], indptr[r + 1]
    pad = stride - MAX_BINS
    if len(features) == 0 and st.shape[1] == 2:
        g, h = st[r, 0], st[r, 1]
        for k in range(lo, hi):
            v = np.int64(entries[k])  # feature = v >> 8 (256 codes)
            add_pair(hs, (v + (v >> 8) * pad) * 2, g, h)
        return
    n_stats = st.shape[1]
    listed = 0
    for k in range(lo, hi):
        v = np.int64(entries[k])
        j = v >> 8
        if len(features):
            while listed < len(features) and features[listed] < j:
                listed += 1
            if listed == len(features) or features[listed] != j:
                continue
        i = (v + j * pad) * n_stats
        for s in range(n_stats):
            hs[i + s] += st[r, s]


@numba.njit(cache=True)
def settle_modes(mode, top, out, stats, order, tree, slot, lo, hi, features):
    """out[slot[i]]'s mode bin of every histogrammed feature: the sums of
    rows order[tree[i], lo[i]:hi[i]] less the feature's other bins, those
    below its ``top`` and the missing-value bin (no row holds the others).
    The histograms must hold those rows' stored entries and nothing else."""
    n_stats = stats.shape[2]
    total = np.empty(n_stats, np.int64)
    rest = np.empty(n_stats, np.int64)
    for i in range(len(slot)):
        rows_total(stats[tree[i]], order[tree[i]], lo[i], hi[i], total)
        h = out[slot[i]]
        n = h.shape[0] if len(features) == 0 else len(features)
        for q in range(n):
            j = q if len(features) == 0 else features[q]
            _bin_sums(h[j], top[j], rest)
            for s in range(n_stats):
                h[j, mode[j], s] = total[s] - rest[s]


@numba.njit(cache=True, inline="always")
def _bin_sums(h_f, top, rest):
    """rest[s] = the sum of statistic s over bins 0 .. top - 1 and the missing
    bin of one feature's histogram (bins, statistics); two statistics two
    bins at a time, in four independent sums."""
    n_stats = h_f.shape[1]
    if n_stats == 2:
        g0 = g1 = h0 = h1 = np.int64(0)
        for b in range(0, top - 1, 2):
            g0 += h_f[b, 0]
            h0 += h_f[b, 1]
            g1 += h_f[b + 1, 0]
            h1 += h_f[b + 1, 1]
        if top % 2:
            g0 += h_f[top - 1, 0]
            h0 += h_f[top - 1, 1]
        rest[0], rest[1] = g0 + g1 + h_f[MISSING_BIN, 0], h0 + h1 + h_f[MISSING_BIN, 1]
        return
    for s in range(n_stats):
        rest[s] = h_f[MISSING_BIN, s]
    for b in range(top):
        for s in range(n_stats):
            rest[s] += h_f[b, s]


def by_modes(X_modes, rows, n_nodes) -> bool:
    """Whether histograms of ``n_nodes`` nodes of ``rows`` rows in all are
    less work from ``X_modes`` (``ModeCodes``) than from the dense codes:
    what the rows save (features less ``STORED_COST`` x stored entries a
    row) outweighs the nodes' ``settle_modes``. False for any other codes.
    Compiled code only."""


@overload(by_modes)
def _by_modes(X_modes, rows, n_nodes):
    if is_mode_type(X_modes):
        def impl(X_modes, rows, n_nodes):
            n_rows = len(X_modes.indptr) - 1
            stored = X_modes.indptr[n_rows] / max(n_rows, 1)
            skipped = rows * (X_modes.n_features - STORED_COST * stored)
            return skipped > n_nodes * X_modes.n_features * SETTLE_ENTRIES
        return impl
    return lambda X_modes, rows, n_nodes: False


def finish_modes(X, out, stats, order, tree, slot, lo, hi, features, zero):
    """``settle_modes`` for ``ModeCodes`` (histograms started from zero only);
    nothing for other codes."""


@overload(finish_modes)
def _finish_modes(X, out, stats, order, tree, slot, lo, hi, features, zero):
    if is_mode_type(X):
        def impl(X, out, stats, order, tree, slot, lo, hi, features, zero):
            if not zero:
                raise ValueError("histograms from ModeCodes must start from zero")
            settle_modes(X.mode, X.top, out, stats, order, tree, slot, lo, hi, features)
        return impl
    return lambda X, out, stats, order, tree, slot, lo, hi, features, zero: None
