"""Bin codes of sparse rows: only the stored entries' codes, an entry not
stored being missing (``MISSING_BIN``), XGBoost's convention for sparse input.

``SparseCodes`` holds a CSR matrix's codes (its ``indptr`` and ``indices``
with one uint8 code per stored entry): memory in proportion to the stored
entries, where the dense codes take one byte per row and feature. The
kernels that read codes take it wherever they take the dense row-major or
feature-major codes, through the accessors here, chosen when numba compiles
them (``numba.extending.overload``): ``column`` (one feature's codes),
``at`` (a row's code in a column), ``row_code``, ``n_code_rows`` and
``n_code_features``. A row's code of a feature is a binary search among the
row's stored entries.

Histograms of sparse rows add each stored entry to its bin and take it off
the feature's missing bin; ``finish_missing`` then adds the rows' sums to
every feature's missing bin: the missing bin holds the rows that store
nothing for the feature, exactly (fixed-point integers), and the histogram
equals the dense codes' to the bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from .common import MISSING_BIN
from .intrinsics import prefetch


class SparseCodes(NamedTuple):
    """Codes of CSR rows (see the module docstring)."""

    indptr: np.ndarray  # (n_rows + 1,), int64
    indices: np.ndarray  # (nnz,), int32, ascending within each row
    codes: np.ndarray  # (nnz,), uint8
    n_features: int

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.indptr) - 1, int(self.n_features)

    @property
    def nbytes(self) -> int:
        return self.indptr.nbytes + self.indices.nbytes + self.codes.nbytes

    def to_dense(self) -> np.ndarray:
        """The dense row-major codes, ``MISSING_BIN`` where nothing is stored."""
        out = np.full(self.shape, MISSING_BIN, np.uint8)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.indices] = self.codes
        return out


class SparseColumn(NamedTuple):
    """One feature of ``SparseCodes`` (``column``)."""

    indptr: np.ndarray
    indices: np.ndarray
    codes: np.ndarray
    feature: int


def is_sparse_codes(X) -> bool:
    return isinstance(X, SparseCodes)


def is_sparse_type(t) -> bool:
    """Whether a numba type is ``SparseCodes`` or ``SparseColumn``."""
    return isinstance(t, types.BaseNamedTuple) and t.instance_class in (SparseCodes,
                                                                      SparseColumn)


@numba.njit(cache=True, inline="always")
def lookup(indptr, indices, codes, r, f):
    """Row r's code of feature f: its stored entry's, else ``MISSING_BIN``."""
    lo, hi = indptr[r], indptr[r + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[r + 1] and indices[lo] == f:
        return codes[lo]
    return np.uint8(MISSING_BIN)


def column(X, f):
    """Feature f's codes: a row of the feature-major dense codes, or a ``SparseColumn``."""
    return X[f]


@overload(column)
def _column(X, f):
    if is_sparse_type(X):
        return lambda X, f: SparseColumn(X.indptr, X.indices, X.codes, f)
    return lambda X, f: X[f]


def at(col, r):
    """Row r's code in ``col`` (``column``)."""
    return col[r]


@overload(at)
def _at(col, r):
    if is_sparse_type(col):
        return lambda col, r: lookup(col.indptr, col.indices, col.codes, r, col.feature)
    return lambda col, r: col[r]


def prefetch_code(col, r):
    """``intrinsics.prefetch`` of row r's code in a dense column; nothing for a sparse one."""


@overload(prefetch_code)
def _prefetch_code(col, r):
    if is_sparse_type(col):
        return lambda col, r: None
    return lambda col, r: prefetch(col, r)


def row_code(X, r, f):
    """Row r's code of feature f in row-major codes (or raw values)."""
    return X[r, f]


@overload(row_code)
def _row_code(X, r, f):
    if is_sparse_type(X):
        return lambda X, r, f: lookup(X.indptr, X.indices, X.codes, r, f)
    return lambda X, r, f: X[r, f]


def n_code_rows(X):
    """Rows of row-major codes."""
    return X.shape[0]


@overload(n_code_rows)
def _n_code_rows(X):
    if is_sparse_type(X):
        return lambda X: len(X.indptr) - 1
    return lambda X: X.shape[0]


def n_code_features(X, feature_major):
    """Features of the codes, row-major or (``feature_major``) feature-major."""
    return X.shape[0] if feature_major else X.shape[1]


@overload(n_code_features)
def _n_code_features(X, feature_major):
    if is_sparse_type(X):
        return lambda X, feature_major: X.n_features
    return lambda X, feature_major: X.shape[0] if feature_major else X.shape[1]


def rows_view(X_columns):
    """Row-major access to feature-major codes (their transpose, or the sparse codes)."""
    return X_columns.T


@overload(rows_view)
def _rows_view(X_columns):
    if is_sparse_type(X_columns):
        return lambda X_columns: X_columns
    return lambda X_columns: X_columns.T


@numba.njit(cache=True, inline="always")
def add_sparse_row(X, r, features, st, hs, stride):
    """``histogram._add_row`` of sparse row r: each stored entry (of ``features``,
    or every feature when empty) to its bin and off its feature's missing bin
    (``finish_missing`` adds the row back to every missing bin)."""
    n_stats = st.shape[1]
    for k in range(X.indptr[r], X.indptr[r + 1]):
        j = np.int64(X.indices[k])
        if len(features) and not _listed(features, j):
            continue
        i = (j * stride + np.int64(X.codes[k])) * n_stats
        m = (j * stride + MISSING_BIN) * n_stats
        for s in range(n_stats):
            hs[i + s] += st[r, s]
            hs[m + s] -= st[r, s]


@numba.njit(cache=True, inline="always")
def _listed(features, j):
    """Whether j is in ``features`` (ascending)."""
    k = np.searchsorted(features, j)
    return k < len(features) and features[k] == j


@numba.njit(cache=True)
def settle_missing(out, stats, order, tree, slot, lo, hi, features):
    """Add the sums of rows order[tree[i], lo[i]:hi[i]] to the missing bin of
    every histogrammed feature of out[slot[i]]."""
    n_stats = stats.shape[2]
    total = np.empty(n_stats, np.int64)
    for i in range(len(slot)):
        rows_total(stats[tree[i]], order[tree[i]], lo[i], hi[i], total)
        h = out[slot[i]]
        n = h.shape[0] if len(features) == 0 else len(features)
        for q in range(n):
            j = q if len(features) == 0 else features[q]
            for s in range(n_stats):
                h[j, MISSING_BIN, s] += total[s]


@numba.njit(cache=True, inline="always")
def rows_total(st, rows, lo, hi, total):
    """total[:] = the statistics of rows[lo:hi], summed."""
    total[:] = 0
    for k in range(lo, hi):
        for s in range(len(total)):
            total[s] += st[rows[k], s]


def finish_missing(X, out, stats, order, tree, slot, lo, hi, features):
    """Sparse rows' missing bins (``settle_missing``); nothing for dense codes."""


@overload(finish_missing)
def _finish_missing(X, out, stats, order, tree, slot, lo, hi, features):
    if is_sparse_type(X):
        def impl(X, out, stats, order, tree, slot, lo, hi, features):
            settle_missing(out, stats, order, tree, slot, lo, hi, features)
        return impl
    return lambda X, out, stats, order, tree, slot, lo, hi, features: None
